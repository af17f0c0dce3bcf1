"""Exact and near-duplicate inputs of sets in shards, found by shuffles (on a cluster, or on
this machine's worker processes): the report one process gives
(:func:`blueprint.authoring.hygiene.find_duplicates`), group for group.

Exact duplicates. Two rows are exact duplicates when their normalised inputs share a key
(:func:`blueprint.validation.inputtext.input_key`, the validator's), so the search splits by
key. A task a span of each set (:func:`blueprint.validation.parallel.pieces`) reads its rows,
counts them and their splits, and keeps of each row that has an input its key, place, line,
id and split, in a bucket by the key; a task a bucket then groups its keys' rows. This process
only counts, puts each group's rows in their order, and orders the groups by their first row.

Near-duplicates. One process takes the first row of each exact group in order, and it joins
the group of the first similar enough earlier group leader among those that share an LSH band
key with it, or leads a group of its own. Which rows lead depends on the rows before, but
only on those linked to it through shared band keys: the rows fall apart into connected
components, and replaying the same matching over one component's rows, in order, gives each
of them the group one process gives. So:

1. the span tasks also sign (MinHash, band keys) the first row of each key in their span;
2. each key's bucket task keeps its first row's signature ("lead") and sends its band keys to
   buckets by band key;
3. a task a band bucket links the leads that share a key;
4. this process joins the links into components (union-find over the linked leads only) and
   gives each component a replay bucket;
5. each key bucket's leads go to their component's replay bucket, whose task matches them in
   order with :meth:`blueprint.authoring.hygiene.DuplicateIndex.match`.

No process holds every row: a worker holds one span or one bucket, and this process the
links between leads that share a band key.
"""

from __future__ import annotations

import itertools
import pickle
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from blueprint.authoring.hygiene import (
    DuplicateIndex,
    DuplicateOptions,
    DuplicateReport,
    ExactGroup,
    NearGroup,
    NearMatch,
    RowRef,
    SetSummary,
    distinct_paths,
)
from blueprint.authoring.signatures import Signature, signature_of
from blueprint.core.errors import ParseError
from blueprint.formats._io import too_many_rows
from blueprint.formats.base import SetSource, StrPath, UnreadableRow
from blueprint.formats.shards import Shards, find_shards, open_shards
from blueprint.io import limits
from blueprint.validation.engines import (
    PieceTask,
    Runner,
    TaskEngine,
    blob_of,
    pickled_buckets,
    piece_rows,
    summary_of,
)
from blueprint.validation.inputtext import input_key, split_of
from blueprint.validation.parallel import Piece, physical_lines, pieces

#: (the input's key, the row's place in its span, its line there (0: none), id, split, and
#: for the first row of its key in the span, its near-duplicate signature when it has one,
#: packed: :meth:`blueprint.authoring.hygiene.Signature.packed`)
KeyRecord = tuple[int, int, int, str | None, str | None, bytes | None]
#: a row's place, as plain values (:class:`RowRef`'s fields, in order): quick to pickle
RefFields = tuple[str, int, str | None, int | None, str | None, str | None]
#: a lead: (its place in the run, its row, its packed signature)
Lead = tuple[int, RefFields, bytes]
#: a near-duplicate found: (its leader's place in the run and row, its own, the similarity)
NearFound = tuple[int, RefFields, int, RefFields, float]


@dataclass(frozen=True)
class KeysTask(PieceTask):
    """A span to read into key buckets; with ``threshold``, signing leads for near-duplicates
    at that similarity."""

    threshold: float | None = None


def run_place(span: int, place: int) -> int:
    """A row's place in the run as one number, ordered as the rows are (span, then place)."""
    return span << 32 | place


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


def span_keys(task: KeysTask) -> SpanKeys:
    """A span's rows counted, and each input's key in its bucket (with the signature of each
    key's first row in the span, when near-duplicates are looked for)."""
    piece = task.piece
    found = SpanKeys()
    held: list[list[KeyRecord]] = [[] for _ in range(task.buckets)]
    signed: set[int] = set()
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
        value = row.get("input") if isinstance(row, dict) else None
        key = input_key(value)
        if key is None:
            continue
        found.compared += 1
        signature = None
        if task.threshold is not None and key not in signed:
            signed.add(key)
            found_signature = signature_of(value, task.threshold)
            signature = found_signature.packed() if found_signature is not None else None
        row_id = row.get("id")
        record = (key, place, line, row_id if isinstance(row_id, str) else None, split, signature)
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
    #: with near-duplicates: how many band buckets the leads' band keys go to
    band_buckets: int = 0


@dataclass
class GroupedBucket:
    """A key bucket's exact groups, each with its first row's place in the run; with
    near-duplicates, ``blobs`` holds each band bucket's (band key, lead's place, this
    bucket) records and, last, this bucket's leads."""

    groups: list[tuple[int, ExactGroup]]
    blobs: list[bytes] | None = None


def group_bucket(task: GroupTask, *blobs: bytes) -> GroupedBucket:
    """The groups of a bucket's keys that have more than one row, each with its first row's
    place in the run; with near-duplicates, each key's first row's signature kept, its band
    keys sent on."""
    members: dict[int, list[tuple[int, RowRef]]] = {}
    leads: list[Lead] = []
    for number, ((label, base, base_line, file), blob) in enumerate(
        zip(task.spans, blobs, strict=True)
    ):
        records: list[KeyRecord] = pickle.loads(blob) if blob else []
        for key, place, line, row_id, split, signature in records:
            ref = RowRef(
                label, base + place, row_id, base_line + line if line else None, split, file
            )
            rows = members.setdefault(key, [])
            if not rows and signature is not None:  # the key's first row in the run
                fields = (ref.set, ref.index, ref.id, ref.line, ref.split, ref.file)
                leads.append((run_place(number, place), fields, signature))
            rows.append((run_place(number, place), ref))
    groups = [
        (rows[0][0], ExactGroup(tuple(ref for _, ref in rows)))
        for rows in members.values()
        if len(rows) > 1
    ]
    if not task.band_buckets:
        return GroupedBucket(groups)
    return GroupedBucket(
        groups, [*_band_records(leads, task.band_buckets), *pickled_buckets([leads])]
    )


def _band_records(leads: list[Lead], buckets: int) -> list[bytes]:
    """Each band bucket's (band key, lead's place) records, packed: the keys (unsigned 64-bit)
    then the places (signed 64-bit), 16 bytes a record, each lead once under each of its
    distinct band keys."""
    import numpy

    keys, places = array("Q"), array("q")
    for place, _, signature in leads:
        distinct = set(Signature.band_keys(signature))
        keys.extend(distinct)
        places.extend(itertools.repeat(place, len(distinct)))
    all_keys = numpy.frombuffer(keys, numpy.uint64) if keys else numpy.empty(0, numpy.uint64)
    all_places = numpy.frombuffer(places, numpy.int64) if places else numpy.empty(0, numpy.int64)
    which = all_keys % numpy.uint64(buckets)
    return [
        all_keys[chosen].tobytes() + all_places[chosen].tobytes() if chosen.any() else b""
        for chosen in (which == bucket for bucket in range(buckets))
    ]


@dataclass
class Links:
    """A band bucket's links between leads that share a band key (``pairs``: the two leads'
    places, one after the other), and the key bucket of every lead linked (``linked`` places,
    ``sources`` their key buckets; a lead may come more than once)."""

    pairs: Any
    linked: Any
    sources: Any


def link_band_bucket(*blobs: bytes) -> Links:
    """The leads of a band bucket that share a band key, each linked to the first of them
    (``blobs``: each key bucket's records, :func:`_band_records`, in key bucket order)."""
    import numpy

    keys, places, sources = [], [], []
    for number, blob in enumerate(blobs):
        count = len(blob) // 16
        keys.append(numpy.frombuffer(blob, numpy.uint64, count))
        places.append(numpy.frombuffer(blob, numpy.int64, count, 8 * count))
        sources.append(numpy.full(count, number, numpy.int32))
    key = numpy.concatenate(keys) if keys else numpy.empty(0, numpy.uint64)
    order = numpy.argsort(key, kind="stable")
    key = key[order]
    place = (numpy.concatenate(places) if places else numpy.empty(0, numpy.int64))[order]
    source = (numpy.concatenate(sources) if sources else numpy.empty(0, numpy.int32))[order]
    first = numpy.ones(len(key), bool)
    first[1:] = key[1:] != key[:-1]
    # each record's key's first lead; a record that is not the first links its lead to it
    anchor = place[numpy.flatnonzero(first)][numpy.cumsum(first) - 1]
    follows = ~first
    shared = follows.copy()
    shared[:-1] |= follows[1:]  # every record of a key that has more than one
    return Links(
        numpy.column_stack((anchor[follows], place[follows])).ravel(),
        place[shared],
        source[shared],
    )


@dataclass(frozen=True)
class RouteTask:
    #: lead's place -> its component's replay bucket
    replay: dict[int, int]
    buckets: int


@dataclass
class Routed:
    blobs: list[bytes] | None


def route_leads(task: RouteTask, leads_blob: bytes) -> Routed:
    """A key bucket's leads that are linked, each to its component's replay bucket."""
    held: list[list[Lead]] = [[] for _ in range(task.buckets)]
    for lead in pickle.loads(leads_blob) if leads_blob else []:
        bucket = task.replay.get(lead[0])
        if bucket is not None:
            held[bucket].append(lead)
    return Routed(pickled_buckets(held))


def replay_bucket(threshold: float, *blobs: bytes) -> list[NearFound]:
    """The near-duplicates among a replay bucket's leads (whole components), matched in the
    order one process matches them."""
    leads: list[Lead] = sorted(
        (lead for blob in blobs if blob for lead in pickle.loads(blob)), key=lambda lead: lead[0]
    )
    index = DuplicateIndex(DuplicateOptions(threshold=threshold))
    for position, (_, _, signature) in enumerate(leads):
        index.match(position, Signature.unpacked(signature))
    found: list[NearFound] = []
    for position, (leader, similarity) in index.near_of.items():
        place, ref, _ = leads[position]
        found.append((leads[leader][0], leads[leader][1], place, ref, similarity))
    return found


def exact_duplicates(engine: TaskEngine, paths: Sequence[StrPath]) -> DuplicateReport:
    """Exact duplicate inputs within and across the sets in shards ``paths``: the report one
    process gives with near-duplicates off."""
    return bucketed_duplicates(engine, paths, DuplicateOptions(near=False))


def bucketed_duplicates(
    engine: TaskEngine, paths: Sequence[StrPath], options: DuplicateOptions
) -> DuplicateReport:
    """Exact and (unless ``options`` turn them off) near-duplicate inputs within and across
    the sets in shards ``paths`` (each a set, in the order given), found by the engine's
    tasks: the report one process gives, and the same refusal for the first row one process
    cannot read."""
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
    threshold = options.threshold if options.near else None
    task_bounds = asdict(bounds)
    reads = [
        runner.submit(span_keys, KeysTask(piece, buckets, task_bounds, threshold))
        for _, piece in planned
    ]
    summaries: list[SpanKeys] = runner.gather([runner.submit(summary_of, read) for read in reads])
    _refuse_unreadable(opened, planned, summaries, bounds)
    if refusal is not None:
        raise refusal
    spans = _span_places(opened, planned, summaries)
    band_buckets = buckets if threshold is not None else 0
    grouped = [
        runner.submit(
            group_bucket,
            GroupTask(bucket, spans, band_buckets),
            *(runner.submit(blob_of, read, bucket) for read in reads),
        )
        for bucket in range(buckets)
    ]
    found: list[GroupedBucket] = runner.gather(
        [runner.submit(summary_of, bucket) for bucket in grouped]
    )
    groups = sorted(
        itertools.chain.from_iterable(bucket.groups for bucket in found), key=lambda g: g[0]
    )
    return DuplicateReport(
        sets=_set_summaries(opened, planned, summaries),
        threshold=threshold,
        exact=[group for _, group in groups],
        near=[] if threshold is None else _near_groups(runner, grouped, buckets, threshold),
    )


def _near_groups(
    runner: Runner, grouped: list[Any], buckets: int, threshold: float
) -> list[NearGroup]:
    """The near groups, from the key buckets' leads (steps 3 to 5 of the module's)."""
    linked: list[Links] = runner.gather(
        [
            runner.submit(
                link_band_bucket, *(runner.submit(blob_of, bucket, band) for bucket in grouped)
            )
            for band in range(buckets)
        ]
    )
    replay = _components(linked, buckets)
    routed = [
        runner.submit(
            route_leads, RouteTask(replay[source], buckets), runner.submit(blob_of, bucket, buckets)
        )
        for source, bucket in enumerate(grouped)
        if replay[source]
    ]
    if not routed:
        return []
    matched: list[list[NearFound]] = runner.gather(
        [
            runner.submit(
                replay_bucket, threshold, *(runner.submit(blob_of, route, r) for route in routed)
            )
            for r in range(buckets)
        ]
    )
    near: dict[int, tuple[RowRef, list[tuple[int, NearMatch]]]] = {}
    for leader, leader_ref, place, ref, similarity in itertools.chain.from_iterable(matched):
        members = near.setdefault(leader, (RowRef(*leader_ref), []))[1]
        members.append((place, NearMatch(RowRef(*ref), similarity)))
    return [
        NearGroup(leader_ref, tuple(match for _, match in sorted(members, key=lambda m: m[0])))
        for _, (leader_ref, members) in sorted(near.items(), key=lambda item: item[0])
    ]


def _components(linked: list[Links], buckets: int) -> list[dict[int, int]]:
    """Per key bucket: each of its linked leads' replay bucket, the same for every lead of a
    component (union-find over the links, the earliest lead the root)."""
    root: dict[int, int] = {}

    def find(place: int) -> int:
        while (up := root.get(place, place)) != place:
            root[place] = root.get(up, up)  # halve the path
            place = up
        return place

    for links in linked:
        ends = iter(links.pairs.tolist())
        for first, second in zip(ends, ends, strict=True):
            a, b = find(first), find(second)
            if a != b:
                root[max(a, b)] = min(a, b)
    replay: list[dict[int, int]] = [{} for _ in range(buckets)]
    for links in linked:
        for place, source in zip(links.linked.tolist(), links.sources.tolist(), strict=True):
            replay[source][place] = _mixed(find(place)) % buckets
    return replay


def _mixed(place: int) -> int:
    """A place's bits mixed (rows of one span spread over the replay buckets)."""
    return (place * 0x9E3779B97F4A7C15 & 0xFFFFFFFFFFFFFFFF) >> 16


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


__all__ = ["bucketed_duplicates", "exact_duplicates", "group_bucket", "span_keys"]
