"""Reading helpers shared by the file codecs: opening, decoding and locating bad bytes."""

from __future__ import annotations

from pathlib import Path

from blueprint.errors import ParseError

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
