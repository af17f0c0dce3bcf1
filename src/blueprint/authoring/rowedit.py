"""Changing a row's fields by path, and pointing a set at a judge report: ``blueprint edit``,
``judge-report --point`` and every write the studio makes.

A change names a field by its dotted path (``input``, ``expected``,
``metadata.case.expectedBehavior``, ``metadata.split``) and gives its new JSON value, or
removes it. The edit runs on the one edit path (:mod:`blueprint.authoring.editing`): locked,
atomic, the file's format and CSV column order kept. An edit may carry the version of the row
it was made from (:func:`row_version`); when the row on disk is no longer that version (another
tab, another program, a second person), the edit is refused with :class:`EditConflict`, which
carries the row as it now is, and nothing is written.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.authoring.editing import (
    EditableSet,
    EditOptions,
    EditOutcome,
    EditRefused,
    editing,
    ordered_case,
)
from blueprint.core.errors import UsageError
from blueprint.diff import digest
from blueprint.formats import StrPath

#: the top-level keys of a row a change may name (``id`` changes with ``blueprint rename``)
EDITABLE_ROOTS: Final = ("input", "expected", "metadata")


class _Removed:
    """The value of a change that removes its field."""

    def __repr__(self) -> str:
        return "REMOVED"


REMOVED: Final = _Removed()


@dataclass(frozen=True)
class FieldChange:
    """One field of a row set to a JSON value, or removed (``value`` is :data:`REMOVED`)."""

    path: tuple[str, ...]
    value: Any = REMOVED

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def field_path(text: str) -> tuple[str, ...]:
    """A dotted field path (``metadata.case.severity``), checked: it starts at a field a row
    may change, and has no empty part."""
    parts = tuple(text.strip().split("."))
    if not text.strip() or any(not part for part in parts):
        raise UsageError(f"{text!r} is not a field path (e.g. metadata.case.expectedBehavior)")
    if parts[0] == "id":
        raise UsageError("a row's id changes with blueprint rename, which keeps case.caseId along")
    if parts[0] not in EDITABLE_ROOTS:
        raise UsageError(
            f"{text!r}: a change names a field under {', '.join(EDITABLE_ROOTS)}"
            " (e.g. metadata.case.expectedBehavior)"
        )
    return parts


def row_version(row: Any) -> str:
    """The version of a row's content: equal exactly when the rows are the same value."""
    return digest(row).hex()


def apply_changes(row: dict[str, Any], changes: Sequence[FieldChange]) -> dict[str, Any]:
    """A copy of ``row`` with ``changes`` made, in order; refused (EditRefused) where a path
    runs through a value that is not an object. New case-profile fields take their place in
    the schema's order among the fields already there, which keep theirs."""
    edited = copy.deepcopy(row)
    metadata = edited.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    before = tuple(case) if isinstance(case, dict) else ()
    for change in changes:
        holder: Any = edited
        for depth, key in enumerate(change.path[:-1]):
            if not isinstance(holder, dict):
                break
            if key not in holder and change.value is not REMOVED:
                holder[key] = {}
            holder = holder.get(key)
            if holder is None and change.value is REMOVED:
                break
            if not isinstance(holder, dict):
                where = ".".join(change.path[: depth + 1])
                raise EditRefused(
                    f"row {row.get('id')!r}: {where} is not an object, so"
                    f" {change.dotted} cannot be set inside it"
                )
        else:
            last = change.path[-1]
            if change.value is REMOVED:
                holder.pop(last, None)
            else:
                holder[last] = copy.deepcopy(change.value)
    metadata = edited.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("case"), dict):
        metadata["case"] = _placed(metadata["case"], before)
    return edited


def _placed(case: dict[str, Any], before: tuple[str, ...]) -> dict[str, Any]:
    """The case profile with the fields it had keeping their order, and each new field put
    before the first of them that the schema orders after it."""
    if not before:
        return ordered_case(case)
    rank = {key: place for place, key in enumerate(ordered_case(dict.fromkeys(case)))}
    order = [key for key in case if key in before]
    for key in (key for key in ordered_case(case) if key not in before):
        place = next(
            (index for index, kept in enumerate(order) if rank[kept] > rank[key]), len(order)
        )
        order.insert(place, key)
    return {key: case[key] for key in order}


class EditConflict(EditRefused):
    """The row changed since the edit was made from it: refused, the file untouched. Carries
    the row as it now is (None: no row has the id any more) and its version."""

    def __init__(self, message: str, current: dict[str, Any] | None) -> None:
        super().__init__(message)
        self.current = current
        self.version = row_version(current) if current is not None else None


def require_versions(edited: EditableSet, versions: Mapping[str, str]) -> None:
    """Refuse (EditConflict) unless each named row is still the version given: a command
    made from a page of the set does nothing to a row that changed since."""
    if not versions:
        return
    seen: set[str] = set()
    for row in edited.rows():
        row_id = row.get("id") if isinstance(row, dict) else None
        if isinstance(row_id, str) and row_id in versions:
            seen.add(row_id)
            if row_version(row) != versions[row_id]:
                raise EditConflict(
                    f"{edited.path}: the row {row_id!r} changed since the page was made from"
                    " it; nothing was written",
                    row,
                )
    for row_id in versions:
        if row_id not in seen:
            raise EditConflict(f"{edited.path}: the row {row_id!r} is no longer in the set", None)


@dataclass
class RowEditOutcome(EditOutcome):
    row_id: str = ""
    #: the fields the edit changed, as dotted paths (empty: the row was already so)
    changed: list[str] = field(default_factory=list)
    #: the row's version before the edit, and after it
    version_before: str = ""
    version_after: str = ""
    #: the row as the edit leaves it
    row: dict[str, Any] = field(default_factory=dict)

    def details(self) -> dict[str, Any]:
        return {
            "row": self.row_id,
            "changed": self.changed,
            "versionBefore": self.version_before,
            "versionAfter": self.version_after,
        }


def value_at(row: Any, path: tuple[str, ...]) -> Any:
    """The value at a path of a row, or REMOVED where there is none."""
    for key in path:
        if not isinstance(row, dict) or key not in row:
            return REMOVED
        row = row[key]
    return row


def edit_row(
    path: StrPath,
    row_id: str,
    changes: Sequence[FieldChange],
    *,
    expected_version: str | None = None,
    options: EditOptions | None = None,
) -> RowEditOutcome:
    """Make ``changes`` to the row ``row_id`` of a canonical set, in place.

    With ``expected_version``, refused with :class:`EditConflict` unless the row is still that
    version. Changes that leave the row as it is write nothing (``written`` None).
    """
    if not changes:
        raise UsageError("name at least one change (--set, --text or --unset)")
    with editing(path, options) as edited:
        position: int | None = None
        current: dict[str, Any] | None = None
        total = 0
        for index, row in enumerate(edited.rows()):
            total += 1
            if isinstance(row, dict) and row.get("id") == row_id:
                if current is not None:
                    raise EditRefused(
                        f"{edited.path}: several rows share the id {row_id!r}; fix that first"
                    )
                position, current = index, row
        if current is None or position is None:
            if expected_version is not None:
                raise EditConflict(
                    f"{edited.path}: the row {row_id!r} is no longer in the set (removed or"
                    " renamed since the edit began); nothing was written",
                    None,
                )
            raise EditRefused(f"{edited.path}: no row has the id {row_id!r}")
        before = row_version(current)
        if expected_version is not None and expected_version != before:
            raise EditConflict(
                f"{edited.path}: the row {row_id!r} changed since the edit began (in another"
                " tab, another program or by someone else); nothing was written. Start again"
                " from the row as it is now",
                current,
            )
        updated = apply_changes(current, changes)
        outcome = RowEditOutcome(
            notes=list(edited.notes),
            row_id=row_id,
            version_before=before,
            version_after=row_version(updated),
            row=updated,
        )
        outcome.changed = [
            change.dotted
            for change in changes
            if value_at(current, change.path) != value_at(updated, change.path)
        ]
        if updated == current:
            return outcome
        target = position

        def replaced(index: int, row: Any) -> Any:
            return updated if index == target else row

        outcome.written = edited.commit(edited.changed(replaced), total)
        return outcome


# --- judge reports ---------------------------------------------------------------------------


@dataclass
class PointOutcome(EditOutcome):
    #: the path the set now names, relative to the set file
    reference: str = ""
    #: the case family that names it (None: the set itself)
    family: str | None = None
    #: the set already named the report: nothing was written
    already: bool = False

    def details(self) -> dict[str, Any]:
        return {"reference": self.reference, "family": self.family, "already": self.already}


def report_reference(set_path: Path, report: Path) -> str:
    """How a set file names a report: its path relative to the set's folder, with ``/``."""
    relative = os.path.relpath(report.resolve(), set_path.resolve().parent)
    return Path(relative).as_posix()


def point_at_judge_report(
    path: StrPath,
    report: StrPath,
    *,
    family: str | None = None,
    options: EditOptions | None = None,
) -> PointOutcome:
    """Add ``report`` to the ``judgeValidation`` of the set (or of one case family), so that
    ``blueprint validate`` reads it; earlier reports stay named."""
    set_path = Path(path)
    reference = report_reference(set_path, Path(report))
    with editing(path, options) as edited:
        holder: dict[str, Any] = edited.header
        if family is not None:
            families = edited.families()
            if family not in families:
                raise EditRefused(f"{edited.path}: no case family {family!r} is defined")
            holder = families[family]
        outcome = PointOutcome(notes=list(edited.notes), reference=reference, family=family)
        named = holder.get("judgeValidation")
        listed = [named] if isinstance(named, str) else list(named or [])
        if reference in listed:
            outcome.already = True
            return outcome
        listed.append(reference)
        holder["judgeValidation"] = listed[0] if len(listed) == 1 else listed
        outcome.written = edited.commit(edited.rows(), edited.count(), header_changed=True)
        return outcome
