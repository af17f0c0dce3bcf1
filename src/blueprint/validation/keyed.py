"""The rules across rows as keyed aggregations, for validation in pieces.

A rule across rows (a repeated id, a repeated input or one across splits, a case family's
first rows) asks of a row only about the earlier rows that share its key: its id's key, its
normalised input's key, its case family. So the rows can be read in spans by any number of
workers, each writing what those rules need of its rows (a record a row and rule) into
**buckets** by key; a bucket then holds every row of each of its keys, and one pass over it,
span after span, gives that key's findings exactly as a single reader going through the whole
file gives them. No one process ever sees every row.

A record names its row by the span it was read in and its place there; the rows before each
span are known once every span is read, and the bucket's pass turns the two into the row's
index and line in the whole file.
"""

from __future__ import annotations

import marshal
import os
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from blueprint.core.issues import Issue
from blueprint.formats.shards import ShardStarts
from blueprint.io.firstseen import text_key
from blueprint.validation import checks
from blueprint.validation.inputtext import input_key, split_of
from blueprint.validation.stream import ValidationOptions

#: (row in its span, its line there (0: unknown), its id, its id's key, its case family)
IdRecord = tuple[int, int, str, int, str | None]
#: (row, line, id, its input's key, its split, its case family)
InputRecord = tuple[int, int, str | None, int, str | None, str | None]
#: (row, line, id, its case family, the family fields it gives that its family does not)
FamilyRecord = tuple[int, int, str | None, str, tuple[tuple[str, Any], ...]]
#: a finding as a bucket gives it: (row index, rule position, place in the rule, finding)
Placed = tuple[int, int, int, Issue]


@dataclass(frozen=True)
class KeyedRules:
    """Which rules across rows run, where each sits among the row rules (``ROW_RULES``),
    and the number of buckets."""

    buckets: int
    options: ValidationOptions
    duplicate_id: int | None = None
    duplicate_input: int | None = None
    #: False when only ``duplicate-input-across-splits`` is wanted: a row with no split can
    #: then be neither such a finding nor the row one names
    every_input: bool = True
    case_family: int | None = None

    @classmethod
    def wanted(cls, options: ValidationOptions, buckets: int) -> KeyedRules:
        positions: dict[str, int | None] = {}
        for position, rule in enumerate(checks.ROW_RULES):
            if any(options.wants(code) for code in rule.codes):
                positions[rule.check.__name__] = position
        return cls(
            buckets,
            options,
            positions.get(checks.check_duplicate_id.__name__),
            positions.get(checks.check_duplicate_input.__name__),
            options.wants("duplicate-input"),
            positions.get(checks.check_case_family.__name__),
        )

    @property
    def tags_families(self) -> bool:
        """Whether a record carries its row's case family: only when a family ignores codes."""
        return bool(self.options.family_ignore)


def family_bucket(name: str, buckets: int) -> int:
    # crc32, not hash(): every worker process must put a family in the same bucket
    return zlib.crc32(name.encode("utf-8", "surrogatepass")) % buckets


@dataclass
class SpanKeys:
    """One span's records, by bucket, as a worker collects them."""

    rules: KeyedRules
    state: checks.SetState
    ids: list[list[IdRecord]] = field(init=False)
    inputs: list[list[InputRecord]] = field(init=False)
    families: list[list[FamilyRecord]] = field(init=False)
    #: the families whose first row in the span is recorded (for ``undeclared-case-family``)
    seen_families: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        count = self.rules.buckets
        self.ids = [[] for _ in range(count)]
        self.inputs = [[] for _ in range(count)]
        self.families = [[] for _ in range(count)]
        self.undeclared = self.state.families is None and self.state.header_known

    def add(self, row: checks.RowView, offset: int, line: int) -> None:
        """Record a readable row for the duplicate rules."""
        rules, data = self.rules, row.data
        family = row.case.get("caseFamily") if rules.tags_families else None
        tag = family if isinstance(family, str) else None
        if rules.duplicate_id is not None and row.id is not None:
            key = text_key(row.id)
            self.ids[key % rules.buckets].append((offset, line, row.id, key, tag))
        if rules.duplicate_input is not None and "input" in data:
            split = split_of(data)
            if rules.every_input or split is not None:
                found = input_key(data["input"])
                if found is not None:
                    record = (offset, line, row.id, found, split, tag)
                    self.inputs[found % rules.buckets].append(record)

    def family(self, row: checks.RowView, offset: int, line: int) -> list[tuple[int, Issue]]:
        """The row's case-family findings its own fields give (by place), recording it for
        those its family's earlier rows give."""
        name = row.case.get("caseFamily")
        if not isinstance(name, str):
            return []
        state = self.state
        if state.families is not None and name not in state.families:
            unknown = checks.unknown_family_issue(row, state, name)
            return [] if unknown is None else [(0, unknown)]
        fields = checks.family_open_fields(row, state, name)
        first_here = self.undeclared and name not in self.seen_families
        if first_here:
            self.seen_families.add(name)
        if fields or first_here:
            given = tuple((key, row.case[key]) for key in fields)
            bucket = family_bucket(name, self.rules.buckets)
            self.families[bucket].append((offset, line, row.id, name, given))
        return checks.declared_family_issues(row, state, name) if state.families else []

    def blobs(self) -> list[bytes]:
        """Each bucket's records as bytes (empty for a bucket with none)."""
        found = []
        for bucket in range(self.rules.buckets):
            held = (self.ids[bucket], self.inputs[bucket], self.families[bucket])
            found.append(marshal.dumps(held) if any(held) else b"")
        return found

    def spill(self, path: Path) -> None:
        """Write the records to ``path``, a bucket after another, then where each bucket
        ends (a 64-bit offset a bucket): a reducing worker finds its bucket there, so the
        parent need not hold every span's places of every bucket."""
        ends = array("q")
        with path.open("wb") as handle:
            for blob in self.blobs():
                handle.write(blob)
                ends.append(handle.tell())
            handle.write(ends.tobytes())


def bucket_blob(path: Path, bucket: int, buckets: int) -> bytes:
    """Bucket ``bucket``'s records in a span's file that :meth:`SpanKeys.spill` wrote."""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        footer = size - 8 * buckets
        handle.seek(footer + 8 * (bucket - 1) if bucket else footer)
        bounds = array("q")
        bounds.frombytes(handle.read(16 if bucket else 8))
        start, end = (bounds[0], bounds[1]) if bucket else (0, bounds[0])
        if end <= start:
            return b""
        handle.seek(start)
        return handle.read(end - start)


@dataclass(frozen=True)
class BucketTask:
    """One bucket's pass: its piece of each span's file, in file order, and where each span
    starts in the whole file."""

    bucket: int
    rules: KeyedRules
    #: per span: its records' file (:meth:`SpanKeys.spill`), or the bucket's records
    #: themselves (an engine that keeps them in memory)
    pieces: tuple[Path | bytes, ...]
    #: per span: the rows before it in the set, and the lines before it in its file
    bases: tuple[tuple[int, int], ...]
    #: rows from this index on were never read (the row limit); 0: no limit
    limit: int
    #: the set declares no case families but its set-level fields are known
    undeclared: bool
    #: per span: the shard it was read from, for a set of shards (its findings name it)
    files: tuple[str | None, ...] = ()


def reduce_bucket(task: BucketTask) -> list[Placed]:
    """The findings of the rules across rows for every key of one bucket, in row order."""
    # a finding naming an earlier row names its shard: the one its span was read from
    file_of = ShardStarts()
    for (base, _), file in zip(task.bases, task.files, strict=False):
        file_of.note(base, file)
    found: list[Placed] = []
    firsts_of_id: dict[int, tuple[int, int]] = {}
    firsts_of_input: dict[int, tuple[int, int, str | None, tuple[str, int, int, str | None] | None]]
    firsts_of_input = {}
    family_firsts: dict[str, dict[str, tuple[Any, int, str | None]]] = {}
    rules, wants = task.rules, task.rules.options.wants
    row_id: str | None
    for ids, inputs, families, base, base_line, file in _pieces(task):
        placed = len(found)
        for offset, relative, row_id, key, tag in ids:
            index = base + offset
            if task.limit and index >= task.limit:
                break
            first = firsts_of_id.setdefault(key, (index, _line(base_line, relative)))
            if first[0] != index:
                row = _row(index, row_id, _line(base_line, relative))
                issue = checks.duplicate_id_issue(row, first[0], first[1], file_of(first[0]))
                if wants(issue.code, tag):
                    found.append((index, rules.duplicate_id or 0, 0, issue))
        for offset, relative, row_id, key, split, tag in inputs:
            index = base + offset
            if task.limit and index >= task.limit:
                break
            line = _line(base_line, relative)
            entry = firsts_of_input.get(key)
            here = (split, index, line, row_id) if split is not None else None
            if entry is None:
                firsts_of_input[key] = (index, line, row_id, here)
                continue
            seen = entry[3]
            if seen is None and here is not None:
                firsts_of_input[key] = (*entry[:3], here)
            row = _row(index, row_id, line)
            if seen is not None and split is not None and seen[0] != split:
                other = checks.row_where(seen[1], seen[3], seen[2], file_of(seen[1]))
                issue = checks.across_splits_issue(row, other, seen[0], split)
            else:
                issue = checks.duplicate_input_issue(
                    row, checks.row_where(entry[0], entry[2], entry[1], file_of(entry[0]))
                )
            if wants(issue.code, tag):
                found.append((index, rules.duplicate_input or 0, 0, issue))
        for offset, relative, row_id, name, given in families:
            index = base + offset
            if task.limit and index >= task.limit:
                break
            firsts = family_firsts.get(name)
            undeclared = firsts is None and task.undeclared
            if firsts is None:
                firsts = family_firsts[name] = {}
            case = dict(given)
            differ = checks.family_values_differ(firsts, index, row_id, case, case)
            if not (differ or undeclared):
                continue
            row = _row(index, row_id, _line(base_line, relative), case, name)
            for place, issue in checks.first_row_issues(row, name, differ, undeclared=undeclared):
                if wants(issue.code, name):
                    found.append((index, rules.case_family or 0, place, issue))
        if file is not None:  # the span's findings are about rows of that shard
            found[placed:] = [
                (*entry[:3], replace(entry[3], file=file)) for entry in found[placed:]
            ]
    found.sort(key=lambda placed: placed[:3])
    return found


def _pieces(
    task: BucketTask,
) -> Iterator[tuple[list[IdRecord], list[InputRecord], list[FamilyRecord], int, int, str | None]]:
    files = task.files or (None,) * len(task.pieces)
    for piece, (base, base_line), file in zip(task.pieces, task.bases, files, strict=True):
        blob = (
            piece
            if isinstance(piece, bytes)
            else bucket_blob(piece, task.bucket, task.rules.buckets)
        )
        if blob:
            ids, inputs, families = marshal.loads(blob)
            yield ids, inputs, families, base, base_line, file


def _line(base_line: int, relative: int) -> int:
    return base_line + relative if relative else 0


def _row(
    index: int,
    row_id: str | None,
    line: int,
    case: dict[str, Any] | None = None,
    family: str | None = None,
) -> checks.RowView:
    """The view of a row a finding is about, from what its record keeps."""
    data: dict[str, Any] = {} if row_id is None else {"id": row_id}
    if case is not None:
        data["metadata"] = {"case": {**case, "caseFamily": family}}
    return checks.RowView(index, data, line or None)
