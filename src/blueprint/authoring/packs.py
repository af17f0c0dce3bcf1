"""Task-family packs and domain overlays: case families with starter rows, stored as YAML.

A pack (``packs/<id>.yaml``) describes one task family: its case families, each with an
oracle type, an evaluator and a severity that all its rows share, and starter rows that show
the shape of a good case. An overlay (``packs/overlays/<id>.yaml``) adds domain families to
any base pack. Starter rows are examples, not validated gold answers: a set built from a pack
marks every one of them by its provenance.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import yaml
from pydantic import ValidationError

from blueprint.core.errors import BlueprintError, ParseError, UsageError
from blueprint.core.model import (
    SCHEMA_VERSION,
    case_profile_fields,
)
from blueprint.core.pack_model import (
    OVERLAY_STARTER,
    OVERLAY_VERSION,
    STARTER,
    Overlay,
    Pack,
    PackFamily,
    StarterRow,
)
from blueprint.core.resources import shipped_folders
from blueprint.formats import refuse_special_file
from blueprint.io import yamlload


class PackError(BlueprintError, ValueError):
    """A pack or overlay file is missing, unreadable, or breaks the pack format."""

    exit_code = 1


# --- finding and loading ---------------------------------------------------------------------


def packs_root() -> Path:
    """The folder of bundled packs: inside the installed package, or the source tree's packs/."""
    override = os.environ.get("BLUEPRINT_PACKS")
    if override:
        if not Path(override).is_dir():
            raise PackError(f"BLUEPRINT_PACKS={override} is not a folder")
        return Path(override)
    for candidate in shipped_folders("packs"):
        if candidate.is_dir():
            return candidate
    raise PackError("no pack folder found (set BLUEPRINT_PACKS to a folder of packs)")


def _line_of(node: yaml.Node | None, location: tuple[Any, ...]) -> int | None:
    """The line of the YAML node at a pydantic error location, or of its nearest parent."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in location:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def _read_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    """A pack file's document and its node tree (for the line of a value), read safely."""
    try:
        refuse_special_file(path)
    except ParseError as error:
        raise PackError(str(error)) from None
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PackError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PackError(f"{path}: cannot read: {error}") from None
    try:
        return yamlload.load_with_nodes(text, path)
    except ParseError as error:
        raise PackError(str(error)) from None


def _load_model(path: Path, model: type[Pack] | type[Overlay]) -> Pack | Overlay:
    data, root = _read_yaml(path)
    try:
        loaded = model.model_validate(data)
    except ValidationError as error:
        lines = []
        for detail in error.errors():
            location = tuple(detail["loc"])
            where = ".".join(str(part) for part in location) or "(top)"
            line = _line_of(root, location)
            lines.append(f"{path}:{line or '?'}: {where}: {detail['msg']}")
        raise PackError("\n".join(lines)) from None
    if loaded.id != path.stem:
        raise PackError(
            f"{path}: the file of the pack {loaded.id!r} must be named {loaded.id}.yaml"
        )
    return loaded


def load_any_file(path: Path) -> Pack | Overlay:
    """A pack or an overlay file, whichever its schemaVersion says it is."""
    data, _ = _read_yaml(path)
    version = data.get("schemaVersion") if isinstance(data, dict) else None
    return _load_model(path, Overlay if version == OVERLAY_VERSION else Pack)


def load_pack_file(path: Path) -> Pack:
    return _load_model(path, Pack)  # type: ignore[return-value]


def load_overlay_file(path: Path) -> Overlay:
    return _load_model(path, Overlay)  # type: ignore[return-value]


def _resolve(name: str, folder: Path, kind: str) -> Path:
    if name.endswith((".yaml", ".yml")) or os.sep in name:
        return Path(name)
    if not (folder / f"{name}.yaml").is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yaml"))) or "none"
        other = folder / "overlays" if kind == "pack" else folder.parent
        hint = ""
        if (other / f"{name}.yaml").is_file():
            hint = (
                f" ({name} is an overlay: add it with --overlay to a base pack)"
                if kind == "pack"
                else f" ({name} is a pack, not an overlay)"
            )
        raise UsageError(f"unknown {kind} {name!r}{hint}; known: {known}")
    _require_inside_pack_folder(folder / f"{name}.yaml")
    return folder / f"{name}.yaml"


def bundled_files() -> list[Path]:
    """The pack and overlay files of the pack folder, packs first."""
    root = packs_root()
    return [*sorted(root.glob("*.yaml")), *sorted((root / "overlays").glob("*.yaml"))]


def load_bundled_file(path: Path) -> Pack | Overlay:
    """A pack or overlay file of the pack folder."""
    _require_inside_pack_folder(path)
    return load_any_file(path)


def _require_inside_pack_folder(path: Path) -> None:
    """A file of the pack folder must lie inside it once links are resolved: a pack folder
    is a list of packs, not a way to print any file a link leads to."""
    root = packs_root().resolve()
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a link loop
        resolved = None
    if resolved is None or not resolved.is_relative_to(root):
        raise PackError(
            f"{path}: leads outside the pack folder {root} (a symbolic link); packs are read"
            " only from inside it"
        )


def load_pack(name: str) -> Pack:
    """A bundled pack by id, or a pack file by path."""
    return load_pack_file(_resolve(name, packs_root(), "pack"))


def load_overlay(name: str) -> Overlay:
    """A bundled overlay by id, or an overlay file by path."""
    return load_overlay_file(_resolve(name, packs_root() / "overlays", "overlay"))


# --- building a set --------------------------------------------------------------------------


@dataclass(frozen=True)
class FamilySource:
    """A family as it goes into a set, with where it came from."""

    family: PackFamily
    provenance: Literal["starter-example", "overlay-starter-needs-expert-validation"]
    reviewer_expertise: str | None = None


def _families(pack: Pack, overlays: list[Overlay]) -> Iterator[FamilySource]:
    for family in pack.case_families:
        yield FamilySource(family, STARTER)
    for overlay in overlays:
        if overlay.applies_to is not None and pack.id not in overlay.applies_to:
            fits = ", ".join(overlay.applies_to)
            raise UsageError(f"the overlay {overlay.id!r} fits {fits}, not {pack.id!r}")
        for family in overlay.case_families:
            yield FamilySource(family, OVERLAY_STARTER, overlay.reviewer_expertise)


def family_entry(family: PackFamily) -> dict[str, Any]:
    """A pack family as a set's caseFamilies entry (everything but its rows)."""
    return family.model_dump(mode="json", by_alias=True, exclude={"rows"})


_CASE_ORDER: Final = case_profile_fields()


def starter_row(source: FamilySource, row: StarterRow) -> dict[str, Any]:
    """A starter row as a canonical row, with the family's fields filled in."""
    family = source.family
    given = row.case.model_dump(mode="json", by_alias=True, exclude_unset=True)
    case = {
        **given,
        "caseId": row.id,
        "oracleType": family.oracle_type,
        "provenance": source.provenance,
        "evaluator": family.evaluator,
        "caseFamily": family.id,
    }
    if source.reviewer_expertise and "reviewerExpertise" not in case:
        case["reviewerExpertise"] = source.reviewer_expertise
    data: dict[str, Any] = {"id": row.id, "input": row.input}
    if "expected" in row.model_fields_set:
        data["expected"] = row.expected
    data["metadata"] = {"case": {key: case[key] for key in _CASE_ORDER if key in case}}
    data["metadata"].update(row.metadata or {})
    return data


def _document(
    sources: list[FamilySource], *, name: str, description: str, task_family: str | None
) -> dict[str, Any]:
    ids = [source.family.id for source in sources]
    clashes = sorted({family_id for family_id in ids if ids.count(family_id) > 1})
    if clashes:
        raise UsageError(f"case families defined twice: {', '.join(clashes)}")
    document: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "name": name,
        "version": "0.1.0",
        "description": description,
    }
    if task_family is not None:
        document["taskFamily"] = task_family
    document["caseFamilies"] = [family_entry(source.family) for source in sources]
    document["rows"] = [starter_row(s, row) for s in sources for row in s.family.rows]
    return document


def build_set(
    pack: Pack, overlays: list[Overlay] | None = None, *, name: str | None = None
) -> dict[str, Any]:
    """A new canonical set document from a pack and any overlays."""
    overlays = overlays or []
    description = pack.description
    if overlays:
        description += " Overlays: " + ", ".join(overlay.title for overlay in overlays) + "."
    return _document(
        list(_families(pack, overlays)),
        name=name or "-".join([pack.id, *(overlay.id for overlay in overlays)]),
        description=description,
        task_family=pack.id,
    )


def build_pack_set(pack: Pack | Overlay) -> dict[str, Any]:
    """The set a pack or an overlay builds on its own, for checking its content."""
    if isinstance(pack, Pack):
        return build_set(pack)
    sources = [
        FamilySource(family, OVERLAY_STARTER, pack.reviewer_expertise)
        for family in pack.case_families
    ]
    return _document(sources, name=pack.id, description=pack.description, task_family=None)


def pack_problems(pack: Pack | Overlay) -> list[str]:
    """Content rules the schema cannot state: concerns come from the palette, ids are unique."""
    problems = []
    palette = {concern.id for concern in pack.linked_concerns}
    seen: set[str] = set()
    for family in pack.case_families:
        for concern in family.linked_concerns:
            if palette and concern not in palette:
                problems.append(f"family {family.id}: concern {concern!r} is not in the palette")
        for row in family.rows:
            if row.id in seen:
                problems.append(f"row id {row.id!r} is used twice")
            seen.add(row.id)
            for concern in getattr(row.case, "linked_concerns", None) or []:
                if palette and concern not in palette:
                    problems.append(f"row {row.id}: concern {concern!r} is not in the palette")
    return problems
