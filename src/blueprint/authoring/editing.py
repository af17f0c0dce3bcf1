"""Editing a canonical set in place: open it, decide everything, then rewrite it whole or not.

Every edit command (``oracle``, ``add``, ``rm``, ``rename``, ``family``, ``accept``,
``promote``) opens the set with :func:`open_for_edit`, reads its rows as often as it needs
(they stream from the file; memory holds one row at a time plus the set-level fields), decides
every change before writing anything, and ends in :func:`commit`. A refused edit raises
:class:`EditRefused` before the commit, or inside the writer's loop, so the file stays
byte-for-byte as it was. A dry run goes through the same writer into a scratch folder outside
the set's own, and reports the difference as ``blueprint diff`` would.

Opening takes the set's edit lock (see :mod:`blueprint.io.locking`) before reading, and the commit
releases it once the file is replaced: a second edit meanwhile is refused, and a program that
wrote the set without the lock makes the commit refuse instead of overwriting its change.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, ParamSpec, TypeVar

from blueprint.convert import complete_header, data_rows
from blueprint.core.errors import BlueprintError
from blueprint.core.issues import Issue
from blueprint.core.model import case_profile_fields
from blueprint.diff import SetDiff, collect, diff_sets
from blueprint.formats import Codec, ExportResult, StrPath, WriteOptions, resolve_codec
from blueprint.formats.setfile import set_file_for
from blueprint.io.atomic import scratch_folder
from blueprint.io.locking import (
    EditLock,
    Stamp,
    releasing_locks,
    replacing_only_as_read,
    stamp_of,
)

P = ParamSpec("P")
R = TypeVar("R")


class EditRefused(BlueprintError, ValueError):
    """The edit cannot be made as asked; the file was not touched."""

    exit_code = 1


@dataclass(frozen=True)
class EditOptions:
    """How an edit runs: the set's format (default: from its extension), and whether it
    only reports what it would change (``dry_run``), writing nothing."""

    format: str | None = None
    dry_run: bool = False


@dataclass
class EditableSet:
    """A canonical set opened for an in-place edit."""

    path: Path
    codec: Codec
    #: the set-level fields to write back; edits change them in place
    header: dict[str, Any]
    #: what opening had to make up (a set name taken from the file name)
    notes: list[str]
    #: whether the file carries set-level fields; a CSV or JSONL file without its set file
    #: does not, and an edit that changes no set-level field keeps it so
    has_header: bool
    #: a CSV file's own column order, which the rewrite keeps
    columns: tuple[str, ...] | None
    #: the set's files as they were when opened: the commit replaces them only if unchanged
    stamps: dict[Path, Stamp | None] = field(default_factory=dict)
    #: the edit lock, released by the commit (or when the set is dropped unwritten)
    lock: EditLock | None = field(default=None, repr=False, compare=False)

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()

    def families(self) -> dict[str, dict[str, Any]]:
        """The declared case families by id: the header's own dicts, so edits land there."""
        found = self.header.get("caseFamilies")
        if not isinstance(found, list):
            return {}
        return {f["id"]: f for f in found if isinstance(f, dict) and isinstance(f.get("id"), str)}

    def rows(self) -> Iterator[Any]:
        """A fresh pass over the raw rows; an unreadable row stops the edit."""
        return data_rows(self.codec.open(self.path))

    def count(self) -> int:
        return sum(1 for _ in self.rows())

    def find(self, row_id: str) -> dict[str, Any]:
        """The one row with this id; refused when none has it or several share it."""
        matches = [row for row in self.rows() if isinstance(row, dict) and row.get("id") == row_id]
        if not matches:
            raise EditRefused(f"{self.path}: no row has the id {row_id!r}")
        if len(matches) > 1:
            raise EditRefused(
                f"{self.path}: {len(matches)} rows share the id {row_id!r}; fix that first"
            )
        return matches[0]


def one_edit(edit: Callable[P, R]) -> Callable[P, R]:
    """For a function that opens sets with :func:`open_for_edit`: the locks it took are
    released when it returns or raises, committed or not."""

    @functools.wraps(edit)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with releasing_locks():
            return edit(*args, **kwargs)

    return wrapper


def open_for_edit(path: Path, format: str | None, *, dry_run: bool = False) -> EditableSet:
    """Open a canonical set for editing; a vendor file is refused, untouched. A dry run
    takes no lock: it writes nothing in the set's folder, so it cannot race an edit."""
    codec = resolve_codec(path, format, reading=True)
    if not codec.lossless:
        # rewriting a vendor file means exporting the whole set again, which loses what that
        # format cannot hold (set-level fields, rows it leaves out); an edit must lose nothing
        raise EditRefused(
            f"{path}: editing a {codec.name} file in place is refused: rewriting it would export"
            f" the set again, and a {codec.name} export leaves out rows and fields it has no"
            f" place for. Convert it to a canonical format first (blueprint convert {path}"
            f" {path.with_name(path.stem + '-set.json')} --from {codec.name}), edit that,"
            " and export again"
        )
    lock = None if dry_run else EditLock(path)
    try:
        # stamped before the first read: a change made while the edit reads is caught too
        stamps = {file: stamp_of(file) for file in (path, set_file_for(path))}
        source = codec.open(path)
        header, notes = complete_header(source)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    edited = EditableSet(
        path=path,
        codec=codec,
        header=dict(header),
        notes=notes,
        has_header=source.header is not None,
        columns=source.columns,
        stamps=stamps,
        lock=lock,
    )
    if lock is not None:
        weakref.finalize(edited, lock.release)  # an edit refused before its commit
    return edited


@dataclass(frozen=True)
class Rewrite:
    """What committing an edit did or, in a dry run, would do."""

    path: Path
    dry_run: bool
    rows: int
    #: the files written (or that would be)
    files: tuple[Path, ...]
    #: of those, the ones that did not exist before (the set file of a CSV that had none)
    created: tuple[Path, ...]
    #: in a dry run, what the edit would change, as blueprint diff reports it
    diff: SetDiff | None = None
    #: findings about the file written (a CSV header a spreadsheet would run as a formula)
    findings: tuple[Issue, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "written": not self.dry_run,
            "dryRun": self.dry_run,
            "rows": self.rows,
            "files": [str(path) for path in self.files],
            "created": [str(path) for path in self.created],
            "diff": self.diff.to_json() if self.diff is not None else None,
        }


def commit(
    edited: EditableSet,
    rows: Iterator[Any],
    expected_rows: int,
    *,
    dry_run: bool = False,
    header_changed: bool = False,
) -> Rewrite:
    """Replace the set with ``rows`` (and ``edited.header``), or show what that would change.

    Strict, and the row count is checked before the output is committed, so an edit that
    would lose anything leaves the file as it was. A file without set-level fields gets a
    set file only when the edit changed them (``header_changed``).
    """
    set_file = edited.has_header or header_changed
    options = WriteOptions(
        force=True,
        strict=True,
        column_order=edited.columns or (),
        set_file=set_file,
        in_place=True,
    )
    counted = _exactly(rows, expected_rows, edited.path)
    existing = {path for path in (edited.path, set_file_for(edited.path)) if path.exists()}
    if not dry_run:
        try:
            with replacing_only_as_read(edited.stamps):
                result = edited.codec.write(edited.header, counted, edited.path, options)
        finally:
            edited.release()
        files = tuple(result.files)
        created = tuple(path for path in files if path not in existing)
        return Rewrite(
            edited.path, False, result.rows, files, created, None, tuple(result.findings)
        )
    with scratch_write(edited.codec, edited.header, counted, edited.path.name, options) as (
        result,
        target,
    ):
        before = collect(edited.codec.open(edited.path), str(edited.path))
        if set_file and not edited.has_header:
            before.header = {}  # the set file would be new: every field it holds is added
        after = collect(edited.codec.open(target), str(edited.path))
        diff = diff_sets(before, after)
    files = tuple(edited.path.parent / path.name for path in result.files)
    created = tuple(path for path in files if path not in existing)
    return Rewrite(edited.path, True, result.rows, files, created, diff)


@contextmanager
def scratch_write(
    codec: Codec, header: dict[str, Any], rows: Iterator[Any], name: str, options: WriteOptions
) -> Iterator[tuple[ExportResult, Path]]:
    """Write a set into a scratch folder outside every folder of the user's (a dry run goes
    through the same writer, so it refuses what the real write would); removed afterwards."""
    with scratch_folder("dry-run") as scratch:
        target = scratch / name
        yield codec.write(header, rows, target, options), target


def _exactly(rows: Iterator[Any], expected: int, path: Path) -> Iterator[Any]:
    """Pass rows through; raise (so the writer commits nothing) unless there are ``expected``."""
    count = 0
    for row in rows:
        count += 1
        yield row
    if count != expected:
        raise EditRefused(f"{path}: the edit would write {count} rows, not {expected}; unchanged")


def case_of(row: dict[str, Any]) -> dict[str, Any]:
    """A row's case profile; refused when the row has none to edit."""
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    if not isinstance(case, dict):
        raise EditRefused(f"row {row.get('id')!r} has no case profile at metadata.case")
    return case


_CASE_ORDER: Final = case_profile_fields()


def ordered_case(case: dict[str, Any]) -> dict[str, Any]:
    """The case profile with known fields in schema order, unknown ones after."""
    known = {key: case[key] for key in _CASE_ORDER if key in case}
    return {**known, **{key: value for key, value in case.items() if key not in known}}


def named(path: StrPath, error: EditRefused) -> EditRefused:
    """The refusal with the file named first, once."""
    text = str(error)
    return error if text.startswith(f"{path}:") else EditRefused(f"{path}: {text}")
