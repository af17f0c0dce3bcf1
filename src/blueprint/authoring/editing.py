"""The one edit path: a set opened, locked and stamped, every change decided, then one write.

Every command that changes a set runs inside :func:`editing`. ``oracle``, ``add``, ``rm``,
``rename``, ``family``, ``accept`` and ``promote`` rewrite the set in place and end in
:meth:`EditableSet.commit`; ``merge`` writes the sets it opened to a new file; ``dedupe``,
``split`` and ``sample`` write a set whole, back in place or to another file (:class:`Target`).

Opening takes the set's edit lock (see :mod:`blueprint.io.locking`) and stamps its files
before the first read; until the block ends a second edit is refused, and a write that would
replace the set's files checks first that they are still as read, so a program that wrote the
set without the lock makes the edit refuse instead of overwriting its change. The rows stream
from the file as often as the edit reads them (memory holds one row at a time plus the
set-level fields). A refused edit raises :class:`EditRefused` before the write, or inside the
writer's loop, so the file stays byte-for-byte as it was. A dry run takes no lock: it goes
through the same writer into a scratch folder outside the set's own, and reports the
difference as ``blueprint diff`` would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from blueprint.convert import complete_header, data_rows
from blueprint.core.errors import BlueprintError, OutputExistsError, UsageError
from blueprint.core.issues import Issue
from blueprint.core.model import case_profile_fields
from blueprint.diff import SetDiff, collect, diff_sets
from blueprint.formats import Codec, ExportResult, SetSource, StrPath, WriteOptions, resolve_codec
from blueprint.formats.setfile import set_file_for
from blueprint.io.atomic import scratch_folder
from blueprint.io.locking import rewriting_in_place

#: what an edit does to the row at a position (it may change the row in place)
RowChange = Callable[[int, Any], Any]


class EditRefused(BlueprintError, ValueError):
    """The edit cannot be made as asked; the file was not touched."""

    exit_code = 1


@dataclass(frozen=True)
class EditOptions:
    """How an edit runs: the set's format (default: from its extension), and whether it
    only reports what it would change (``dry_run``), writing nothing."""

    format: str | None = None
    dry_run: bool = False


@contextmanager
def editing(
    path: StrPath, options: EditOptions | None = None, *, rewrite: bool = True, named: bool = True
) -> Iterator[EditableSet]:
    """The set at ``path``, opened for an edit that lasts as long as the block.

    ``rewrite`` says the set itself may be written: a vendor file is then refused, untouched,
    and the set is locked, its files replaced only as they were read (a dry run takes no
    lock). Without it the set is only read, in any format, and the edit writes elsewhere.
    ``named`` puts the file's name before a refusal that does not start with it.
    """
    options = options or EditOptions()
    file = Path(path)
    try:
        codec = resolve_codec(file, options.format, reading=True)
        if rewrite and not codec.lossless:
            # rewriting a vendor file means exporting the whole set again, which loses what
            # that format cannot hold (set-level fields, rows it leaves out)
            raise EditRefused(
                f"{file}: editing a {codec.name} file in place is refused: rewriting it would"
                f" export the set again, and a {codec.name} export leaves out rows and fields it"
                f" has no place for. Convert it to a canonical format first (blueprint convert"
                f" {file} {file.with_name(file.stem + '-set.json')} --from {codec.name}), edit"
                " that, and export again"
            )
        # a dry run writes nothing in the set's folder, so it cannot race an edit
        locked = rewrite and not options.dry_run
        # stamped before the first read: a change made while the edit reads is caught too
        with rewriting_in_place((file, set_file_for(file))) if locked else nullcontext():
            source = codec.open(file)
            header, notes = complete_header(source)
            yield EditableSet(
                path=file,
                codec=codec,
                header=dict(header),
                notes=notes,
                has_header=source.header is not None,
                columns=source.columns,
                dry_run=options.dry_run,
            )
    except EditRefused as error:
        if not named or str(error).startswith((f"{path}:", f"{file}:")):
            raise
        raise EditRefused(f"{path}: {error}") from None


@dataclass
class EditableSet:
    """A set opened for an edit (see :func:`editing`)."""

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
    #: the edit only shows what it would change (see :meth:`commit`)
    dry_run: bool = False

    def source(self) -> SetSource:
        """A fresh reader of the file."""
        return self.codec.open(self.path)

    def families(self) -> dict[str, dict[str, Any]]:
        """The declared case families by id: the header's own dicts, so edits land there."""
        found = self.header.get("caseFamilies")
        if not isinstance(found, list):
            return {}
        return {f["id"]: f for f in found if isinstance(f, dict) and isinstance(f.get("id"), str)}

    def rows(self) -> Iterator[Any]:
        """A fresh pass over the raw rows; an unreadable row stops the edit."""
        return data_rows(self.source())

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

    def changed(self, change: RowChange) -> Iterator[Any]:
        """A fresh pass over the rows, each as ``change`` leaves it."""
        return (change(position, row) for position, row in enumerate(self.rows()))

    def write(self, rows: Iterable[Any], *, header_changed: bool = False) -> ExportResult:
        """Replace the set with ``rows`` and :attr:`header`, atomically, in its own format."""
        return self.codec.write(self.header, iter(rows), self.path, self._options(header_changed))

    def commit(
        self, rows: Iterable[Any], expected: int, *, header_changed: bool = False
    ) -> Rewrite:
        """End the edit: replace the set with ``rows``, or in a dry run show what that would
        change. An edit that would write other than ``expected`` rows is refused, the file as
        it was; a file without set-level fields gets a set file only when the edit changed
        them (``header_changed``)."""
        counted = _exactly(
            rows,
            expected,
            lambda count: (
                f"{self.path}: the edit would write {count} rows, not {expected}; unchanged"
            ),
        )
        existing = {path for path in (self.path, set_file_for(self.path)) if path.exists()}
        if not self.dry_run:
            result = self.write(counted, header_changed=header_changed)
            files = tuple(result.files)
            created = tuple(path for path in files if path not in existing)
            return Rewrite(
                self.path, False, result.rows, files, created, None, tuple(result.findings)
            )
        options = self._options(header_changed)
        with scratch_write(self.codec, self.header, counted, self.path.name, options) as (
            result,
            target,
        ):
            before = collect(self.source(), str(self.path))
            if options.set_file and not self.has_header:
                before.header = {}  # the set file would be new: every field it holds is added
            diff = diff_sets(before, collect(self.codec.open(target), str(self.path)))
        files = tuple(self.path.parent / path.name for path in result.files)
        created = tuple(path for path in files if path not in existing)
        return Rewrite(self.path, True, result.rows, files, created, diff)

    def _options(self, header_changed: bool) -> WriteOptions:
        # strict, so that an edit that would lose anything leaves the file as it was
        return WriteOptions(
            force=True,
            strict=True,
            column_order=self.columns or (),
            set_file=self.has_header or header_changed,
            in_place=True,
        )


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


@dataclass(kw_only=True)
class EditOutcome:
    """What an edit command did, for the CLI to tell: its own findings (:meth:`details`),
    what opening the set made up, and what the rewrite did (None: the file is as it was)."""

    notes: list[str] = field(default_factory=list)
    written: Rewrite | None = None

    def details(self) -> dict[str, Any]:
        """The command's own findings, as JSON."""
        return {}

    def to_json(self) -> dict[str, Any]:
        written = self.written.to_json() if self.written is not None else {"written": False}
        return {**self.details(), "notes": self.notes, **written}


@dataclass(frozen=True)
class Target:
    """Where a command that writes a set whole (dedupe, split, sample) puts it: back in
    place, through the set's own edit, or in another canonical file."""

    path: Path
    codec: Codec
    #: whether the write may replace a file there
    force: bool
    #: the set itself: it is opened to be rewritten (see :func:`editing`)
    in_place: bool

    def write(self, edited: EditableSet, rows: Iterable[Any], expected: int) -> ExportResult:
        """Write ``edited.header`` and ``rows``; refused, writing nothing, unless there are
        ``expected`` rows (the set changed between two reads of it)."""
        counted = _exactly(
            rows,
            expected,
            lambda count: (
                f"{edited.path}: changed while it was read ({count} rows, not {expected})"
            ),
        )
        if self.in_place:
            return edited.write(counted)
        options = WriteOptions(force=self.force, strict=True)
        return self.codec.write(edited.header, counted, self.path, options)


def output_target(source: Path, format: str | None, output: Path | None, force: bool) -> Target:
    """Where a set written whole goes, checked before anything is read.

    ``output`` None means in place, which only a canonical format allows (rewriting a vendor
    file would export the set again, losing what that format cannot hold); an output is
    written in a canonical format, chosen by its extension, and never replaces a file
    without ``force``.
    """
    codec = resolve_codec(source, format, reading=True)
    if output is None:
        if not codec.lossless:
            raise EditRefused(
                f"{source}: a {codec.name} file is not rewritten in place: writing it would"
                f" export the set again, and a {codec.name} export leaves out what the format"
                " has no place for. Write a canonical set with -o (.json, .jsonl or .csv)"
            )
        return Target(source, codec, force=True, in_place=True)
    writer = resolve_codec(output, None, reading=False)
    if not writer.lossless:
        raise UsageError(
            f"{output}: writes a canonical set only (.json, .jsonl or .csv), not {writer.name}"
        )
    if output.resolve() == source.resolve():
        if not codec.lossless or writer.name != codec.name:
            raise EditRefused(
                f"{output}: is the {codec.name} set itself; write the result to another file"
            )
        if not force:
            raise OutputExistsError(output)
        return Target(output, writer, force=True, in_place=True)
    if output.exists() and not force:
        raise OutputExistsError(output)
    return Target(output, writer, force=force, in_place=False)


@contextmanager
def scratch_write(
    codec: Codec, header: dict[str, Any], rows: Iterator[Any], name: str, options: WriteOptions
) -> Iterator[tuple[ExportResult, Path]]:
    """Write a set into a scratch folder outside every folder of the user's (a dry run goes
    through the same writer, so it refuses what the real write would); removed afterwards."""
    with scratch_folder("dry-run") as scratch:
        target = scratch / name
        yield codec.write(header, rows, target, options), target


def _exactly(rows: Iterable[Any], expected: int, refusal: Callable[[int], str]) -> Iterator[Any]:
    """Pass rows through; raise (so the writer commits nothing) unless there are ``expected``,
    saying ``refusal(count)``."""
    count = 0
    for row in rows:
        count += 1
        yield row
    if count != expected:
        raise EditRefused(refusal(count))


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
