"""The validator's per-set index of row lines and row ids, in flat memory; its table of first
uses (ids, inputs) is :class:`blueprint.io.firstseen.FirstSeen`."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import IO, Final

from blueprint.io import scratch
from blueprint.io.firstseen import FirstSeen

__all__ = ["FirstSeen", "RowIds", "RowLines"]


class RowLines:
    """The line each row starts on, in a few bytes per file rather than eight per row: the
    offset between a row's line and its index only changes at blank lines, a header or a
    multi-line cell, so only those changes are kept. A JSON document's rows span lines of
    their own, so its offset changes at every row: past :data:`LINE_CHANGES_IN_MEMORY`
    changes, they move to a scratch file in chunks, and a lookup reads its chunk back."""

    __slots__ = (
        "_chunk_firsts",
        "_chunk_places",
        "_count",
        "_file",
        "_indices",
        "_last",
        "_offsets",
        "_written",
    )

    def __init__(self) -> None:
        self._indices = array("q")
        self._offsets = array("q")
        self._count = 0
        self._last: int | None = None  # the offset of the last change
        self._file: IO[bytes] | None = None
        self._written = 0
        #: for each chunk in the file: the row index of its first change, and its place
        self._chunk_firsts = array("q")
        self._chunk_places = array("q")

    def append(self, line: int) -> None:
        """The line of the next row; 0 when it is unknown."""
        index = self._count
        offset = line - index if line else _UNKNOWN_LINE
        if offset != self._last:
            self._indices.append(index)
            self._offsets.append(offset)
            self._last = offset
            if len(self._indices) >= LINE_CHANGES_IN_MEMORY:
                self._spill()
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> int:
        """The line of row ``index``; 0 when it is unknown."""
        if not 0 <= index < self._count:
            raise IndexError(index)
        indices, offsets = self._indices, self._offsets
        if not indices or index < indices[0]:
            indices, offsets = self._chunk(bisect_right(self._chunk_firsts, index) - 1)
        offset = offsets[bisect_right(indices, index) - 1]
        return 0 if offset == _UNKNOWN_LINE else index + offset

    def close(self) -> None:
        """Remove the scratch file now rather than when the index is collected."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def _chunk(self, number: int) -> tuple[array[int], array[int]]:
        assert self._file is not None and number >= 0
        start = self._chunk_places[number]
        end = (
            self._chunk_places[number + 1]
            if number + 1 < len(self._chunk_places)
            else self._written
        )
        data = array("q")
        data.frombytes(scratch.read_at(self._file, end - start, start))
        half = len(data) // 2
        return data[:half], data[half:]

    def _spill(self) -> None:
        self._file = scratch.write_at(
            self._file,
            self._written,
            self._indices.tobytes() + self._offsets.tobytes(),
            prefix="blueprint-lines-",
            keeps="a large set keeps the lines its rows start on",
        )
        self._chunk_firsts.append(self._indices[0])
        self._chunk_places.append(self._written)
        self._written += 16 * len(self._indices)
        self._indices = array("q")
        self._offsets = array("q")


#: changes of a :class:`RowLines` kept in memory (16 bytes each) before they move to its file
LINE_CHANGES_IN_MEMORY: Final = 65_536


#: the offset recorded for rows whose line is unknown (no line is this far before its index)
_UNKNOWN_LINE: Final = -(2**62)


#: bytes of ids a :class:`RowIds` keeps in memory before it moves them to a scratch file
IDS_MEMORY_BYTES: Final = 2 * 2**20
#: rows of one group of a :class:`RowIds`: memory holds where each group starts (8 bytes
#: for this many rows), and finding an id reads at most one group
ID_GROUP_ROWS: Final = 64


class RowIds:
    """The id of each row, by index, so that a finding can name the row it points back to.

    Ids are kept once, as length-prefixed UTF-8 (no id: length 0), with only the offset of
    every :data:`ID_GROUP_ROWS`-th row in memory; past :data:`IDS_MEMORY_BYTES` they go on
    to a scratch file. Looking one up reads its group; only findings that point back do so.
    """

    __slots__ = ("_buffer", "_count", "_file", "_groups", "_written")

    def __init__(self) -> None:
        self._buffer = bytearray()
        #: bytes already moved to the file (the buffer continues after them)
        self._written = 0
        self._file: IO[bytes] | None = None
        self._groups = array("Q")
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, row_id: str | None) -> None:
        """The id of the next row; None when it has none (or it was unreadable)."""
        if self._count % ID_GROUP_ROWS == 0:
            self._groups.append(self._written + len(self._buffer))
        self._count += 1
        encoded = b"" if row_id is None else row_id.encode("utf-8", "surrogatepass")
        size = len(encoded) + (row_id is not None)
        # a varint length: most ids take one byte more than their text
        while size >= 0x80:
            self._buffer.append(size & 0x7F | 0x80)
            size >>= 7
        self._buffer.append(size)
        self._buffer += encoded
        if len(self._buffer) > IDS_MEMORY_BYTES:
            self._spill()

    def __getitem__(self, index: int) -> str | None:
        """The id of row ``index``; None when it has none."""
        if not 0 <= index < self._count:
            raise IndexError(index)
        group = index // ID_GROUP_ROWS
        start = self._groups[group]
        end = self._groups[group + 1] if group + 1 < len(self._groups) else None
        data = self._read(start, end)
        at = 0
        for _ in range(index % ID_GROUP_ROWS + 1):
            size = shift = 0
            while True:
                byte = data[at]
                at += 1
                size |= (byte & 0x7F) << shift
                shift += 7
                if byte < 0x80:
                    break
            found, at = data[at : at + size - 1] if size else None, at + max(size - 1, 0)
        return None if found is None else bytes(found).decode("utf-8", "surrogatepass")

    def _read(self, start: int, end: int | None) -> bytes:
        total = self._written + len(self._buffer)
        stop = total if end is None else end
        if start >= self._written:
            return bytes(self._buffer[start - self._written : stop - self._written])
        assert self._file is not None
        on_disk = scratch.read_at(self._file, min(stop, self._written) - start, start)
        return on_disk + bytes(self._buffer[: max(stop - self._written, 0)])

    def _spill(self) -> None:
        self._file = scratch.write_at(
            self._file,
            self._written,
            self._buffer,
            prefix="blueprint-ids-",
            keeps="a large set keeps the ids of its rows",
        )
        self._written += len(self._buffer)
        self._buffer.clear()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
