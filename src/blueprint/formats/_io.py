"""Reading helpers shared by the file codecs: opening, decoding and locating bad bytes."""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from blueprint.core.errors import ParseError
from blueprint.formats.base import UnreadableRow
from blueprint.io import jsonvalues, limits

BOM = b"\xef\xbb\xbf"


def require_file(path: Path) -> None:
    """Fail early, with exit code 2, for a path that is not a readable file."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise ParseError(path, "no such file") from None
    except OSError as error:  # a name too long, a loop of links, no permission
        raise ParseError(path, f"cannot read: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        raise ParseError(path, "not a file")


def read_text(path: Path) -> str:
    """The whole file as text; a BOM is dropped and bad UTF-8 is located by line and column."""
    require_file(path)
    require_within_size(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror}") from None
    if raw.startswith(BOM):
        raw = raw[len(BOM) :]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = raw.rfind(b"\n", 0, error.start) + 1
        raise ParseError(
            path,
            f"not UTF-8 text (byte 0x{raw[error.start]:02x})",
            line=raw.count(b"\n", 0, error.start) + 1,
            column=error.start - line_start + 1,
        ) from None


def undecodable(line: bytes, error: UnicodeDecodeError) -> str:
    return f"not UTF-8 text (byte 0x{line[error.start]:02x})"


def require_within_size(path: Path) -> None:
    """Refuse, before reading, a file larger than ``max_file_bytes``."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror}") from None
    if limits.exceeded("max_file_bytes", size):
        raise ParseError(
            path,
            f"the file has {size} bytes, more than the limit of"
            f" {limits.current().max_file_bytes} ({limits.hint('max_file_bytes')})",
        )


def read_json_lines(
    path: Path, *, typed: bool = False
) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """(line, value) for each non-blank line of a JSON Lines file; bad lines as UnreadableRow.

    A missing file, or one over ``max_file_bytes``, is reported here, at once, not when the
    rows are first read. A line over ``max_cell_bytes`` is reported without being held in
    memory, and reading stops, with a finding, at the first row past ``max_rows``.
    """
    require_file(path)
    require_within_size(path)
    return json_lines(path, limits.current(), typed=typed)


#: how much of an overlong line is read at a time while it is skipped
_SKIP_CHUNK = 1 << 20


def json_lines(
    path: Path,
    bounds: limits.Limits,
    span: tuple[int, int] | None = None,
    *,
    typed: bool = False,
) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """The lines of the file, or of the bytes ``span`` (start, end) of it, which starts and
    ends at line boundaries; there, line numbers and row indices count from the span's start
    (a pool worker reads one span; the parent adds the lines and rows of the spans before).
    With ``typed``, rows that fit the published row schema come as typed rows
    (:mod:`blueprint.io.typedrows`), for the validator."""
    loads = _typed_reader(bounds) if typed else jsonvalues.reader(bounds)
    cap = bounds.max_cell_bytes or -1
    start, end = span if span is not None else (0, -1)
    with path.open("rb") as handle:
        if start:
            handle.seek(start)
        position = start
        index = 0
        number = 0
        while end < 0 or position < end:
            line = handle.readline(cap + 1 if cap > 0 else -1)
            if not line:
                return
            number += 1
            position += len(line)
            if cap > 0 and len(line) > cap and not line.endswith(b"\n"):
                skipped = _skip_line(handle)
                position += skipped
                yield UnreadableRow(
                    index,
                    number,
                    1,
                    f"the line has {len(line) + skipped} bytes, more than the limit of {cap}"
                    f" ({limits.hint('max_cell_bytes')})",
                )
                index += 1
                continue
            if number == 1 and position == len(line) and line.startswith(BOM):
                line = line[len(BOM) :]
            if not line.strip():
                continue
            if bounds.max_rows and index >= bounds.max_rows:
                yield too_many_rows(index, number, bounds)
                return
            try:
                yield number, loads(line)
            except jsonvalues.JSONError as error:
                yield UnreadableRow(index, number, error.column, error.reason)
            index += 1


def _typed_reader(bounds: limits.Limits) -> Callable[[bytes], Any]:
    from blueprint.io import typedrows  # msgspec: imported only by what validates rows

    return typedrows.row_reader(bounds)


def too_many_rows(index: int, line: int, bounds: limits.Limits) -> UnreadableRow:
    """The row past ``max_rows``, where reading stops."""
    return UnreadableRow(
        index,
        line,
        1,
        f"the file has more than {bounds.max_rows} rows, the limit"
        f" ({limits.hint('max_rows')}); the rest was not read",
    )


def _skip_line(handle: BinaryIO) -> int:
    """Read past the rest of a line; how many bytes that was (the newline included)."""
    skipped = 0
    while True:
        chunk = handle.readline(_SKIP_CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped
