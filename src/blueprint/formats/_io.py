"""Reading helpers shared by the file codecs: opening, decoding and locating bad bytes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from blueprint import jsonvalues
from blueprint.errors import ParseError
from blueprint.formats.base import UnreadableRow

BOM = b"\xef\xbb\xbf"


def require_file(path: Path) -> None:
    """Fail early, with exit code 2, for a path that is not a readable file."""
    if not path.exists():
        raise ParseError(path, "no such file")
    if not path.is_file():
        raise ParseError(path, "not a file")


def read_text(path: Path) -> str:
    """The whole file as text; a BOM is dropped and bad UTF-8 is located by line and column."""
    require_file(path)
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


def read_json_lines(path: Path) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """(line, value) for each non-blank line of a JSON Lines file; bad lines as UnreadableRow.

    A missing file is reported here, at once, not when the rows are first read.
    """
    require_file(path)
    return _json_lines(path)


def _json_lines(path: Path) -> Iterator[tuple[int, Any] | UnreadableRow]:
    with path.open("rb") as handle:
        index = 0
        for number, line in enumerate(handle, start=1):
            if number == 1 and line.startswith(BOM):
                line = line[len(BOM) :]
            if not line.strip():
                continue
            try:
                yield number, jsonvalues.loads(line.decode("utf-8"))
            except UnicodeDecodeError as error:
                yield UnreadableRow(index, number, error.start + 1, undecodable(line, error))
            except jsonvalues.JSONError as error:
                yield UnreadableRow(index, number, error.column, error.reason)
            index += 1
