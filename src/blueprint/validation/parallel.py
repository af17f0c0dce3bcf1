"""Validation of one large set by several processes, with the single-process report.

A JSON Lines file is cut into spans of whole lines, a JSON document into spans of the rows its
reader's first pass found. Each worker decodes its span and runs every rule
that looks at one row alone (the schema, admissibility, shapes, ...), and sends back, for each
row, what the rules across rows need: the id, the key of the normalised input (the costly part
of the duplicate check), the split and the case family's fields. The parent takes the spans in
file order, runs the rules across rows (duplicate ids and inputs, case-family consistency) over
those, and puts each row's findings in the order the single-process validator gives them, so
the report is the same whichever path made it.
"""

from __future__ import annotations

import os
import signal
import sys
from array import array
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from blueprint.core import jsonpath
from blueprint.core.errors import ParseError
from blueprint.core.issues import Issue
from blueprint.formats._io import BOM, json_lines, too_many_rows
from blueprint.formats.base import ROW_WATCHER, SetSource, SourceRow, UnreadableRow
from blueprint.io import jsonvalues, limits
from blueprint.io.atomic import signals_held
from blueprint.io.firstseen import text_key
from blueprint.validation import checks
from blueprint.validation.inputtext import input_key, split_of

if TYPE_CHECKING:
    from concurrent.futures import Future
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
#: the case-profile fields the case-family rule reads
_FAMILY_FIELDS: Final = ("caseFamily", "oracleType", "evaluator")


def default_jobs() -> int:
    """One process per core this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worth_a_pool(source: SetSource, jobs: int) -> bool:
    """Whether the pool path applies: a JSON Lines file, or a streamed JSON document of rows
    (see ``SetSource.row_places``), of at least ``MIN_POOL_BYTES``; more than one job; and
    not already inside a worker process (``check --jobs`` runs validations in workers;
    nesting pools there would only oversubscribe the cores)."""
    if jobs <= 1 or source.reported_once:
        return False
    if source.format == "json":
        places = source.row_places
        row_limit = limits.current().max_rows
        # past the row limit the document reader words its finding its own way: one process
        if places is None or (row_limit and len(places) > row_limit):
            return False
    elif source.format != "jsonl":
        return False
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        return False
    try:
        return source.path.stat().st_size >= MIN_POOL_BYTES
    except OSError:
        return False


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
    #: for a JSON document, where its rows in the span start and end (byte offsets in the
    #: file); None for JSON Lines, whose span is whole lines
    row_places: tuple[array[int], array[int]] | None = None


@dataclass
class SpanResult:
    """What a worker found in its span; indices and lines count from the span's start."""

    #: physical lines the span holds
    lines: int = 0
    #: per row: the line it starts on
    row_lines: array[int] = field(default_factory=lambda: array("q"))
    #: per row: its id (None when unreadable or not a string)
    ids: list[str | None] = field(default_factory=list)
    #: per row: None for a row that could be decoded, else (column, reason)
    unreadable: list[tuple[int | None, str] | None] = field(default_factory=list)
    #: per row: the key of its id (0 without one), the input's duplicate key, its split and
    #: the case-family fields
    id_keys: array[int] = field(default_factory=lambda: array("Q"))
    input_keys: list[int | None] = field(default_factory=list)
    splits: list[str | None] = field(default_factory=list)
    family_fields: list[dict[str, Any] | None] = field(default_factory=list)
    starter: bytearray = field(default_factory=bytearray)
    #: (row, rule position, finding) for the one-row rules; the schema's position is -1
    findings: list[tuple[int, int, Issue]] = field(default_factory=list)


def check_span(task: SpanTask) -> SpanResult:
    """A worker's job: decode the span's rows and run the one-row rules on each."""
    state = checks.SetState.from_header(task.header)
    rules = [(position, checks.ROW_RULES[position].check) for position in task.rules]
    result = SpanResult()
    # the parent knows where the set's row limit falls; the worker reads its whole span
    unbounded = replace(task.bounds, max_rows=0)
    if task.row_places is None:
        items = json_lines(task.path, unbounded, (task.start, task.end), typed=True)
    else:
        items = _document_rows(task, result)
    for index, item in enumerate(items):
        if isinstance(item, UnreadableRow):
            _append_row(result, item.line or 0, None)
            result.unreadable[-1] = (item.column, item.reason)
            continue
        line, data = item
        row = checks.RowView.of(index, data, line)
        _append_row(result, line, row)
        found = result.findings
        if task.check_schema and not row.checked:
            for issue in checks.check_schema(row, data):
                found.append((index, -1, issue))
        for position, check in rules:
            for issue in check(row, state):
                found.append((index, position, issue))
    if task.row_places is None:
        result.lines = _physical_lines(task.path, task.start, task.end)
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


def _physical_lines(path: Path, start: int, end: int) -> int:
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


def _append_row(result: SpanResult, line: int, row: checks.RowView | None) -> None:
    result.row_lines.append(line)
    result.unreadable.append(None)
    if row is None:
        result.ids.append(None)
        result.id_keys.append(0)
        result.input_keys.append(None)
        result.splits.append(None)
        result.family_fields.append(None)
        result.starter.append(0)
        return
    data = row.data
    result.ids.append(row.id)
    result.id_keys.append(0 if row.id is None else text_key(row.id))
    result.input_keys.append(input_key(data["input"]) if "input" in data else None)
    result.splits.append(split_of(data))
    case = row.case
    if isinstance(case.get("caseFamily"), str):
        result.family_fields.append({key: case[key] for key in _FAMILY_FIELDS if key in case})
    else:
        result.family_fields.append(None)
    result.starter.append(row.is_starter)


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


def _start_method() -> BaseContext:
    """Fork where it is safe (on Linux, and no other thread runs: a fork copies only the
    calling thread, and a lock another thread held stays held in the child); else a fork
    server, whose workers start from a process that has imported only this module."""
    import multiprocessing
    import threading

    methods = multiprocessing.get_all_start_methods()
    # on macOS a forked child may crash in system libraries, which is why Python spawns there
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
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


def validate_with_pool(
    validator: StreamValidator,
    source: SetSource,
    jobs: int,
) -> None:
    """Validate ``source`` (a JSON Lines set) with ``jobs`` worker processes, filling the
    validator's report exactly as the one-process path does."""
    from concurrent.futures import ProcessPoolExecutor

    options = validator.options
    positions = tuple(
        position
        for position, rule in enumerate(checks.ROW_RULES)
        if rule.check not in CROSS_ROW_RULES and any(options.wants(c) for c in rule.codes)
    )
    cross = [
        (position, rule.check)
        for position, rule in enumerate(checks.ROW_RULES)
        if rule.check in CROSS_ROW_RULES and any(options.wants(c) for c in rule.codes)
    ]
    bounds = limits.current()
    merger = _Merger(validator, source, bounds, cross)
    places = source.row_places if source.format == "json" else None
    tasks = (
        SpanTask(
            source.path,
            start,
            end,
            bounds,
            source.header,
            positions,
            validator.check_schema,
            rows,
        )
        for start, end, rows in (
            spans(source.path, SPAN_BYTES) if places is None else document_spans(places, SPAN_BYTES)
        )
    )
    with ProcessPoolExecutor(
        max_workers=jobs, mp_context=_start_method(), initializer=_ignore_interrupts
    ) as pool:
        pending: deque[Future[SpanResult]] = deque()
        try:
            # a forked worker keeps the parent's handlers until its initializer runs: a ^C in
            # between would stop it with a traceback; held back, it waits for the parent
            with signals_held():  # a forked pool starts its workers at the first task
                first = next(tasks, None)
                if first is not None:
                    pending.append(pool.submit(check_span, first))
            for task in tasks:
                pending.append(pool.submit(check_span, task))
                # a few spans ahead of the parent: enough to keep every worker busy, few
                # enough that results waiting to be merged stay small
                if len(pending) > 2 * jobs and not merger.take(_result(pending.popleft(), source)):
                    return
            while pending:
                if not merger.take(_result(pending.popleft(), source)):
                    return
        finally:
            for future in pending:
                future.cancel()
            merger.close()


def _result(future: Future[SpanResult], source: SetSource) -> SpanResult:
    """A worker's span; a file a worker could not read (moved or cut short while the set was
    checked) is the set's unreadable file, as it would be to one process."""
    try:
        return future.result()
    except OSError as error:
        raise ParseError(
            source.path, f"the file could not be read again: {error.strerror}"
        ) from None


class _Merger:
    """The parent's side: the spans' rows in file order, through the rules across rows."""

    def __init__(
        self,
        validator: StreamValidator,
        source: SetSource,
        bounds: limits.Limits,
        cross: list[tuple[int, Any]],
    ) -> None:
        self.validator = validator
        self.source = source
        self.bounds = bounds
        self.cross = cross
        self.index = 0
        self.line = 0
        # the rows pass the progress bar's watcher (ROW_WATCHER), as a source's rows do: a
        # source made anew over them is watched
        self.rows: deque[SourceRow | UnreadableRow] = deque()
        self.watched = replace(source, rows=_drain(self.rows)).rows if ROW_WATCHER.get() else None

    def take(self, span: SpanResult) -> bool:
        """Merge one span's rows; False once the set's row limit stops the reading."""
        validator, state, report = self.validator, self.validator.state, self.validator.report
        by_row: dict[int, list[tuple[int, Issue]]] = {}
        for offset, position, issue in span.findings:
            by_row.setdefault(offset, []).append((position, issue))
        for offset, relative_line in enumerate(span.row_lines):
            index = self.index
            line = self.line + relative_line if relative_line else 0
            if self.bounds.max_rows and index >= self.bounds.max_rows:
                self._record(too_many_rows(index, line, self.bounds))
                return False
            self.index += 1
            broken = span.unreadable[offset]
            if broken is not None:
                self._record(UnreadableRow(index, line, broken[0], broken[1]))
                continue
            row_id = span.ids[offset]
            fields = span.family_fields[offset]
            data: dict[str, Any] = {"metadata": {"case": fields or {}}}
            if row_id is not None:
                data["id"] = row_id
            row = checks.RowView(index, data, line or None)
            if self.watched is not None:
                self._count(SourceRow(index, line, data))
            report.rows += 1
            validator.place_row(line, row.id)
            validator.count_row(row_id, bool(span.starter[offset]))
            found = [
                (position, self._placed(issue, index, offset, line))
                for position, issue in by_row.get(offset, ())
            ]
            for position, check in self.cross:
                if check is checks.check_duplicate_input:
                    issues = checks.duplicate_input_issues(
                        row, state, span.input_keys[offset], span.splits[offset]
                    )
                elif check is checks.check_duplicate_id:
                    if row_id is None:
                        continue
                    issues = checks.duplicate_id_issues(row, state, span.id_keys[offset])
                else:
                    issues = check(row, state)
                found.extend((position, issue) for issue in issues)
            if found:
                found.sort(key=lambda item: item[0])  # stable: a rule's own order stays
                family = fields["caseFamily"] if fields is not None else None
                validator.emit_row([issue for _, issue in found], family)
        self.line += span.lines
        return True

    def _record(self, item: UnreadableRow) -> None:
        self._count(item)
        self.validator.check_row(item, self.source.format)

    def _count(self, item: SourceRow | UnreadableRow) -> None:
        if self.watched is None:
            return
        self.rows.append(item)
        for _ in self.watched:
            break

    @staticmethod
    def _placed(issue: Issue, index: int, offset: int, line: int) -> Issue:
        """A worker's finding, placed by the row's index and line in the whole file."""
        prefix = jsonpath.row_path(offset)
        path = issue.path
        if path.startswith(prefix):
            path = jsonpath.row_path(index) + path[len(prefix) :]
        return replace(issue, path=path, row_index=index, line=line or None)

    def close(self) -> None:
        for _ in self.watched or ():  # the watcher finishes its count
            pass


def _drain(rows: deque[Any]) -> Iterator[Any]:
    """An endless stream of whatever is put in ``rows``; it ends when ``rows`` is empty."""
    while rows:
        yield rows.popleft()
