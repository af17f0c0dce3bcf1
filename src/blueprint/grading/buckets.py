"""Grading a large set in buckets by row id: on worker processes, or on a cluster.

A result is graded against its own row alone, so the work splits by row id. Tasks read the
set's spans (:func:`blueprint.validation.parallel.pieces`: of a JSON Lines file or a set in
shards) and index each row as one process does (its verdict when no result comes, and the
part grading reads, packed), in a bucket by its id's key; a task a results file reads its
results into the same buckets. Each bucket's task then grades its results against its rows,
exactly as one process grading the whole set does (:mod:`blueprint.grading.streamed`: the
same index and tally, its trials numbered as the whole run numbers them), and gives its rows'
verdicts. This process counts the rows of each span, numbers the trials, and puts the
verdicts back in the set's order. Every refusal one process would give (a second result for
a row in a trial, a result for a row the set does not have, a results file that does not
read, too many trials, a k past them) is given here too, for the first file and place one
process would have met it.

The tasks run wherever a runner (:class:`blueprint.validation.engines.Runner`) sends them: a
Dask cluster's workers (:class:`blueprint.validation.engines.DaskEngine`), where the rows and
results stay; this machine's worker processes (:class:`blueprint.validation.engines.PoolEngine`);
or here, one after another (:class:`blueprint.validation.engines.LocalEngine`, for a large
set graded in one process, and :class:`blueprint.validation.engines.InlineEngine`, which the
tests compare with one process). Where the runner has a folder (this machine's), every
task's records wait in files there: a span's and a results file's buckets, and a bucket's
verdicts, which this process reads back together in the set's order, a few of each bucket at
a time. So the memory of a run on this machine does not grow with the set.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import heapq
import io
import itertools
import operator
import pickle
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Protocol

from blueprint.core.errors import ParseError, UsageError
from blueprint.core.issues import Issue, issue_fields
from blueprint.core.spill import SpillList
from blueprint.formats.base import UnreadableRow
from blueprint.grading.results import read_trials
from blueprint.grading.semantics import GradingOptions, Recorded
from blueprint.grading.spilled import (
    RECORDS_A_CHUNK,
    Record,
    VerdictFile,
    VerdictList,
    records_a_chunk,
    write_verdicts,
)
from blueprint.grading.streamed import (
    MAX_TRIALS,
    GradedRows,
    IndexEntry,
    RowIndex,
    Tally,
    Trials,
    UnknownResultIds,
    errors_by_id,
    index_entry,
    run_verdicts,
    too_many_trials,
)
from blueprint.grading.trials import RowTrials, TrialRun
from blueprint.io import limits
from blueprint.io.firstseen import text_key
from blueprint.validation.engines import (
    BlobRef,
    BucketFiles,
    NoRoomForRecords,
    PieceTask,
    Runner,
    blob_of,
    no_room,
    pickled_buckets,
    piece_rows,
    summary_of,
    task_folder,
)
from blueprint.validation.parallel import Engine, Piece


class GradingEngine(Engine, Protocol):
    """An engine that validates (:class:`blueprint.validation.parallel.Engine`) and runs
    the grading's tasks."""

    def runner(self) -> Runner: ...


# --- the set's rows ----------------------------------------------------------------------------


def bucket_of(row_id: Any, buckets: int) -> int:
    # a row without an id (which only an invalid set has) gets no result: any bucket will do
    return text_key(row_id) % buckets if isinstance(row_id, str) else 0


@dataclass(frozen=True)
class RowsTask:
    span: PieceTask
    families: dict[str, Any]
    options: GradingOptions


@dataclass
class RowsRead:
    """A span's rows that are objects, counted, and what the index keeps of each
    (:func:`blueprint.grading.streamed.index_entry`), a pickled list a bucket: (the row's
    place among them, its entry)."""

    count: int
    blobs: list[bytes] | None


def bucket_rows(task: RowsTask) -> RowsRead:
    """A span's rows indexed as one process indexes them, in buckets by id. As in one
    process, only a row that is an object is a row to grade (a set with any other has an
    error no row owns, and is refused before grading)."""
    span = task.span
    held: list[list[tuple[int, IndexEntry]]] = [[] for _ in range(span.buckets)]
    count = 0
    for item in piece_rows(span.piece, span.bounds):
        if isinstance(item, UnreadableRow):  # the set was validated: read again, it changed
            raise item.error(span.piece.path)
        row = item[1]
        if isinstance(row, dict):
            entry = index_entry(row, task.families, task.options)
            held[bucket_of(entry[3], span.buckets)].append((count, entry))
            count += 1
    return RowsRead(count, pickled_buckets(held))


# --- the results -------------------------------------------------------------------------------

#: a result's fields, in order, as a tuple (shallow: ``dataclasses.astuple`` copies every
#: value, deeply)
_RESULT_FIELDS: Final = operator.attrgetter(*(field.name for field in dataclasses.fields(Recorded)))


@dataclass(frozen=True)
class ResultsTask:
    path: Path
    buckets: int
    bounds: dict[str, int]
    #: a folder to write the buckets' records to as they are read, a chunk of so many
    #: records at a time (None: they come back with the task's result)
    folder: str | None = None
    chunk: int = RECORDS_A_CHUNK


@dataclass
class ResultsRead:
    """A results file read, without its results (what this process reads of it)."""

    #: results read, in the file's order (up to the first that does not read)
    count: int = 0
    #: each trial the file names, in the order first met: (trial, its first result's place
    #: among the file's results, that result's line)
    trials: list[tuple[str | None, int, int | None]] = field(default_factory=list)
    #: why the file stops reading, and where: (place of the result it stops at, line,
    #: column, reason)
    error: tuple[int, int | None, int | None, str] | None = None
    #: the results, pickled lists a bucket: (place, trial, the result's fields)
    blobs: list[bytes] | BucketFiles | None = None


def bucket_results(task: ResultsTask) -> ResultsRead:
    """A results file's results, in buckets by their row's id."""
    read = ResultsRead()
    held: list[list[tuple[int, str | None, tuple[Any, ...]]]] = [[] for _ in range(task.buckets)]
    seen: set[str | None] = set()
    # with a folder, each bucket's records go to a file of its own a chunk at a time, so
    # that a results file of any size is read in the same memory
    files = BucketFiles.made(task.folder, task.buckets) if task.folder is not None else None
    with limits.overridden(**task.bounds):
        try:
            for place, (key, recorded) in enumerate(read_trials(task.path)):
                read.count = place + 1
                if key not in seen:
                    seen.add(key)
                    read.trials.append((key, place, recorded.line))
                fields = _RESULT_FIELDS(recorded)  # a tuple travels faster than an object
                bucket = bucket_of(recorded.id, task.buckets)
                held[bucket].append((place, key, fields))
                if files is not None and len(held[bucket]) == task.chunk:
                    files.write(bucket, held[bucket])
                    held[bucket] = []
        except ParseError as error:
            read.error = (read.count, error.line, error.column, error.reason)
        if files is None:
            read.blobs = pickled_buckets(held)
            return read
        for bucket, records in enumerate(held):
            files.write(bucket, records)
    read.blobs = files
    return read


def _loaded(part: bytes | BlobRef) -> Iterator[Any]:
    """The records of a bucket's part (read here where a task wrote them to a file): one
    pickled list, or several one after another."""
    blob = part.read() if isinstance(part, BlobRef) else part
    if not blob:
        return
    stream = io.BytesIO(blob)
    while stream.tell() < len(blob):
        yield from pickle.load(stream)


# --- a bucket ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BucketTask:
    bucket: int
    families: dict[str, Any]
    options: GradingOptions
    #: per span of the set: the rows before it
    bases: tuple[int, ...]
    #: per results file: its number and path, and the place of the first result not graded
    #: (None: every one)
    files: tuple[tuple[int, Path, int | None], ...]
    #: the run's trials, in the order one process numbers them
    trials: tuple[tuple[int, Path, str | None], ...]
    #: the validator's error findings on the bucket's rows, by id; or, pickled, where they
    #: wait (each finding as its fields: :func:`_errors_in_buckets`)
    errors: dict[str, list[Issue]] | bytes | BlobRef
    #: the k of pass@k and pass^k (None: the number of trials, or a k the run refuses)
    k: int | None
    #: a folder to write the bucket's verdicts to, a chunk of so many at a time (None: they
    #: come back with its result)
    folder: str | None = None
    chunk: int = RECORDS_A_CHUNK


@dataclass
class BucketGrades:
    """A bucket's rows graded: each row's place in the set, and its verdicts."""

    positions: array[int]
    graded: GradedRows
    #: per file number: the first second result for a row in a trial (its place among the
    #: file's results, its line, why)
    repeats: dict[int, tuple[int, int | None, str]]
    #: per file number: the ids its results name that the set does not have
    unknown: dict[int, list[str]]
    #: the verdicts in a file (``graded`` then holds none)
    spilled: VerdictFile | None = None

    def records(self) -> Iterator[Record]:
        """Each row's place in the set and its verdicts, in the set's order."""
        if self.spilled is not None:
            yield from self.spilled.records()
            return
        part = self.graded
        if part.trials is None:
            yield from zip(self.positions, part.rows, itertools.repeat(None))
        else:
            yield from zip(self.positions, part.rows, part.trials.rows, strict=True)


def grade_bucket(task: BucketTask, *blobs: bytes | BlobRef) -> BucketGrades:
    """Grade a bucket's results against its rows (``blobs``: the bucket's part of each span
    of the set, then of each results file)."""
    spans = len(task.bases)
    positions = array("q")
    index = RowIndex((), task.families, task.options)
    for base, blob in zip(task.bases, blobs[:spans], strict=True):
        for offset, entry in _loaded(blob):
            positions.append(base + offset)
            index.keep(entry)
    tally = Tally(index, task.options)
    for file_number, path, key in task.trials:
        tally.trial(file_number, path, key, None)
    repeats: dict[int, tuple[int, int | None, str]] = {}
    unknown: dict[int, list[str]] = {}
    for (file_number, path, cutoff), blob in zip(task.files, blobs[spans:], strict=True):
        found = [
            (place, key, Recorded(*fields))
            for place, key, fields in _loaded(blob)
            if cutoff is None or place < cutoff
        ]
        at = [0]
        try:
            tally.read_items(
                file_number,
                path,
                _tracked(found, at),
                first_line=functools.partial(_first_line, found),
                empty_is_a_trial=False,
            )
        except UnknownResultIds as error:
            unknown[file_number] = error.ids
        except ParseError as error:  # a second result for a row in a trial
            repeats[file_number] = (at[0], error.line, error.reason)
            break  # the run stops here: nothing after it is graded
    index.packed = []
    if repeats or unknown:  # the run is refused: no verdict is needed
        return BucketGrades(positions, GradedRows([], None), repeats, unknown)
    graded = run_verdicts(tally.tallied(), _errors_of(task.errors), task.k)
    bucket = BucketGrades(positions, graded, repeats, unknown)
    if task.folder is None:
        return bucket
    # the verdicts wait in a file, so that the run's process never holds every bucket's
    try:
        spilled = write_verdicts(task.folder, bucket.records(), task.chunk)
    except OSError as error:
        raise NoRoomForRecords(error.strerror or str(error)) from None
    empty = GradedRows([], None)
    return BucketGrades(array("q"), empty, repeats, unknown, spilled=spilled)


def grade_bucket_in(task: BucketTask, parts: Sequence[Sequence[bytes | BlobRef]]) -> BucketGrades:
    """:func:`grade_bucket` given each span's and results file's records (``parts``: what
    the tasks that read them wrote, indexed by bucket), the bucket's read from each."""
    return grade_bucket(task, *(part[task.bucket] for part in parts))


def _tracked(
    found: list[tuple[int, str | None, Recorded]], at: list[int]
) -> Iterator[tuple[str | None, Recorded]]:
    """The results as the tally reads them, the place of the last one given in ``at``."""
    for place, key, recorded in found:
        at[0] = place
        yield key, recorded


def _first_line(
    found: list[tuple[int, str | None, Recorded]], row_id: str, key: str | None
) -> int | None:
    """The line of a row's first result in a trial (every result for the row is in its
    bucket)."""
    for _, trial, result in found:
        if result.id == row_id and trial == key:
            return result.line
    return None


# --- the run -----------------------------------------------------------------------------------


def grade_in_buckets(
    runner: Runner,
    spans: Iterable[Piece],
    families: dict[str, Any],
    errors: Iterable[Issue],
    results: Sequence[Path],
    options: GradingOptions,
    *,
    buckets: int,
    k: int | None = None,
) -> GradedRows:
    """:func:`blueprint.grading.streamed.grade_rows` for a set read in ``spans`` (of a set
    in shards or a JSON Lines file: :func:`blueprint.validation.parallel.pieces`), its work
    done in ``buckets`` buckets by the tasks ``runner`` runs: the same verdicts, and the
    same refusals."""
    bounds = asdict(limits.current())
    folder = getattr(runner, "folder", None)  # one this machine's tasks write to
    chunk = records_a_chunk(buckets)
    row_reads = [
        runner.submit(bucket_rows, RowsTask(PieceTask(piece, buckets, bounds), families, options))
        for piece in spans
    ]
    result_reads = [
        runner.submit(bucket_results, ResultsTask(path, buckets, bounds, folder, chunk))
        for path in results
    ]
    counts = [
        read.count
        for read in runner.gather([runner.submit(summary_of, read) for read in row_reads])
    ]
    summaries: list[ResultsRead] = runner.gather(
        [runner.submit(summary_of, read) for read in result_reads]
    )
    trials, cutoffs, stops = _number_trials(results, summaries)
    bases = tuple(itertools.accumulate(counts, initial=0))[:-1]
    files = tuple(
        (number, path, cutoff)
        for number, (path, cutoff) in enumerate(zip(results, cutoffs, strict=True), start=1)
    )
    count = len(trials)
    k_refused = k is not None and not 1 <= k <= max(count, 1)
    task = BucketTask(
        0, families, options, bases, files, tuple(trials.sources), {}, None, folder, chunk
    )
    with contextlib.ExitStack() as stack:
        # a folder of this machine's for what waits here: the tasks' own, or one of this
        # process's when they run elsewhere (a cluster's)
        here = folder if folder is not None else stack.enter_context(task_folder())
        by_bucket = _errors_in_buckets(errors, buckets, here, chunk)
        tasks = (
            replace(task, bucket=bucket, errors=by_bucket[bucket], k=None if k_refused else k)
            for bucket in range(buckets)
        )
        if folder is not None:
            # this machine's tasks read their parts where they were written: each is given
            # where the spans' and files' records are, once, not a part a span and bucket
            # (the tasks waiting for a worker would hold spans times buckets of them)
            parts = tuple(read.blobs for read in runner.gather([*row_reads, *result_reads]))
            submitted = [runner.submit(grade_bucket_in, each, parts) for each in tasks]
            # each bucket's verdicts wait in a file already
            graded: list[BucketGrades] = runner.gather(submitted)
        else:
            submitted = [
                runner.submit(
                    grade_bucket,
                    # a bucket's findings go with its task, read here as it is sent
                    replace(each, errors=_errors_of(each.errors)),
                    *(
                        runner.submit(blob_of, read, each.bucket)
                        for read in (*row_reads, *result_reads)
                    ),
                )
                for each in tasks
            ]
            # a cluster's buckets are gathered one at a time, each one's verdicts written
            # to a file here before the next comes, so that this process never holds them all
            graded = []
            for number, handle in enumerate(submitted):
                (bucket,) = runner.gather([handle])
                submitted[number] = None  # the cluster may let the bucket's result go
                graded.append(_kept_in(here, bucket, chunk))
        _refuse(results, stops, graded)
        if k_refused:  # as one process: after the results are read
            raise UsageError(f"k = {k}: from 1 to the run's {count} trial(s)")
        return _merged(graded, sum(counts), trials, k)


def _kept_in(folder: str, bucket: BucketGrades, chunk: int) -> BucketGrades:
    """A bucket's verdicts moved to a file in ``folder`` (a refused run's have none)."""
    if bucket.spilled is not None or not bucket.graded.rows:
        return bucket
    try:
        spilled = write_verdicts(folder, bucket.records(), chunk)
    except OSError as error:
        raise no_room(error.strerror or str(error)) from None
    return BucketGrades(array("q"), GradedRows([], None), bucket.repeats, bucket.unknown, spilled)


def _errors_in_buckets(
    errors: Iterable[Issue], buckets: int, folder: str, chunk: int
) -> BucketFiles:
    """The validator's error findings, each in its row's bucket: in a file a bucket in
    ``folder``, written a chunk at a time, so that a set with an error on every row is graded
    in the same memory."""
    held: list[list[tuple[Any, ...]]] = [[] for _ in range(buckets)]
    try:
        files = BucketFiles.made(folder, buckets)
        for issue in errors:
            bucket = bucket_of(issue.row_id, buckets)
            held[bucket].append(issue_fields(issue))
            if len(held[bucket]) == chunk:
                files.write(bucket, held[bucket])
                held[bucket] = []
        for bucket, records in enumerate(held):
            files.write(bucket, records)
    except NoRoomForRecords as error:
        raise no_room(str(error)) from None
    return files


def _errors_of(part: dict[str, list[Issue]] | bytes | BlobRef) -> dict[str, list[Issue]]:
    """A bucket's error findings by row id, from where they wait."""
    if isinstance(part, dict):
        return part
    return errors_by_id(Issue(*fields) for fields in _loaded(part))


def _number_trials(
    results: Sequence[Path], summaries: list[ResultsRead]
) -> tuple[Trials, list[int | None], list[ParseError | None]]:
    """The run's trials numbered as one process numbers them, reading the files in turn;
    per file, the place of its first result not to grade and the refusal found there (a
    result that does not read, a trial past ``MAX_TRIALS``). After a file that stops the
    run, nothing is graded."""
    trials = Trials()
    cutoffs: list[int | None] = []
    stops: list[ParseError | None] = []
    stopped = False
    for file_number, (path, read) in enumerate(zip(results, summaries, strict=True), start=1):
        if stopped:
            cutoffs.append(0)
            stops.append(None)
            continue
        cutoff: int | None = None
        stop: ParseError | None = None
        if read.error is not None:
            cutoff = read.error[0]
            stop = ParseError(path, read.error[3], line=read.error[1], column=read.error[2])
        for key, place, line in read.trials:
            if cutoff is not None and place >= cutoff:
                break
            if (file_number, key) not in trials.numbers and len(trials) >= MAX_TRIALS:
                cutoff, stop = place, too_many_trials(path, key, line)
                break
            trials.number(file_number, path, key)
        if read.count == 0 and read.error is None:
            trials.number(file_number, path, None)  # a trial in which nothing ran
        stopped = stop is not None
        cutoffs.append(cutoff)
        stops.append(stop)
    return trials, cutoffs, stops


def _refuse(
    results: Sequence[Path], stops: list[ParseError | None], graded: list[BucketGrades]
) -> None:
    """Raise the refusal one process gives: the first file's, and in it the first place's
    (a second result for a row in a trial, which the buckets find, or where the file stops:
    ``stops``)."""
    for file_number, (path, stop) in enumerate(zip(results, stops, strict=True), start=1):
        # a bucket grades nothing from where the file stops: a repeat it finds comes first
        first = min(
            (bucket.repeats[file_number] for bucket in graded if file_number in bucket.repeats),
            default=None,
        )
        if first is not None:
            raise ParseError(path, first[2], line=first[1])
        if stop is not None:
            raise stop
        unknown = {row_id for bucket in graded for row_id in bucket.unknown.get(file_number, ())}
        if unknown:
            raise UnknownResultIds(path, sorted(unknown))


def _merged(graded: list[BucketGrades], size: int, trials: Trials, k: int | None) -> GradedRows:
    """The buckets' verdicts put back in the set's order: read together, a chunk of each at
    a time, into a list that keeps the oldest on disk."""
    rows = VerdictList()
    figures: SpillList[RowTrials] | None = SpillList() if len(trials) > 1 else None
    in_order = heapq.merge(*(bucket.records() for bucket in graded), key=operator.itemgetter(0))
    for position, verdict, found in in_order:
        assert position == len(rows)  # every row is in one bucket
        rows.append(verdict)
        if figures is not None:
            assert found is not None
            figures.append(found)
    assert len(rows) == size
    run = None
    if figures is not None:
        run = TrialRun(trials.labels()[1], figures, k or len(trials))
    return GradedRows(rows, run)


__all__ = ["BucketTask", "GradingEngine", "grade_bucket", "grade_in_buckets"]
