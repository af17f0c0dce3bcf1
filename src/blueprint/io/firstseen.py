"""A flat table of first uses, for keys that come once per row of a set (ids, inputs).

A :class:`FirstSeen` answers "which row used this key first?" for every row of a set. Up to a
fixed number of keys it is one hash table of flat arrays; past that, the table is written to
the temporary folder as a sorted run and emptied, and keys are looked up in the runs behind a
Bloom filter. Memory therefore stays the same from a few hundred thousand rows to many
millions; only sets that large touch the disk, at about 12 bytes a key. The validator keeps
its ids and inputs here, and an export the ids it has written.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import sys
import tempfile
import weakref
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from contextlib import ExitStack
from itertools import chain, compress
from operator import itemgetter
from pathlib import Path
from typing import IO, Final

from blueprint.core.errors import OutputError
from blueprint.io import scratch


def text_key(text: str) -> int:
    """A 64-bit key for a text (two texts share one about once in 2**64 / rows**2 sets)."""
    # surrogatepass: a lone surrogate (which a YAML escape can make) is text to key too
    return bytes_key(text.encode("utf-8", "surrogatepass"))


def bytes_key(encoded: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(encoded, digest_size=8).digest(), "big")


#: bytes one in-memory table may take (its keys and values): 2**18 slots of a row index, so
#: that a table holds about 175,000 keys before any reach the disk and then takes no more
#: memory (with its Bloom filter, 7 MiB) however many keys follow: a golden set of 100,000
#: rows never touches the disk, and a log of millions costs what one of 200,000 does
TABLE_BYTES: Final = 3 * 2**20
#: bytes the Bloom filter in front of a table's runs may grow to: it holds
#: :data:`BLOOM_BITS_PER_KEY` bits for each key on disk up to that size, so that it takes
#: 0.5 MiB at the first run and 2 MiB at a million keys; at four million keys one lookup
#: in 20 reads a run, at ten million one in 5
BLOOM_BYTES: Final = 4 * 2**20
#: bits of the Bloom filter for each key on disk (at least): with two bits set a key, a
#: key that is not there reads a run about once in 70 lookups
BLOOM_BITS_PER_KEY: Final = 16
#: keys in one group of a run: a lookup reads one group's keys (4 KiB), and memory holds the
#: first key of each group (1/64 of a byte a key)
GROUP_KEYS: Final = 512
#: runs a table keeps before it merges them into one: each run costs a read per lookup that
#: the Bloom filter lets through
MAX_RUNS: Final = 8

#: an odd constant (2**64 over the golden ratio): multiplying by it spreads any keys, row
#: indices included, over all 64 bits, and is a bijection, so keys stay distinct
_MIX: Final = 0x9E3779B97F4A7C15
_WORD: Final = 2**64 - 1
_ZEROS: Final = bytes(64 * 1024)


def _bloom_bits(keys: int) -> int:
    """The bits of a Bloom filter for ``keys`` keys: a power of two, at least 2**16 (so
    between :data:`BLOOM_BITS_PER_KEY` and twice as many a key)."""
    return max(1 << 16, 1 << (BLOOM_BITS_PER_KEY * keys - 1).bit_length())


def _largest_power_of_two(limit: int) -> int:
    return 1 << max(1, limit.bit_length() - 1)


class FirstSeen:
    """64-bit key -> the value stored with its first use, as ``dict.setdefault`` answers.

    Keys are kept multiplied by :data:`_MIX` in an open-addressing table whose home slot is
    a key's top bits, so that a table read slot by slot is sorted but for each cluster of
    neighbours: writing it as a sorted run costs one pass. A slot takes 12 bytes for row
    indices (32 bits) and 16 for wide values; a table is between a third and two thirds full.
    """

    __slots__ = (
        "_count",
        "_keys",
        "_limit",
        "_mask",
        "_max_slots",
        "_runs",
        "_shift",
        "_value_type",
        "_values",
    )

    def __init__(self, slots: int = 1024, *, wide: bool = False, max_slots: int = 0) -> None:
        #: "I" holds values below 2**32 (row indices); wide tables hold any 64-bit value
        self._value_type = "q" if wide else "I"
        slot_bytes = 8 + array(self._value_type).itemsize
        self._max_slots = _largest_power_of_two(max_slots or TABLE_BYTES // slot_bytes)
        self._runs: _Runs | None = None
        self._allocate(min(_largest_power_of_two(slots), self._max_slots))

    def _allocate(self, slots: int) -> None:
        self._keys = array("Q", [0]) * slots  # 0 marks an empty slot (no mixed key is 0)
        self._values = array(self._value_type, [0]) * slots
        self._mask = slots - 1
        self._shift = 65 - slots.bit_length()
        # two thirds full at most, and always one slot empty, where a lookup stops
        self._limit = min(2 * slots // 3, slots - 2)
        self._count = 0

    def __len__(self) -> int:
        return self._count + (self._runs.count if self._runs is not None else 0)

    def setdefault(self, key: int, value: int) -> int:
        """The value stored for ``key``; ``value``, stored now, if it has none yet."""
        # keys are hashes or row indices: 0 and 1 sharing an entry costs nothing
        mixed = ((key or 1) * _MIX) & _WORD
        keys, mask = self._keys, self._mask
        slot = mixed >> self._shift
        while found := keys[slot]:
            if found == mixed:
                return self._values[slot]
            slot = (slot + 1) & mask
        if self._runs is not None:
            stored = self._runs.find(mixed)
            if stored is not None:
                return stored
        keys[slot] = mixed
        self._values[slot] = value
        self._count += 1
        if self._count > self._limit:
            self._make_room()
        return value

    def get(self, key: int) -> int | None:
        mixed = ((key or 1) * _MIX) & _WORD
        keys, mask = self._keys, self._mask
        slot = mixed >> self._shift
        while found := keys[slot]:
            if found == mixed:
                return self._values[slot]
            slot = (slot + 1) & mask
        return self._runs.find(mixed) if self._runs is not None else None

    def close(self) -> None:
        """Remove the runs on disk now rather than when the table is collected; the table
        answers nothing afterwards."""
        if self._runs is not None:
            self._runs.close()
            self._runs = None
        self._allocate(2)

    def _make_room(self) -> None:
        if len(self._keys) < self._max_slots:
            self._grow()
            return
        if self._runs is None:
            self._runs = _Runs(
                self._value_type,
                bloom_bytes=min(BLOOM_BYTES, 16 * self._max_slots),
                chunk=min(_CHUNK_SLOTS, self._max_slots),
            )
        self._runs.add(self._sorted_chunks(), self._count)
        for table in (self._keys, self._values):
            _clear(table)
        self._count = 0

    def _grow(self) -> None:
        keys, values = self._keys, self._values
        self._allocate(2 * len(keys))
        new_keys, new_values, mask, shift = self._keys, self._values, self._mask, self._shift
        for mixed, value in zip(keys, values, strict=True):
            if mixed:
                slot = mixed >> shift
                while new_keys[slot]:
                    slot = (slot + 1) & mask
                new_keys[slot] = mixed
                new_values[slot] = value
                self._count += 1

    def _sorted_chunks(self) -> Iterator[_Chunk]:
        """The table's mixed keys and their values, in key order, a chunk at a time.

        A key lies in the cluster of occupied slots that holds its home slot, and home slots
        grow with keys, so slots read in order are sorted but within clusters: a stretch of
        slots that starts and ends at an empty one sorts on its own. The exception is the
        cluster that wraps past the last slot, whose keys are the smallest and the largest.
        """
        keys, values, shift = self._keys, self._values, self._shift
        first_empty = keys.index(0)
        last_empty = len(keys) - 1
        while keys[last_empty]:
            last_empty -= 1
        wrapped = sorted(
            zip(
                chain(keys[:first_empty], keys[last_empty + 1 :]),
                chain(values[:first_empty], values[last_empty + 1 :]),
                strict=True,
            )
        )
        smallest = bisect_left(wrapped, (first_empty << shift, 0))
        yield self._chunk(wrapped[:smallest])
        start = first_empty
        while start < last_empty:
            end = keys.index(0, min(start + min(_CHUNK_SLOTS, len(keys)), last_empty))
            stretch = keys[start:end]
            yield self._chunk(
                sorted(
                    zip(filter(None, stretch), compress(values[start:end], stretch), strict=True)
                )
            )
            start = end
        yield self._chunk(wrapped[smallest:])

    def _chunk(self, pairs: list[tuple[int, int]]) -> _Chunk:
        return array("Q", map(itemgetter(0), pairs)), array(
            self._value_type, map(itemgetter(1), pairs)
        )


#: sorted keys and their values
_Chunk = tuple["array[int]", "array[int]"]
#: slots a table is sorted by at a time when it is written out: the pairs of one stretch are
#: Python objects while it sorts (some 1.5 MiB; 65,536 slots would add 6 MiB to the peak)
_CHUNK_SLOTS: Final = 16384


def _clear(table: array[int]) -> None:
    """Zero a table in place: a new one would be a second copy while the old is freed."""
    with memoryview(table) as items, items.cast("B") as view:
        for start in range(0, len(view), len(_ZEROS)):
            end = min(start + len(_ZEROS), len(view))
            view[start:end] = _ZEROS[: end - start]


class _Run:
    """One sorted run in a file: groups of :data:`GROUP_KEYS` keys, each followed by its
    values; memory holds the first key of each group."""

    __slots__ = ("count", "file", "firsts", "value_type", "width")

    def __init__(self, file: IO[bytes], value_type: str) -> None:
        self.file = file
        self.value_type = value_type
        self.width = array(value_type).itemsize
        self.firsts = array("Q")
        self.count = 0

    def _group(self, group: int) -> tuple[int, int]:
        """Where group ``group`` starts in the file, and how many keys it holds."""
        first = group * GROUP_KEYS
        return first * (8 + self.width), min(GROUP_KEYS, self.count - first)

    def find(self, mixed: int) -> int | None:
        group = bisect_right(self.firsts, mixed) - 1
        if group < 0:
            return None
        start, size = self._group(group)
        with memoryview(scratch.read_at(self.file, 8 * size, start)) as raw, raw.cast("Q") as keys:
            position = bisect_left(keys, mixed)
            if position == size or keys[position] != mixed:
                return None
        stored = scratch.read_at(self.file, self.width, start + 8 * size + self.width * position)
        return int.from_bytes(stored, sys.byteorder, signed=self.value_type == "q")

    def entries(self) -> Iterator[tuple[int, int]]:
        for keys, values in self.chunks():
            yield from zip(keys, values, strict=True)

    def chunks(self) -> Iterator[_Chunk]:
        """The run's keys and values, a group at a time."""
        for group in range(len(self.firsts)):
            start, size = self._group(group)
            raw = scratch.read_at(self.file, size * (8 + self.width), start)
            keys, values = array("Q"), array(self.value_type)
            keys.frombytes(raw[: 8 * size])
            values.frombytes(raw[8 * size :])
            yield keys, values


class _Runs:
    """A table's sorted runs, in files of a scratch folder, behind one Bloom filter."""

    __slots__ = (
        "__weakref__",
        "_bloom",
        "_bloom_below",
        "_bloom_mask",
        "_bloom_most",
        "_bloom_shift",
        "_files",
        "_finalizer",
        "_folder",
        "chunk",
        "runs",
        "value_type",
    )

    def __init__(self, value_type: str, *, bloom_bytes: int, chunk: int) -> None:
        self.value_type = value_type
        #: entries merged runs are written by at a time
        self.chunk = chunk
        self.runs: list[_Run] = []
        self._bloom_most = _largest_power_of_two(8 * bloom_bytes)
        self._bloom = bytearray()
        self._bloom_shift = self._bloom_mask = self._bloom_below = 0
        # imported here: only a set this large needs it, and a command starts faster without
        from blueprint.io.atomic import scratch_folder

        stack = ExitStack()
        self._folder = stack.enter_context(scratch_folder("index"))
        #: the open run files: what the finalizer closes, with the folder, if close is never
        #: called (an error on the way, or the table collected)
        self._files: list[IO[bytes]] = []
        self._finalizer = weakref.finalize(self, _remove, self._files, stack, os.getpid())

    @property
    def count(self) -> int:
        return sum(run.count for run in self.runs)

    def find(self, mixed: int) -> int | None:
        bloom, shift = self._bloom, self._bloom_shift
        first, second = mixed >> shift, (mixed >> self._bloom_below) & self._bloom_mask
        if not (bloom[first >> 3] >> (first & 7) & 1 and bloom[second >> 3] >> (second & 7) & 1):
            return None
        for run in reversed(self.runs):
            stored = run.find(mixed)
            if stored is not None:
                return stored
        return None

    def add(self, chunks: Iterator[_Chunk], count: int) -> None:
        """Write ``count`` entries, sorted by key, as a new run."""
        on_disk = self.count + count
        if 8 * len(self._bloom) < min(self._bloom_most, _bloom_bits(on_disk)):
            self._grow_bloom(on_disk)
        self.runs.append(self._write(self._bloomed(chunks), count))
        if len(self.runs) > MAX_RUNS:
            merged = heapq.merge(*(old.entries() for old in self.runs))
            run = self._write(self._batched(merged), self.count)
            for old in self.runs:
                self._files.remove(old.file)
                old.file.close()
            self.runs = [run]

    def _grow_bloom(self, on_disk: int) -> None:
        """A filter for the keys about to be on disk (up to ``bloom_bytes``), with the keys
        of the runs already written put in again: one read of the runs each time the keys on
        disk double, so that the filter's memory follows them."""
        bits = min(self._bloom_most, _bloom_bits(on_disk))
        self._bloom = bytearray(bits // 8)
        # the first bit is a key's top bits, the second the bits below them
        self._bloom_shift = 65 - bits.bit_length()
        self._bloom_mask = bits - 1
        self._bloom_below = 2 * self._bloom_shift - 64
        for run in self.runs:
            for _ in self._bloomed(run.chunks()):
                pass

    def _bloomed(self, chunks: Iterator[_Chunk]) -> Iterator[_Chunk]:
        bloom, shift, below, mask = (
            self._bloom,
            self._bloom_shift,
            self._bloom_below,
            self._bloom_mask,
        )
        for chunk in chunks:
            for mixed in chunk[0]:
                first, second = mixed >> shift, (mixed >> below) & mask
                bloom[first >> 3] |= 1 << (first & 7)
                bloom[second >> 3] |= 1 << (second & 7)
            yield chunk

    def _batched(self, entries: Iterator[tuple[int, int]]) -> Iterator[_Chunk]:
        keys, values = array("Q"), array(self.value_type)
        for key, value in entries:
            keys.append(key)
            values.append(value)
            if len(keys) == self.chunk:
                yield keys, values
                keys, values = array("Q"), array(self.value_type)
        yield keys, values

    def _write(self, chunks: Iterator[_Chunk], count: int) -> _Run:
        try:
            # open until the table is closed; a file with no name, where the system allows
            file = tempfile.TemporaryFile(dir=self._folder, prefix="run-")  # noqa: SIM115
        except OSError as error:
            raise _no_room(self._folder, error) from None
        self._files.append(file)
        run = _Run(file, self.value_type)
        keys, values = array("Q"), array(self.value_type)
        try:
            for chunk_keys, chunk_values in chunks:
                keys += chunk_keys
                values += chunk_values
                whole = len(keys) - len(keys) % GROUP_KEYS
                for start in range(0, whole, GROUP_KEYS):
                    end = start + GROUP_KEYS
                    self._flush(run, keys[start:end], values[start:end])
                del keys[:whole], values[:whole]
            if keys:
                self._flush(run, keys, values)
            file.flush()
        except OSError as error:
            raise _no_room(self._folder, error) from None
        assert run.count == count, "a run holds every entry of its table"
        return run

    @staticmethod
    def _flush(run: _Run, keys: array[int], values: array[int]) -> None:
        run.firsts.append(keys[0])
        run.file.write(keys.tobytes())
        run.file.write(values.tobytes())
        run.count += len(keys)

    def close(self) -> None:
        self._finalizer()


#: the folders of a parent process that a forked child let go: kept from being collected,
#: which would close the folder's context and remove it under the parent
_PARENTS_FOLDERS: list[ExitStack] = []


def _remove(files: list[IO[bytes]], folder: ExitStack, owner: int) -> None:
    if os.getpid() != owner:  # a forked worker leaves its parent's runs alone
        _PARENTS_FOLDERS.append(folder)
        return
    for file in files:
        file.close()
    files.clear()
    folder.close()


def _no_room(folder: Path, error: OSError) -> OutputError:
    return OutputError(
        folder,
        f"{error.strerror or error}: a set this large keeps part of its index of ids and"
        " inputs in the temporary folder (set TMPDIR to a folder with room)",
    )
