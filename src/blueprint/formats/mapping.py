"""Vendor field mappings: for every canonical field, where it lands in a vendor format.

Each vendor codec has one mapping file, ``exporters/<name>.yaml``. The codec's lossy report,
``blueprint formats NAME`` and the vendor docs tables are all read from it, so what the docs
promise and what an export reports cannot drift apart.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Final, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from blueprint.core.errors import BlueprintError, ParseError
from blueprint.core.model import HEADER_FIELDS
from blueprint.core.resources import shipped_folders
from blueprint.formats.base import LossyField
from blueprint.io import yamlload

#: the key under which every vendor export keeps what the vendor has no field for
NAMESPACE: Final = "blueprint"

#: set-level fields, in the order reports list them
SET_FIELDS: Final = HEADER_FIELDS[1:]


class MappingError(BlueprintError, ValueError):
    """A mapping file is missing or malformed (a packaging bug, not bad user input)."""

    exit_code = 3


class FieldMapping(BaseModel):
    """Where one canonical field goes, or why it is dropped."""

    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True)

    field: str = Field(description="The canonical field, as a path inside a row or the set.")
    to: str | None = Field(default=None, description="Where the field lands in the vendor format.")
    dropped: str | None = Field(default=None, description="Why the field is dropped.")


class WeakenedRule(BaseModel):
    """A rule an export writes but the vendor's grader does not enforce, and for which rows.

    The rule applies to a row when its oracle type and (effective) evaluator are listed (an
    omitted list means any; ``none`` stands for a row that names no evaluator) and the value
    at ``field`` says something: present and not empty, or, with ``equals``, equal to it
    (``default`` standing in when the field is absent). ``[*]`` in ``field`` means every item
    of a list.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True, populate_by_name=True)

    field: str = Field(description="The canonical field carrying the rule.")
    reason: str = Field(description="What the vendor's grader does instead.")
    oracle_types: list[str] | None = Field(default=None, alias="oracleTypes")
    evaluators: list[str] | None = None
    #: the JSON types the value must have (string, object, array, number, boolean, null)
    types: list[str] | None = None
    equals: JsonValue = None
    default: JsonValue = None

    def applies(self, row: dict[str, Any], oracle_type: str, evaluator: str | None) -> bool:
        return self.concerns(oracle_type, evaluator) and self.said_in(row)

    def concerns(self, oracle_type: str, evaluator: str | None) -> bool:
        """Whether the rule is about rows of this oracle type and (effective) evaluator."""
        if self.oracle_types is not None and oracle_type not in self.oracle_types:
            return False
        return self.evaluators is None or (evaluator or "none") in self.evaluators

    def said_in(self, row: dict[str, Any]) -> bool:
        """Whether the row says something at the rule's field."""
        reading = self.reading
        if reading.keys is None:
            values = values_at(row, self.field)
        else:  # most fields: one value or none, no list to walk
            value: Any = row
            for key in reading.keys:
                if not isinstance(value, dict) or key not in value:
                    values = []
                    break
                value = value[key]
            else:
                values = [value]
        if reading.kinds is not None:
            values = [value for value in values if _json_kind(value) in reading.kinds]
        if reading.compares:
            if not values and reading.defaults:
                values = [self.default]
            return any(value == self.equals for value in values)
        return any(value not in (None, "", [], {}) for value in values)

    @cached_property
    def reading(self) -> _Reading:
        """How :meth:`said_in` reads a row, worked out once (exports ask for every row)."""
        steps = _steps(self.field)
        return _Reading(
            keys=None if any(each for _, each in steps) else tuple(name for name, _ in steps),
            kinds=frozenset(self.types) if self.types is not None else None,
            compares="equals" in self.model_fields_set,
            defaults="default" in self.model_fields_set,
        )


class _Reading(NamedTuple):
    #: the field's keys, when no step walks a list (None: :func:`values_at` walks them)
    keys: tuple[str, ...] | None
    kinds: frozenset[str] | None
    compares: bool
    defaults: bool


#: the answers of :meth:`VendorMapping.row_loss_reason` kept at once
_MOST_ANSWERS: Final = 4096


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array" if isinstance(value, list) else "other"


def values_at(data: Any, path: str) -> list[Any]:
    """Every value at a dotted path (``expected.calls[*].arguments``); [] when absent."""
    steps = _steps(path)
    if not any(each for _, each in steps):  # most paths: one value or none, no lists to walk
        for name, _ in steps:
            if not isinstance(data, dict) or name not in data:
                return []
            data = data[name]
        return [data]
    found = [data]
    for name, each in steps:
        found = [item[name] for item in found if isinstance(item, dict) and name in item]
        if each:
            found = [element for item in found if isinstance(item, list) for element in item]
    return found


@cache
def _steps(path: str) -> tuple[tuple[str, bool], ...]:
    """A dotted path's keys, each with whether it ends in [*] (the few paths the mapping
    files name, parsed once)."""
    return tuple((part.removesuffix("[*]"), part.endswith("[*]")) for part in path.split("."))


class Grading(BaseModel):
    """How the vendor grades what an export writes, and what it does not enforce."""

    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True)

    summary: str = Field(description="Which grader reads the export, and from where.")
    enforced: dict[str, str] = Field(
        description="For each oracle type, what the vendor's grader checks of it."
    )
    weakened: list[WeakenedRule] = Field(default_factory=list)


class VendorMapping(BaseModel):
    """A vendor format's mapping file."""

    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True)

    format: str
    title: str
    summary: str
    rows: list[FieldMapping]
    set: list[FieldMapping]
    excluded: dict[str, str] = Field(
        default_factory=dict,
        description="Kinds of rows left out of an export by default, with the reason.",
    )
    grading: Grading
    media: str | None = Field(
        default=None,
        description="Why an image, audio, video or document in a row's input (a content part"
        " such as Inspect's) does not reach the vendor's model as what it is; absent for a"
        " format whose records carry the input as it is.",
    )
    notes: list[str] = Field(default_factory=list)
    example: str = Field(description="A worked example, in Markdown, for the docs.")

    def weakened_rules(
        self, row: dict[str, Any], oracle_type: str, evaluator: str | None
    ) -> list[WeakenedRule]:
        return [rule for rule in self.rules_for(oracle_type, evaluator) if rule.said_in(row)]

    def rules_for(self, oracle_type: str, evaluator: str | None) -> list[WeakenedRule]:
        """The weakened rules about rows of this oracle type and evaluator, worked out once
        for each pair (the mapping is loaded once, and there are a few dozen pairs)."""
        key = (oracle_type, evaluator)
        rules = self.rules_by_kind.get(key)
        if rules is None:
            rules = [rule for rule in self.grading.weakened if rule.concerns(*key)]
            self.rules_by_kind[key] = rules
        return rules

    @cached_property
    def rules_by_kind(self) -> dict[tuple[str, str | None], list[WeakenedRule]]:
        """:meth:`rules_for`'s answers so far (a plain attribute: a pydantic private one
        costs a microsecond a read, and exports read it for every row)."""
        return {}

    def set_loss(
        self, header: dict[str, Any], written: frozenset[str] = frozenset()
    ) -> list[LossyField]:
        """The set-level fields this format drops, among those the set actually has.

        ``written`` names what this export did write: set-level fields, or single namespaces
        of ``extensions`` (``extensions.promptfoo``), whose siblings are then reported alone.
        """
        losses = []
        known = {entry.field for entry in self.set}
        header = {key: value for key, value in header.items() if key not in written}
        for entry in self.set:
            if not entry.dropped or entry.field not in header:
                continue
            value = header[entry.field]
            kept = {name.split(".", 1)[1] for name in written if name.startswith(entry.field + ".")}
            if kept and isinstance(value, dict):
                losses += [
                    LossyField(f"{entry.field}.{name}", entry.dropped, scope="set")
                    for name in value
                    if name not in kept
                ]
            else:
                losses.append(LossyField(entry.field, entry.dropped, scope="set"))
        for name in header:
            if name not in known and name != "schemaVersion":
                reason = (
                    f"not a set-level field Blueprint knows, so {self.format} has no place for it"
                )
                losses.append(LossyField(name, reason, scope="set"))
        return losses

    def row_loss_reason(self, path: str, oracle_type: str | None = None) -> str:
        """Why a row field is lost: the reason the mapping gives for the field with the row's
        oracle type (``expected (acceptable-set)``) or for the field (or for the nearest
        enclosing field that it says is dropped), else a general one."""
        # an export asks for every field of every row it drops: the answers are kept (a few
        # thousand at most, as free-form metadata may name a field a row)
        answers = self.loss_reasons
        reason = answers.get((path, oracle_type))
        if reason is None:
            if len(answers) >= _MOST_ANSWERS:
                answers.clear()
            reason = answers[path, oracle_type] = self._row_loss_reason(path, oracle_type)
        return reason

    @cached_property
    def loss_reasons(self) -> dict[tuple[str, str | None], str]:
        """:meth:`row_loss_reason`'s answers so far."""
        return {}

    @cached_property
    def row_reasons(self) -> dict[str, str]:
        """The reason each dropped row field is dropped, by field."""
        return {entry.field: entry.dropped for entry in self.rows if entry.dropped}

    def _row_loss_reason(self, path: str, oracle_type: str | None) -> str:
        reasons = self.row_reasons
        reason = reasons.get(f"{path} ({oracle_type})") if oracle_type else None
        if reason:
            return reason
        # the path and each enclosing field, longest first (metadata['a b'] is in metadata)
        ends = [match.start() for match in re.finditer(r"[.\[]", path)] + [len(path)]
        for end in sorted(ends, reverse=True):
            reason = reasons.get(path[:end])
            if reason:
                return reason
        return f"a {self.format} file has no place for it; reading the file back infers it again"

    def exclusion(self, kind: str, row_ids: Sequence[str]) -> LossyField:
        return LossyField("*", self.excluded[kind], row_ids, kind="excluded")


def exporters_root() -> Path:
    """The folder of mapping files: inside the installed package, or the source tree's."""
    override = os.environ.get("BLUEPRINT_EXPORTERS")
    for candidate in ([Path(override)] if override else []) + [*shipped_folders("exporters")]:
        if candidate.is_dir():
            return candidate
    raise MappingError("no exporters folder found; the installation is incomplete")


@cache
def load_mapping(name: str) -> VendorMapping:
    path = exporters_root() / f"{name}.yaml"
    try:
        data = yamlload.load(path.read_text(encoding="utf-8"), path)
        mapping = VendorMapping.model_validate(data)
    except ParseError as error:
        raise MappingError(str(error)) from None
    except (OSError, ValidationError) as error:
        raise MappingError(f"{path}: {error}") from None
    if mapping.format != name:
        raise MappingError(f"{path}: describes {mapping.format!r}, not {name!r}")
    missing = set(SET_FIELDS) - {entry.field for entry in mapping.set}
    if missing:
        raise MappingError(f"{path}: no entry for the set-level fields {sorted(missing)}")
    return mapping
