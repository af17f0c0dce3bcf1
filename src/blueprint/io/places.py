"""Where each row of a JSON document starts and ends, in flat memory.

A JSON document's rows are found by a first pass over its bytes and decoded by a second, which
reads them in order; the process pool cuts them into spans, also in order. Sixteen bytes a row
would be 160 MiB at ten million rows, so past :data:`PLACES_IN_MEMORY` rows the places move to
a scratch file with no name, in chunks, and are read back a chunk at a time.
"""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

from blueprint.core.errors import OutputError
from blueprint.io import scratch

#: rows whose places (16 bytes each) are kept in memory before they move to the scratch file
PLACES_IN_MEMORY: Final = 65_536


class RowPlaces:
    """(start, end) byte offsets of a document's rows, in order. A row's start is added when
    it opens and its end when it closes (see :meth:`start` and :meth:`end`)."""

    __slots__ = ("_chunks", "_count", "_ends", "_file", "_starts", "_written")

    def __init__(self) -> None:
        self._starts = array("q")
        self._ends = array("q")
        self._file: IO[bytes] | None = None
        self._written = 0
        #: rows in each chunk of the file, in order
        self._chunks = array("q")
        self._count = 0  # rows moved to the file

    def start(self, offset: int) -> None:
        """The next row starts at ``offset``."""
        self._starts.append(offset)

    def end(self, offset: int) -> None:
        """The row started last (and not ended yet) ends at ``offset``."""
        self._ends.append(offset)
        if len(self._ends) >= PLACES_IN_MEMORY:
            self._spill()

    def __len__(self) -> int:
        """Rows started (every one ends before the places are read)."""
        return self._count + len(self._starts)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self) -> Iterator[tuple[int, int]]:
        position = 0
        for rows in self._chunks:
            assert self._file is not None
            data = array("q")
            data.frombytes(scratch.read_at(self._file, 16 * rows, position))
            if len(data) != 2 * rows:
                raise OutputError(
                    Path(tempfile.gettempdir()), "a scratch file of row places was cut short"
                )
            position += 16 * rows
            yield from zip(data[:rows], data[rows:], strict=True)
        yield from zip(self._starts, self._ends, strict=False)

    def close(self) -> None:
        """Remove the scratch file now rather than when the places are collected."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _spill(self) -> None:
        rows = len(self._ends)
        self._file = scratch.write_at(
            self._file,
            self._written,
            self._starts[:rows].tobytes() + self._ends.tobytes(),
            prefix="blueprint-places-",
            keeps="a large JSON document keeps where its rows start and end",
        )
        self._written += 16 * rows
        self._chunks.append(rows)
        self._count += rows
        self._starts = self._starts[rows:]  # a row opened and not closed yet stays
        self._ends = array("q")
