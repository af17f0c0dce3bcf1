"""Exact duplicate inputs of sets in shards, found by a shuffle by the input's key (on a
cluster, or on this machine's worker processes).

Two rows are exact duplicates when their normalised inputs share a key
(:func:`blueprint.validation.inputtext.input_key`, the validator's), so the search splits by
key. A task a span of each set (:func:`blueprint.validation.parallel.pieces`) reads its rows,
counts them and their splits, and keeps of each row that has an input its key, place, line,
id and split, in a bucket by the key; a task a bucket then groups its keys' rows. This process
only counts, puts each group's rows in their order, and orders the groups by their first row,
which is the report one process gives (:func:`blueprint.authoring.hygiene.find_duplicates`
with ``near`` off). No process holds every row: a worker holds one span or one bucket.

Near-duplicates are not looked for here: whether a row joins a group depends on the groups
the rows before it started, which one process decides in order.
"""

from __future__ import annotations

import itertools
import pickle
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from blueprint.authoring.hygiene import (
    DuplicateReport,
    ExactGroup,
    RowRef,
    SetSummary,
    distinct_paths,
)
from blueprint.core.errors import ParseError
from blueprint.formats._io import too_many_rows
from blueprint.formats.base import SetSource, StrPath, UnreadableRow
from blueprint.formats.shards import Shards, find_shards, open_shards
from blueprint.io import limits
from blueprint.validation.engines import (
    PieceTask,
    TaskEngine,
    blob_of,
    pickled_buckets,
    piece_rows,
    summary_of,
)
from blueprint.validation.inputtext import input_key, split_of
from blueprint.validation.parallel import Piece, physical_lines, pieces

#: (the input's key, the row's place in its span, its line there (0: none), id, split)
KeyRecord = tuple[int, int, int, str | None, str | None]


@dataclass
class SpanKeys:
    """A span read: its rows (readable or not), splits, lines, and the first row it could
    not read; the records themselves, a pickled list a bucket."""

    rows: int = 0
    compared: int = 0
    splits: Counter[str] = field(default_factory=Counter)
    #: physical lines the span holds (JSON Lines)
    lines: int = 0
    #: the first unreadable row: (place in the span, line there, column, reason)
    unreadable: tuple[int, int | None, int | None, str] | None = None
    blobs: list[bytes] | None = None


def span_keys(task: PieceTask) -> SpanKeys:
    """A span's rows counted, and each input's key in its bucket."""
    piece = task.piece
    found = SpanKeys()
    held: list[list[KeyRecord]] = [[] for _ in range(task.buckets)]
    for place, item in enumerate(piece_rows(piece, task.bounds)):
        found.rows += 1
        if isinstance(item, UnreadableRow):
            if found.unreadable is None:
                found.unreadable = (place, item.line, item.column, item.reason)
            continue
        line, row = item
        split = split_of(row)
        if split is not None:
            found.splits[split] += 1
        key = input_key(row.get("input") if isinstance(row, dict) else None)
        if key is None:
            continue
        found.compared += 1
        row_id = row.get("id")
        record = (key, place, line, row_id if isinstance(row_id, str) else None, split)
        held[key % task.buckets].append(record)
    if piece.kind == "jsonl":
        found.lines = physical_lines(piece.path, piece.start, piece.end)
    found.blobs = pickled_buckets(held)
    return found


@dataclass(frozen=True)
class GroupTask:
    bucket: int
    #: per span of every set, in order: (set label, rows before it in its set, lines before
    #: it in its file, its file)
    spans: tuple[tuple[str, int, int, str | None], ...]


def group_bucket(task: GroupTask, *blobs: bytes) -> list[tuple[tuple[int, int], ExactGroup]]:
    """The groups of a bucket's keys that have more than one row, each with its first row's
    place in the run (its span and place there)."""
    members: dict[int, list[tuple[tuple[int, int], RowRef]]] = {}
    for number, ((label, base, base_line, file), blob) in enumerate(
        zip(task.spans, blobs, strict=True)
    ):
        records: list[KeyRecord] = pickle.loads(blob) if blob else []
        for key, place, line, row_id, split in records:
            ref = RowRef(
                label, base + place, row_id, base_line + line if line else None, split, file
            )
            members.setdefault(key, []).append(((number, place), ref))
    return [
        (rows[0][0], ExactGroup(tuple(ref for _, ref in rows)))
        for rows in members.values()
        if len(rows) > 1
    ]


def exact_duplicates(engine: TaskEngine, paths: Sequence[StrPath]) -> DuplicateReport:
    """Exact duplicate inputs within and across the sets in shards ``paths`` (each a set, in
    the order given), found by the engine's tasks: the report one process gives with
    near-duplicates off, and the same refusal for the first row one process cannot read."""
    bounds = limits.current()
    opened: list[tuple[Path, Shards, SetSource]] = []
    refusal: ParseError | None = None
    for path in distinct_paths(paths):
        try:
            shards = find_shards([path])
            source = open_shards(shards, typed=False)
            source.require_structure()
        except ParseError as error:
            refusal = error  # one process stops at this set: the sets before it come first
            break
        opened.append((path, shards, source))
    span_bytes, buckets = engine.sizes(sum(shards.size for _, shards, _ in opened))
    planned = [
        (number, piece)
        for number, (_, shards, _) in enumerate(opened)
        for piece in pieces(None, shards, span_bytes)
    ]
    runner = engine.runner()
    task_bounds = asdict(bounds)
    reads = [
        runner.submit(span_keys, PieceTask(piece, buckets, task_bounds)) for _, piece in planned
    ]
    summaries: list[SpanKeys] = runner.gather([runner.submit(summary_of, read) for read in reads])
    _refuse_unreadable(opened, planned, summaries, bounds)
    if refusal is not None:
        raise refusal
    spans = _span_places(opened, planned, summaries)
    grouped: list[list[tuple[tuple[int, int], ExactGroup]]] = runner.gather(
        [
            runner.submit(
                group_bucket,
                GroupTask(bucket, spans),
                *(runner.submit(blob_of, read, bucket) for read in reads),
            )
            for bucket in range(buckets)
        ]
    )
    groups = sorted(itertools.chain.from_iterable(grouped), key=lambda found: found[0])
    return DuplicateReport(
        sets=_set_summaries(opened, planned, summaries),
        threshold=None,
        exact=[group for _, group in groups],
    )


def _bases(planned: list[tuple[int, Piece]], summaries: list[SpanKeys]) -> list[tuple[int, int]]:
    """Each span's rows before it in its set and lines before it in its file (counted set by
    set: a file two sets share is read from its start by each)."""
    found = []
    rows_before: dict[int, int] = {}
    lines_before: dict[tuple[int, Path], int] = {}
    for (number, piece), summary in zip(planned, summaries, strict=True):
        base = rows_before.get(number, 0)
        base_line = lines_before.get((number, piece.path), 0)
        found.append((base, base_line))
        rows_before[number] = base + summary.rows
        lines_before[(number, piece.path)] = base_line + summary.lines
    return found


def _span_places(
    opened: list[tuple[Path, Shards, SetSource]],
    planned: list[tuple[int, Piece]],
    summaries: list[SpanKeys],
) -> tuple[tuple[str, int, int, str | None], ...]:
    """Each span's set label, rows before it in its set, lines before it in its file, file."""
    return tuple(
        (str(opened[number][0]), base, base_line, str(piece.path))
        for (number, piece), (base, base_line) in zip(
            planned, _bases(planned, summaries), strict=True
        )
    )


def _refuse_unreadable(
    opened: list[tuple[Path, Shards, SetSource]],
    planned: list[tuple[int, Piece]],
    summaries: list[SpanKeys],
    bounds: limits.Limits,
) -> None:
    """Raise what one process raises at the first row it cannot read (a row that does not
    decode, or the first past the set's row limit), set by set."""
    bases = _bases(planned, summaries)
    for (number, piece), summary, (base, base_line) in zip(planned, summaries, bases, strict=True):
        limit = bounds.max_rows
        bad = summary.unreadable
        if limit and base + summary.rows > limit and (bad is None or base + bad[0] >= limit):
            at = _line_of(piece, bounds, limit - base)
            past = too_many_rows(limit, base_line + at if at else 0, bounds)
            raise replace(past, file=piece.path).error(opened[number][0])
        if bad is not None:
            _, line, column, reason = bad
            where = base_line + line if line else None
            raise ParseError(piece.path, reason, line=where, column=column)


def _line_of(piece: Piece, bounds: limits.Limits, place: int) -> int:
    """The line (in the span) of a span's row, read again: only a refusal needs it (a
    Parquet row has none: 0)."""
    for item in itertools.islice(piece_rows(piece, asdict(bounds)), place, None):
        return (item.line if isinstance(item, UnreadableRow) else item[0]) or 0
    return 0


def _set_summaries(
    opened: list[tuple[Path, Shards, SetSource]],
    planned: list[tuple[int, Piece]],
    summaries: list[SpanKeys],
) -> list[SetSummary]:
    rows: Counter[int] = Counter()
    compared: Counter[int] = Counter()
    splits: dict[int, Counter[str]] = {number: Counter() for number in range(len(opened))}
    for (number, _), summary in zip(planned, summaries, strict=True):
        rows[number] += summary.rows
        compared[number] += summary.compared
        splits[number].update(summary.splits)
    return [
        SetSummary(
            str(path),
            source.format,
            rows[number],
            compared[number],
            dict(sorted(splits[number].items())),
        )
        for number, (path, _, source) in enumerate(opened)
    ]


__all__ = ["exact_duplicates", "group_bucket", "span_keys"]
