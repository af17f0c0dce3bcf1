"""Validation on a cluster: the pool's two steps, run by Dask's distributed scheduler.

The same two functions the local pool runs (:mod:`blueprint.validation.parallel`) run here as
Dask tasks: a **map** over the spans of the shards (``check_span``: decode the rows, run every
one-row rule, keep each row's records for the rules across rows in buckets by key), and a
**reduce** over the buckets (``reduce_bucket``: the findings of the repeated ids, repeated
inputs, inputs across splits and case families' first rows). The records never pass through
this process: each span's buckets stay on the worker that read it until the workers reducing
them fetch them from there, which is Dask's shuffle. This process only counts each span's rows
and merges the findings in order, as it does for the local pool, so the report is the same.

Every worker must be able to import Blueprint and read the shards by the paths given here (a
folder every machine mounts, or one machine's local cluster).

The engine also runs other commands' tasks (:class:`Runner`: ``grade`` and ``dedupe``'s, in
:mod:`blueprint.grading.buckets` and :mod:`blueprint.authoring.buckets`); :class:`PoolEngine`
runs them on this machine's worker processes, :class:`LocalEngine` in this process one after
another with their records in files (as the pool's are), and :class:`InlineEngine` in this
process with their records in memory (the tests hold it to one process's results).
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future as PoolFuture
from contextlib import contextmanager
from dataclasses import dataclass, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Protocol

from blueprint.core.errors import BlueprintError, EngineError, OutputError, UsageError
from blueprint.formats._io import json_lines
from blueprint.formats.base import UnreadableRow
from blueprint.formats.shards import parquet_rows
from blueprint.io import limits
from blueprint.io.atomic import signals_held
from blueprint.validation import parallel
from blueprint.validation.keyed import BucketTask, Placed, reduce_bucket
from blueprint.validation.parallel import (
    Piece,
    SpanResult,
    SpanTask,
    Submitted,
    bucket_count,
    check_span,
    worker_pool,
)
from blueprint.validation.validate import few_collections

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from distributed import Client, Future

#: the engines ``--engine`` names
ENGINES: Final = ("local", "dask")
#: the bytes of the set one Dask task reads: sixteen spans a worker (few enough that the
#: scheduler's cost stays small, enough that no worker waits long on the last), each between these
#: (larger than the local pool's: every task costs the scheduler about a millisecond, and
#: each span makes a task per bucket)
SPAN_BYTES_RANGE: Final = (4 * 2**20, 128 * 2**20)
#: bytes of the set whose records one bucket holds, about (a bucket is reduced in a worker's
#: memory: its keys' first rows, some 150 MB at most)
BUCKET_BYTES: Final = 2**30
#: bytes of the set (and results) whose records one bucket holds where a process holds one
#: at a time beside all else it holds: one process grading (:class:`LocalEngine`), and a
#: pool's worker grading, so that their memory is the same whatever the set's size
SMALL_BUCKET_BYTES: Final = 8 * 2**20
#: how long to wait for the scheduler at ``--scheduler``
CONNECT_TIMEOUT = "30s"


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(
            "--engine dask needs Dask's distributed scheduler, which is not installed;"
            " install the dask extra (pip install 'blueprint-evals[dask]')"
        ) from None
    return distributed


#: the settings of the workers of a cluster started for a run (docs/scale.md gives them for a
#: cluster of your own): by default a worker samples its task's stack every 10 ms for the
#: dashboard's profile, holding the interpreter each time (a validating worker ran at 0.86
#: of one process with it, 0.92 without)
WORKER_CONFIG: Final = {"distributed.worker.profile.enabled": False}


class DaskEngine:
    """Validation tasks on a Dask cluster: the scheduler at ``address``, or a local cluster
    of ``jobs`` worker processes started for the run (and stopped after it)."""

    def __init__(self, jobs: int, address: str | None = None) -> None:
        self.jobs = jobs
        self.address = address
        self.client: Client | None = None
        self._cluster: Any = None

    def __enter__(self) -> DaskEngine:
        distributed = _distributed()
        if self.address is None:
            import dask

            with dask.config.set(WORKER_CONFIG):
                self._cluster = distributed.LocalCluster(
                    n_workers=self.jobs,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # any free port: a busy 8787 is no reason to warn
                    silence_logs=logging.ERROR,
                )
            self.client = distributed.Client(self._cluster)
        else:
            try:
                self.client = distributed.Client(self.address, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as error:
                # unreachable, or not an address (no port, an unknown scheme)
                raise UsageError(
                    f"cannot reach the Dask scheduler at {self.address}: {error}"
                ) from None
        self.jobs = max(1, sum(self.client.nthreads().values()))
        return self

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def sizes(self, set_bytes: int) -> tuple[int, int]:
        """Spans of sixteen a worker, and a bucket for every gigabyte (two a worker at least):
        a set's tasks are its spans times its buckets, so about 80,000 for 100 GB."""
        low, high = SPAN_BYTES_RANGE
        span = min(high, max(low, set_bytes // (16 * self.jobs)))
        return span, max(2 * self.jobs, -(-set_bytes // BUCKET_BYTES))

    def submit(self, task: SpanTask) -> _DaskSpan:
        client = self._client()
        read = client.submit(_check_span, task, pure=False)
        summary = client.submit(_summary, read, pure=False)
        buckets = [
            client.submit(_bucket, read, bucket, pure=False) for bucket in range(task.keyed.buckets)
        ]
        return _DaskSpan(summary, buckets)

    def keep(self, submitted: Submitted, result: SpanResult) -> Any:
        assert isinstance(submitted, _DaskSpan)
        return submitted.buckets

    def reduce(self, tasks: list[BucketTask], kept: list[Any]) -> Iterable[list[Placed]]:
        client = self._client()
        reduced = [
            client.submit(_reduce, task, *(buckets[task.bucket] for buckets in kept), pure=False)
            for task in tasks
        ]
        with _failures_named():
            found: list[list[Placed]] = client.gather(reduced)
        return found

    def runner(self) -> DaskRunner:
        """The cluster as a runner of any tasks (grading's: :mod:`blueprint.grading.buckets`)."""
        return DaskRunner(self._client())

    def _client(self) -> Client:
        assert self.client is not None, "the engine is used inside its with block"
        return self.client


class Runner(Protocol):
    """Where the tasks run: ``submit`` starts one (its arguments may be what earlier tasks
    give), ``gather`` waits for tasks and gives what they returned."""

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Any: ...

    def gather(self, handles: list[Any]) -> list[Any]: ...


class Inline:
    """Every task run here, at once, one after another."""

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Any:
        return function(*arguments)

    def gather(self, handles: list[Any]) -> list[Any]:
        return list(handles)


# --- tasks over a set's spans, for any runner ----------------------------------------------------


@dataclass(frozen=True)
class PieceTask:
    """A span for a task to read into ``buckets`` buckets, with the limits in force where
    the run started (``bounds``: a worker has its own defaults)."""

    piece: Piece
    buckets: int
    bounds: dict[str, int]


def piece_rows(piece: Piece, bounds: dict[str, int]) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """A span's rows as one process reads them (not typed), lines and rows counted from the
    span's start, with the run's limits (``bounds``: a worker has its own defaults) but no
    row limit (where it falls is the parent's to know)."""
    if piece.kind == "parquet":
        return parquet_rows(piece.path, (piece.start, piece.end))
    unbounded = replace(limits.Limits(**bounds), max_rows=0)
    return json_lines(piece.path, unbounded, (piece.start, piece.end))


def pickled_buckets(held: list[list[Any]]) -> list[bytes]:
    """Each bucket's records as bytes (empty for a bucket with none)."""
    return [pickle.dumps(records, pickle.HIGHEST_PROTOCOL) if records else b"" for records in held]


def summary_of(found: Any) -> Any:
    """A task's result without its buckets' records (``blobs``): what the parent reads."""
    return replace(found, blobs=None)


def blob_of(found: Any, bucket: int) -> Any:
    """One bucket's records of a task's result, which that bucket's task reads: bytes, or
    where a pool worker wrote them (:class:`BlobRef`)."""
    assert found.blobs is not None
    return found.blobs[bucket]


class TaskEngine(Protocol):
    """Where tasks run, and how large a span of a set and how many buckets its work takes."""

    def sizes(self, set_bytes: int) -> tuple[int, int]: ...

    def runner(self) -> Runner: ...


@dataclass(frozen=True)
class InlineEngine:
    """Tasks run here, one after another, over spans and buckets of the sizes given (the
    tests hold it to one process's results)."""

    span_bytes: int
    buckets: int

    def sizes(self, set_bytes: int) -> tuple[int, int]:
        return self.span_bytes, self.buckets

    def runner(self) -> Runner:
        return Inline()


class PoolEngine:
    """Tasks on worker processes of this machine (``grade --jobs``), for the length of a
    ``with`` block. A task's result comes back here without its buckets' records: the worker
    writes them to a file in a temporary folder, and the task that takes a bucket reads its
    part of that file (:class:`BlobRef`), so this process holds no records however large the
    set."""

    def __init__(self, jobs: int, bucket_bytes: int | None = None) -> None:
        """``bucket_bytes``: of the set's, whose records a bucket holds (``BUCKET_BYTES``
        when None)."""
        self.jobs = jobs
        self.bucket_bytes = bucket_bytes
        self._executor: ProcessPoolExecutor | None = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> PoolEngine:
        self._folder = task_folder()
        self._executor = worker_pool(self.jobs)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            # a task is a span or a bucket: the workers finish theirs, none is started
            self._executor.shutdown(wait=True, cancel_futures=True)
        if self._folder is not None:
            self._folder.cleanup()

    def sizes(self, set_bytes: int) -> tuple[int, int]:
        return parallel.SPAN_BYTES, bucket_count(set_bytes, self.jobs, self.bucket_bytes)

    def runner(self) -> PoolRunner:
        assert self._executor is not None and self._folder is not None, (
            "the engine is used inside its with block"
        )
        return PoolRunner(self._executor, self._folder.name)


class LocalEngine:
    """Tasks here, one after another, for the length of a ``with`` block, each task's
    buckets' records in a file of a temporary folder (as :class:`PoolEngine`'s workers write
    them): one process grades a large set taking the same memory whatever its size, a
    bucket's rows at a time."""

    def __init__(self) -> None:
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> LocalEngine:
        self._folder = task_folder()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._folder is not None:
            self._folder.cleanup()

    def sizes(self, set_bytes: int) -> tuple[int, int]:
        # small buckets: this process holds one at a time, beside everything else it holds
        return parallel.SPAN_BYTES, bucket_count(set_bytes, 1, SMALL_BUCKET_BYTES)

    def runner(self) -> LocalRunner:
        assert self._folder is not None, "the engine is used inside its with block"
        return LocalRunner(self._folder.name)


@dataclass(frozen=True)
class LocalRunner:
    #: where the tasks write their results' records
    folder: str

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Any:
        if function in (summary_of, blob_of):
            return function(*arguments)
        found = _pooled(function, self.folder, *arguments)
        if isinstance(found, _NoRoom):
            raise no_room(found.reason)
        return found

    def gather(self, handles: list[Any]) -> list[Any]:
        return list(handles)


def task_folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder for the tasks' records (an output error when there is no room)."""
    try:
        return tempfile.TemporaryDirectory(prefix="blueprint-buckets-")
    except OSError as error:
        raise no_room(error.strerror or str(error)) from None


@dataclass(frozen=True)
class BlobRef:
    """One bucket's records: bytes of a file a worker of this machine wrote, from ``start``
    to ``end``; or, with ``bucket``, where the table at the file's end says that bucket's
    records lie (:class:`SpilledBlobs`)."""

    path: str
    start: int = 0
    end: int = 0
    bucket: int | None = None

    def read(self) -> bytes:
        with Path(self.path).open("rb") as handle:
            start, end = self.start, self.end
            if self.bucket is not None:
                start, end = _bucket_bounds(handle, self.bucket)
            handle.seek(start)
            return handle.read(end - start)


#: how a count or an offset is written in a file of the tasks' records
_OFFSET: Final = struct.Struct("<q")


def _bucket_bounds(handle: BinaryIO, bucket: int) -> tuple[int, int]:
    """Where a bucket's records lie in a file that ends with its buckets' ends and their
    count (:func:`_pooled`)."""
    handle.seek(-_OFFSET.size, os.SEEK_END)
    (count,) = _OFFSET.unpack(handle.read(_OFFSET.size))
    table = handle.tell() - _OFFSET.size * (count + 1)
    if bucket:
        handle.seek(table + _OFFSET.size * (bucket - 1))
        start, end = struct.unpack("<2q", handle.read(2 * _OFFSET.size))
        return start, end
    handle.seek(table)
    return 0, _OFFSET.unpack(handle.read(_OFFSET.size))[0]


@dataclass(frozen=True)
class SpilledBlobs:
    """A task's buckets' records in one file, bucket after bucket, then where each bucket
    ends and their count; indexed as the list of records it stands for. This process keeps
    no more than the path: where each bucket lies is read by whoever reads it (a file a
    span, and a bucket a span, would be many)."""

    path: str
    buckets: int

    def __getitem__(self, bucket: int) -> BlobRef:
        if not 0 <= bucket < self.buckets:
            raise IndexError(bucket)
        return BlobRef(self.path, bucket=bucket)

    def __len__(self) -> int:
        return self.buckets


@dataclass
class BucketFiles:
    """A task's buckets' records written as it reads, to a file a bucket in ``folder`` (for
    a task whose input has no spans to cut, such as a results file): pickled lists one after
    another. Indexed as the records of each bucket it stands for, as :class:`SpilledBlobs`
    is; the writing raises :class:`NoRoomForRecords` when the folder has no room."""

    paths: list[str]
    sizes: list[int]

    @classmethod
    def made(cls, folder: str, buckets: int) -> BucketFiles:
        try:
            handle, path = tempfile.mkstemp(prefix="task-", dir=folder)
        except OSError as error:
            raise NoRoomForRecords(error.strerror or str(error)) from None
        os.close(handle)
        return cls([f"{path}-{bucket}" for bucket in range(buckets)], [0] * buckets)

    def write(self, bucket: int, records: list[Any]) -> None:
        """Add records to a bucket's file (opened for each write: a file a bucket held open
        would be many open files)."""
        if not records:
            return
        try:
            with Path(self.paths[bucket]).open("ab") as handle:
                handle.write(pickle.dumps(records, pickle.HIGHEST_PROTOCOL))
                self.sizes[bucket] = handle.tell()
        except OSError as error:
            raise NoRoomForRecords(error.strerror or str(error)) from None

    def __getitem__(self, bucket: int) -> BlobRef | bytes:
        size = self.sizes[bucket]
        return BlobRef(self.paths[bucket], 0, size) if size else b""

    def __len__(self) -> int:
        return len(self.paths)


class NoRoomForRecords(Exception):
    """A task could not write its records to the tasks' folder (the reason, in words)."""


@dataclass(frozen=True)
class _NoRoom:
    """A worker could not write its records (an exception with this message would not
    survive the trip back)."""

    reason: str


def no_room(reason: str) -> OutputError:
    return OutputError(
        Path(tempfile.gettempdir()),
        f"{reason}: the tasks' records go in the temporary folder (set TMPDIR to a folder with"
        " room)",
    )


def _pooled(function: Callable[..., Any], folder: str, *arguments: Any) -> Any:
    """Run a task on a pool worker: its buckets' records read where they were written, and
    those of its result written to a file of its own in ``folder``."""
    values = [item.read() if isinstance(item, BlobRef) else item for item in arguments]
    try:
        found = function(*values)
    except NoRoomForRecords as error:
        return _NoRoom(str(error))
    blobs = getattr(found, "blobs", None)
    if not isinstance(blobs, list) or not is_dataclass(found) or isinstance(found, type):
        return found
    try:
        handle, path = tempfile.mkstemp(prefix="task-", dir=folder)
        with os.fdopen(handle, "wb") as written:
            ends = []
            for blob in blobs:
                written.write(blob)
                ends.append(written.tell())
            written.write(struct.pack(f"<{len(ends)}q", *ends))
            written.write(_OFFSET.pack(len(ends)))
    except OSError as error:
        return _NoRoom(error.strerror or str(error))
    return replace(found, blobs=SpilledBlobs(path, len(ends)))


def _value(handle: Any) -> Any:
    found = handle.result() if isinstance(handle, PoolFuture) else handle
    if isinstance(found, _NoRoom):
        raise no_room(found.reason)
    return found


@dataclass
class PoolRunner:
    executor: ProcessPoolExecutor
    #: where the workers write their results' records
    folder: str
    started: bool = False

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Any:
        values = [_value(item) for item in arguments]
        if function in (summary_of, blob_of):  # a part of a result that is here already
            done: PoolFuture[Any] = PoolFuture()
            done.set_result(function(*values))
            return done
        if self.started:
            return self.executor.submit(_pooled, function, self.folder, *values)
        self.started = True
        # a forked worker keeps this process's handlers until its initializer runs
        with signals_held():
            return self.executor.submit(_pooled, function, self.folder, *values)

    def gather(self, handles: list[Any]) -> list[Any]:
        return [_value(handle) for handle in handles]


@dataclass(frozen=True)
class DaskRunner:
    """Tasks on the cluster: each one's arguments may be earlier tasks' futures, whose
    values stay on the workers; a failure is named as the engine's are."""

    client: Client

    def submit(self, function: Callable[..., Any], *arguments: Any) -> Future:
        return self.client.submit(_collected_late, function, *arguments, pure=False)

    def gather(self, handles: list[Any]) -> list[Any]:
        with _failures_named():
            found: list[Any] = self.client.gather(handles)
        return found


def _collected_late(function: Callable[..., Any], *arguments: Any) -> Any:
    with few_collections():
        return function(*arguments)


@dataclass(frozen=True)
class _DaskSpan:
    #: the span's result without its records (what this process reads)
    summary: Future
    #: the span's records, a future a bucket (they stay on the workers)
    buckets: list[Future]

    def result(self) -> SpanResult:
        with _failures_named():
            result: SpanResult = self.summary.result()
        return result

    def cancel(self) -> None:
        self.summary.cancel()
        for bucket in self.buckets:
            bucket.cancel()


@contextmanager
def _failures_named() -> Iterator[None]:
    """A task's own errors as raised (a shard that cannot be read: ``ParseError``,
    ``OSError``); anything else the cluster gives (a worker lost, a task that failed there,
    a worker without Blueprint) as an ``EngineError`` that says what, not a traceback."""
    try:
        yield
    except (BlueprintError, OSError):
        raise
    except Exception as error:
        raise EngineError(
            f"the Dask cluster failed the run: {type(error).__name__}: {error}"
        ) from None


# A worker collects its garbage as any Python process does: every 700 new containers, and
# now and then over everything it holds, a cluster's bookkeeping included. One process and
# the pool's forked workers validate with the collector held back (validate.few_collections);
# a cluster's task takes the same settings for its run (a worker ran at 0.71 of one process
# without, 0.92 with). Tasks that share a worker's threads only change when it collects.


def _check_span(task: SpanTask) -> SpanResult:
    with few_collections():
        return check_span(task)


def _summary(result: SpanResult) -> SpanResult:
    return replace(result, blobs=None)


def _bucket(result: SpanResult, bucket: int) -> bytes:
    assert result.blobs is not None
    return result.blobs[bucket]


def _reduce(task: BucketTask, *blobs: bytes) -> list[Placed]:
    with few_collections():
        return reduce_bucket(replace(task, pieces=blobs))
