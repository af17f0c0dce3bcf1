"""Semantic diff of two sets, keyed by row id, across formats.

Rows are matched by ``id`` (repeated ids by occurrence, rows without an id by position) and
compared value by value with types kept apart: ``"1"`` differs from ``1``, ``1`` from ``1.0``,
``null`` from an absent key. Key order inside objects never counts; row order is reported
separately. Set-level fields are compared only when both sides carry them.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from blueprint.core import jsonpath
from blueprint.core.errors import ParseError
from blueprint.core.model import HEADER_FIELDS
from blueprint.formats import Codec, SetSource, StrPath, UnreadableRow, resolve_codec
from blueprint.formats.native import without_kept_text
from blueprint.io import jsonvalues


class _Absent:
    """Marks the side of a change where the key does not exist."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Final = _Absent()


@dataclass(frozen=True)
class Change:
    """One difference inside a row or the set-level fields."""

    path: str
    kind: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.before is not ABSENT:
            data["before"] = self.before
        if self.after is not ABSENT:
            data["after"] = self.after
        return data


@dataclass(frozen=True)
class RowChange:
    id: str
    changes: tuple[Change, ...]

    @property
    def paths(self) -> list[str]:
        return [change.path for change in self.changes]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "changes": [change.to_json() for change in self.changes]}


@dataclass
class SetDiff:
    """What differs between two sets."""

    left: str
    right: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[RowChange] = field(default_factory=list)
    header: list[Change] = field(default_factory=list)
    order_changed: bool = False
    not_compared: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed or self.header or self.order_changed)

    def to_json(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "left": self.left,
            "right": self.right,
            "added": self.added,
            "removed": self.removed,
            "changed": [row.to_json() for row in self.changed],
            "setFields": [change.to_json() for change in self.header],
            "orderChanged": self.order_changed,
            "notCompared": self.not_compared,
        }


#: how rows are matched: by id and occurrence (the second row with id "a" matches the second
#: row with id "a"); rows without a string id by their order among such rows
RowKey = tuple[str | None, int]


def row_label(key: RowKey) -> str:
    row_id, occurrence = key
    if row_id is None:
        return f"(row without id #{occurrence})"
    return row_id if occurrence == 1 else f"{row_id} (occurrence {occurrence})"


#: the case fields a review of a diff reads for every row (how it is graded, where it came
#: from, its version); an indexed set keeps these and a digest, not the row
REVIEWED_CASE_FIELDS: Final = ("oracleType", "evaluator", "provenance", "version")


def case_of(row: Any) -> dict[str, Any]:
    """A row's case profile, or an empty one where the row has none that reads as one."""
    metadata = row.get("metadata") if isinstance(row, dict) else None
    case = metadata.get("case") if isinstance(metadata, dict) else None
    return case if isinstance(case, dict) else {}


def digest(row: Any) -> bytes:
    """A digest of a row's canonical bytes: equal exactly when the rows are the same value."""
    return hashlib.blake2b(jsonvalues.dumps(row, sort_keys=True), digest_size=16).digest()


class ComparedSet(Protocol):
    """What comparing and reviewing read of a set: its rows' keys in order, a digest and the
    reviewed case fields of each, and the rows themselves for the keys that differ."""

    label: str
    header: dict[str, Any] | None
    notes: list[str]

    def row_keys(self) -> Iterable[RowKey]: ...

    def has(self, key: RowKey) -> bool: ...

    def digest(self, key: RowKey) -> bytes: ...

    def case(self, key: RowKey) -> dict[str, Any]: ...

    def rows_for(self, keys: Collection[RowKey]) -> Iterator[tuple[RowKey, Any]]: ...


@dataclass
class LoadedSet:
    """A whole set in memory, for comparing: set-level fields and rows keyed for matching."""

    label: str
    header: dict[str, Any] | None
    rows: dict[RowKey, Any]
    notes: list[str]

    def row_keys(self) -> Iterable[RowKey]:
        return self.rows.keys()

    def has(self, key: RowKey) -> bool:
        return key in self.rows

    def digest(self, key: RowKey) -> bytes:
        return digest(self.rows[key])

    def case(self, key: RowKey) -> dict[str, Any]:
        return case_of(self.rows[key])

    def rows_for(self, keys: Collection[RowKey]) -> Iterator[tuple[RowKey, Any]]:
        return ((key, self.rows[key]) for key in self.rows if key in keys)


class IndexedSet:
    """A set file compared without holding its rows: each row's key, digest and reviewed case
    fields, in file order. The rows that differ are read again from the file when needed, so
    comparing two large files costs a few hundred bytes a row rather than the rows."""

    def __init__(self, codec: Codec, path: Path, label: str) -> None:
        self.codec = codec
        self.path = path
        self.label = label
        self._entries: dict[RowKey, tuple[bytes, tuple[Any, ...]]] = {}
        # the same few oracle types, evaluators and provenances recur on every row: one copy
        interned: dict[str, str] = {}
        source = codec.open(path)
        for key, row in _keyed_rows(source):
            case = case_of(row)
            fields = tuple(
                interned.setdefault(value, value) if isinstance(value, str) else value
                for value in (case.get(name, ABSENT) for name in REVIEWED_CASE_FIELDS)
            )
            self._entries[key] = (digest(row), fields)
        self.header = source.header
        self.notes = _matching_notes(label, self._entries)

    def row_keys(self) -> Iterable[RowKey]:
        return self._entries.keys()

    def has(self, key: RowKey) -> bool:
        return key in self._entries

    def digest(self, key: RowKey) -> bytes:
        return self._entries[key][0]

    def case(self, key: RowKey) -> dict[str, Any]:
        fields = self._entries[key][1]
        return {
            name: value
            for name, value in zip(REVIEWED_CASE_FIELDS, fields, strict=True)
            if value is not ABSENT
        }

    def rows_for(self, keys: Collection[RowKey]) -> Iterator[tuple[RowKey, Any]]:
        """The rows with these keys, read again from the file, in file order."""
        found = 0
        for key, row in _keyed_rows(self.codec.open(self.path)):
            if key not in keys:
                continue
            if key not in self._entries or digest(row) != self._entries[key][0]:
                raise self._changed()
            found += 1
            yield key, row
        if found != len(keys):
            raise self._changed()

    def _changed(self) -> ParseError:
        return ParseError(self.path, "the file changed while it was being compared; run again")


def _keyed_rows(source: SetSource) -> Iterator[tuple[RowKey, Any]]:
    """Every row of a source with its key; an unreadable row stops the comparison."""
    source.require_structure()
    seen: Counter[str | None] = Counter()
    for item in source.rows:
        if isinstance(item, UnreadableRow):
            raise item.error(source.path)
        row_id = item.data.get("id") if isinstance(item.data, dict) else None
        key = row_id if isinstance(row_id, str) else None
        seen[key] += 1
        yield (key, seen[key]), item.data


def _matching_notes(label: str, keys: Iterable[RowKey]) -> list[str]:
    """What a comparison should say about rows matched other than by their own id."""
    unnamed = repeated = 0
    for row_id, occurrence in keys:
        if row_id is None:
            unnamed = max(unnamed, occurrence)
        elif occurrence == 2:
            repeated += 1
    notes = []
    if unnamed:
        notes.append(f"{label}: {unnamed} row(s) without an id were matched by position")
    if repeated:
        notes.append(f"{label}: {repeated} id(s) repeat; their rows were matched by occurrence")
    return notes


def load_for_diff(path: Path, format: str | None = None, *, label: str | None = None) -> LoadedSet:
    codec = resolve_codec(path, format, reading=True)
    return collect(codec.open(path), label or str(path))


def index_for_diff(
    path: Path, format: str | None = None, *, label: str | None = None
) -> IndexedSet:
    """A set file indexed for comparing: its rows stay in the file (see IndexedSet)."""
    codec = resolve_codec(path, format, reading=True)
    return IndexedSet(codec, path, label or str(path))


def collect(source: SetSource, label: str) -> LoadedSet:
    """Read every row of a source, keyed for matching; unreadable rows stop the comparison."""
    rows = dict(_keyed_rows(source))
    return LoadedSet(
        label=label, header=source.header, rows=rows, notes=_matching_notes(label, rows)
    )


def _same(left: Any, right: Any) -> bool:
    # serialising keeps types apart where == does not (1 == 1.0 == True in Python)
    return jsonvalues.dumps(left, sort_keys=True) == jsonvalues.dumps(right, sort_keys=True)


_KINDS: Final = {
    "values_changed": "changed",
    "type_changes": "type changed",
    "dictionary_item_added": "added",
    "dictionary_item_removed": "removed",
    "iterable_item_added": "added",
    "iterable_item_removed": "removed",
}


def value_changes(left: Any, right: Any, base: str = "$") -> list[Change]:
    """The differences between two JSON values, each at its JSON path."""
    if _same(left, right):
        return []
    DeepDiff = _deep_diff()
    # every field by name, however few keys two objects share (DeepDiff would otherwise
    # report an object whose keys mostly differ as one change)
    tree = DeepDiff(left, right, view="tree", verbose_level=2, threshold_to_diff_deeper=0)
    changes = []
    for report_type, kind in _KINDS.items():
        for level in tree.get(report_type, []):
            location = level.path(output_format="list")
            before = ABSENT if kind == "added" else level.t1
            after = ABSENT if kind == "removed" else level.t2
            changes.append(Change(jsonpath.join(base, location), kind, before, after))
    if not changes:  # something DeepDiff does not classify; still report it whole
        changes.append(Change(base, "changed", left, right))
    changes.sort(key=lambda change: change.path)
    return changes


#: what deepdiff imports for the dataframes it can compare, which JSON values never are:
#: pandas alone costs some 70 MiB and a third of a second
_DATAFRAME_LIBRARIES: Final = ("pandas", "polars")


def _deep_diff() -> Any:
    """deepdiff's ``DeepDiff``, imported on first use (no command needs it at start-up)
    without the dataframe libraries it would import alongside: while it is imported, they
    read as not installed (deepdiff then leaves their types alone); a caller that has
    imported one already keeps it."""
    if "deepdiff" in sys.modules:
        from deepdiff import DeepDiff

        return DeepDiff
    blocked = [name for name in _DATAFRAME_LIBRARIES if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # an import of it fails
    try:
        from deepdiff import DeepDiff
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return DeepDiff


def _keyed(families: Any) -> dict[str, Any] | None:
    """Case families by id, when every one has an id of its own; None otherwise."""
    if not isinstance(families, list):
        return None
    ids = [family.get("id") if isinstance(family, dict) else None for family in families]
    if not all(isinstance(family_id, str) for family_id in ids) or len(set(ids)) != len(ids):
        return None
    return dict(zip(ids, families, strict=True))  # type: ignore[arg-type]


def family_path(family_id: str) -> str:
    """Where a case family is, by its id: ``$.caseFamilies['refunds']``."""
    escaped = family_id.replace("\\", "\\\\").replace("'", "\\'")
    return f"$.caseFamilies['{escaped}']"


def _family_changes(before: list[Any], after: list[Any]) -> list[Change]:
    """Case families compared by id, not by position: removing the first family is one
    removal, not a change to every family after it. A new order is one change of its own."""
    old, new = _keyed(before) or {}, _keyed(after) or {}
    changes = []
    for family_id, family in old.items():
        where = family_path(family_id)
        if family_id not in new:
            changes.append(Change(where, "removed", family, ABSENT))
        else:
            changes.extend(value_changes(family, new[family_id], where))
    changes += [
        Change(family_path(family_id), "added", ABSENT, family)
        for family_id, family in new.items()
        if family_id not in old
    ]
    shared_old = [family_id for family_id in old if family_id in new]
    shared_new = [family_id for family_id in new if family_id in old]
    if shared_old != shared_new:
        changes.append(Change("$.caseFamilies", "reordered", shared_old, shared_new))
    return changes


def diff_sets(left: ComparedSet, right: ComparedSet) -> SetDiff:
    result = SetDiff(left=left.label, right=right.label)
    result.not_compared.extend(left.notes + right.notes)
    if left.header is not None and right.header is not None:
        old_header = without_kept_text(left.header)
        new_header = without_kept_text(right.header)
        for name in dict.fromkeys([*HEADER_FIELDS, *old_header, *new_header]):
            before = old_header.get(name, ABSENT)
            after = new_header.get(name, ABSENT)
            if before is ABSENT or after is ABSENT:
                if before is not after:
                    kind = "added" if before is ABSENT else "removed"
                    result.header.append(Change(jsonpath.join("$", [name]), kind, before, after))
            elif name == "caseFamilies" and _keyed(before) and _keyed(after):
                result.header.extend(_family_changes(before, after))
            else:
                result.header.extend(value_changes(before, after, jsonpath.join("$", [name])))
    else:
        missing = [s.label for s in (left, right) if s.header is None]
        result.not_compared.append(
            "set-level fields ("
            + ", ".join(HEADER_FIELDS)
            + ") not compared: no set file for "
            + " and ".join(missing)
        )
    left_keys = list(left.row_keys())
    result.removed = [row_label(key) for key in left_keys if not right.has(key)]
    result.added = [row_label(key) for key in right.row_keys() if not left.has(key)]
    shared_left = [key for key in left_keys if right.has(key)]
    shared_right = [key for key in right.row_keys() if left.has(key)]
    differing = {key for key in shared_left if left.digest(key) != right.digest(key)}
    if differing:
        # one side's differing rows are held at a time; each is compared as the other
        # side's row comes by, and the changes are listed in the left side's order
        held = dict(left.rows_for(differing))
        found: dict[RowKey, list[Change]] = {}
        for key, row in right.rows_for(differing):
            found[key] = value_changes(held.pop(key), row)
        for key in shared_left:
            changes = found.get(key)
            if changes:
                result.changed.append(RowChange(row_label(key), tuple(changes)))
    result.order_changed = shared_left != shared_right
    return result


def diff_files(
    left: StrPath,
    right: StrPath,
    *,
    left_format: str | None = None,
    right_format: str | None = None,
) -> SetDiff:
    """Compare two set files, whatever their formats."""
    return diff_sets(
        index_for_diff(Path(left), left_format), index_for_diff(Path(right), right_format)
    )
