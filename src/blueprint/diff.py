"""Semantic diff of two sets, keyed by row id, across formats.

Rows are matched by ``id`` (repeated ids by occurrence, rows without an id by position) and
compared value by value with types kept apart: ``"1"`` differs from ``1``, ``1`` from ``1.0``,
``null`` from an absent key. Key order inside objects never counts; row order is reported
separately. Set-level fields are compared only when both sides carry them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint import jsonpath, jsonvalues
from blueprint.errors import ParseError
from blueprint.formats import SetSource, StrPath, UnreadableRow, resolve_codec
from blueprint.model import HEADER_FIELDS


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


@dataclass
class LoadedSet:
    """A whole set in memory, for comparing: set-level fields and rows keyed for matching."""

    label: str
    header: dict[str, Any] | None
    rows: dict[RowKey, Any]
    notes: list[str]


def load_for_diff(path: Path, format: str | None = None, *, label: str | None = None) -> LoadedSet:
    codec = resolve_codec(path, format, reading=True)
    return collect(codec.open(path), label or str(path))


def collect(source: SetSource, label: str) -> LoadedSet:
    """Read every row of a source, keyed for matching; unreadable rows stop the comparison."""
    source.require_structure()
    rows: dict[RowKey, Any] = {}
    seen: Counter[str | None] = Counter()
    for item in source.rows:
        if isinstance(item, UnreadableRow):
            raise ParseError(source.path, item.reason, line=item.line, column=item.column)
        row_id = item.data.get("id") if isinstance(item.data, dict) else None
        key = row_id if isinstance(row_id, str) else None
        seen[key] += 1
        rows[(key, seen[key])] = item.data
    notes = []
    if seen[None]:
        notes.append(f"{label}: {seen[None]} row(s) without an id were matched by position")
    repeated = sum(1 for key, count in seen.items() if key is not None and count > 1)
    if repeated:
        notes.append(f"{label}: {repeated} id(s) repeat; their rows were matched by occurrence")
    return LoadedSet(label=label, header=source.header, rows=rows, notes=notes)


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
    # imported here: deepdiff pulls in numpy and pandas, which no command needs at start-up
    from deepdiff import DeepDiff

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


def diff_sets(left: LoadedSet, right: LoadedSet) -> SetDiff:
    result = SetDiff(left=left.label, right=right.label)
    result.not_compared.extend(left.notes + right.notes)
    if left.header is not None and right.header is not None:
        for name in dict.fromkeys([*HEADER_FIELDS, *left.header, *right.header]):
            before = left.header.get(name, ABSENT)
            after = right.header.get(name, ABSENT)
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
    result.removed = [row_label(key) for key in left.rows if key not in right.rows]
    result.added = [row_label(key) for key in right.rows if key not in left.rows]
    for key, row in left.rows.items():
        if key in right.rows:
            changes = value_changes(row, right.rows[key])
            if changes:
                result.changed.append(RowChange(row_label(key), tuple(changes)))
    shared_left = [key for key in left.rows if key in right.rows]
    shared_right = [key for key in right.rows if key in left.rows]
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
        load_for_diff(Path(left), left_format), load_for_diff(Path(right), right_format)
    )
