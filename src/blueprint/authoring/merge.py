"""Merging two canonical sets into a new one; every id or case-family conflict is reported.

The merged set is A's rows, in A's order, then B's rows that A does not already have. A row
both sets hold identically is written once. A row id both sets use for different rows is a
conflict, and so is a case family both define differently: by default the merge is refused
(exit 1) and nothing is written. ``keep`` (A's or B's version of each conflicting row) or
``suffix`` (B's conflicting rows take a new id) resolve row conflicts, and say so. ``keep``
also settles a case family defined differently when both definitions give the same oracle
type and evaluator (a title, a description, a severity): the rows agree with either. One that
differs in how its rows are graded is never resolved here, because the rows of one side would
then disagree with their family: reconcile it first (``blueprint family edit``).

Set-level fields come from A. A field only B has is taken from B; a field both have with
different values keeps A's, and the difference is reported; ``name`` overrides the name.
Case families are the union (B's new ones after A's). Header ``extensions`` are merged by
namespace, A's kept where both have the same namespace with different content (reported).

Both sets are opened on the one edit path (:mod:`blueprint.authoring.editing`), locked while
the merge runs, so that with ``--force`` an output that is one of them replaces it only as it
was read. Rows stream: memory holds the ids of both sets and the rows whose id both use.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from blueprint.authoring.editing import (
    EditableSet,
    EditOptions,
    EditRefused,
    editing,
    scratch_write,
)
from blueprint.core.errors import BlueprintError, OutputError, OutputExistsError, UsageError
from blueprint.core.model import HEADER_FIELDS, SCHEMA_VERSION
from blueprint.diff import SetDiff, collect, diff_sets, value_changes
from blueprint.formats import Codec, ExportResult, StrPath, WriteOptions, resolve_codec
from blueprint.formats.setfile import set_file_for
from blueprint.io.jsonvalues import dumps_text
from blueprint.validation.checks import RowView

Side = Literal["a", "b"]


@dataclass(frozen=True)
class MergeOptions:
    source_format: str | None = None
    target_format: str | None = None
    #: replace an existing output
    force: bool = False
    #: report what would be written, and the diff from A, writing nothing
    dry_run: bool = False
    #: resolve each row conflict by keeping this side's version
    keep: Side | None = None
    #: resolve each row conflict by giving B's row its id with this suffix
    suffix: str | None = None
    #: the merged set's name (default: A's)
    name: str | None = None


@dataclass(frozen=True)
class RowConflict:
    """An id both sets use for rows that differ, and where they differ."""

    id: str
    paths: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "paths": list(self.paths)}


@dataclass(frozen=True)
class FamilyConflict:
    """A case family id both sets define differently."""

    id: str
    fields: tuple[str, ...]
    a: Any
    b: Any

    @property
    def grading(self) -> bool:
        """Whether the definitions differ in how the family's rows are graded."""
        return bool({"oracleType", "evaluator"} & set(self.fields))

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "fields": list(self.fields),
            "grading": self.grading,
            "a": self.a,
            "b": self.b,
        }


@dataclass(frozen=True)
class SetFieldChoice:
    """A set-level field the two sets do not agree on, and whose value the merge took."""

    field: str
    a: Any
    b: Any
    #: "a", "b" (only B had it), or "given" (the name option)
    taken: str

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "a": self.a, "b": self.b, "taken": self.taken}


@dataclass
class MergeOutcome:
    a: Path
    b: Path
    output: Path
    dry_run: bool = False
    rows: int = 0
    from_a: int = 0
    from_b: int = 0
    #: ids both sets hold with identical rows, written once
    identical: list[str] = field(default_factory=list)
    conflicts: list[RowConflict] = field(default_factory=list)
    family_conflicts: list[FamilyConflict] = field(default_factory=list)
    #: how each row conflict was resolved: id -> "kept a", "kept b" or "renamed"
    resolved: dict[str, str] = field(default_factory=dict)
    #: how each case family conflict was resolved: id -> "kept a" or "kept b"
    families_resolved: dict[str, str] = field(default_factory=dict)
    #: B's rows that took a new id: old id -> new id
    renamed: dict[str, str] = field(default_factory=dict)
    families_from_b: list[str] = field(default_factory=list)
    set_fields: list[SetFieldChoice] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    export: ExportResult | None = None
    #: in a dry run: the merged set against A
    diff: SetDiff | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "a": str(self.a),
            "b": str(self.b),
            "output": str(self.output),
            "written": self.export is not None,
            "dryRun": self.dry_run,
            "rows": self.rows,
            "fromA": self.from_a,
            "fromB": self.from_b,
            "identical": self.identical,
            "conflicts": [conflict.to_json() for conflict in self.conflicts],
            "familyConflicts": [conflict.to_json() for conflict in self.family_conflicts],
            "resolved": self.resolved,
            "familiesResolved": self.families_resolved,
            "renamed": self.renamed,
            "familiesFromB": self.families_from_b,
            "setFields": [choice.to_json() for choice in self.set_fields],
            "notes": self.notes,
            "export": self.export.to_json() if self.export is not None else None,
            "diff": self.diff.to_json() if self.diff is not None else None,
        }


class MergeRefused(BlueprintError, ValueError):
    """The two sets conflict and nothing said how to resolve it; nothing was written.
    ``outcome`` lists every conflict."""

    exit_code = 1

    def __init__(self, outcome: MergeOutcome) -> None:
        self.outcome = outcome
        parts = []
        if outcome.conflicts:
            shown = ", ".join(c.id for c in outcome.conflicts[:_SHOWN])
            more = _more(len(outcome.conflicts))
            parts.append(
                f"{len(outcome.conflicts)} row id(s) name different rows in the two sets"
                f" ({shown}{more}); pass --keep a, --keep b or --suffix TEXT to resolve them"
            )
        unsettled = [c for c in outcome.family_conflicts if c.id not in outcome.families_resolved]
        grading = [c for c in unsettled if c.grading]
        described = [c for c in unsettled if not c.grading]
        if grading:
            shown = "; ".join(f"{c.id} ({', '.join(c.fields)})" for c in grading[:_SHOWN])
            parts.append(
                f"{len(grading)} case family id(s) grade their rows differently ({shown}"
                f"{_more(len(grading))}); make the definitions agree first (blueprint family"
                " edit), since the rows of one side would disagree with the other's"
            )
        if described:
            shown = "; ".join(f"{c.id} ({', '.join(c.fields)})" for c in described[:_SHOWN])
            parts.append(
                f"{len(described)} case family id(s) are described differently ({shown}"
                f"{_more(len(described))}); pass --keep a or --keep b to take one side's"
                " definitions (their rows are graded the same either way)"
            )
        super().__init__(
            f"not merged, nothing written: {outcome.a} and {outcome.b} conflict: "
            + "; ".join(parts)
        )


_SHOWN: Final = 5


def _more(count: int) -> str:
    return f" and {count - _SHOWN} more" if count > _SHOWN else ""


def _same(left: Any, right: Any) -> bool:
    return not value_changes(left, right)


def _require_canonical(path: Path, format: str | None) -> None:
    codec = resolve_codec(path, format, reading=True)
    if not codec.lossless:
        raise EditRefused(
            f"{path}: merge reads canonical sets (json, jsonl, csv), not {codec.name}; convert"
            f" it first (blueprint convert {path} {path.with_name(path.stem + '-set.json')}"
            f" --from {codec.name})"
        )


def merge_sets(
    a: StrPath, b: StrPath, output: StrPath, options: MergeOptions | None = None
) -> MergeOutcome:
    """Merge set B into set A, writing the result to ``output`` (a new canonical file)."""
    options = options or MergeOptions()
    a, b, output = Path(a), Path(b), Path(output)
    if options.keep is not None and options.suffix is not None:
        raise UsageError("resolve conflicts one way: --keep or --suffix, not both")
    if options.suffix is not None and not options.suffix:
        raise UsageError("--suffix is empty")
    if options.name is not None and not options.name.strip():
        raise UsageError("--name is empty")
    writer = resolve_codec(output, options.target_format, reading=False)
    if not writer.lossless:
        raise EditRefused(
            f"{output}: merge writes a canonical set (json, jsonl, csv), not {writer.name};"
            " write one and convert it"
        )
    for given in (a, b):
        _require_canonical(given, options.source_format)
    edit = EditOptions(options.source_format, options.dry_run)
    # a refusal names its sets itself: it is about both
    with editing(a, edit, named=False) as left, editing(b, edit, named=False) as right:
        return _merge(left, right, output, writer, options)


def _merge(
    left: EditableSet, right: EditableSet, output: Path, writer: Codec, options: MergeOptions
) -> MergeOutcome:
    a, b = left.path, right.path
    # what opening made up (a name for a set without a set file) is not used here: the
    # merged set-level fields are decided below, and every choice is reported
    outcome = MergeOutcome(a, b, output, dry_run=options.dry_run)
    header = _merge_headers(left, right, options, outcome)

    ids_b: Counter[str] = Counter(
        view.id for position, row in enumerate(right.rows()) if (view := RowView(position, row)).id
    )
    ids_a: Counter[str] = Counter()
    rows_a: dict[str, Any] = {}
    for position, row in enumerate(left.rows()):
        view = RowView(position, row)
        if view.id is None:
            continue
        ids_a[view.id] += 1
        if view.id in ids_b and view.id not in rows_a:
            rows_a[view.id] = row
    shared = [row_id for row_id in ids_a if row_id in ids_b]
    repeated = [row_id for row_id in shared if ids_a[row_id] > 1 or ids_b[row_id] > 1]
    if repeated:
        raise EditRefused(
            f"not merged: the id(s) {', '.join(map(repr, repeated[:_SHOWN]))}"
            f"{_more(len(repeated))} repeat within one set and appear in the other, so which"
            " rows match is unclear; give each row its own id first"
        )
    for name, counts in (("A", ids_a), ("B", ids_b)):
        within = [row_id for row_id, count in counts.items() if count > 1]
        if within:
            outcome.notes.append(
                f"{name} already repeats {len(within)} id(s) ({', '.join(within[:_SHOWN])});"
                " they stay repeated (blueprint validate reports duplicate-id)"
            )
    rows_b: dict[str, Any] = {}
    for position, row in enumerate(right.rows()):
        view = RowView(position, row)
        if view.id is None or view.id not in rows_a:
            continue
        changes = value_changes(rows_a[view.id], row)
        if not changes:
            outcome.identical.append(view.id)
        else:
            outcome.conflicts.append(RowConflict(view.id, tuple(c.path for c in changes)))
            rows_b[view.id] = row

    if options.keep is not None:
        for conflict in outcome.family_conflicts:
            if not conflict.grading:
                outcome.families_resolved[conflict.id] = f"kept {options.keep}"
                if options.keep == "b":
                    _replace_family(header, conflict.id, conflict.b)
    unsettled = [c for c in outcome.family_conflicts if c.id not in outcome.families_resolved]
    if unsettled or (outcome.conflicts and options.keep is None and options.suffix is None):
        raise MergeRefused(outcome)
    conflicting = {conflict.id for conflict in outcome.conflicts}
    if options.suffix is not None:
        taken = set(ids_a) | set(ids_b)
        for row_id in conflicting:
            new_id = row_id + options.suffix
            if new_id in taken:
                raise EditRefused(
                    f"not merged: --suffix {options.suffix!r} would rename {row_id!r} to"
                    f" {new_id!r}, an id already used; choose another suffix"
                )
            taken.add(new_id)
            outcome.renamed[row_id] = new_id
            outcome.resolved[row_id] = "renamed"
    else:
        for row_id in conflicting:
            outcome.resolved[row_id] = f"kept {options.keep}"
    skip_b = set(outcome.identical) | (conflicting if options.keep is not None else set())

    def merged() -> Iterator[Any]:
        for position, row in enumerate(left.rows()):
            view = RowView(position, row)
            outcome.from_a += 1
            if options.keep == "b" and view.id in conflicting:
                outcome.from_a -= 1
                outcome.from_b += 1
                yield rows_b[view.id]
            else:
                yield row
        for position, row in enumerate(right.rows()):
            view = RowView(position, row)
            if view.id in skip_b:
                continue
            if view.id in outcome.renamed:
                row = _renamed(row, outcome.renamed[view.id])
            outcome.from_b += 1
            yield row

    _check_output(output, writer.name, header, options)
    made_up = header is None and writer.name == "json"
    if made_up:
        header = {"schemaVersion": SCHEMA_VERSION, "name": output.stem}
        outcome.notes.append(
            f"neither set has set-level fields (no set file), so the merged set is named"
            f" {output.stem!r} after {output.name}"
        )
    write_options = WriteOptions(
        force=options.force,
        strict=True,
        column_order=left.columns or () if writer.name == "csv" else (),
        set_file=header is not None,
    )
    if not options.dry_run:
        # with --force the output may be one of the sets, which the edit replaces only as read
        outcome.export = writer.write(header or {}, merged(), output, write_options)
        outcome.rows = outcome.export.rows
        return outcome
    with scratch_write(writer, header or {}, merged(), output.name, write_options) as (
        result,
        target,
    ):
        outcome.rows = result.rows
        outcome.diff = diff_sets(
            collect(left.source(), str(a)), collect(writer.open(target), str(output))
        )
    return outcome


def _replace_family(header: dict[str, Any] | None, family_id: str, definition: Any) -> None:
    families = header.get("caseFamilies") if header is not None else None
    if not isinstance(families, list):
        return
    for index, family in enumerate(families):
        if isinstance(family, dict) and family.get("id") == family_id:
            families[index] = copy.deepcopy(definition)


def _renamed(row: Any, new_id: str) -> Any:
    row = copy.deepcopy(row)
    row["id"] = new_id
    case = RowView(0, row).case
    if case:
        case["caseId"] = new_id
    return row


def _check_output(
    output: Path, format_name: str, header: dict[str, Any] | None, options: MergeOptions
) -> None:
    """Refuse before any work, in a dry run too, what the write itself would refuse."""
    if not output.parent.is_dir():
        raise OutputError(output, f"the folder {output.parent} does not exist")
    if output.is_dir():
        raise OutputError(output, "it is a folder")
    if options.force:
        return
    targets = [output]
    if format_name in ("csv", "jsonl") and header is not None:
        targets.append(set_file_for(output))
    for target in targets:
        if target.exists():
            raise OutputExistsError(target)


def _merge_headers(
    left: EditableSet, right: EditableSet, options: MergeOptions, outcome: MergeOutcome
) -> dict[str, Any] | None:
    """The merged set-level fields (None when neither set has any), with every
    disagreement recorded in ``outcome``."""
    header_a = left.header if left.has_header else None
    header_b = right.header if right.has_header else None
    if header_a is None and header_b is None:
        merged = None
    elif header_a is None or header_b is None:
        missing, present = ("A", "B") if header_a is None else ("B", "A")
        outcome.notes.append(
            f"{missing} has no set-level fields (no set file): {present}'s are the merged set's"
        )
        merged = copy.deepcopy(header_a if header_a is not None else header_b)
    else:
        merged = copy.deepcopy(header_a)
        for name in dict.fromkeys([*HEADER_FIELDS, *header_a, *header_b]):
            if name in ("caseFamilies", "extensions") or name not in header_b:
                continue
            if name not in header_a:
                merged[name] = copy.deepcopy(header_b[name])
                outcome.set_fields.append(SetFieldChoice(name, None, header_b[name], "b"))
            elif not _same(header_a[name], header_b[name]):
                outcome.set_fields.append(SetFieldChoice(name, header_a[name], header_b[name], "a"))
        _merge_extensions(merged, header_b, outcome)
        _merge_families(merged, header_b, outcome)
    if options.name is not None:
        if merged is None:
            merged = {"schemaVersion": SCHEMA_VERSION}
        outcome.set_fields.append(SetFieldChoice("name", merged.get("name"), None, "given"))
        merged["name"] = options.name
    return merged


def _merge_extensions(
    merged: dict[str, Any], header_b: dict[str, Any], outcome: MergeOutcome
) -> None:
    theirs = header_b.get("extensions")
    if not isinstance(theirs, dict):
        if theirs is not None:
            outcome.notes.append("B's set-level extensions are not an object; A's are kept")
        return
    ours = merged.setdefault("extensions", {})
    if not isinstance(ours, dict):
        outcome.notes.append("A's set-level extensions are not an object; they are kept")
        return
    for namespace, value in theirs.items():
        if namespace not in ours:
            ours[namespace] = copy.deepcopy(value)
            outcome.set_fields.append(SetFieldChoice(f"extensions.{namespace}", None, value, "b"))
        elif not _same(ours[namespace], value):
            outcome.set_fields.append(
                SetFieldChoice(f"extensions.{namespace}", ours[namespace], value, "a")
            )


def _merge_families(
    merged: dict[str, Any], header_b: dict[str, Any], outcome: MergeOutcome
) -> None:
    theirs = header_b.get("caseFamilies")
    if theirs is None:
        return
    ours = merged.get("caseFamilies")
    if not isinstance(theirs, list) or (ours is not None and not isinstance(ours, list)):
        raise EditRefused(
            "not merged: caseFamilies is not a list in"
            f" {'B' if not isinstance(theirs, list) else 'A'}; fix it first"
        )
    if ours is None:
        ours = merged["caseFamilies"] = []
    by_id = {f["id"]: f for f in ours if isinstance(f, dict) and isinstance(f.get("id"), str)}
    for family in theirs:
        family_id = family.get("id") if isinstance(family, dict) else None
        if not isinstance(family_id, str):
            raise EditRefused(
                f"not merged: B has a case family without an id ({dumps_text(family)})"
            )
        if family_id not in by_id:
            ours.append(copy.deepcopy(family))
            by_id[family_id] = family
            outcome.families_from_b.append(family_id)
            continue
        mine = by_id[family_id]
        if _same(mine, family):
            continue
        fields = tuple(
            key
            for key in dict.fromkeys([*mine, *family])
            if key not in mine or key not in family or not _same(mine[key], family[key])
        )
        outcome.family_conflicts.append(FamilyConflict(family_id, fields, mine, family))
