"""Scratch files with no name, where the indexes that keep memory flat put what grows with a
set (row ids, row places, lines): written at the end, read back at an offset."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import IO

from blueprint.core.errors import OutputError


def write_at(
    file: IO[bytes] | None, offset: int, data: bytes | bytearray, *, prefix: str, keeps: str
) -> IO[bytes]:
    """Write ``data`` at ``offset`` of a scratch file, made on first use (``file`` None), and
    return the file. ``keeps`` says what the file holds, for the message when the temporary
    folder has no room."""
    try:
        if file is None:
            # a file with no name where the system allows: nothing is left behind
            file = tempfile.TemporaryFile(prefix=prefix)  # noqa: SIM115
        file.seek(offset)
        file.write(data)
        file.flush()
    except OSError as error:
        raise OutputError(
            Path(tempfile.gettempdir()),
            f"{error.strerror or error}: {keeps} in the temporary folder (set TMPDIR to a"
            " folder with room)",
        ) from None
    return file


if sys.platform == "win32":

    def read_at(file: IO[bytes], size: int, offset: int) -> bytes:
        file.seek(offset)
        return file.read(size)

else:

    def read_at(file: IO[bytes], size: int, offset: int) -> bytes:
        # at an offset, leaving the file's position alone (two readings may interleave); a
        # read rather than a memory map, whose pages a lookup touched would count as the
        # process's memory
        return os.pread(file.fileno(), size, offset)
