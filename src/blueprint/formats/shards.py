"""A set kept in shards: several JSON Lines or Parquet files read as one set.

Production logs mined for cases, or a set too large for one file, come as a folder of part
files (``part-00000.jsonl``, ``part-00001.parquet``, ...), as Spark, Dask and Ray write them.
The shards are read in order of their names as one sequence of rows: a row's index counts
across shards, and each finding names the shard its row is in and the line there. The
set-level fields are in the set file beside the folder that holds the shards
(``logs/`` has ``logs.set.json``).

A folder's shards (and a glob's) are its files ending in ``.jsonl``, ``.ndjson`` or
``.parquet``; a name that starts with ``_`` or ``.`` is an engine's own (``_SUCCESS``,
``.part-0.crc``) and is skipped, as are files of other kinds. What is named as a shard and is
not one is refused: a file of another kind, a folder inside the folder, a pipe or a device, a
shard named twice.

Parquet has no absent field: a struct's fields are in every row, null where a row has none. A
null field (and a null column) is read as absent, as Spark writes JSON. A value JSON cannot
hold (bytes, a timestamp, a decimal, a map, a float that is not finite) makes its row
unreadable, with the column named: nothing is turned into something else silently.
"""

from __future__ import annotations

import bisect
import glob
import math
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.core.errors import ParseError, UsageError
from blueprint.formats import setfile
from blueprint.formats._io import BOM, json_lines, require_file, require_within_size, too_many_rows
from blueprint.formats.base import (
    ExportResult,
    SetSource,
    SourceRow,
    StrPath,
    UnreadableRow,
    WriteOptions,
)
from blueprint.formats.sniffing import Fit
from blueprint.io import limits

#: a shard's kind by its name's ending
SHARD_KINDS: Final = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
_GLOB_CHARACTERS: Final = frozenset("*?[")


@dataclass(frozen=True)
class Shard:
    path: Path
    #: "jsonl" or "parquet"
    kind: str


@dataclass(frozen=True)
class Shards:
    """The shards of one set, in reading order, and the folder whose set file they share."""

    shards: tuple[Shard, ...]
    #: the folder whose set file the set has
    folder: Path
    #: what names the set in reports: the one path given (a folder, a glob, a file), or the
    #: folder when several were
    source: Path

    @property
    def format(self) -> str:
        """ "jsonl", "parquet", or "jsonl+parquet" for a set of both."""
        kinds = sorted({shard.kind for shard in self.shards})
        return "+".join(kinds)

    @property
    def size(self) -> int:
        """The shards' bytes together."""
        return sum(_size(shard.path) for shard in self.shards)


def find_shards(paths: Sequence[StrPath]) -> Shards:
    """The shards the paths name: a folder's shard files, a glob's matches (both in name
    order), or files as given. Raises ``UsageError`` when none is found, and ``ParseError``
    for a path that is not a shard."""
    found: list[Shard] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found += _folder_shards(path)
        elif not path.exists() and _GLOB_CHARACTERS & set(str(path)):
            # the pattern may have wildcards in its folders too: Path.glob needs a fixed root
            matches = [Path(match) for match in sorted(glob.glob(str(path)))]  # noqa: PTH207
            if not matches:
                raise ParseError(path, "the pattern matches no file")
            # what it matches besides shards (an engine's _SUCCESS) is left, as in a folder
            chosen = [match for match in matches if _named_as_shard(match)]
            if not chosen:
                raise ParseError(path, "the pattern matches no .jsonl, .ndjson or .parquet file")
            found += (_shard(match) for match in chosen)
        else:
            found.append(_shard(path))
    if not found:
        raise UsageError("no shard found: a shard is a .jsonl, .ndjson or .parquet file")
    seen: dict[Path, Path] = {}
    for shard in found:
        resolved = shard.path.resolve()
        if resolved in seen:
            raise ParseError(shard.path, f"the shard is given twice (also as {seen[resolved]})")
        seen[resolved] = shard.path
    # the set file is the first folder's: the one named, or the first shard's
    first = Path(paths[0])
    folder = first if first.is_dir() else found[0].path.parent
    return Shards(tuple(found), folder, first if len(paths) == 1 else folder)


def _folder_shards(folder: Path) -> list[Shard]:
    try:
        entries = sorted(folder.iterdir())
    except OSError as error:  # no permission to list it
        raise ParseError(folder, f"cannot read: {error.strerror or error}") from None
    return [_shard(path) for path in entries if _named_as_shard(path)]


def _named_as_shard(path: Path) -> bool:
    """Whether a folder's (or a glob's) file is one of its shards by its name: a shard's
    ending, and not an engine's own file (``_SUCCESS``, ``.part-0.crc``)."""
    return not path.name.startswith(("_", ".")) and path.suffix.lower() in SHARD_KINDS


def _shard(path: Path) -> Shard:
    kind = SHARD_KINDS.get(path.suffix.lower())
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise ParseError(path, "no such file") from None
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror}") from None
    if stat.S_ISDIR(mode):
        raise ParseError(path, "a folder inside the shards' folder is not a shard")
    if not stat.S_ISREG(mode):
        raise ParseError(path, "not a file: a shard is a regular file")
    if kind is None:
        raise ParseError(path, "not a shard: a shard is a .jsonl, .ndjson or .parquet file")
    return Shard(path, kind)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class ShardStarts:
    """Which file a row is in, by its index, where that is not the set's own (None): the
    first row of each run of rows in one file, as the reading finds them."""

    def __init__(self) -> None:
        self.firsts: list[int] = []
        self.names: list[str | None] = []

    def note(self, index: int, name: str | None) -> None:
        """Row ``index`` (read after every earlier one) is in the file ``name``."""
        if (self.names[-1] if self.names else None) != name:
            self.firsts.append(index)
            self.names.append(name)

    def __call__(self, index: int) -> str | None:
        if not self.firsts:
            return None
        at = bisect.bisect_right(self.firsts, index) - 1
        return self.names[at] if at >= 0 else None


def open_shards(shards: Shards, *, typed: bool = True) -> SetSource:
    """The shards as one set: the rows of each in turn, each row naming its shard."""
    for shard in shards.shards:
        require_file(shard.path)
        require_within_size(shard.path)
    header, notes = setfile.read_set_file(shards.folder)
    if header is None and all(_blank(shard) for shard in shards.shards):
        # as for one file: nothing at all is not a set, unless its set file says it is one
        raise ParseError(
            shards.folder, "every shard is empty (or holds only whitespace), so they hold no set"
        )
    return SetSource(
        path=shards.source,
        format=shards.format,
        header=header,
        rows=_rows(shards, limits.current(), typed=typed),
        notes=notes,
        header_origin=setfile.set_file_for(shards.folder).name if header is not None else None,
    )


def _rows(
    shards: Shards, bounds: limits.Limits, *, typed: bool
) -> Iterator[SourceRow | UnreadableRow]:
    """Every shard's rows in turn, indexed across shards; reading stops, with a finding, at
    the first row past the set's ``max_rows``."""
    unbounded = replace(bounds, max_rows=0)
    index = 0
    for shard in shards.shards:
        for item in shard_rows(shard, unbounded, typed=typed):
            line = item.line if isinstance(item, UnreadableRow) else item[0]
            if bounds.max_rows and index >= bounds.max_rows:
                yield replace(too_many_rows(index, line or 0, bounds), file=shard.path)
                return
            if isinstance(item, UnreadableRow):
                yield replace(item, index=index, file=shard.path)
            else:
                yield SourceRow(index, item[0] or None, item[1], shard.path)
            index += 1


def shard_rows(
    shard: Shard,
    bounds: limits.Limits,
    span: tuple[int, int] | None = None,
    *,
    typed: bool = True,
) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """(line, value) for each row of a shard, or of a span of it (bytes of a JSON Lines
    file, row groups of a Parquet file); unreadable rows as ``UnreadableRow``, indexed from
    the span's start. A Parquet row has no line: 0."""
    if shard.kind == "parquet":
        return parquet_rows(shard.path, span)
    return json_lines(shard.path, bounds, span, typed=typed)


def _blank(shard: Shard) -> bool:
    """Whether a shard holds no row: a Parquet file of none, a JSON Lines file of whitespace."""
    if shard.kind == "parquet":
        return bool(parquet_file(shard.path).metadata.num_rows == 0)
    with shard.path.open("rb") as handle:
        while chunk := handle.read(1 << 16):
            if chunk.removeprefix(BOM).strip():
                return False
    return True


def parquet_rows(
    path: Path, groups: tuple[int, int] | None = None
) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """(0, row) for each row of a Parquet file, or of its row groups ``groups`` (start,
    end); a row holding a value JSON cannot hold is unreadable, naming the column."""
    parquet = parquet_file(path)
    chosen = range(*groups) if groups is not None else range(parquet.metadata.num_row_groups)
    index = 0
    try:
        for batch in parquet.iter_batches(row_groups=list(chosen), batch_size=4096):
            for row in batch.to_pylist():
                problem = _not_json(row, "")
                if problem is None:
                    yield 0, _present(row)
                else:
                    yield UnreadableRow(index, None, None, problem)
                index += 1
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror or error}") from None
    except Exception as error:  # pyarrow raises kinds of its own for a damaged file
        raise ParseError(path, f"not a readable Parquet file: {error}") from None


def parquet_file(path: Path) -> Any:
    from blueprint.formats.huggingface.columns import _pyarrow

    pq = _pyarrow()
    try:
        return pq.ParquetFile(path)
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror or error}") from None
    except Exception as error:  # pyarrow.lib.ArrowInvalid: not Parquet
        raise ParseError(path, f"not a Parquet file: {error}") from None


def _not_json(value: Any, where: str) -> str | None:
    """Why a value read from Parquet is not a JSON value (naming where in the row), or None."""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where or 'the row'} is {value}, not a number"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where or 'the row'} has a key that is not text"
            problem = _not_json(item, f"{where}.{key}" if where else key)
            if problem is not None:
                return problem
        return None
    if isinstance(value, list):
        for position, item in enumerate(value):
            problem = _not_json(item, f"{where}[{position}]")
            if problem is not None:
                return problem
        return None
    kind = "a map" if isinstance(value, tuple) else f"a {type(value).__name__} value"
    return f"the column {where} holds {kind}, which JSON cannot hold"


def _present(value: Any) -> Any:
    """A Parquet row with its null fields taken as absent (lists keep their nulls)."""
    if isinstance(value, dict):
        return {key: _present(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_present(item) for item in value]
    return value


class ShardsCodec:
    """A set in shards, read by ``--from shards`` (or ``--shards``): the path is a folder of
    shards, a glob of them, or one shard. Never detected: a folder or a ``.jsonl`` file is
    read as shards only when named so."""

    name: ClassVar[str] = "shards"
    title: ClassVar[str] = (
        "a set in shards: a folder or glob of JSON Lines and Parquet files (read only)"
    )
    extensions: ClassVar[tuple[str, ...]] = ()
    read_extensions: ClassVar[tuple[str, ...]] = ()
    write_forms: ClassVar[dict[str, str]] = {}
    refused_forms: ClassVar[dict[str, str]] = {}
    # the rows are the canonical rows the shards hold
    lossless: ClassVar[bool] = True
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = False

    def open(self, path: Path) -> SetSource:
        return open_shards(find_shards([path]), typed=False)

    def open_typed(self, path: Path) -> SetSource:
        """:meth:`open`, with typed rows where they fit (the validator's fast path)."""
        return open_shards(find_shards([path]))

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        raise UsageError("a set in shards is read, not written: write one set file")

    def sniff(self, path: Path, head: bytes) -> Fit:
        return Fit.no("a set in shards is read only when named (--from shards)")
