"""The codec protocol every format implements, and the records codecs exchange.

Codecs move *raw* rows: the JSON values exactly as a file holds them, valid or not. That is
what lets the validator check any format, and what makes the canonical formats lossless even
for rows that break the schema. Turning rows into models is the caller's choice.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final, Literal, Protocol, TypeAlias

from blueprint.core.errors import ParseError
from blueprint.core.issues import Issue
from blueprint.formats.sniffing import Fit
from blueprint.io.places import RowPlaces

#: what every public function accepts as a file path
StrPath: TypeAlias = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One row as read: its position in the set, the line it starts on, and its raw value."""

    index: int
    line: int | None
    data: Any
    #: the file the row is written in, when it is not the set's own file (a tests file a
    #: promptfoo config includes): ``line`` is a line of that file
    file: Path | None = None


@dataclass(frozen=True, slots=True)
class UnreadableRow:
    """A row that could not be decoded; readers yield it and go on with the next row."""

    index: int
    line: int | None
    column: int | None
    reason: str
    #: the file the row is written in, when it is not the set's own file (see SourceRow)
    file: Path | None = None

    def error(self, set_path: Path) -> ParseError:
        """The error that stops a command at this row of the set read from ``set_path``: it
        names the file the row is written in, and the row's line and column there."""
        return ParseError(self.file or set_path, self.reason, line=self.line, column=self.column)


@dataclass(frozen=True, slots=True)
class MergedRecord:
    """A record of a vendor file that gives no row of its own because the format documents
    that it goes into another's (a reader yields it among its records, and it is counted,
    never silently dropped)."""

    line: int | None
    #: where it went and why, the same text for every record merged alike
    reason: str
    #: the record itself, as the vendor reads it (a comparison of two files still sees it)
    record: Any = None


#: refused records a count names; the rest are counted only, so memory stays flat
_NAMED_REFUSALS: Final = 5
#: merge reasons a count keeps apart; past them, merges are counted under one
_MERGE_REASONS: Final = 32


@dataclass
class RecordCount:
    """Where each record of a vendor file went, counted while its rows are read (complete
    once they are consumed): a row, a documented merge into another row, or a refusal with
    its reason (an unreadable row). Counts and the first few refusals by name, never a list
    of every record, so memory stays flat however large the file."""

    #: what a record is, for messages ("promptfoo test case", "golden")
    what: str = "record"
    read: int = 0
    rows: int = 0
    refused: int = 0
    #: records merged into another row, by the reason
    merged: dict[str, int] = field(default_factory=dict)
    #: the first refused records, each with where it is and why
    refusals: list[str] = field(default_factory=list)

    def refuse(self, line: int | None, reason: str, file: Path | None = None) -> None:
        self.refused += 1
        if len(self.refusals) < _NAMED_REFUSALS:
            where = f"record {self.read}" + (f" (line {line})" if line else "")
            if file is not None:
                where += f" of {file.name}"
            self.refusals.append(f"{where}: {reason}")

    def merge(self, reason: str) -> None:
        if reason not in self.merged and len(self.merged) >= _MERGE_REASONS:
            reason = "merged for other reasons"
        self.merged[reason] = self.merged.get(reason, 0) + 1

    @property
    def merged_count(self) -> int:
        return sum(self.merged.values())

    @property
    def accounted(self) -> bool:
        """Whether every record read went somewhere: a row, a merge or a refusal."""
        return self.read == self.rows + self.merged_count + self.refused

    def summary(self) -> str:
        """One line: "12 goldens read: 10 rows, 1 merged (why), 1 refused (which, why)"."""
        if not self.read:
            return f"it holds no {self.what}"
        parts = [f"{self.rows} row{'s' if self.rows != 1 else ''}"]
        if self.merged:
            reasons = "; ".join(f"{count}: {reason}" for reason, count in self.merged.items())
            parts.append(f"{self.merged_count} merged ({reasons})")
        if self.refused:
            named = "; ".join(self.refusals)
            unnamed = self.refused - len(self.refusals)
            more = f"; and {unnamed} more" if unnamed else ""
            parts.append(f"{self.refused} refused ({named}{more})")
        what = self.what if self.read == 1 else f"{self.what}s"
        return f"{self.read} {what} read: {', '.join(parts)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "read": self.read,
            "rows": self.rows,
            "merged": self.merged_count,
            "mergedBy": dict(self.merged),
            "refused": self.refused,
            "refusals": list(self.refusals),
        }


#: set by a front end to watch the rows of every set opened while it is set (the command
#: line's progress bar): called with each new source, it returns the stream to read instead
ROW_WATCHER: ContextVar[Callable[[SetSource], Iterator[SourceRow | UnreadableRow]] | None] = (
    ContextVar("row_watcher", default=None)
)


@dataclass
class SetSource:
    """An opened set: its set-level fields and a one-shot stream of rows.

    ``header`` holds the set-level fields as the file gives them, or None when the file
    carries none (a CSV or JSONL file without its set file). ``notes`` are issues found while
    opening, reported by the validator before any row.
    """

    path: Path
    format: str
    header: dict[str, Any] | None
    rows: Iterator[SourceRow | UnreadableRow]
    notes: list[Issue] = field(default_factory=list)
    #: where the set-level fields came from, for messages ("the document", "refunds.csv.set.json")
    header_origin: str | None = None
    #: the line a row starts on, for formats that work it out only when asked (JSON)
    line_of: Callable[[int], int | None] = field(default=lambda index: None)
    #: set-level fields the reader made up because the file does not say them (a vendor
    #: file's set name, taken from the file name); never reported as lost on export
    made_up: frozenset[str] = frozenset()
    #: issues the reader finds while the rows are read (an empty CSV row skipped, a column no
    #: row may have): each is appended before the row that revealed it is yielded, and the
    #: list is complete once the rows are consumed
    reading_notes: list[Issue] = field(default_factory=list)
    #: places in a row (``("metadata", "case", "caseId")``) whose schema findings the reader
    #: reports once for the whole file, among its notes, instead of once in every row: a
    #: required CSV column that is missing, a column that is not Blueprint's
    reported_once: frozenset[tuple[str, ...]] = frozenset()
    #: the column names of a tabular file (CSV) in the file's own order, so that an edit in
    #: place can write them back in that order; None for other formats
    columns: tuple[str, ...] | None = None
    #: where each row's text starts and ends in the file (byte offsets), for a reader that
    #: found them before decoding any row (a streamed JSON document of objects): a pool of
    #: processes reads the rows from there (see blueprint.validation.parallel)
    row_places: RowPlaces | None = None
    #: for a vendor file: where each of its records went (a row, a merge, a refusal),
    #: complete once the rows are consumed; None for the canonical formats, whose every
    #: record is a row
    records: RecordCount | None = None

    def __post_init__(self) -> None:
        watcher = ROW_WATCHER.get()
        if watcher is not None:
            self.rows = watcher(self)

    def require_structure(self) -> None:
        """Refuse a source whose structure is broken (a JSON document without a rows array).

        A vendor file that breaks only its vendor's own rules (``vendor-format``) is still
        read: validation reports those, and a conversion refuses an invalid set anyway.
        """
        broken = [
            note for note in self.notes if note.severity == "error" and note.code != "vendor-format"
        ]
        if broken:
            raise ParseError(self.path, f"{broken[0].path}: {broken[0].message}")


LossKind = Literal["dropped", "excluded", "weakened"]


@dataclass(frozen=True)
class LossyField:
    """One thing an export lost: which field (or rule), for which rows, of which kind, and why.

    Three kinds: ``dropped``, a field not written; ``excluded``, whole rows not written
    (``field`` is ``*``); ``weakened``, a rule that is written but that the vendor's grader
    will not enforce (a forbidden tool call, an order, a normalisation). ``field`` is the
    canonical path inside a row (``metadata.case.reviewerExpertise``); with ``scope="set"`` it
    names a set-level field. ``row_ids`` lists every row that actually had a value there (an
    export's are an :class:`~blueprint.io.idlist.IdList`, compact however many rows it names;
    it equals the tuple of the same ids).
    """

    field: str
    reason: str
    row_ids: Sequence[str] = ()
    scope: Literal["row", "set"] = "row"
    kind: LossKind = "dropped"

    @property
    def count(self) -> int:
        return len(self.row_ids)

    @property
    def changes_data(self) -> bool:
        """Whether importing the export back shows the loss (a weakened rule comes back)."""
        return self.kind != "weakened"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "field": self.field,
            "scope": self.scope,
            "reason": self.reason,
            "count": self.count,
            "rowIds": list(self.row_ids),
        }


@dataclass
class ExportResult:
    """What a write produced: the files, the row count, and every field it dropped."""

    format: str
    files: list[Path]
    rows: int
    lossy: list[LossyField] = field(default_factory=list)
    #: what a person should know about the export that is not a loss
    notes: list[str] = field(default_factory=list)
    #: findings about what was written (a CSV cell a spreadsheet would run as a formula)
    findings: list[Issue] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "files": [str(path) for path in self.files],
            "rows": self.rows,
            "lossy": [item.to_json() for item in self.lossy],
            "notes": self.notes,
            "findings": [issue.to_json() for issue in self.findings],
        }


@dataclass(frozen=True)
class WriteOptions:
    """Options shared by every writer."""

    #: replace existing output files
    force: bool = False
    #: refuse to write anything when the export would drop a field, leave out a row or
    #: weaken a rule
    strict: bool = False
    #: write a file of no records when the export leaves out every row of the set, as a
    #: round trip does to show what a format loses; without it, nothing is written and the
    #: export is refused (EveryRowExcluded), for a file of no records is no export
    allow_empty: bool = False
    #: write vendor files with no Blueprint key at all (for a team that leaves): what the
    #: records alone do not say is declared lost
    clean: bool = False
    #: who grades the export: "vendor" (the runner's stock graders) or "blueprint" (the
    #: runner with Blueprint's scorer, blueprint.integrations.<format>, which enforces every
    #: rule but a judge's or a person's)
    graders: str = "vendor"
    #: export rows no automated grader may score, marked for human review
    include_human_review: bool = False
    #: write rubric rows as LLM-judge assertions in a format whose runner does not grade
    #: them today (apollia); without it they are left out, with the reason
    llm_judge: bool = False
    #: set-level fields the reader made up (not in the source), never reported as lost
    derived_fields: frozenset[str] = frozenset()
    #: the form of the data files, for a format that writes a folder of them (huggingface:
    #: jsonl or parquet); None for the format's default
    data_format: str | None = None
    #: for a tabular format (CSV): columns to write in this order, as an edit in place passes
    #: the file's own; a column the rows need beyond them goes after its canonical neighbour
    column_order: tuple[str, ...] = ()
    #: write the set file beside a CSV or JSONL data file; an edit of a file that has none
    #: passes False and keeps it so
    set_file: bool = True
    #: the output is the set being edited in place: a symbolic link the user named as the
    #: set is followed to its file; any other output refuses a link (it would write a file
    #: the user never named)
    in_place: bool = False
    #: in a CSV, write a cell a spreadsheet would run as a formula with a leading ' (shown
    #: as text), and report the change; without it such a cell is written as it is, with a
    #: spreadsheet-formula finding
    spreadsheet_safe: bool = False
    #: whether the validator has already accepted a row the writer is given (convert checks
    #: every row on its way through), so that the writer need not check it again; None, for
    #: rows from anywhere else: the writer checks every row it needs valid
    accepted: Callable[[Any], bool] | None = None


@dataclass(frozen=True)
class ReadOptions:
    """Options every reader keeps to, set once for a whole command (:func:`reading_with`).

    A reader that follows references inside a file (promptfoo's ``tests: file://...``)
    opens only files inside the referring set's folder or the working folder, after
    resolving symbolic links; ``allowed_paths`` widens that (``--allow-path DIR``).
    """

    allowed_paths: tuple[Path, ...] = ()


_read_options = ReadOptions()


def read_options() -> ReadOptions:
    """The read options in force."""
    return _read_options


@contextmanager
def reading_with(options: ReadOptions) -> Iterator[ReadOptions]:
    """Read options for the duration of a block (a command, a test, a library caller).

    Kept for the process, not the thread, so that the worker processes ``check --jobs``
    forks see them too."""
    global _read_options
    saved = _read_options
    _read_options = options
    try:
        yield options
    finally:
        _read_options = saved


def confined(target: Path, base: Path, *, working_folder: bool = True) -> bool:
    """Whether a file a set (or a project configuration) refers to lies inside ``base``, the
    working folder or an allowed path, once symbolic links are resolved (``..`` and links
    cannot lead out). ``working_folder=False`` leaves the working folder out: a project's
    configuration speaks for its own folder, wherever the command runs."""
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):  # a link loop
        return False
    roots = (base, *((Path.cwd(),) if working_folder else ()), *_read_options.allowed_paths)
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


def outside_reason(target: Path, folders: str, what: str = "referenced files") -> str:
    """The one wording for a path :func:`confined` refuses: where a link leads, the folders
    allowed and how to allow another; to follow the path as the user wrote it."""
    try:
        resolved = target.resolve()
        # abspath only tidies ".." away, links untouched: a difference is a link on the way
        written = Path(os.path.abspath(target))  # noqa: PTH100
        where = f" ({target} is {resolved})" if resolved != written else ""
    except (OSError, RuntimeError):
        where = f" ({target} is a link that leads nowhere)"
    return (
        f"{where} leads outside {folders}; Blueprint reads {what} only there"
        " (allow another folder with --allow-path DIR)"
    )


class Codec(Protocol):
    """A file format Blueprint reads and/or writes."""

    name: ClassVar[str]
    title: ClassVar[str]
    lossless: ClassVar[bool]
    can_read: ClassVar[bool]
    can_write: ClassVar[bool]
    #: extensions of files this format reads
    read_extensions: ClassVar[tuple[str, ...]]
    #: the form each extension it writes takes ("yaml", "json", "jsonl"); the first is the
    #: default for an output whose extension says nothing
    write_forms: ClassVar[dict[str, str]]
    #: extensions it will not write, with the reason
    refused_forms: ClassVar[dict[str, str]]

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extensions it writes."""
        ...

    def open(self, path: Path) -> SetSource:
        """Open a file for reading; raises ParseError when nothing of it can be read."""
        ...

    def write(
        self,
        header: dict[str, Any],
        rows: Iterable[Any],
        path: Path,
        options: WriteOptions,
    ) -> ExportResult:
        """Write a set; the output appears whole or not at all."""
        ...

    def sniff(self, path: Path, head: bytes) -> Fit:
        """Whether a file (its path, and its first bytes) fits this format, and if not, why."""
        ...
