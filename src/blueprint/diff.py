"""Semantic diff of two sets, keyed by row id, across formats.

Rows are matched by ``id`` (repeated ids by occurrence, rows without an id by position) and
compared value by value with types kept apart: ``"1"`` differs from ``1``, ``1`` from ``1.0``,
``null`` from an absent key. Key order inside objects never counts; row order is reported
separately. Set-level fields are compared only when both sides carry them. Neither side is
held in memory: the two are matched in buckets on disk (:class:`JoinedSets`).
"""

from __future__ import annotations

import hashlib
import heapq
import sys
import tempfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, Final, Protocol

from blueprint.core import jsonpath
from blueprint.core.errors import ParseError
from blueprint.core.model import HEADER_FIELDS
from blueprint.core.spill import ChunkFile, SpillList, append_chunk, records_a_chunk
from blueprint.formats import Codec, SetSource, StrPath, UnreadableRow, resolve_codec
from blueprint.formats.native import without_kept_text
from blueprint.io import jsonvalues
from blueprint.io.jsonvalues import Streamed
from blueprint.validation.engines import SMALL_BUCKET_BYTES, no_room


class _Absent:
    """Marks the side of a change where the key does not exist."""

    def __repr__(self) -> str:
        return "(absent)"

    def __reduce__(self) -> str:
        return "ABSENT"  # the one marker, also when read back from a bucket's file


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
    """What differs between two sets. The rows' lists may be long, and wait on disk past a
    few hundred items (:class:`blueprint.core.spill.SpillList`)."""

    left: str
    right: str
    added: MutableSequence[str] = field(default_factory=list)
    removed: MutableSequence[str] = field(default_factory=list)
    changed: MutableSequence[RowChange] = field(default_factory=list)
    header: list[Change] = field(default_factory=list)
    order_changed: bool = False
    not_compared: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.added or self.removed or self.changed or self.header or self.order_changed)

    def to_json(self, *, streamed: bool = False) -> dict[str, Any]:
        """The diff as JSON; ``streamed``: the rows' lists as :class:`Streamed` arrays, for
        :func:`blueprint.io.jsonvalues.json_pieces` to write an item at a time."""
        return {
            "identical": self.identical,
            "left": self.left,
            "right": self.right,
            "added": _array(self.added, None, streamed),
            "removed": _array(self.removed, None, streamed),
            "changed": _array(self.changed, RowChange.to_json, streamed),
            "setFields": [change.to_json() for change in self.header],
            "orderChanged": self.order_changed,
            "notCompared": self.not_compared,
        }


def _array(
    items: Sequence[Any], convert: Callable[[Any], Any] | None, streamed: bool
) -> list[Any] | Streamed:
    """A list of a report as JSON: whole, or to be written an item at a time."""
    found = Streamed(items, convert)
    return found if streamed else list(found)


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
    """A side of a comparison: its rows, read as many times as asked, each with its id (None
    for a row without one that is a string), in order; its set-level fields, known once the
    rows have been read through; and what to say of it besides how its rows were matched."""

    label: str
    header: dict[str, Any] | None
    notes: list[str]
    #: how many bytes a reading of it takes from disk (0: its rows are in memory)
    size: int

    def rows(self) -> Iterator[tuple[str | None, Any]]: ...


@dataclass
class LoadedSet:
    """A whole set in memory, for comparing: set-level fields and rows keyed for matching."""

    label: str
    header: dict[str, Any] | None
    rows_by_key: dict[RowKey, Any]
    notes: list[str] = field(default_factory=list)
    size: int = 0

    def rows(self) -> Iterator[tuple[str | None, Any]]:
        return ((key[0], row) for key, row in self.rows_by_key.items())


class FileSet:
    """A set file compared without holding its rows: they are read as they are compared (a
    second time for the rows that differ, to say how)."""

    def __init__(
        self, codec: Codec, path: Path, label: str, *, shown_as: Path | None = None
    ) -> None:
        self.codec = codec
        self.path = path
        self.label = label
        #: the file its errors name, where ``path`` is a copy of it the user never named
        self.shown_as = shown_as
        self.header: dict[str, Any] | None = None
        self.notes: list[str] = []
        self.size = path.stat().st_size if path.is_file() else 0

    def rows(self) -> Iterator[tuple[str | None, Any]]:
        try:
            source = self.codec.open(self.path)
            yield from _rows_with_ids(source)
        except ParseError as error:
            raise renamed_error(error, self.shown_as) from None
        self.header = source.header


def renamed_error(error: ParseError, path: Path | None) -> ParseError:
    """A parse error naming ``path`` (where it came from reading a copy of that file), at
    the same line and column; the error itself without one."""
    if path is None:
        return error
    return ParseError(path, error.reason, line=error.line, column=error.column)


def _rows_with_ids(source: SetSource) -> Iterator[tuple[str | None, Any]]:
    """Every row of a source with its id (None for a row without one that is a string); an
    unreadable row stops the comparison."""
    source.require_structure()
    for item in source.rows:
        if isinstance(item, UnreadableRow):
            raise item.error(source.path)
        row_id = item.data.get("id") if isinstance(item.data, dict) else None
        yield row_id if isinstance(row_id, str) else None, item.data


def _keyed_rows(source: SetSource) -> Iterator[tuple[RowKey, Any]]:
    """Every row of a source with its key (see :data:`RowKey`)."""
    seen: Counter[str | None] = Counter()
    for row_id, row in _rows_with_ids(source):
        seen[row_id] += 1
        yield (row_id, seen[row_id]), row


def _matching_notes(label: str, unnamed: int, repeated: int) -> list[str]:
    """What a comparison should say about rows matched other than by their own id."""
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
    path: Path, format: str | None = None, *, label: str | None = None, shown_as: Path | None = None
) -> FileSet:
    """A set file to compare: its rows stay in the file (see :class:`FileSet`); ``shown_as``
    the file its errors name, where ``path`` is a copy."""
    codec = resolve_codec(path, format, reading=True)
    return FileSet(codec, path, label or str(path), shown_as=shown_as)


def collect(source: SetSource, label: str) -> LoadedSet:
    """Read every row of a source, keyed for matching; unreadable rows stop the comparison."""
    rows = dict(_keyed_rows(source))
    return LoadedSet(label=label, header=source.header, rows_by_key=rows)


# --- two sides matched by key, in buckets --------------------------------------------------------
#
# A comparison holds neither side. Each row of each side goes, as it is read, to a bucket by
# its id (a row without one by its place among such rows) as a small record: its place, id,
# a digest of its canonical bytes and the case fields a review reads. A bucket holds every
# row either side has under its keys, so the sides are matched a bucket at a time. The rows
# whose digests differ are read again, each side's in its order, into their buckets, and
# compared there. What a comparison reports is then read back from the buckets in each
# side's order, a small chunk of every bucket at a time (heapq.merge on the places).
# Small sets take one bucket, kept in memory.

#: a row's reviewed case fields, in REVIEWED_CASE_FIELDS's order (ABSENT where unset)
CaseFields = tuple[Any, ...]
#: of the two sides' files, whose records a bucket holds
BUCKET_BYTES: Final = SMALL_BUCKET_BYTES
#: index records waiting to be written to their buckets, at most (some 200 bytes each)
HELD_RECORDS: Final = 8192
#: records a merge of every bucket's holds, about (a chunk of each bucket; some 500 bytes a
#: record)
MERGED_RECORDS: Final = 2048
#: rows that differ waiting to be written to their buckets, at most (a row may be large)
HELD_ROWS: Final = 256
#: items of a comparison's lists (rows changed, added, removed; a review's transitions and
#: findings) written to disk, and read back, at a time: a list holds at most two chunks, and
#: a changed row's changes may be large
LISTED_A_CHUNK: Final = 256
#: distinct values of the reviewed fields kept once in memory, at most (the same few oracle
#: types and evaluators recur on every row; a version may be new on every row)
_INTERNED: Final = 4096


def case_fields(row: Any, interned: dict[str, str] | None = None) -> CaseFields:
    """A row's reviewed case fields; with ``interned``, a text met before is that copy."""
    case = case_of(row)
    values = tuple(case.get(name, ABSENT) for name in REVIEWED_CASE_FIELDS)
    if interned is None:
        return values
    return tuple(_interned(value, interned) for value in values)


def _interned(value: Any, interned: dict[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    if len(interned) < _INTERNED:
        return interned.setdefault(value, value)
    return interned.get(value, value)


def case_dict(fields: CaseFields) -> dict[str, Any]:
    """Reviewed case fields as the case has them (the unset ones left out)."""
    return {
        name: value
        for name, value in zip(REVIEWED_CASE_FIELDS, fields, strict=True)
        if value is not ABSENT
    }


@dataclass(frozen=True)
class Pair:
    """A row of the left side (in its order) and what the right side has under its key."""

    key: RowKey
    case: CaseFields
    #: the right side's row under the key: its case fields and place (None: removed)
    other: CaseFields | None
    place: int | None
    #: how the two rows differ (none: they are the same, or the row was removed)
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class Added:
    """A row of the right side, in its order, whose key the left side does not have."""

    key: RowKey
    case: CaseFields


class _Buckets:
    """Records sorted into buckets: in memory when there is one, otherwise a chunk file a
    bucket in ``folder``. Records added one at a time wait in memory, ``held`` of them in
    all at most, and are then written, a chunk to each bucket they are for."""

    def __init__(self, count: int, folder: str | None, name: str, held: int) -> None:
        self.count = count
        self._folder = folder
        self._name = name
        self._limit = held
        self._held: dict[int, list[Any]] = {}
        self._waiting = 0
        self._written = bytearray(count)

    def add(self, bucket: int, record: Any) -> None:
        self._held.setdefault(bucket, []).append(record)
        self._waiting += 1
        if self._folder and self._waiting >= self._limit:
            self.finish()

    def put(self, bucket: int, records: Iterable[Any]) -> None:
        """A bucket's records, all of them, in chunks small enough for a merge of every
        bucket's to read a chunk of each."""
        if not self._folder:
            self._held[bucket] = list(records)
            return
        size = records_a_chunk(self.count, MERGED_RECORDS)
        chunk: list[Any] = []
        for record in records:
            chunk.append(record)
            if len(chunk) == size:
                self._append(bucket, chunk)
                chunk = []
        if chunk:
            self._append(bucket, chunk)

    def finish(self) -> None:
        """Write out what waits in memory."""
        if self._folder:
            for bucket, held in self._held.items():
                self._append(bucket, held)
            self._held, self._waiting = {}, 0

    def _path(self, bucket: int) -> str:
        return f"{self._folder}/{self._name}-{bucket}"

    def _append(self, bucket: int, chunk: list[Any]) -> None:
        try:
            append_chunk(self._path(bucket), chunk)
        except OSError as error:
            raise no_room(error.strerror or str(error)) from None
        self._written[bucket] = 1

    def read(self, bucket: int) -> Iterator[Any]:
        if not self._folder:
            return iter(self._held.get(bucket, ()))
        if not self._written[bucket]:
            return iter(())
        return ChunkFile(self._path(bucket)).records()

    def drop(self, bucket: int) -> None:
        """Let a bucket's records go, once they are read for the last time: the disk a
        comparison takes is then what is still to be read, not all it wrote."""
        if not self._folder:
            self._held.pop(bucket, None)
        elif self._written[bucket]:
            Path(self._path(bucket)).unlink(missing_ok=True)
            self._written[bucket] = 0


def _bucket_of(row_id: str | None, nameless: int, count: int) -> int:
    if count == 1:
        return 0
    if row_id is None:
        return nameless % count
    return zlib.crc32(row_id.encode("utf-8", "surrogatepass")) % count


def _with_keys(records: Iterable[Any], repeated: list[int]) -> Iterator[tuple[RowKey, Any]]:
    """A bucket's index records (in their side's order) with their keys; ``repeated`` counts
    the ids that repeat."""
    seen: Counter[str] = Counter()
    for record in records:
        row_id, nameless = record[1], record[2]
        if row_id is None:
            yield (None, nameless), record
            continue
        seen[row_id] += 1
        if seen[row_id] == 2:
            repeated[0] += 1
        yield (row_id, seen[row_id]), record


class JoinedSets:
    """Two sides matched by key (see above), read back as :meth:`pairs` in the left side's
    order and :meth:`added` in the right side's. Close it (or use it in a ``with``) to
    remove its buckets' files."""

    def __init__(self, left: ComparedSet, right: ComparedSet, buckets: int | None = None) -> None:
        self.left, self.right = left, right
        self.count = buckets or max(1, -(-(left.size + right.size) // BUCKET_BYTES))
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        if self.count > 1:
            try:
                self._folder = tempfile.TemporaryDirectory(prefix="blueprint-diff-")
            except OSError as error:
                raise no_room(error.strerror or str(error)) from None
        try:
            self._join()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> JoinedSets:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def _buckets(self, name: str, held: int | None = None) -> _Buckets:
        folder = self._folder.name if self._folder else None
        return _Buckets(self.count, folder, name, held or HELD_RECORDS)

    def _join(self) -> None:
        left_index, right_index = self._buckets("left"), self._buckets("right")
        unnamed = [_index(self.left, left_index), _index(self.right, right_index)]
        self._pairs, self._added = self._buckets("pairs"), self._buckets("added")
        self._differing, wanted = self._buckets("differing"), self._buckets("wanted")
        repeated = [[0], [0]]
        differ = False
        for bucket in range(self.count):
            others = {
                key: record for key, record in _with_keys(right_index.read(bucket), repeated[1])
            }
            differing = []
            pairs = []
            for key, (place, _, _, digested, fields) in _with_keys(
                left_index.read(bucket), repeated[0]
            ):
                other = others.pop(key, None)
                if other is None:
                    pairs.append((place, key, fields, None, None, False))
                    continue
                differs = other[3] != digested
                pairs.append((place, key, fields, other[4], other[0], differs))
                if differs:
                    differing.append((place, other[0], digested, other[3], key, fields, other[4]))
            left_index.drop(bucket)
            right_index.drop(bucket)
            self._pairs.put(bucket, pairs)
            self._added.put(bucket, ((r[0], key, r[4]) for key, r in others.items()))
            self._differing.put(bucket, differing)
            wanted.put(bucket, sorted((r[1], r[3]) for r in differing))
            differ = differ or bool(differing)
        self.notes = [
            note
            for side, nameless, (count,) in zip(
                (self.left, self.right), unnamed, repeated, strict=True
            )
            for note in [*side.notes, *_matching_notes(side.label, nameless, count)]
        ]
        self._changes = self._compared(wanted) if differ else None

    def _compared(self, wanted: _Buckets) -> _Buckets:
        """How each pair of rows that differ differs, a bucket at a time: kept in the left
        side's order, and as the pairs themselves in the right side's order."""
        left_rows = self._buckets("left-rows", HELD_ROWS)
        right_rows = self._buckets("right-rows", HELD_ROWS)
        _gather(
            self.left,
            [((r[0], r[2]) for r in self._differing.read(b)) for b in range(self.count)],
            left_rows,
        )
        _gather(self.right, [wanted.read(b) for b in range(self.count)], right_rows)
        changes, self._changed = self._buckets("changes"), self._buckets("changed")
        for bucket in range(self.count):
            held = dict(left_rows.read(bucket))
            partner = {r[1]: r for r in self._differing.read(bucket)}
            found, changed = [], []
            for place, row in right_rows.read(bucket):
                left_place, _, _, _, key, fields, other = partner[place]
                differences = tuple(value_changes(held.pop(left_place), row))
                found.append((left_place, differences))
                changed.append((place, key, fields, other, differences))
            for read in (left_rows, right_rows, self._differing, wanted):
                read.drop(bucket)
            found.sort(key=itemgetter(0))
            changes.put(bucket, found)
            self._changed.put(bucket, changed)
        return changes

    def pairs(self) -> Iterator[Pair]:
        """Every row of the left side, in its order, with its match on the right."""

        def bucket_pairs(bucket: int) -> Iterator[tuple[int, Pair]]:
            changes = self._changes.read(bucket) if self._changes else iter(())
            for place, key, fields, other, other_place, differs in self._pairs.read(bucket):
                found: tuple[Change, ...] = next(changes)[1] if differs else ()
                yield place, Pair(key, fields, other, other_place, found)

        merged = heapq.merge(*map(bucket_pairs, range(self.count)), key=itemgetter(0))
        return (pair for _, pair in merged)

    def changed(self) -> Iterator[Pair]:
        """The shared rows that differ, in the right side's order (``place``, each)."""
        if self._changes is None:
            return iter(())
        merged = heapq.merge(*map(self._changed.read, range(self.count)), key=itemgetter(0))
        return (Pair(key, case, other, place, found) for place, key, case, other, found in merged)

    def added(self) -> Iterator[Added]:
        """The rows of the right side whose keys the left does not have, in its order."""
        merged = heapq.merge(*map(self._added.read, range(self.count)), key=itemgetter(0))
        return (Added(key, fields) for _, key, fields in merged)


def _index(side: ComparedSet, buckets: _Buckets) -> int:
    """Put each row of a side in its bucket as an index record (its place, id, place among
    the rows without an id, digest and reviewed case fields); how many rows have no id."""
    # one bucket stays in memory, where the few distinct oracle types and evaluators are
    # worth keeping once
    interned: dict[str, str] | None = {} if buckets.count == 1 else None
    nameless = 0
    for place, (row_id, row) in enumerate(side.rows()):
        if row_id is None:
            nameless += 1
        record = (
            place,
            row_id,
            nameless if row_id is None else 0,
            digest(row),
            case_fields(row, interned),
        )
        buckets.add(_bucket_of(row_id, nameless, buckets.count), record)
    buckets.finish()
    return nameless


def _gather(side: ComparedSet, wanted: list[Iterator[tuple[int, bytes]]], into: _Buckets) -> None:
    """Read a side again and put the rows at the wanted places (each bucket's in order,
    with the digest the row had) into their buckets; a row whose digest is not the same
    now means the side changed while it was being compared."""
    merged = heapq.merge(*(_tagged(found, bucket) for bucket, found in enumerate(wanted)))
    upcoming = next(merged, None)
    for place, (_, row) in enumerate(side.rows()):
        if upcoming is None:
            break
        if place < upcoming[0]:
            continue
        if digest(row) != upcoming[1]:
            raise _changed(side)
        into.add(upcoming[2], (place, row))
        upcoming = next(merged, None)
    if upcoming is not None:
        raise _changed(side)
    into.finish()


def _tagged(records: Iterator[tuple[int, bytes]], bucket: int) -> Iterator[tuple[int, bytes, int]]:
    return ((place, digested, bucket) for place, digested in records)


def _changed(side: ComparedSet) -> ParseError:
    return ParseError(Path(side.label), "the file changed while it was being compared; run again")


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


def diff_joined(joined: JoinedSets) -> SetDiff:
    """What differs between two sides matched by key."""
    result = SetDiff(
        left=joined.left.label,
        right=joined.right.label,
        added=SpillList(chunk=LISTED_A_CHUNK),
        removed=SpillList(chunk=LISTED_A_CHUNK),
        changed=SpillList(chunk=LISTED_A_CHUNK),
    )
    result.not_compared.extend(joined.notes)
    if joined.left.header is not None and joined.right.header is not None:
        old_header = without_kept_text(joined.left.header)
        new_header = without_kept_text(joined.right.header)
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
        missing = [s.label for s in (joined.left, joined.right) if s.header is None]
        result.not_compared.append(
            "set-level fields ("
            + ", ".join(HEADER_FIELDS)
            + ") not compared: no set file for "
            + " and ".join(missing)
        )
    # the shared rows keep their order when the right side's places rise in the left's order
    previous = -1
    for pair in joined.pairs():
        if pair.place is None:
            result.removed.append(row_label(pair.key))
            continue
        if pair.place < previous:
            result.order_changed = True
        previous = pair.place
        if pair.changes:
            result.changed.append(RowChange(row_label(pair.key), pair.changes))
    result.added.extend(row_label(item.key) for item in joined.added())
    return result


def diff_sets(left: ComparedSet, right: ComparedSet) -> SetDiff:
    with JoinedSets(left, right) as joined:
        return diff_joined(joined)


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
