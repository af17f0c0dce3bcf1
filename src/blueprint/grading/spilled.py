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

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from blueprint.core.spill import (
    RECORDS_A_CHUNK,
    ChunkFile,
    FieldsList,
    records_a_chunk,
    write_chunks,
)
from blueprint.grading.semantics import RowVerdict
from blueprint.grading.trials import RowTrials

#: a row's place in the set, its verdict and its verdict in each trial (None: one trial)
Record = tuple[int, RowVerdict, RowTrials | None]


class VerdictList(FieldsList[RowVerdict], kind=RowVerdict):
    """A run's verdicts: past a few thousand, the oldest wait in a scratch file, each as the
    tuple of its fields."""

    __slots__ = ()


@dataclass(frozen=True)
class VerdictFile:
    """A bucket's records in a file, in the set's order (a :class:`ChunkFile`)."""

    path: str

    def records(self) -> Iterator[Record]:
        """The records, read back a chunk at a time (see :meth:`ChunkFile.records`)."""
        for position, fields, trials in ChunkFile(self.path).records():
            yield position, RowVerdict(*fields), trials


def write_verdicts(
    folder: str, records: Iterable[Record], chunk_size: int = RECORDS_A_CHUNK
) -> VerdictFile:
    """Write records (in the set's order) to a new file in ``folder``, ``chunk_size`` a
    chunk; OSError when the folder has no room."""
    kept = (
        (position, VerdictList.fields_of(verdict), trials) for position, verdict, trials in records
    )
    return VerdictFile(write_chunks(folder, kept, chunk_size, prefix="verdicts-").path)


__all__ = [
    "RECORDS_A_CHUNK",
    "Record",
    "VerdictFile",
    "VerdictList",
    "records_a_chunk",
    "write_verdicts",
]
