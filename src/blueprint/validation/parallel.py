"""Validation of one large set by several processes, with the single-process report.

A JSON Lines file is cut into spans of whole lines, a JSON document into spans of the rows its
reader's first pass found. Each worker decodes its span and runs every rule that looks at one
row alone (the schema, admissibility, shapes, ...), and writes what the rules across rows need
of each row (the id's key, the normalised input's key, the split, the case family's fields)
into buckets by key (:mod:`blueprint.validation.keyed`). Once every span is read, the workers
reduce the buckets into the findings of the rules across rows. The parent only counts each
span's rows and merges every finding in the order the single-process validator gives them, so
the report is the same whichever path made it.
"""

from __future__ import annotations

import heapq
import os
import signal
import sys
from array import array
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from blueprint.core import jsonpath
from blueprint.core.errors import OutputError, ParseError
from blueprint.core.issues import Issue, issue_fields
from blueprint.core.spill import Scratch, SpillList
from blueprint.formats._io import BOM, json_lines, too_many_rows
from blueprint.formats.base import ROW_WATCHER, SetSource, SourceRow, UnreadableRow
from blueprint.formats.shards import Shards, parquet_file, parquet_rows
from blueprint.io import jsonvalues, limits
from blueprint.io.atomic import signals_held
from blueprint.validation import checks
from blueprint.validation.keyed import BucketTask, KeyedRules, Placed, SpanKeys, reduce_bucket
from blueprint.validation.stream import parse_issue

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    from blueprint.validation.stream import StreamValidator

#: files smaller than this are validated in one process: below it, starting the workers costs
#: about what they save
MIN_POOL_BYTES = 32 * 1024 * 1024
#: bytes of the file one worker task reads (a few thousand rows)
SPAN_BYTES = 4 * 1024 * 1024
#: the rules the parent runs, because their answer depends on the rows before
CROSS_ROW_RULES: Final = frozenset(
    {checks.check_duplicate_id, checks.check_duplicate_input, checks.check_case_family}
)
#: bytes of the file whose rows' records one bucket holds, about (a bucket is reduced in
#: memory: its keys' first rows are kept)
BUCKET_BYTES = 32 * 1024 * 1024


def default_jobs() -> int:
    """One process per core this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worth_a_pool(source: SetSource, jobs: int, shards: Shards | None = None) -> bool:
    """Whether the pool path applies: a JSON Lines file, a streamed JSON document of rows
    (see ``SetSource.row_places``) or a set of shards, of at least ``MIN_POOL_BYTES``; more
    than one job; and not already inside a worker process (``check --jobs`` runs validations
    in workers; nesting pools there would only oversubscribe the cores)."""
    if jobs <= 1 or source.reported_once:
        return False
    if shards is None and source.format == "json":
        places = source.row_places
        row_limit = limits.current().max_rows
        # past the row limit the document reader words its finding its own way: one process
        if places is None or (row_limit and len(places) > row_limit):
            return False
    elif shards is None and source.format != "jsonl":
        return False
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        return False
    return set_size(source, shards) >= MIN_POOL_BYTES


@dataclass(frozen=True)
class SpanTask:
    path: Path
    start: int
    end: int
    bounds: limits.Limits
    header: dict[str, Any] | None
    #: the positions (in ``checks.ROW_RULES``) of the one-row rules to run
    rules: tuple[int, ...]
    check_schema: bool
    #: the rules across rows, whose records go to ``records`` (None: kept in the result,
    #: for an engine that moves them itself)
    keyed: KeyedRules
    records: Path | None
    #: for a JSON document, where its rows in the span start and end (byte offsets in the
    #: file); None for JSON Lines, whose span is whole lines
    row_places: tuple[array[int], array[int]] | None = None
    #: "jsonl" (``start``, ``end``: bytes of whole lines), "json" (with ``row_places``) or
    #: "parquet" (``start``, ``end``: row groups)
    kind: str = "jsonl"
    #: the shard the span is in, for a set of shards: its findings name it
    file: str | None = None


@dataclass
class SpanResult:
    """What a worker found in its span; rows and lines count from the span's start."""

    #: physical lines the span holds
    lines: int = 0
    rows: int = 0
    #: per row: the line it starts on
    row_lines: array[int] = field(default_factory=lambda: array("q"))
    #: per row: its id (None when unreadable or not a string), when the report keeps them
    ids: list[str | None] = field(default_factory=list)
    #: the rows that could not be decoded: (row, column, reason)
    unreadable: list[tuple[int, int | None, str]] = field(default_factory=list)
    starters: int = 0
    #: the starter examples among the rows, by row (only read when the span is cut short)
    starter: bytearray = field(default_factory=bytearray)
    #: (row, rule position, place in the rule, finding) for the one-row rules, in row order;
    #: the schema's position is -1
    findings: list[tuple[int, int, int, Issue]] = field(default_factory=list)
    #: why the records could not be written (the temporary folder is full), if they could not
    records_failed: str | None = None
    #: each bucket's records, when the task keeps them (``SpanTask.records`` is None)
    blobs: list[bytes] | None = None


def check_span(task: SpanTask) -> SpanResult:
    """A worker's job: decode the span's rows, run the one-row rules on each, and write
    what the rules across rows need of them into the span's records, by bucket."""
    state = checks.SetState.from_header(task.header)
    family_position = task.keyed.case_family
    rules = [(position, checks.ROW_RULES[position].check) for position in task.rules]
    keys = SpanKeys(task.keyed, state)
    wants = task.keyed.options.wants
    keep_ids = task.keyed.options.row_ids
    result = SpanResult()
    found = result.findings
    # the parent knows where the set's row limit falls; the worker reads its whole span
    unbounded = replace(task.bounds, max_rows=0)
    if task.kind == "parquet":
        items = parquet_rows(task.path, (task.start, task.end))
    elif task.row_places is None:
        items = json_lines(task.path, unbounded, (task.start, task.end), typed=True)
    else:
        items = _document_rows(task, result)
    for index, item in enumerate(items):
        if isinstance(item, UnreadableRow):
            result.row_lines.append(item.line or 0)
            if keep_ids:
                result.ids.append(None)
            result.starter.append(0)
            result.unreadable.append((index, item.column, item.reason))
            continue
        line, data = item
        row = checks.RowView.of(index, data, line)
        result.row_lines.append(line)
        if keep_ids:
            result.ids.append(row.id)
        starter = row.is_starter
        result.starter.append(starter)
        result.starters += starter
        keys.add(row, index, line)
        start = len(found)
        if task.check_schema and not row.checked:
            for issue in checks.check_schema(row, data):
                found.append((index, -1, 0, issue))
        for position, check in rules:
            for issue in check(row, state):
                found.append((index, position, 0, issue))
        if family_position is not None:
            for place, issue in keys.family(row, index, line):
                found.append((index, family_position, place, issue))
        if len(found) > start:
            family = row.case.get("caseFamily")
            if task.keyed.options.family_ignore and isinstance(family, str):
                found[start:] = [entry for entry in found[start:] if wants(entry[3].code, family)]
            # one-row rules in position order; the family's findings by place within it
            found[start:] = sorted(found[start:], key=lambda entry: entry[1:3])
    result.rows = len(result.row_lines)
    if task.kind == "jsonl":
        result.lines = physical_lines(task.path, task.start, task.end)
    if task.records is None:
        result.blobs = keys.blobs()
        return result
    try:
        keys.spill(task.records)
    except OSError as error:  # not the set's file: the parent says where, and what to do
        result.records_failed = error.strerror or str(error)
    return result


def _document_rows(task: SpanTask, result: SpanResult) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """The rows of a JSON document's span, decoded as the streamed reader decodes them, with
    lines counted from the span's start; the span's newlines go in ``result.lines`` (the next
    span starts after them: spans of a document meet anywhere in a line)."""
    from blueprint.formats.canonical_json import row_reader  # a JSON Lines pool needs none

    assert task.row_places is not None
    loads = row_reader(task.bounds, typed=True)
    with task.path.open("rb") as handle:
        handle.seek(task.start)
        text = handle.read(task.end - task.start)
    result.lines = text.count(b"\n")
    line, counted = 1, 0
    #: where the line the last row started on starts; None while that is the span's first
    #: line, which may begin before the span (found in the file when first needed)
    line_start: int | None = None
    for index, (start, end) in enumerate(zip(*task.row_places, strict=True)):
        start, end = start - task.start, end - task.start
        newlines = text.count(b"\n", counted, start)
        if newlines:
            line += newlines
            line_start = text.rfind(b"\n", counted, start) + 1
        counted = start
        try:
            yield line, loads(text[start:end])
        except jsonvalues.JSONError as error:
            column = error.column
            if error.line == 1:  # the row's own column: where it starts on its line
                if line_start is None:
                    line_start = _line_start(task.path, task.start) - task.start
                column += start - line_start
            yield UnreadableRow(index, line + error.line - 1, column, error.reason)


def _line_start(path: Path, before: int) -> int:
    """Where the line holding byte ``before`` starts (found reading backwards; the first
    line starts after a byte order mark)."""
    with path.open("rb") as handle:
        end = before
        while end > 0:
            start = max(0, end - (1 << 16))
            handle.seek(start)
            found = handle.read(end - start).rfind(b"\n")
            if found >= 0:
                return start + found + 1
            end = start
        handle.seek(0)
        return len(BOM) if handle.read(len(BOM)) == BOM else 0


def physical_lines(path: Path, start: int, end: int) -> int:
    """The lines between two line boundaries, a last one without its newline counted too."""
    count = 0
    last = b"\n"
    with path.open("rb") as handle:
        handle.seek(start)
        left = end - start
        while left > 0:
            piece = handle.read(min(left, 1 << 20))
            if not piece:
                break
            count += piece.count(b"\n")
            last = piece[-1:]
            left -= len(piece)
    return count + (last != b"\n")


def document_spans(
    places: Iterable[tuple[int, int]], size: int
) -> Iterator[tuple[int, int, tuple[array[int], array[int]]]]:
    """(start, end, rows) spans of a JSON document: rows in file order, about ``size`` bytes
    of them a span. A span starts where the one before ended (the first at the file's start)
    and ends with its first row that reaches ``size`` bytes (or the last row); ``rows`` are
    its rows' (starts, ends). The places are read once, in order."""
    start = 0
    starts, ends = array("q"), array("q")
    for row_start, row_end in places:
        starts.append(row_start)
        ends.append(row_end)
        if row_end >= start + size:
            yield start, row_end, (starts, ends)
            start, starts, ends = row_end, array("q"), array("q")
    if starts:
        yield start, ends[-1], (starts, ends)


def spans(path: Path, size: int) -> Iterator[tuple[int, int, None]]:
    """(start, end, None) byte spans of about ``size`` bytes that begin and end at line
    boundaries.

    A line longer than a span is never read whole here: the boundary is found by reading
    ahead in pieces."""
    total = path.stat().st_size
    with path.open("rb") as handle:
        start = 0
        while start < total:
            end = min(start + size, total)
            if end < total:
                handle.seek(end - 1)
                while True:
                    piece = handle.readline(1 << 20)
                    if not piece or piece.endswith(b"\n"):
                        break
                end = handle.tell()
            yield start, end, None
            start = end


#: the longest temporary folder a fork server's socket fits under: its path is the folder,
#: ``/pymp-XXXXXXXX/listener-XXXXXXXX``, and the 107 bytes a Unix socket's path may take
_SOCKET_FOLDER_BYTES: Final = 107 - 34


def _start_method() -> BaseContext:
    """Fork where it is safe (on Linux, and no other thread runs: a fork copies only the
    calling thread, and a lock another thread held stays held in the child); else a fork
    server, whose workers start from a process that has imported only this module, where
    its socket's path fits under the temporary folder (``TMPDIR``); else spawned workers."""
    import multiprocessing
    import tempfile
    import threading

    methods = multiprocessing.get_all_start_methods()
    # on macOS a forked child may crash in system libraries, which is why Python spawns there
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    # a thread left running by a library (Dask's event loop) rules out a fork; a long
    # TMPDIR rules out the fork server ("AF_UNIX path too long")
    short = len(os.fsencode(tempfile.gettempdir())) <= _SOCKET_FOLDER_BYTES
    if "forkserver" in methods and short:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["blueprint.validation.parallel"])
        return context
    return multiprocessing.get_context("spawn")


#: the signals that stop a command (see the launcher's handlers)
_STOPPING: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _ignore_interrupts() -> None:
    # stopping is the parent's to handle (^C and a SIGTERM reach the whole process group): it
    # stops handing out spans, the workers finish the one they hold and leave. The parent
    # forked this process with those signals blocked, so none came before they were ignored.
    for number in _STOPPING:
        signal.signal(number, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # held back while the parent forked (signals_held)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPPING)


def worker_pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` worker processes on this machine, which leave stopping to this process (see
    ``_ignore_interrupts``); submit the first task with the signals held (``signals_held``)."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=_start_method(), initializer=_ignore_interrupts
    )


def bucket_count(size: int, jobs: int, bucket_bytes: int | None = None) -> int:
    """Buckets enough that every worker has several to reduce, and that none holds much more
    than ``bucket_bytes`` (``BUCKET_BYTES``) of the set's rows (``size`` bytes in all)."""
    return max(2 * jobs, -(-size // (bucket_bytes or BUCKET_BYTES)))


def set_size(source: SetSource, shards: Shards | None) -> int:
    """The bytes the set's rows are read from."""
    if shards is not None:
        return shards.size
    try:
        return source.path.stat().st_size
    except OSError:
        return 0


@dataclass(frozen=True)
class Piece:
    """A span of the set to read: bytes of a JSON Lines file or a JSON document, or row
    groups of a Parquet shard."""

    path: Path
    kind: str
    start: int
    end: int
    rows: tuple[array[int], array[int]] | None = None
    #: the shard, for a set of shards
    file: str | None = None


def pieces(source: SetSource | None, shards: Shards | None, size: int) -> Iterator[Piece]:
    """The set cut into spans of about ``size`` bytes, in reading order (``source``: the
    set's one file, when it is not in ``shards``)."""
    if shards is None:
        assert source is not None
        if source.format == "json":
            assert source.row_places is not None
            for start, end, rows in document_spans(source.row_places, size):
                yield Piece(source.path, "json", start, end, rows)
        else:
            for start, end, _ in spans(source.path, size):
                yield Piece(source.path, "jsonl", start, end)
        return
    for shard in shards.shards:
        name = str(shard.path)
        if shard.kind == "parquet":
            for start, end in _group_spans(shard.path, size):
                yield Piece(shard.path, "parquet", start, end, file=name)
        else:
            for start, end, _ in spans(shard.path, size):
                yield Piece(shard.path, "jsonl", start, end, file=name)


def _group_spans(path: Path, size: int) -> Iterator[tuple[int, int]]:
    """(first, end) runs of a Parquet file's row groups of about ``size`` bytes."""
    metadata = parquet_file(path).metadata
    start, held = 0, 0
    for group in range(metadata.num_row_groups):
        held += metadata.row_group(group).total_byte_size
        if held >= size:
            yield start, group + 1
            start, held = group + 1, 0
    if start < metadata.num_row_groups:
        yield start, metadata.num_row_groups


class Submitted(Protocol):
    """A span handed to an engine."""

    def result(self) -> SpanResult: ...

    def cancel(self) -> object: ...


class Engine(Protocol):
    """Where the spans are read and the buckets reduced: this machine's processes
    (:class:`LocalPool`), or a cluster (:mod:`blueprint.validation.engines`)."""

    jobs: int

    def sizes(self, set_bytes: int) -> tuple[int, int]:
        """The bytes of the set one task reads, and the buckets, for a set of that size."""
        ...

    def submit(self, task: SpanTask) -> Submitted: ...

    def keep(self, submitted: Submitted, result: SpanResult) -> Any:
        """What the reduction needs of a read span (its records' place)."""
        ...

    def reduce(self, tasks: list[BucketTask], kept: list[Any]) -> Iterable[list[Placed]]:
        """Each bucket's findings, the tasks' ``pieces`` filled from what was kept."""
        ...


class LocalPool:
    """Worker processes on this machine; the spans' records go to files in a temporary
    folder, which the reducing workers read."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.submitted = 0
        self._stack = ExitStack()

    def __enter__(self) -> LocalPool:
        with self._stack as stack:
            self.folder = Path(stack.enter_context(_records_folder()))
            self.executor = stack.enter_context(worker_pool(self.jobs))
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def sizes(self, set_bytes: int) -> tuple[int, int]:
        return SPAN_BYTES, bucket_count(set_bytes, self.jobs)

    def submit(self, task: SpanTask) -> _LocalSpan:
        records = self.folder / f"span-{self.submitted:08d}"
        task = replace(task, records=records)
        self.submitted += 1
        if self.submitted > 1:
            return _LocalSpan(self.executor.submit(check_span, task), records)
        # a forked worker keeps the parent's handlers until its initializer runs: a ^C in
        # between would stop it with a traceback; held back, it waits for the parent
        with signals_held():  # a forked pool starts its workers at the first task
            return _LocalSpan(self.executor.submit(check_span, task), records)

    def keep(self, submitted: Submitted, result: SpanResult) -> Any:
        assert isinstance(submitted, _LocalSpan)
        return submitted.records

    def reduce(self, tasks: list[BucketTask], kept: list[Any]) -> Iterable[list[Placed]]:
        # every bucket reads its place in each span's file from the file's end
        paths = tuple(kept)
        return self.executor.map(reduce_bucket, [replace(task, pieces=paths) for task in tasks])


@dataclass(frozen=True)
class _LocalSpan:
    future: Future[SpanResult]
    records: Path

    def result(self) -> SpanResult:
        return self.future.result()

    def cancel(self) -> bool:
        return self.future.cancel()


def validate_with_pool(
    validator: StreamValidator,
    source: SetSource,
    jobs: int,
    *,
    shards: Shards | None = None,
    engine: Engine | None = None,
) -> None:
    """Validate ``source`` (a JSON Lines set, a JSON document's rows, or a set of shards)
    with ``jobs`` worker processes, or on ``engine``, filling the validator's report exactly
    as the one-process path does.

    The workers read the spans, run the one-row rules and keep each row's records for the
    rules across rows in buckets by key (``keyed``); once every span is read, they reduce
    the buckets. The parent only counts the spans' rows and merges the findings in order."""
    options = validator.options
    positions = tuple(
        position
        for position, rule in enumerate(checks.ROW_RULES)
        if rule.check not in CROSS_ROW_RULES and any(options.wants(c) for c in rule.codes)
    )
    bounds = limits.current()
    with ExitStack() as stack:
        if engine is None:
            engine = stack.enter_context(LocalPool(jobs))
        span_bytes, buckets = engine.sizes(set_size(source, shards))
        keyed = KeyedRules.wanted(options, buckets)
        tasks = (
            SpanTask(
                piece.path,
                piece.start,
                piece.end,
                bounds,
                source.header,
                positions,
                validator.check_schema,
                keyed,
                None,
                piece.rows,
                piece.kind,
                piece.file,
            )
            for piece in pieces(source, shards, span_bytes)
        )
        collector = _Collector(validator, source, bounds, engine)
        pending: deque[tuple[SpanTask, Submitted]] = deque()
        try:
            reading = True
            for task in tasks:
                pending.append((task, engine.submit(task)))
                # a few spans ahead of the parent: enough to keep every worker busy, few
                # enough that results waiting to be counted stay small
                if len(pending) > 2 * engine.jobs and not collector.take(*pending.popleft()):
                    reading = False
                    break
            while reading and pending:
                reading = collector.take(*pending.popleft())
        finally:
            for _, submitted in pending:
                submitted.cancel()
            collector.close()
        collector.finish(keyed)


def _result(submitted: Submitted, task: SpanTask, source: SetSource) -> SpanResult:
    """A worker's span; a file a worker could not read (moved or cut short while the set was
    checked) is the set's unreadable file, as it would be to one process."""
    try:
        result = submitted.result()
    except OSError as error:
        raise ParseError(
            task.path if task.file else source.path,
            f"the file could not be read again: {error.strerror}",
        ) from None
    if result.records_failed is not None:
        raise _no_room(result.records_failed)
    return result


@contextmanager
def _records_folder() -> Iterator[str]:
    """The temporary folder the spans' records go in, removed with them at the end."""
    import tempfile

    try:
        folder = tempfile.TemporaryDirectory(prefix="blueprint-keys-")
    except OSError as error:
        raise _no_room(error.strerror or str(error)) from None
    with folder as name:
        yield name


def _no_room(reason: str) -> OutputError:
    import tempfile

    return OutputError(
        Path(tempfile.gettempdir()),
        f"{reason}: the records of the checks across rows, about 100 bytes a row, go in the"
        " temporary folder (set TMPDIR to a folder with room, or validate with --jobs 1)",
    )


class _Collector:
    """The parent's side: each span's rows counted and its findings placed in the whole
    set, then the buckets reduced and every finding reported in row order."""

    def __init__(
        self,
        validator: StreamValidator,
        source: SetSource,
        bounds: limits.Limits,
        engine: Engine,
    ) -> None:
        self.validator = validator
        self.source = source
        self.bounds = bounds
        self.engine = engine
        self.rows = 0
        #: the lines before the span in its file, and that file (a shard, or None)
        self.line = 0
        self.file: str | None = None
        #: the one-row findings in row order, the oldest in a scratch file until the end
        self.findings: PlacedLog = PlacedLog()
        #: per span: what the reduction needs of it, the rows before it in the set and the
        #: lines before it in its file, and its shard
        self.kept: list[Any] = []
        self.bases: list[tuple[int, int]] = []
        self.files: list[str | None] = []
        self.too_many: UnreadableRow | None = None
        # the rows pass the progress bar's watcher (ROW_WATCHER), as a source's rows do: a
        # source made anew over them is watched
        self.watching: deque[SourceRow | UnreadableRow] = deque()
        self.watched = (
            replace(source, rows=_drain(self.watching)).rows if ROW_WATCHER.get() else None
        )

    def take(self, task: SpanTask, submitted: Submitted) -> bool:
        """Count one span's rows and place its findings; False once the set's row limit
        stops the reading."""
        span = _result(submitted, task, self.source)
        if task.file != self.file:  # a shard's first span: its lines count from its start
            self.file, self.line = task.file, 0
        report, base = self.validator.report, self.rows
        limit = self.bounds.max_rows
        kept = span.rows if not limit or base + span.rows <= limit else limit - base
        report.rows += kept
        if self.validator.options.row_ids:
            report.row_ids.extend(span.ids[:kept])
        report.starter_rows += span.starters if kept == span.rows else span.starter[:kept].count(1)
        placed: list[Placed] = []
        for offset, column, reason in span.unreadable:
            if offset >= kept:
                break
            index, line = base + offset, self._line(span, offset)
            report.unreadable = True
            issue = parse_issue(self.source.format, reason, line or None, column, index)
            placed.append((index, -2, 0, replace(issue, file=task.file)))
        for offset, position, place, issue in span.findings:
            if offset >= kept:
                break
            index = base + offset
            issue = _placed(issue, index, offset, self._line(span, offset), task.file)
            placed.append((index, position, place, issue))
        if span.unreadable and placed:
            placed.sort(key=lambda entry: entry[:3])
        self.findings.extend(placed)
        self.kept.append(self.engine.keep(submitted, span))
        self.bases.append((base, self.line))
        self.files.append(task.file)
        if self.watched is not None:
            self._watch(span, base, kept)
        self.rows += kept
        if kept < span.rows:
            too_many = too_many_rows(base + kept, self._line(span, kept), self.bounds)
            self.too_many = replace(too_many, file=None if task.file is None else task.path)
            return False
        self.line += span.lines
        return True

    def _line(self, span: SpanResult, offset: int) -> int:
        relative = span.row_lines[offset]
        return self.line + relative if relative else 0

    def _watch(self, span: SpanResult, base: int, kept: int) -> None:
        broken = {offset: (column, reason) for offset, column, reason in span.unreadable}
        for offset in range(kept):
            index, line = base + offset, self._line(span, offset)
            if offset in broken:
                self._count(UnreadableRow(index, line, *broken[offset]))
            else:
                self._count(SourceRow(index, line, None))

    def _count(self, item: SourceRow | UnreadableRow) -> None:
        assert self.watched is not None
        self.watching.append(item)
        for _ in self.watched:
            break

    def finish(self, keyed: KeyedRules) -> None:
        """Reduce the buckets and report every finding, in row order, then where the row
        limit stopped the reading."""
        if not self.kept:
            self.validator.emit(issue for *_, issue in self.findings)
        else:
            undeclared = checks.SetState.from_header(self.source.header)
            bases = tuple(self.bases)
            files = tuple(self.files) if any(file is not None for file in self.files) else ()
            tasks = [
                BucketTask(
                    bucket,
                    keyed,
                    (),
                    bases,
                    self.bounds.max_rows if self.too_many is not None else 0,
                    undeclared.families is None and undeclared.header_known,
                    files,
                )
                for bucket in range(keyed.buckets)
            ]
            # the buckets' findings wait in one scratch file, a few of each in memory: a
            # set's buckets grow with it, and all are merged at once
            scratch = Scratch()
            try:
                reduced = [
                    PlacedLog(found, chunk=_MERGED_CHUNK, scratch=scratch)
                    for found in self.engine.reduce(tasks, self.kept)
                ]
                merged = heapq.merge(self.findings, *reduced, key=lambda entry: entry[:3])
                self.validator.emit(issue for *_, issue in merged)
            finally:
                scratch.close()
        if self.too_many is not None:
            if self.watched is not None:
                self._count(self.too_many)
            self.validator.check_row(self.too_many, self.source.format)

    def close(self) -> None:
        for _ in self.watched or ():  # the watcher finishes its count
            pass


#: a bucket's findings held in memory while every bucket's are merged (twice this at most)
_MERGED_CHUNK: Final = 64


class PlacedLog(SpillList[Placed]):
    """Findings with their places, kept off the heap past a few thousand."""

    __slots__ = ()

    def encode(self, item: Placed) -> tuple[Any, ...]:
        return (*item[:3], issue_fields(item[3]))

    def decode(self, kept: Any) -> Placed:
        return (*kept[:3], Issue(*kept[3]))


def _placed(issue: Issue, index: int, offset: int, line: int, file: str | None) -> Issue:
    """A worker's finding, placed by the row's index in the whole set and its line (in its
    shard, for a set of shards)."""
    prefix = jsonpath.row_path(offset)
    path = issue.path
    if path.startswith(prefix):
        path = jsonpath.row_path(index) + path[len(prefix) :]
    return replace(issue, path=path, row_index=index, line=line or None, file=file)


def _drain(rows: deque[Any]) -> Iterator[Any]:
    """An endless stream of whatever is put in ``rows``; it ends when ``rows`` is empty."""
    while rows:
        yield rows.popleft()
