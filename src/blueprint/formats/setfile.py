"""The set file: where CSV and JSONL keep the set-level fields, next to the data file.

``refunds.csv`` keeps its name, version, description, task family and case families in
``refunds.csv.set.json``, a small JSON object with the same keys as a canonical JSON document
minus ``rows``. The data file stays plain rows, so pandas, spreadsheets and ``jq`` read it as
they would any other file.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any, Final

from blueprint.core.errors import ParseError
from blueprint.core.issues import Issue, make_issue
from blueprint.io import jsonvalues

SUFFIX: Final = ".set.json"


def is_set_file(path: Path) -> bool:
    """Whether a path is a set file (the set-level fields beside a CSV or JSONL), never a set."""
    return path.name.endswith(SUFFIX)


def set_file_for(data_path: Path) -> Path:
    """The set file beside a data file. A path with no name of its own (``.``, ``..``, ``/``)
    is named by the folder it stands for, so that a folder given where a file belongs is
    refused as a folder, not failed on."""
    if data_path.name in ("", ".", ".."):
        absolute = data_path.resolve()
        if not absolute.name:  # the root of a file system
            return absolute / SUFFIX
        data_path = absolute
    return data_path.with_name(data_path.name + SUFFIX)


def read_set_file(data_path: Path) -> tuple[dict[str, Any] | None, list[Issue]]:
    """The set-level fields stored beside ``data_path``, or None with a note when absent."""
    set_path = set_file_for(data_path)
    if set_path.exists() and not set_path.is_file():
        raise ParseError(set_path, "the set file is not a file")
    if not set_path.is_file():
        note = make_issue(
            "missing-set-file",
            path="$",
            set_file=set_path.name,
            consequence="the set-level fields (name, version, case families) are unknown",
        )
        return None, [note]
    try:
        raw = set_path.read_bytes()
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise ParseError(set_path, "not UTF-8 text", line=line) from None
    except OSError as error:
        raise ParseError(set_path, f"cannot read: {error.strerror}") from None
    try:
        header = jsonvalues.loads(text)
    except jsonvalues.JSONError as error:
        raise ParseError(set_path, error.reason, line=error.line, column=error.column) from None
    if not isinstance(header, dict):
        raise ParseError(set_path, "a set file holds one JSON object")
    if "rows" in header:
        raise ParseError(set_path, "a set file holds the set-level fields only, not rows")
    return header, []


def write_set_file(handle: IO[bytes], header: dict[str, Any]) -> None:
    handle.write(jsonvalues.dumps(header, indent=True))
    handle.write(b"\n")
