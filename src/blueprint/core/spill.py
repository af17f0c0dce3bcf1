"""A list that keeps its oldest items off the heap: memory stays the same however many a
report holds.

A :class:`SpillList` is a list as far as its users can tell (append, extend, len, index,
slice, iterate, compare, pickle). The newest items stay in memory; once two chunks are held,
the oldest chunk is pickled to a scratch file with no name and read back when asked for, a
chunk at a time, in order, as a report writer goes through them. A report's findings are one
(:class:`blueprint.core.issues.IssueLog`: a finding on every row of ten million rows holds at
most 4,096 findings in memory and some 2 GB on disk, which goes when the list does); the
process pool's placed findings are another.

Changing an item already on disk (rare: a judge-report verdict that replaces the findings it
settles) reads the list back whole and writes it again.
"""

from __future__ import annotations

import dataclasses
import operator
import os
import pickle
import struct
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, MutableSequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO, ClassVar, Final, Generic, TypeVar, overload

from blueprint.core.errors import OutputError

#: items written or read at a time; at most twice as many stay in memory
CHUNK: Final = 2048

Item = TypeVar("Item")


class SpillList(MutableSequence[Item], Generic[Item]):
    """A list whose oldest chunks wait in a scratch file (see the module): each item is
    kept on disk as ``encode`` makes it, and read back through ``decode``."""

    __slots__ = ("_cached", "_chunks", "_held", "_own", "_scratch", "_spilled", "chunk")

    def encode(self, item: Item) -> Any:
        return item

    def decode(self, kept: Any) -> Item:
        return kept

    def __init__(
        self,
        items: Iterable[Item] = (),
        *,
        chunk: int | None = None,
        scratch: Scratch | None = None,
    ) -> None:
        """``scratch``: a file several lists share (many lists at once, one file open),
        which its owner closes; without it, the list makes its own on first need."""
        self.chunk = chunk or CHUNK
        #: the items in memory, after every spilled one
        self._held: list[Item] = []
        #: (offset, bytes, items) of each chunk on disk, in order
        self._chunks: list[tuple[int, int, int]] = []
        self._spilled = 0
        self._scratch = scratch
        self._own = scratch is None
        #: the chunk read last (its position and items): a writer reads them in order
        self._cached: tuple[int, list[Item]] | None = None
        self.extend(items)

    # --- growing --------------------------------------------------------------------------

    def append(self, value: Item) -> None:
        self._held.append(value)
        if len(self._held) >= 2 * self.chunk:
            self._spill()

    def extend(self, values: Iterable[Item]) -> None:
        if values is self:
            values = list(values)
        held, limit = self._held, 2 * self.chunk
        for value in values:
            held.append(value)
            if len(held) >= limit:
                self._spill()
                held = self._held

    def __iadd__(self, values: Iterable[Item]) -> SpillList[Item]:
        self.extend(values)
        return self

    def _spill(self) -> None:
        """Write the oldest chunk held to the scratch file."""
        part = self._held[: self.chunk]
        del self._held[: self.chunk]
        data = pickle.dumps([self.encode(item) for item in part], pickle.HIGHEST_PROTOCOL)
        if self._scratch is None:
            self._scratch = Scratch()
        offset = self._scratch.append(data)
        self._chunks.append((offset, len(data), len(part)))
        self._spilled += len(part)

    # --- reading --------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._spilled + len(self._held)

    def __iter__(self) -> Iterator[Item]:
        for position in range(len(self._chunks)):
            yield from self._chunk(position)
        yield from list(self._held)

    def _chunk(self, position: int) -> list[Item]:
        if self._cached is not None and self._cached[0] == position:
            return self._cached[1]
        assert self._scratch is not None
        offset, size, _ = self._chunks[position]
        items = [self.decode(kept) for kept in pickle.loads(self._scratch.read(offset, size))]
        self._cached = (position, items)
        return items

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return list(self)[index]
            return list(self._range(start, stop))
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("index out of range")
        if index >= self._spilled:
            return self._held[index - self._spilled]
        return self._chunk(index // self.chunk)[index % self.chunk]

    def _range(self, start: int, stop: int) -> Iterator[Item]:
        """The findings from ``start`` to ``stop``, a chunk read at a time."""
        while start < min(stop, self._spilled):
            chunk = self._chunk(start // self.chunk)
            first = start % self.chunk
            taken = chunk[first : first + stop - start]
            yield from taken
            start += len(taken)
        if start < stop:
            yield from self._held[start - self._spilled : stop - self._spilled]

    # --- changing -------------------------------------------------------------------------

    @overload
    def __setitem__(self, index: int, value: Item) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[Item]) -> None: ...

    def __setitem__(self, index: int | slice, value: Any) -> None:
        if self._in_memory(index):
            self._held[self._shifted(index)] = value
            while len(self._held) >= 2 * self.chunk:
                self._spill()
            return
        everything = list(self)
        everything[index] = value
        self._restart(everything)

    def __delitem__(self, index: int | slice) -> None:
        if self._in_memory(index):
            del self._held[self._shifted(index)]
            return
        everything = list(self)
        del everything[index]
        self._restart(everything)

    def insert(self, index: int, value: Item) -> None:
        size = len(self)
        if index < 0:
            index = max(index + size, 0)
        if index >= self._spilled:
            self._held.insert(index - self._spilled, value)
            if len(self._held) >= 2 * self.chunk:
                self._spill()
            return
        everything = list(self)
        everything.insert(index, value)
        self._restart(everything)

    def clear(self) -> None:
        self._restart([])

    def _in_memory(self, index: int | slice) -> bool:
        """Whether ``index`` only touches the findings held in memory."""
        size = len(self)
        if isinstance(index, slice):
            start, _, step = index.indices(size)
            return step == 1 and start >= self._spilled
        return self._spilled <= (index + size if index < 0 else index) < size

    def _shifted(self, index: int | slice) -> int | slice:
        if isinstance(index, slice):
            start, stop, _ = index.indices(len(self))
            return slice(start - self._spilled, max(stop, start) - self._spilled)
        return (index + len(self) if index < 0 else index) - self._spilled

    def _restart(self, items: list[Item]) -> None:
        self.close()
        self._held, self._chunks, self._spilled, self._cached = [], [], 0, None
        self.extend(items)

    def close(self) -> None:
        """Let go of the scratch file, if the list's own (it is also removed when the list
        is collected)."""
        if self._scratch is not None and self._own:
            self._scratch.close()
            self._scratch = None

    # --- as a list ------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SpillList | list | tuple):
            return len(self) == len(other) and all(
                mine == theirs for mine, theirs in zip(self, other, strict=True)
            )
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (list(self),))

    def __copy__(self) -> SpillList[Item]:
        return type(self)(self, chunk=self.chunk)

    def __deepcopy__(self, memo: dict[int, Any]) -> SpillList[Item]:
        return type(self)(self, chunk=self.chunk)  # the items are frozen: sharing is a copy


class FieldsList(SpillList[Item]):
    """A spilled list of frozen dataclasses of one kind, each kept on disk as the tuple of its
    fields (a subclass names the kind: ``class Kept(FieldsList[Row], kind=Row)``)."""

    __slots__ = ()
    _kind: ClassVar[Callable[..., Any]]
    #: an item's fields, as a tuple
    fields_of: ClassVar[Callable[[Any], tuple[Any, ...]]]

    def __init_subclass__(cls, kind: type | None = None, **options: Any) -> None:
        super().__init_subclass__(**options)
        if kind is not None:
            names = [field.name for field in dataclasses.fields(kind)]
            cls._kind = kind
            cls.fields_of = operator.attrgetter(*names)

    def encode(self, item: Item) -> tuple[Any, ...]:
        return type(self).fields_of(item)  # a function of the class, not a method

    def decode(self, kept: Any) -> Item:
        found: Item = type(self)._kind(*kept)
        return found


class Scratch:
    """A scratch file with no name, made on first write, that chunks are appended to."""

    __slots__ = ("_file", "end")

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self.end = 0

    def append(self, data: bytes) -> int:
        """Write ``data`` at the end; where it starts."""
        offset = self.end
        try:
            if self._file is None:
                # no name where the system allows it: nothing is left behind
                self._file = tempfile.TemporaryFile(prefix="blueprint-spill-")  # noqa: SIM115
            self._file.seek(offset)
            self._file.write(data)
        except OSError as error:
            raise OutputError(
                Path(tempfile.gettempdir()),
                f"{error.strerror or error}: a report's findings in the temporary folder"
                " (set TMPDIR to a folder with room)",
            ) from None
        self.end += len(data)
        return offset

    def read(self, offset: int, size: int) -> bytes:
        assert self._file is not None
        self._file.flush()
        if sys.platform == "win32":
            self._file.seek(offset)
            return self._file.read(size)
        return os.pread(self._file.fileno(), size, offset)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


# --- chunk files: records written once and read back together with many others ---------------

#: records a chunk of a chunk file, at most: a merge of many files holds a chunk of each, so
#: with many files the chunks are smaller (:func:`records_a_chunk`)
RECORDS_A_CHUNK: Final = 64
#: the records a merge holds a chunk of each file of, about
_RECORDS_HELD: Final = 8192
#: a chunk's length before it, in its file
_LENGTH: Final = struct.Struct("<q")


def records_a_chunk(files: int, held: int = _RECORDS_HELD) -> int:
    """Records a chunk for ``files`` chunk files read together: all their chunks together
    hold some ``held`` (8,192: the same memory however many files a large set takes),
    between 4 and :data:`RECORDS_A_CHUNK` each."""
    return max(4, min(RECORDS_A_CHUNK, held // max(files, 1)))


@dataclass(frozen=True)
class ChunkFile:
    """Records in a file, in order: pickled chunks, each after its length (so that nothing
    of the file is kept in memory but where the next chunk starts)."""

    path: str

    def records(self) -> Iterator[Any]:
        """The records, read back a chunk at a time (the file open only while a chunk is
        read: many files are read together, and there may be thousands)."""
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
            yield from chunk


def write_chunks(
    folder: str, records: Iterable[Any], chunk_size: int = RECORDS_A_CHUNK, *, prefix: str
) -> ChunkFile:
    """Write records to a new file in ``folder``, ``chunk_size`` a chunk; OSError when the
    folder has no room."""
    handle, path = tempfile.mkstemp(prefix=prefix, dir=folder)
    with os.fdopen(handle, "wb") as written:
        chunk: list[Any] = []
        for record in records:
            chunk.append(record)
            if len(chunk) == chunk_size:
                _write_chunk(written, chunk)
                chunk = []
        if chunk:
            _write_chunk(written, chunk)
    return ChunkFile(path)


def append_chunk(path: str, chunk: list[Any]) -> None:
    """Add a chunk to the end of a chunk file (made if need be; opened only for the write:
    many files are written together); OSError when the folder has no room."""
    with open(path, "ab") as written:  # noqa: PTH123 (a path as the chunk file keeps it)
        _write_chunk(written, chunk)


def _write_chunk(written: BinaryIO, chunk: list[Any]) -> None:
    data = pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL)
    written.write(_LENGTH.pack(len(data)) + data)
