"""A list of row ids that stays small however many it holds.

An export's lossy report names every row that lost a field, and a set of millions of rows that
loses a field in every row names millions of ids, for each field it loses. Kept as Python
strings in lists, that is some 60 bytes a row and a field. An :class:`IdList` keeps its ids as
length-prefixed UTF-8 (an id of ten characters in eleven bytes) and, past
:data:`MEMORY_BYTES`, moves them to a scratch file with no name, so an export's memory stays
flat. It reads as a sequence of strings, in the order they were added: ``len``, iteration,
indexing and slicing (the first ids are kept as strings too, for previews), and equality with
any tuple or list of the same ids.
"""

from __future__ import annotations

import tempfile
from collections.abc import Generator, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import IO, Any, Final, overload

from blueprint.core.errors import OutputError
from blueprint.io import scratch

#: bytes of ids one list keeps in memory before it moves them to its scratch file
MEMORY_BYTES: Final = 256 * 1024
#: ids kept as strings from the start of a list, for previews and the first index
HEAD: Final = 16
#: bytes read from the scratch file at a time while iterating
_CHUNK: Final = 1 << 20


def id_entry(row_id: str) -> bytes:
    """An id as a list keeps it: a varint of its UTF-8 length (one byte for an id under 128
    bytes), then the UTF-8."""
    encoded = row_id.encode("utf-8", "surrogatepass")
    size = len(encoded)
    prefix = bytearray()
    while size >= 0x80:
        prefix.append(size & 0x7F | 0x80)
        size >>= 7
    prefix.append(size)
    return bytes(prefix) + encoded


class IdList(Sequence[str]):
    """Row ids in the order they were added (see the module's docstring)."""

    __slots__ = ("_buffer", "_count", "_file", "_head", "_memory_bytes", "_on_disk")

    def __init__(self, ids: Iterable[str] = (), *, memory_bytes: int = MEMORY_BYTES) -> None:
        self._memory_bytes = memory_bytes
        self._file: IO[bytes] | None = None
        self._empty()
        self.extend(ids)

    def _empty(self) -> None:
        self._buffer = bytearray()
        self._count = 0
        #: bytes already in the file (the buffer continues after them)
        self._on_disk = 0
        self._head: list[str] = []

    def append(self, row_id: str, encoded: bytes | None = None) -> None:
        """Add an id; ``encoded`` is its :func:`id_entry`, when the caller adds it to several
        lists and has it already."""
        if self._count < HEAD:
            self._head.append(row_id)
        self._count += 1
        buffer = self._buffer
        buffer += encoded if encoded is not None else id_entry(row_id)
        if len(buffer) >= self._memory_bytes:
            self._spill()

    def extend(self, ids: Iterable[str]) -> None:
        for row_id in ids:
            self.append(row_id)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        pending = b""
        for chunk in self._chunks():
            pending = yield from _decoded(pending + chunk)
        if pending:
            raise AssertionError("an id list ends inside an id")

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            wanted = range(self._count)[index]
            if not wanted:
                return []
            if wanted.step > 0:
                return list(islice(self, wanted.start, wanted.stop, wanted.step))
            return list(self)[index]
        position = range(self._count)[index]  # raises IndexError as a list does
        if position < len(self._head):
            return self._head[position]
        return next(islice(self, position, None))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IdList | tuple | list):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        shown = ", ".join(repr(row_id) for row_id in self._head)
        more = f", … {self._count - len(self._head)} more" if self._count > len(self._head) else ""
        return f"IdList([{shown}{more}])"

    def __getstate__(self) -> dict[str, Any]:
        return {"ids": list(self), "memory_bytes": self._memory_bytes}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._memory_bytes = state["memory_bytes"]
        self._file = None
        self._empty()
        self.extend(state["ids"])

    def close(self) -> None:
        """Remove the scratch file now rather than when the list is collected; the list is
        empty afterwards."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._empty()

    def _chunks(self) -> Iterator[bytes]:
        if self._file is not None:
            offset = 0
            while offset < self._on_disk:
                chunk = scratch.read_at(self._file, min(_CHUNK, self._on_disk - offset), offset)
                if not chunk:
                    raise OutputError(
                        Path(tempfile.gettempdir()),
                        "a scratch file of row ids was cut short while it was read",
                    )
                offset += len(chunk)
                yield chunk
        yield bytes(self._buffer)

    def _spill(self) -> None:
        self._file = scratch.write_at(
            self._file,
            self._on_disk,
            self._buffer,
            prefix="blueprint-ids-",
            keeps="a large export keeps the ids its lossy report names",
        )
        self._on_disk += len(self._buffer)
        self._buffer.clear()


def _decoded(data: bytes) -> Generator[str, None, bytes]:
    """The whole ids at the start of ``data``, then (as the generator's value) the bytes of the
    id cut off at its end."""
    at, end = 0, len(data)
    while at < end:
        start = at
        size = shift = 0
        while True:
            if at >= end:
                return data[start:]
            byte = data[at]
            at += 1
            size |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                break
        if at + size > end:
            return data[start:]
        yield data[at : at + size].decode("utf-8", "surrogatepass")
        at += size
    return b""
