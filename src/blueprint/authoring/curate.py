"""Curating a set in place: remove and rename rows, manage case families, accept and promote.

Each edit takes the one edit path (:mod:`blueprint.authoring.editing`): it opens a canonical
set, decides every change (refusing with the file untouched when it cannot be made as asked),
and commits, which rewrites the file in its own format or, in a dry run, reports the diff and
writes nothing.

Two records live in ``case.extensions`` (the case profile itself is strict):

``blueprint-import``
    written by vendor importers: ``format`` and ``derived``, the values they had to infer.
    :func:`accept_derived` removes the entries a person has confirmed, so ``derived-value``
    warnings go away; ``format`` stays, as the row's origin.
``blueprint-review``
    written by :func:`promote`: ``reviewer``, ``reviewedAt`` (UTC, ISO 8601),
    ``previousProvenance`` and ``provenance``, plus ``acceptedDerived`` when the promotion
    also accepted derived values; an earlier review record is kept under ``earlier``.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, cast

from pydantic import ValidationError

from blueprint.authoring.builder import OracleOutcome, plan_family_oracle
from blueprint.authoring.editing import (
    EditableSet,
    EditOptions,
    EditOutcome,
    EditRefused,
    case_of,
    editing,
    ordered_case,
)
from blueprint.authoring.rowedit import require_versions
from blueprint.core import admissibility
from blueprint.core.errors import UsageError
from blueprint.core.model import (
    EVALUATOR_TYPES,
    ORACLE_TYPES,
    PROVENANCES,
    SEVERITIES,
    STARTER_PROVENANCES,
    CaseFamily,
    EvaluatorType,
    OracleType,
)
from blueprint.formats import StrPath
from blueprint.formats.setfile import set_file_for
from blueprint.formats.vendor import IMPORT_EXTENSION
from blueprint.validation.checks import RowView

REVIEW_EXTENSION: Final = "blueprint-review"
#: the provenances a row can be promoted from: starter material, and imports
PROMOTABLE: Final = frozenset({*STARTER_PROVENANCES, "imported"})
#: the provenances a promotion can give: gold, as a person vouches for it
GOLD_PROVENANCES: Final = tuple(p for p in PROVENANCES if p not in PROMOTABLE)


def _positions(edited: EditableSet, wanted: set[str]) -> tuple[dict[str, list[int]], int]:
    """The positions of the rows with the wanted ids, and the number of rows."""
    found: dict[str, list[int]] = {row_id: [] for row_id in wanted}
    total = 0
    for position, row in enumerate(edited.rows()):
        view = RowView(position, row)
        if view.id in found:
            found[view.id].append(position)
        total += 1
    return found, total


def _require_unique(path: Path, found: dict[str, list[int]]) -> None:
    missing = [row_id for row_id, where in found.items() if not where]
    if missing:
        raise EditRefused(f"{path}: no row has the id {', '.join(map(repr, missing))}")
    repeated = [row_id for row_id, where in found.items() if len(where) > 1]
    if repeated:
        raise EditRefused(
            f"{path}: several rows share the id {', '.join(map(repr, repeated))}; give each"
            " its own id first (edit the file), then try again"
        )


# --- rm --------------------------------------------------------------------------------------


@dataclass
class RemoveOutcome(EditOutcome):
    removed: list[str]
    #: case families the removal left without a row (they stay defined)
    emptied_families: list[str] = field(default_factory=list)

    def details(self) -> dict[str, Any]:
        return {"removed": self.removed, "emptiedFamilies": self.emptied_families}


def remove_rows(
    path: StrPath, row_ids: Sequence[str], options: EditOptions | None = None
) -> RemoveOutcome:
    """Remove the rows with these ids; refused, untouched, when an id is unknown or repeats."""
    with editing(path, options) as edited:
        wanted = list(dict.fromkeys(row_ids))
        if not wanted:
            raise UsageError("name at least one row id to remove")
        found, total = _positions(edited, set(wanted))
        _require_unique(edited.path, found)
        gone = {where[0] for where in found.values()}
        members: Counter[str] = Counter()
        leaving: Counter[str] = Counter()
        for position, row in enumerate(edited.rows()):
            family = RowView(position, row).case.get("caseFamily")
            if isinstance(family, str):
                members[family] += 1
                if position in gone:
                    leaving[family] += 1
        outcome = RemoveOutcome(removed=wanted, notes=list(edited.notes))
        outcome.emptied_families = [
            family
            for family, count in leaving.items()
            if count == members[family] and family in edited.families()
        ]
        kept = (row for position, row in enumerate(edited.rows()) if position not in gone)
        outcome.written = edited.commit(kept, total - len(gone))
        return outcome


# --- rename ----------------------------------------------------------------------------------


@dataclass
class RenameOutcome(EditOutcome):
    old: str
    new: str
    #: the caseId the row had when it differed from its id (now both are the new id)
    case_id_was: Any = None

    def details(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "caseIdWas": self.case_id_was}


def rename_row(
    path: StrPath, old: str, new: str, options: EditOptions | None = None
) -> RenameOutcome:
    """Give a row a new id; its ``case.caseId`` follows. Refused when ``new`` is taken."""
    with editing(path, options) as edited:
        if not new:
            raise EditRefused("the new id is empty")
        if new == old:
            raise EditRefused(f"the row is already called {old!r}")
        found, total = _positions(edited, {old, new})
        if found[new]:
            raise EditRefused(f"a row with the id {new!r} already exists")
        del found[new]
        _require_unique(edited.path, found)
        (target,) = found[old]
        case_of(edited.find(old))  # a row without a profile cannot be renamed whole
        outcome = RenameOutcome(old, new, notes=list(edited.notes))

        def renamed(position: int, row: Any) -> Any:
            if position != target:
                return row
            case = case_of(row)
            if case.get("caseId") != old:
                outcome.case_id_was = case.get("caseId", "(absent)")
            row["id"] = new
            case["caseId"] = new
            row["metadata"]["case"] = ordered_case(case)
            return row

        outcome.written = edited.commit(edited.changed(renamed), total)
        return outcome


# --- family ----------------------------------------------------------------------------------

FAMILY_FIELDS: Final = ("title", "description", "severity", "linkedConcerns")


@dataclass(frozen=True)
class FamilyDefinition:
    """A new case family: its id and oracle type, and optionally the rest."""

    id: str
    oracle_type: str
    evaluator: str | None = None
    severity: str | None = None
    title: str | None = None
    description: str | None = None
    linked_concerns: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The family as the set file holds it, in the schema's field order."""
        data: dict[str, Any] = {"id": self.id}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("oracleType", self.oracle_type),
            ("evaluator", self.evaluator),
            ("severity", self.severity),
            ("linkedConcerns", list(self.linked_concerns) if self.linked_concerns else None),
        ):
            if value is not None:
                data[key] = value
        return data


@dataclass(frozen=True)
class FamilyEdit:
    """Changes to a case family. Fields left None stay as they are; ``unset`` removes
    title, description, severity or linkedConcerns. A new oracle type or evaluator narrows
    the family and every row in it, as ``blueprint oracle ROW --family`` does."""

    family: str
    title: str | None = None
    description: str | None = None
    severity: str | None = None
    linked_concerns: tuple[str, ...] | None = None
    oracle_type: str | None = None
    evaluator: str | None = None
    unset: frozenset[str] = frozenset()
    drop_expected: bool = False

    def values(self) -> dict[str, Any]:
        given = {
            "title": self.title,
            "description": self.description,
            "severity": self.severity,
            "linkedConcerns": list(self.linked_concerns)
            if self.linked_concerns is not None
            else None,
        }
        return {key: value for key, value in given.items() if value is not None}


RowsOfFamily = Literal["drop", "detach"]


@dataclass
class FamilyOutcome(EditOutcome):
    action: Literal["add", "edit", "rm"]
    family: str
    #: the family as it now stands (None once removed)
    definition: dict[str, Any] | None = None
    #: the family before the edit (edit, rm)
    previous: dict[str, Any] | None = None
    #: the rows of the family; for rm, the rows dropped or detached
    rows: list[str] = field(default_factory=list)
    #: for rm with --rows detach: rows that took the family's evaluator along
    took_evaluator: list[str] = field(default_factory=list)
    #: the conditions under which its evaluator (llm-judge) is admitted
    conditions: tuple[str, ...] = ()
    #: what narrowing the oracle type or evaluator did (edit)
    oracle: OracleOutcome | None = None
    #: families rows name that the set does not define (reported as unknown-case-family)
    undefined: list[str] = field(default_factory=list)

    def details(self) -> dict[str, Any]:
        # the narrowing is part of this edit, whose rewrite is told once, after it
        oracle = {**self.oracle.details(), "notes": self.oracle.notes} if self.oracle else None
        return {
            "action": self.action,
            "family": self.family,
            "definition": self.definition,
            "previous": self.previous,
            "rows": self.rows,
            "tookEvaluator": self.took_evaluator,
            "conditions": list(self.conditions),
            "oracle": oracle,
            "undefinedFamilies": self.undefined,
        }


def _family_list(edited: EditableSet) -> list[Any]:
    found = edited.header.get("caseFamilies")
    if found is None:
        found = edited.header["caseFamilies"] = []
    if not isinstance(found, list):
        raise EditRefused(
            f"caseFamilies in {_header_origin(edited)} is not a list; fix it before editing"
            " the families"
        )
    return found


def _header_origin(edited: EditableSet) -> str:
    if edited.codec.name in ("csv", "jsonl"):
        return set_file_for(edited.path).name
    return "the document"


def _family(edited: EditableSet, family_id: str) -> dict[str, Any]:
    families = edited.families()
    if family_id not in families:
        defined = ", ".join(families) or "none"
        raise EditRefused(f"the set defines no case family {family_id!r} (defined: {defined})")
    return families[family_id]


def _check_evaluator(oracle_type: str, evaluator: str | None) -> tuple[str, ...]:
    """Refuse an evaluator the oracle type bars; the conditions of a conditional one."""
    if oracle_type not in ORACLE_TYPES:
        raise UsageError(f"{oracle_type!r} is not an oracle type")
    if evaluator is None:
        return ()
    if evaluator not in EVALUATOR_TYPES:
        raise UsageError(f"{evaluator!r} is not an evaluator")
    rule = admissibility.rule_for(cast(OracleType, oracle_type))
    chosen = cast(EvaluatorType, evaluator)
    if rule.verdict(chosen) == "barred":
        raise EditRefused(
            f"{oracle_type} bars the evaluator {evaluator}: {rule.bars[chosen]}."
            f" Admissible: {', '.join(rule.admissible())}"
        )
    return rule.conditional.get(chosen, ())


def _members(edited: EditableSet, family_id: str) -> list[str]:
    return [
        str(view.id)
        for position, row in enumerate(edited.rows())
        if (view := RowView(position, row)).case.get("caseFamily") == family_id
    ]


def _undefined_families(edited: EditableSet) -> list[str]:
    defined = edited.families()
    named_by_rows = dict.fromkeys(
        family
        for position, row in enumerate(edited.rows())
        if isinstance(family := RowView(position, row).case.get("caseFamily"), str)
    )
    return [family for family in named_by_rows if family not in defined]


def _created_note(edited: EditableSet, outcome: FamilyOutcome) -> None:
    if outcome.written is not None and outcome.written.created:
        verb = "would create" if outcome.written.dry_run else "created"
        outcome.notes.append(
            f"{verb} {outcome.written.created[0].name}, the set file that holds the case"
            f" families beside {edited.path.name} (the set is named {edited.header['name']!r})"
        )


def add_family(
    path: StrPath, definition: FamilyDefinition, options: EditOptions | None = None
) -> FamilyOutcome:
    """Define a new case family (no rows yet); refused when its evaluator is barred."""
    with editing(path, options) as edited:
        conditions = _check_evaluator(definition.oracle_type, definition.evaluator)
        if definition.severity is not None and definition.severity not in SEVERITIES:
            raise UsageError(f"{definition.severity!r} is not a severity")
        data = definition.to_json()
        try:
            CaseFamily.model_validate(data)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'family'}: {e['msg']}" for e in error.errors()
            )
            raise EditRefused(f"the case family is not valid: {problems}") from None
        families = _family_list(edited)
        if definition.id in edited.families():
            raise EditRefused(f"the set already defines a case family {definition.id!r}")
        families.append(data)
        outcome = FamilyOutcome(
            "add",
            definition.id,
            definition=data,
            rows=_members(edited, definition.id),
            conditions=conditions,
            undefined=_undefined_families(edited),
            notes=list(edited.notes),
        )
        outcome.written = edited.commit(edited.rows(), edited.count(), header_changed=True)
        _created_note(edited, outcome)
        return outcome


def edit_family(
    path: StrPath, edit: FamilyEdit, options: EditOptions | None = None
) -> FamilyOutcome:
    """Change a case family's title, description, severity or linked concerns, and (with a
    new oracle type or evaluator) narrow it and its rows together."""
    with editing(path, options) as edited:
        values = edit.values()
        unknown = edit.unset - set(FAMILY_FIELDS)
        if unknown:
            raise UsageError(
                f"cannot unset {', '.join(sorted(unknown))}: only {', '.join(FAMILY_FIELDS)}"
            )
        both = edit.unset & set(values)
        if both:
            raise UsageError(f"{', '.join(sorted(both))}: both set and unset")
        if edit.severity is not None and edit.severity not in SEVERITIES:
            raise UsageError(f"{edit.severity!r} is not a severity")
        regrading = edit.oracle_type is not None or edit.evaluator is not None
        if not values and not edit.unset and not regrading:
            raise UsageError("nothing to change: give a field to set or --unset")
        family = _family(edited, edit.family)
        previous = copy.deepcopy(family)
        outcome = FamilyOutcome("edit", edit.family, previous=previous, notes=list(edited.notes))
        change = None
        if regrading:
            oracle_type = edit.oracle_type or family.get("oracleType")
            if not isinstance(oracle_type, str) or oracle_type not in ORACLE_TYPES:
                raise EditRefused(
                    f"the case family {edit.family!r} has no valid oracle type; give one"
                    " (--oracle-type)"
                )
            _check_evaluator(oracle_type, edit.evaluator)
            outcome.oracle, change = plan_family_oracle(
                edited,
                edit.family,
                cast(OracleType, oracle_type),
                cast(EvaluatorType | None, edit.evaluator),
                drop_expected=edit.drop_expected,
            )
            outcome.conditions = outcome.oracle.conditions
        family.update(values)
        for key in edit.unset:
            family.pop(key, None)
        _reorder_family(family)
        outcome.definition = family
        outcome.rows = _members(edited, edit.family)
        rows = edited.changed(change) if change is not None else edited.rows()
        outcome.written = edited.commit(rows, edited.count(), header_changed=True)
        return outcome


_FAMILY_ORDER: Final[tuple[str, ...]] = (
    "id",
    "title",
    "description",
    "oracleType",
    "evaluator",
    "severity",
    "linkedConcerns",
)


def _reorder_family(family: dict[str, Any]) -> None:
    """Known fields in schema order, unknown ones after, in place."""
    ordered: dict[str, Any] = {key: family[key] for key in _FAMILY_ORDER if key in family}
    ordered.update((key, value) for key, value in family.items() if key not in ordered)
    family.clear()
    family.update(ordered)


def remove_family(
    path: StrPath,
    family_id: str,
    rows: RowsOfFamily | None = None,
    options: EditOptions | None = None,
) -> FamilyOutcome:
    """Remove a case family. While rows belong to it, refused unless ``rows`` says what
    happens to them: ``drop`` removes them, ``detach`` keeps them outside any family."""
    with editing(path, options) as edited:
        family = _family(edited, family_id)
        listed = _family_list(edited)
        members = _members(edited, family_id)
        if members and rows is None:
            shown = ", ".join(members[:5]) + (
                f" and {len(members) - 5} more" if len(members) > 5 else ""
            )
            raise EditRefused(
                f"{len(members)} row(s) belong to the case family {family_id!r} ({shown}); say"
                " what happens to them: --rows drop removes them, --rows detach keeps them"
                " outside any family"
            )
        outcome = FamilyOutcome(
            "rm", family_id, previous=copy.deepcopy(family), rows=members, notes=list(edited.notes)
        )
        copies = [f for f in listed if isinstance(f, dict) and f.get("id") == family_id]
        if len(copies) > 1:
            outcome.notes.append(f"the set defined {family_id!r} {len(copies)} times; all removed")
        listed[:] = [f for f in listed if not (isinstance(f, dict) and f.get("id") == family_id)]
        evaluator = family.get("evaluator")

        def detached(position: int, row: Any) -> Any:
            view = RowView(position, row)
            if view.case.get("caseFamily") != family_id:
                return row
            case = case_of(row)
            del case["caseFamily"]
            if "evaluator" not in case and evaluator is not None:
                # it was graded by the family's evaluator; leaving, it takes it along
                case["evaluator"] = evaluator
                outcome.took_evaluator.append(str(view.id))
            row["metadata"]["case"] = ordered_case(case)
            return row

        total = edited.count()
        written: Iterator[Any]
        if rows == "drop":
            written = (
                row
                for position, row in enumerate(edited.rows())
                if RowView(position, row).case.get("caseFamily") != family_id
            )
            total -= len(members)
        else:
            written = edited.changed(detached)
            if members and family.get("severity") is not None:
                outcome.notes.append(
                    f"the family's severity ({family['severity']}) no longer applies to the"
                    " detached rows: severity belongs to a family, never to a row"
                )
        outcome.written = edited.commit(written, total, header_changed=True)
        return outcome


# --- accept ----------------------------------------------------------------------------------


@dataclass
class AcceptOutcome(EditOutcome):
    #: row id -> the derived values accepted: field path -> how the import derived it
    accepted: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: rows named that had nothing (matching) to accept
    nothing: list[str] = field(default_factory=list)
    #: fields asked for that no row in scope has derived (already accepted, or misspelt)
    unmatched_fields: list[str] = field(default_factory=list)
    #: every field still derived in the rows in scope, before this acceptance
    derived_fields: list[str] = field(default_factory=list)

    def details(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "nothingToAccept": self.nothing,
            "unmatchedFields": self.unmatched_fields,
            "derivedFields": self.derived_fields,
        }


def _matches(path: str, wanted: Sequence[str] | None) -> bool:
    """Whether a derived field path is one asked for: the full path (metadata.case.oracleType)
    or its tail (case.oracleType, oracleType)."""
    if wanted is None:
        return True
    return any(path == name or path.endswith("." + name) for name in wanted)


def _import_record(row: Any) -> dict[str, Any] | None:
    record = RowView(0, row).imported()
    return record or None


def accept_derived(
    path: StrPath,
    row_ids: Sequence[str] | None,
    fields: Sequence[str] | None = None,
    options: EditOptions | None = None,
    versions: Mapping[str, str] | None = None,
) -> AcceptOutcome:
    """Confirm values an import derived, in the named rows (None: every row), optionally
    only some fields; each accepted entry leaves ``case.extensions["blueprint-import"]``.

    Refused, untouched, for an unknown row id, and (EditConflict) for a row that is no
    longer the version ``versions`` gives for it. Nothing to accept is not an error: the
    outcome says so (and which fields are still derived), and the file is left as it is
    (``written`` None).
    """
    with editing(path, options) as edited:
        require_versions(edited, versions or {})
        wanted = list(dict.fromkeys(row_ids)) if row_ids is not None else None
        if wanted is not None and not wanted:
            raise UsageError("name the rows to accept, or accept every row (--all)")
        total = edited.count()
        if wanted is not None:
            found, _ = _positions(edited, set(wanted))
            _require_unique(edited.path, found)
        outcome = AcceptOutcome(notes=list(edited.notes))
        targets: dict[int, list[str]] = {}
        seen_fields: set[str] = set()
        field_used = dict.fromkeys(fields or (), False)
        for position, row in enumerate(edited.rows()):
            view = RowView(position, row)
            if wanted is not None and view.id not in wanted:
                continue
            record = _import_record(row)
            derived = record["derived"] if record else {}
            seen_fields.update(derived)
            chosen = [name for name in derived if _matches(name, fields)]
            for name in field_used:
                field_used[name] = field_used[name] or any(_matches(p, [name]) for p in derived)
            if chosen:
                targets[position] = chosen
                outcome.accepted[str(view.id)] = {name: derived[name] for name in chosen}
            elif wanted is not None:
                outcome.nothing.append(str(view.id))
        outcome.unmatched_fields = [name for name, used in field_used.items() if not used]
        outcome.derived_fields = sorted(seen_fields)
        if not targets:
            return outcome

        def accepted(position: int, row: Any) -> Any:
            if position not in targets:
                return row
            case = case_of(row)
            extensions = case["extensions"]
            record = extensions[IMPORT_EXTENSION]
            for name in targets[position]:
                del record["derived"][name]
            if not record["derived"]:
                del record["derived"]  # the record keeps the format: where the row came from
            if not record:
                del extensions[IMPORT_EXTENSION]
            if not extensions:
                del case["extensions"]
            return row

        outcome.written = edited.commit(edited.changed(accepted), total)
        return outcome


# --- promote ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromoteRequest:
    """Rows a person reviewed and vouches for, the provenance they now have, and who."""

    row_ids: tuple[str, ...]
    provenance: str
    reviewer: str
    #: also accept the values an import derived (else a row with some is refused)
    accept_derived: bool = False
    #: when the review happened; default now (UTC)
    reviewed_at: datetime | None = None
    #: row id -> the version the reviewer saw (:func:`row_version`): refused if it changed
    versions: Mapping[str, str] = field(default_factory=dict)


@dataclass
class PromoteOutcome(EditOutcome):
    provenance: str
    reviewer: str
    reviewed_at: str
    #: row id -> its provenance before
    promoted: dict[str, str] = field(default_factory=dict)
    #: row id -> derived values accepted with the promotion
    accepted: dict[str, dict[str, Any]] = field(default_factory=dict)

    def details(self) -> dict[str, Any]:
        return {
            "provenance": self.provenance,
            "reviewer": self.reviewer,
            "reviewedAt": self.reviewed_at,
            "promoted": self.promoted,
            "acceptedDerived": self.accepted,
        }


def utc_stamp(moment: datetime | None = None) -> str:
    """A moment as UTC ISO 8601 to the second, ``2025-03-01T14:05:00Z``."""
    moment = moment or datetime.now(UTC)
    if moment.tzinfo is None:
        raise UsageError("the review time needs a time zone")
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def promote(
    path: StrPath, request: PromoteRequest, options: EditOptions | None = None
) -> PromoteOutcome:
    """Turn starter or imported rows into gold: a new provenance, and a review record of
    who reviewed them and when under ``case.extensions["blueprint-review"]``."""
    with editing(path, options) as edited:
        require_versions(edited, request.versions)
        if request.provenance not in PROVENANCES:
            raise UsageError(f"{request.provenance!r} is not a provenance")
        if request.provenance not in GOLD_PROVENANCES:
            raise EditRefused(
                f"promoting to {request.provenance} is refused: promotion gives reviewed gold"
                f" a provenance that says how it is known ({', '.join(GOLD_PROVENANCES)}),"
                " never a starter or import one"
            )
        reviewer = request.reviewer.strip()
        if not reviewer:
            raise UsageError("--reviewer is empty: say who reviewed the rows")
        wanted = list(dict.fromkeys(request.row_ids))
        if not wanted:
            raise UsageError("name at least one row to promote")
        found, total = _positions(edited, set(wanted))
        _require_unique(edited.path, found)
        stamp = utc_stamp(request.reviewed_at)
        outcome = PromoteOutcome(request.provenance, reviewer, stamp, notes=list(edited.notes))
        targets = {where[0] for where in found.values()}
        for position, row in enumerate(edited.rows()):
            if position not in targets:
                continue
            view = RowView(position, row)
            case = case_of(row)
            provenance = case.get("provenance")
            if provenance not in PROMOTABLE:
                raise EditRefused(
                    f"row {view.id!r} is {provenance}, not starter or imported material;"
                    " promote turns those into gold"
                )
            record = _import_record(row)
            derived = record["derived"] if record else {}
            if derived and not request.accept_derived:
                raise EditRefused(
                    f"row {view.id!r} still has values derived on import"
                    f" ({', '.join(derived)}); review them and confirm with blueprint accept,"
                    " or pass --accept-derived to confirm them with the promotion"
                )
            outcome.promoted[str(view.id)] = str(provenance)
            if derived:
                outcome.accepted[str(view.id)] = dict(derived)

        def promoted(position: int, row: Any) -> Any:
            if position not in targets:
                return row
            case = case_of(row)
            row_id = str(row["id"])
            extensions = case.setdefault("extensions", {})
            if not isinstance(extensions, dict):
                raise EditRefused(f"row {row_id!r}: case.extensions is not an object")
            review: dict[str, Any] = {
                "reviewer": reviewer,
                "reviewedAt": stamp,
                "previousProvenance": outcome.promoted[row_id],
                "provenance": request.provenance,
            }
            if row_id in outcome.accepted:
                review["acceptedDerived"] = outcome.accepted[row_id]
                record = extensions[IMPORT_EXTENSION]
                del record["derived"]
            earlier = extensions.get(REVIEW_EXTENSION)
            if isinstance(earlier, dict):  # a review before this one is kept, never lost
                history = earlier.pop("earlier", [])
                review["earlier"] = [*history, earlier] if isinstance(history, list) else [earlier]
            elif earlier is not None:
                review["earlier"] = [earlier]
            extensions[REVIEW_EXTENSION] = review
            case["provenance"] = request.provenance
            return row

        outcome.written = edited.commit(edited.changed(promoted), total)
        return outcome
