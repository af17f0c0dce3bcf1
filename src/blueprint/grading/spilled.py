"""A run's verdicts kept off the heap, so that grading a set takes the same memory however
many rows it has.

The report's verdicts are a :class:`VerdictList`: a list whose oldest chunks wait in a
scratch file (:mod:`blueprint.core.spill`), each verdict kept as the tuple of its fields. A
bucket graded on this machine (:mod:`blueprint.grading.buckets`) writes its verdicts to a
file of the run's temporary folder (:func:`write_verdicts`), each with its place in the set,
a small chunk at a time; the buckets' files are then read back together, in the set's order,
one chunk of each in memory.
"""

from __future__ import annotations

import os
import pickle
import struct
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Final

from blueprint.core.spill import FieldsList
from blueprint.grading.semantics import RowVerdict
from blueprint.grading.trials import RowTrials

#: a row's place in the set, its verdict and its verdict in each trial (None: one trial)
Record = tuple[int, RowVerdict, RowTrials | None]
#: records written, and read back, at a time, at most: the read holds a chunk of every
#: bucket, so with many buckets the chunks are smaller (:func:`records_a_chunk`)
RECORDS_A_CHUNK: Final = 64
#: the records a run holds a chunk of each bucket of, about
_RECORDS_HELD: Final = 8192


def records_a_chunk(buckets: int) -> int:
    """Records a chunk for a run in ``buckets`` buckets: all the buckets' chunks together
    hold some 8,192 (so their memory is the same however many buckets a large set takes),
    between 4 and :data:`RECORDS_A_CHUNK` each."""
    return max(4, min(RECORDS_A_CHUNK, _RECORDS_HELD // max(buckets, 1)))


#: a chunk's length before it, in its file
_LENGTH: Final = struct.Struct("<q")


class VerdictList(FieldsList[RowVerdict], kind=RowVerdict):
    """A run's verdicts: past a few thousand, the oldest wait in a scratch file, each as the
    tuple of its fields."""

    __slots__ = ()


@dataclass(frozen=True)
class VerdictFile:
    """A bucket's records in a file, in the set's order: chunks, each after its length (so
    that nothing of the file is kept in memory but where the next chunk starts)."""

    path: str

    def records(self) -> Iterator[Record]:
        """The records, read back a chunk at a time (the file open only while a chunk is
        read: the buckets are read together, and there may be thousands)."""
        start = 0
        while True:
            with open(self.path, "rb", buffering=0) as handle:  # noqa: PTH123 (unbuffered)
                handle.seek(start)
                head = handle.read(_LENGTH.size)
                if len(head) < _LENGTH.size:
                    return
                (size,) = _LENGTH.unpack(head)
                chunk = pickle.loads(handle.read(size))
            start += _LENGTH.size + size
            for position, fields, trials in chunk:
                yield position, RowVerdict(*fields), trials


def write_verdicts(
    folder: str, records: Iterable[Record], chunk_size: int = RECORDS_A_CHUNK
) -> VerdictFile:
    """Write records (in the set's order) to a new file in ``folder``, ``chunk_size`` a
    chunk; OSError when the folder has no room."""
    handle, path = tempfile.mkstemp(prefix="verdicts-", dir=folder)
    with os.fdopen(handle, "wb") as written:
        chunk: list[tuple[int, tuple[Any, ...], RowTrials | None]] = []
        for position, verdict, trials in records:
            chunk.append((position, VerdictList.fields_of(verdict), trials))
            if len(chunk) == chunk_size:
                _write_chunk(written, chunk)
                chunk = []
        if chunk:
            _write_chunk(written, chunk)
    return VerdictFile(path)


def _write_chunk(written: BinaryIO, chunk: list[Any]) -> None:
    data = pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL)
    written.write(_LENGTH.pack(len(data)) + data)


__all__ = [
    "RECORDS_A_CHUNK",
    "Record",
    "VerdictFile",
    "VerdictList",
    "records_a_chunk",
    "write_verdicts",
]
