"""Vendor field mappings: for every canonical field, where it lands in a vendor format.

Each vendor codec has one mapping file, ``exporters/<name>.yaml``. The codec's lossy report,
``blueprint formats NAME`` and the vendor docs tables are all read from it, so what the docs
promise and what an export reports cannot drift apart.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from blueprint.errors import BlueprintError
from blueprint.formats.base import LossyField

#: the key under which every vendor export keeps what the vendor has no field for
NAMESPACE: Final = "blueprint"

#: set-level fields, in the order reports list them
SET_FIELDS: Final = ("name", "version", "description", "taskFamily", "caseFamilies")


class MappingError(BlueprintError, ValueError):
    """A mapping file is missing or malformed (a packaging bug, not bad user input)."""

    exit_code = 3


class FieldMapping(BaseModel):
    """Where one canonical field goes, or why it is dropped."""

    model_config = ConfigDict(extra="forbid", strict=True)

    field: str = Field(description="The canonical field, as a path inside a row or the set.")
    to: str | None = Field(default=None, description="Where the field lands in the vendor format.")
    dropped: str | None = Field(default=None, description="Why the field is dropped.")


class VendorMapping(BaseModel):
    """A vendor format's mapping file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    format: str
    title: str
    summary: str
    rows: list[FieldMapping]
    set: list[FieldMapping]
    excluded: dict[str, str] = Field(
        default_factory=dict,
        description="Kinds of rows left out of an export by default, with the reason.",
    )
    notes: list[str] = Field(default_factory=list)
    example: str = Field(description="A worked example, in Markdown, for the docs.")

    def set_loss(self, header: dict[str, Any]) -> list[LossyField]:
        """The set-level fields this format drops, among those the set actually has."""
        losses = []
        known = {entry.field for entry in self.set}
        for entry in self.set:
            if entry.dropped and entry.field in header:
                losses.append(LossyField(entry.field, entry.dropped, scope="set"))
        for name in header:
            if name not in known and name != "schemaVersion":
                reason = (
                    f"not a set-level field Blueprint knows, so {self.format} has no place for it"
                )
                losses.append(LossyField(name, reason, scope="set"))
        return losses

    def exclusion(self, kind: str, row_ids: list[str]) -> LossyField:
        return LossyField("*", self.excluded[kind], tuple(row_ids), kind="excluded")


def exporters_root() -> Path:
    """The folder of mapping files: inside the installed package, or the source tree's."""
    here = Path(__file__).resolve().parents[1]
    override = os.environ.get("BLUEPRINT_EXPORTERS")
    for candidate in ([Path(override)] if override else []) + [
        here / "_exporters",
        here.parents[1] / "exporters",
    ]:
        if candidate.is_dir():
            return candidate
    raise MappingError("no exporters folder found; the installation is incomplete")


@cache
def load_mapping(name: str) -> VendorMapping:
    path = exporters_root() / f"{name}.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        mapping = VendorMapping.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as error:
        raise MappingError(f"{path}: {error}") from None
    if mapping.format != name:
        raise MappingError(f"{path}: describes {mapping.format!r}, not {name!r}")
    missing = set(SET_FIELDS) - {entry.field for entry in mapping.set}
    if missing:
        raise MappingError(f"{path}: no entry for the set-level fields {sorted(missing)}")
    return mapping
