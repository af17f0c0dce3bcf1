"""Blueprint CSV: one row per record, the case profile flattened to ``case.<field>`` columns.

Columns: ``id``, ``input``, ``expected``, then ``case.<field>`` in schema order, then
``metadata.<key>`` for the other metadata keys; an edit in place keeps the file's own order.
Every cell is read and written by the rules in :mod:`blueprint.formats.cells`, which keep
``""``, ``null``, ``"1"`` and ``1`` apart. The set-level fields live in the set file beside
the CSV. Files are UTF-8 (a BOM is accepted on reading), RFC 4180 quoting, CRLF line ends.

Reading forgives what spreadsheets do and says so once: a record of empty cells is skipped
(``empty-row``), a required column missing from the header or a column that is not Blueprint's
is one finding at the header rather than one in every row, and a file saved with ';' or tabs
between cells is refused with a message that names the separator.
"""

from __future__ import annotations

import csv
import difflib
import itertools
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, Final, Literal

import orjson

from blueprint.core import jsonpath
from blueprint.core.errors import BlueprintError, LossyExportRefused, ParseError
from blueprint.core.issues import Issue, make_issue
from blueprint.core.model import CaseProfile, case_profile_fields, omitted_field
from blueprint.formats import setfile
from blueprint.formats._io import BOM, require_file, undecodable
from blueprint.formats.base import ExportResult, SetSource, SourceRow, UnreadableRow, WriteOptions
from blueprint.formats.cells import (
    ABSENT,
    MAY_BE_JSON,
    CellError,
    decode_cell,
    decode_list_cell,
    encode_cell,
    encode_list_cell,
    formula_like,
)
from blueprint.formats.sniffing import (
    OTHER_SEPARATORS,
    Fit,
    csv_header,
    header_separator,
    promptfoo_columns,
)
from blueprint.formats.spreadsheet import FormulaGuard
from blueprint.io import jsonvalues, limits
from blueprint.io.atomic import AtomicOutputs

ROW_KEYS: Final = ("id", "input", "expected")
CASE_FIELDS: Final = tuple(case_profile_fields())
REQUIRED_CASE_FIELDS: Final = tuple(
    field.alias or name for name, field in CaseProfile.model_fields.items() if field.is_required()
)
#: row keys every row needs a column for (``metadata`` comes from the case.* columns)
REQUIRED_ROW_KEYS: Final = ("id", "input")
#: the record of a row that has no key at all (``{}``, never valid): a record of empty cells
#: is a spreadsheet's empty row, skipped on reading
EMPTY_ROW: Final = "{}"
#: how close a misspelt column name must be to a real one to be suggested (difflib's ratio)
SUGGESTION_CUTOFF: Final = 0.75
#: case-profile fields written as pipe-separated lists
LIST_FIELDS: Final = frozenset({"unacceptableBehavior", "evaluationCriteria", "linkedConcerns"})


class UnrepresentableRowError(BlueprintError, ValueError):
    """A row that a CSV file cannot hold (it is not a JSON object)."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class Column:
    """Where one CSV column's values go in a row."""

    name: str
    kind: Literal["row", "case", "metadata"]
    key: str
    is_list: bool = False

    @property
    def is_whole(self) -> bool:
        """Whether it holds a whole object ("metadata", "metadata.case") whose parts have
        columns of their own."""
        return self.name in ("metadata", "metadata.case")

    @classmethod
    def parse(cls, name: str) -> Column:
        if name.startswith("case."):
            key = name[len("case.") :]
            return cls(name, "case", key, key in LIST_FIELDS)
        if name.startswith("metadata."):
            return cls(name, "metadata", name[len("metadata.") :])
        return cls(name, "row", name)


class CsvCodec:
    name: ClassVar[str] = "csv"
    title: ClassVar[str] = "Blueprint CSV (+ set file)"
    extensions: ClassVar[tuple[str, ...]] = (".csv",)
    read_extensions: ClassVar[tuple[str, ...]] = (".csv",)
    write_forms: ClassVar[dict[str, str]] = {".csv": "csv"}
    refused_forms: ClassVar[dict[str, str]] = {}
    lossless: ClassVar[bool] = True
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    def open(self, path: Path) -> SetSource:
        require_file(path)
        header, notes = setfile.read_set_file(path)
        handle = path.open("rb")
        try:
            feed = _LineFeed(handle)
            reader = csv.reader(feed, strict=True)
            columns = _read_header(path, reader, feed)
        except BaseException:
            handle.close()
            raise
        findings = _ColumnFindings.of(columns)
        reading_notes: list[Issue] = []
        return SetSource(
            path=path,
            format=self.name,
            header=header,
            rows=_read_rows(handle, feed, reader, columns, findings, reading_notes),
            notes=notes,
            header_origin=setfile.set_file_for(path).name if header is not None else None,
            reading_notes=reading_notes,
            reported_once=findings.places,
            columns=tuple(column.name for column in columns),
        )

    def write(
        self,
        header: dict[str, Any],
        rows: Iterable[Any],
        path: Path,
        options: WriteOptions,
    ) -> ExportResult:
        set_path = setfile.set_file_for(path)
        targets = [path, set_path] if options.set_file else [path]
        with (
            AtomicOutputs(targets, force=options.force, follow_links=options.in_place) as outputs,
            tempfile.TemporaryFile() as spool,
        ):
            # The header needs every column before the first record; spooling each row's
            # cells, encoded once, to disk finds the columns in one pass while keeping memory
            # flat (and keeps the text numbers were read with, which a JSON spool would lose).
            layout = _Layout()
            count = 0
            for row in rows:
                try:
                    if not isinstance(row, dict):
                        raise ValueError(f"it is {jsonvalues.json_type(row)}, not an object")
                    layout.add(row)
                except ValueError as error:
                    raise UnrepresentableRowError(
                        f"cannot write {path}: row {count} cannot be held in CSV: {error}"
                    ) from None
                spool.write(jsonvalues.dumps(_row_cells(row)) + b"\n")
                count += 1
            names = [column.name for column in _in_order(options.column_order, layout.columns())]
            guard = FormulaGuard(options.spreadsheet_safe)
            added = [name for name in names if name not in options.column_order]
            if options.in_place and options.column_order and added:
                columns = ", ".join(added)
                guard.findings.append(make_issue("csv-column-added", path="$", columns=columns))
            written_names = guard.header(names, layout.rows_with_key)
            if options.strict and guard.lossy():
                raise LossyExportRefused(self.name, guard.lossy())
            spool.seek(0)
            handle = outputs.open(path, "w")
            writer = csv.writer(handle, lineterminator="\r\n")
            writer.writerow(written_names)
            blanks = itertools.repeat("")
            for line in spool:
                cells: dict[str, str] = orjson.loads(line)  # our own spool: text only
                # every column's cell, an absent field's empty, looked up in C
                writer.writerow(map(cells.get, names, blanks) if cells else [EMPTY_ROW])
            if options.set_file:
                setfile.write_set_file(outputs.open(set_path, "wb"), header)
        return ExportResult(
            format=self.name,
            files=targets,
            rows=count,
            lossy=guard.lossy(),
            findings=guard.findings,
        )

    def sniff(self, path: Path, head: bytes) -> Fit:
        if not head.strip():
            return Fit.yes()
        # a Blueprint CSV saved with another separator is still claimed: the reader refuses
        # it with a message that names the separator, instead of a cascade of findings
        if _blueprint_columns(csv_header(head)) or header_separator(head, _blueprint_columns):
            return Fit.yes()
        return Fit.no("a Blueprint CSV has an id column and case.<field> columns")


def _blueprint_columns(columns: list[str]) -> bool:
    """Whether a header's columns are evidently Blueprint's: an id column or case profile
    columns, and none of the columns only promptfoo's tests files have (``__expected``)."""
    return (
        "id" in columns or any(column.startswith(("case.", "metadata.")) for column in columns)
    ) and not promptfoo_columns(columns)


# --- reading ---------------------------------------------------------------------------------


class _LineFeed:
    """Decodes a binary file line by line for the csv module, counting physical lines.

    Bytes that are not UTF-8 are replaced so the csv reader can go on, and the first bad line
    is remembered so the record that holds it is reported unreadable.
    """

    def __init__(self, handle: IO[bytes]) -> None:
        self._lines = iter(handle)
        self.number = 0
        self.bad: tuple[int, int, str] | None = None
        self.first = b""
        #: bytes of the lines read since the reader last reset it (one record's)
        self.record_bytes = 0

    def __iter__(self) -> _LineFeed:
        return self

    def __next__(self) -> str:
        raw = next(self._lines)
        self.number += 1
        self.record_bytes += len(raw)
        if self.number == 1:
            raw = raw.removeprefix(BOM)
            self.first = raw
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            if self.bad is None:
                self.bad = (self.number, error.start + 1, undecodable(raw, error))
            return raw.decode("utf-8", errors="replace")


def _read_header(path: Path, reader: Any, feed: _LineFeed) -> list[Column]:
    csv.field_size_limit(_field_size_limit())
    try:
        names: list[str] = next(reader)
    except StopIteration:
        raise ParseError(path, "empty file: a CSV set starts with a header row", line=1) from None
    except csv.Error as error:
        _refuse_other_separator(path, feed.first)
        if _cell_too_large(error):
            raise ParseError(
                path, f"header row: {_cell_limit_problem(limits.current().max_cell_bytes)}", line=1
            ) from None
        raise ParseError(path, f"header row: {_csv_problem(error)}", line=feed.number) from None
    if not _blueprint_columns(names):
        _refuse_other_separator(path, feed.first)
    if feed.bad is not None:
        line, column, reason = feed.bad
        raise ParseError(path, reason, line=line, column=column)
    seen: set[str] = set()
    for position, name in enumerate(names, start=1):
        if name == "":
            raise ParseError(path, f"header column {position} has no name", line=feed.number)
        if name in seen:
            raise ParseError(path, f"header names the column {name!r} twice", line=feed.number)
        seen.add(name)
    return [Column.parse(name) for name in names]


def _field_size_limit() -> int:
    """The csv module's bound on one cell, in characters: max-cell-bytes (a character is at
    least a byte, so no cell within the limit is cut; the bytes are checked after)."""
    limit = limits.current().max_cell_bytes
    return min(limit or sys.maxsize, 2**31 - 1)


def _refuse_other_separator(path: Path, first_line: bytes) -> None:
    """Refuse, naming the separator, a Blueprint CSV saved with ';' or tabs between cells."""
    separator = header_separator(first_line, _blueprint_columns)
    if separator is not None:
        raise ParseError(
            path,
            f"this file uses {OTHER_SEPARATORS[separator]} as separator; Blueprint's CSV uses"
            " ',' (a comma): save it as comma-separated CSV (in Excel: CSV UTF-8)",
            line=1,
        )


@dataclass(frozen=True)
class _ColumnFindings:
    """What the header alone shows about every row: required columns it lacks, and columns
    that are not Blueprint's. Each is one finding for the file (at the header), not one per
    row; ``places`` are the row locations those findings stand for."""

    missing: list[Issue] = field(default_factory=list)
    #: column position -> its finding, reported once a row has a value in it
    unknown: dict[int, Issue] = field(default_factory=dict)
    places: frozenset[tuple[str, ...]] = frozenset()

    @classmethod
    def of(cls, columns: list[Column]) -> _ColumnFindings:
        names = {column.name for column in columns}
        whole_case = "metadata" in names or "metadata.case" in names
        any_case = whole_case or any(column.kind == "case" for column in columns)
        places: set[tuple[str, ...]] = set()
        missing = []
        wanted: list[tuple[str, tuple[str, ...]]] = [(key, (key,)) for key in REQUIRED_ROW_KEYS]
        if not whole_case:
            wanted += [(f"case.{key}", ("metadata", "case", key)) for key in REQUIRED_CASE_FIELDS]
        for name, place in wanted:
            if name not in names:
                places.add(place)
                missing.append(
                    _file_issue(
                        place,
                        f"the header has no column {name!r}, which every row needs"
                        f" ({'.'.join(place)} is required)",
                    )
                )
        if not any_case:
            # without case columns no row has a case profile, nor (for that) metadata
            places |= {("metadata",), ("metadata", "case")}
        unknown = {}
        for position, column in enumerate(columns):
            reason = _unknown_column(column)
            if reason is not None:
                parent: tuple[str, ...] = ("metadata", "case") if column.kind == "case" else ()
                location = (*parent, column.key)
                places.add(location)
                unknown[position] = _file_issue(location, reason)
        return cls(missing, unknown, frozenset(places))


def _file_issue(place: tuple[str, ...], reason: str) -> Issue:
    """A schema finding about every row, positioned at the header."""
    return make_issue("schema", path=jsonpath.join("$.rows[*]", place), line=1, reason=reason)


def _closest(name: str, suggestions: dict[str, str]) -> str | None:
    """The suggestion whose key is close to ``name`` (letter case aside), if one is."""
    by_folded = {key.casefold(): suggestion for key, suggestion in suggestions.items()}
    close = difflib.get_close_matches(name.casefold(), by_folded, n=1, cutoff=SUGGESTION_CUTOFF)
    return by_folded[close[0]] if close else None


#: what a column not Blueprint's may have been meant as: the row keys, and the case fields
#: written without their prefix ("oracleType" for case.oracleType)
_ROW_COLUMN_SUGGESTIONS: Final = {
    **{key: key for key in (*ROW_KEYS, "metadata")},
    **{name: f"case.{name}" for name in CASE_FIELDS},
}
_CASE_COLUMN_SUGGESTIONS: Final = {name: f"case.{name}" for name in CASE_FIELDS}


def _unknown_column(column: Column) -> str | None:
    """Why a column is not Blueprint's, with the column meant (when one is close) or the
    metadata.<key> column that keeps its values; None for a known column."""
    if column.kind == "metadata" or omitted_field(column.key) is not None:
        return None  # metadata is free-form; an omitted field gets its own finding per row
    if column.kind == "case":
        if column.key in CASE_FIELDS:
            return None
        meant = _closest(column.key, _CASE_COLUMN_SUGGESTIONS)
        what = "names no case-profile field"
    else:
        if column.key in _ROW_COLUMN_SUGGESTIONS and column.key not in CASE_FIELDS:
            return None
        prefix, dot, rest = column.key.partition(".")
        if dot and prefix.casefold() in ("case", "metadata"):  # "Case.caseId"
            meant = f"{prefix.casefold()}.{rest}"
        else:
            meant = _closest(column.key, _ROW_COLUMN_SUGGESTIONS)
        what = "is not a Blueprint column"
    hint = (
        f"did you mean {meant!r}?"
        if meant
        else f"name it 'metadata.{column.key}' to keep its values as free-form metadata"
    )
    return f"the column {column.name!r} {what}: {hint}"


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _read_rows(
    handle: IO[bytes],
    feed: _LineFeed,
    reader: Any,
    columns: list[Column],
    findings: _ColumnFindings,
    notes: list[Issue],
) -> Iterator[SourceRow | UnreadableRow]:
    """The rows; what the reader finds on the way goes into ``notes`` before the row that
    reveals it (the header's findings before the first row, an empty run before the row
    after it, a column not Blueprint's before the first row with a value there).

    Nothing is kept from one row to the next but counters, so memory stays flat however
    many rows the file has."""
    bounds = limits.current()
    csv.field_size_limit(_field_size_limit())
    max_digits, max_rows, max_cell = (
        bounds.max_number_digits,
        bounds.max_rows,
        bounds.max_cell_bytes,
    )
    with handle:
        index = 0
        start = feed.number + 1
        empty: list[int] = []  # the first and last line of the empty rows just read
        unreported = dict(findings.unknown)
        notes_for_header = list(findings.missing)
        width = len(columns)
        whole = any(column.is_whole for column in columns)

        def note_empty_rows() -> None:
            if empty:
                notes.append(make_issue("empty-row", path="$", line=empty[0], lines=_lines(*empty)))
                empty.clear()

        while True:
            feed.bad = None
            feed.record_bytes = 0
            try:
                record: list[str] = next(reader)
            except StopIteration:
                note_empty_rows()
                return
            except csv.Error as error:
                note_empty_rows()
                if _cell_too_large(error):
                    # the reader cannot find where the oversized cell ends: stop here
                    yield UnreadableRow(index, start, None, _cell_limit_problem(max_cell))
                    return
                yield UnreadableRow(index, start, None, _csv_problem(error))
                index += 1
                start = feed.number + 1
                continue
            if record and not any(record) and feed.bad is None:
                # every cell empty: nothing to read, whatever the number of cells
                if empty:
                    empty[1] = feed.number
                else:
                    empty.extend((start, feed.number))
                start = feed.number + 1
                continue
            if not record:
                start = feed.number + 1
                continue
            if empty:
                note_empty_rows()
            if notes_for_header:
                notes.extend(notes_for_header)
                notes_for_header.clear()
            if max_rows and index >= max_rows:
                yield UnreadableRow(
                    index,
                    start,
                    None,
                    f"the set has more than max-rows ({max_rows}) rows; the rest of the file is"
                    f" not read; {limits.hint('max_rows')}",
                )
                return
            if record == [EMPTY_ROW] and width > 1:
                yield SourceRow(index, start, {})
            elif feed.bad is not None:
                line, column, reason = feed.bad
                yield UnreadableRow(index, line, column, reason)
            elif len(record) != width:
                yield UnreadableRow(
                    index,
                    start,
                    None,
                    f"{len(record)} cells in a row, but the header has {width} columns",
                )
            elif max_cell and feed.record_bytes > max_cell and _oversized_cell(record, max_cell):
                yield UnreadableRow(index, start, None, _cell_limit_problem(max_cell))
            else:
                if unreported:
                    for position in [p for p in unreported if record[p] != ""]:
                        notes.append(unreported.pop(position))
                try:
                    data = _decode_record(record, columns, max_digits, whole_columns=whole)
                    yield SourceRow(index, start, data)
                except ValueError as error:
                    yield UnreadableRow(index, start, None, str(error))
            index += 1
            start = feed.number + 1


def _cell_too_large(error: csv.Error) -> bool:
    return "field larger than field limit" in str(error)


def _oversized_cell(record: list[str], max_cell: int) -> bool:
    """Whether a cell of a record (whose bytes pass the limit) passes it alone."""
    return any(len(cell) * 4 > max_cell and len(cell.encode()) > max_cell for cell in record)


def _cell_limit_problem(max_cell: int) -> str:
    return (
        f"a cell is longer than max-cell-bytes allows ({max_cell} bytes);"
        f" {limits.hint('max_cell_bytes')}"
    )


def _csv_problem(error: csv.Error) -> str:
    if "new-line character seen in unquoted field" in str(error):
        return (
            "a line ends with a bare carriage return (old Mac line ends);"
            " save the file with LF or CRLF line ends"
        )
    return f"malformed CSV: {error}"


def _decode_record(
    record: list[str], columns: list[Column], max_digits: int, *, whole_columns: bool
) -> dict[str, Any]:
    """The row a record holds; raises ValueError (a CellError naming the column) for one
    that cannot be read. ``whole_columns``: whether a column holds a whole object."""
    if whole_columns:
        return _decode_record_with_whole_columns(record, columns, max_digits)
    row: dict[str, Any] = {}
    metadata: dict[str, Any] | None = None
    case: dict[str, Any] | None = None
    column = columns[0]
    try:
        for column, cell in zip(columns, record, strict=True):
            if not cell:
                continue  # an absent field
            if cell[0] not in MAY_BE_JSON and not column.is_list:
                value: Any = cell  # most cells are plain text: no call for them
            elif column.is_list:
                value = decode_list_cell(cell, max_digits)
            else:
                value = decode_cell(cell, max_digits)
            kind = column.kind
            if kind == "row":
                row[column.key] = value
                continue
            if metadata is None:
                metadata = row["metadata"] = {}
            if kind == "metadata":
                metadata[column.key] = value
                continue
            if case is None:
                case = metadata["case"] = {}
            case[column.key] = value
    except CellError as error:
        raise CellError(f"column {column.name!r}: {error}") from None
    return row


def _decode_record_with_whole_columns(
    record: list[str], columns: list[Column], max_digits: int
) -> dict[str, Any]:
    row: dict[str, Any] = {}
    # A whole-object column ("metadata", "metadata.case") and the columns of its parts
    # ("metadata.x", "case.x") must not both have a value: one would overwrite the other.
    whole: set[str] = set()
    parts: set[str] = set()

    def claim(kind: str, name: str, is_whole: bool) -> None:
        if kind in (parts if is_whole else whole):
            raise ValueError(f"column {name!r} conflicts with other {kind} columns in this row")
        (whole if is_whole else parts).add(kind)

    for column, cell in zip(columns, record, strict=True):
        try:
            value = (
                decode_list_cell(cell, max_digits)
                if column.is_list
                else decode_cell(cell, max_digits)
            )
        except CellError as error:
            raise CellError(f"column {column.name!r}: {error}") from None
        if value is ABSENT:
            continue
        if column.kind == "row":
            if column.key == "metadata":
                claim("metadata", column.name, is_whole=True)
            row[column.key] = value
            continue
        claim("metadata", column.name, is_whole=False)
        metadata = row.setdefault("metadata", {})
        if column.kind == "metadata":
            if column.key == "case":
                claim("case", column.name, is_whole=True)
            metadata[column.key] = value
            continue
        claim("case", column.name, is_whole=False)
        metadata.setdefault("case", {})[column.key] = value
    return row


# --- writing ---------------------------------------------------------------------------------


def _is_filled_object(value: Any) -> bool:
    return isinstance(value, dict) and bool(value)


class _Layout:
    """Collects the columns a set of rows needs, in canonical order."""

    def __init__(self) -> None:
        self.case: dict[str, None] = dict.fromkeys(REQUIRED_CASE_FIELDS)
        self.metadata: dict[str, None] = {}
        self.extra: dict[str, None] = {}
        #: for a row key that is a column name of its own and that a spreadsheet would run as
        #: a formula, the ids of the rows that have it (formula headers are rare: only these)
        self.rows_with_key: dict[str, list[str]] = {}

    def add(self, row: dict[str, Any]) -> None:
        """Note the columns a row needs; raises ValueError for a row CSV cannot hold."""
        for key in row:
            if key in ROW_KEYS or key == "metadata":
                continue
            if key == "" or key.startswith(("case.", "metadata.")):
                raise ValueError(f"its key {key!r} would read back as a different column")
            self.extra[key] = None
            if formula_like(key):
                self.rows_with_key.setdefault(key, []).append(str(row.get("id")))
        if "metadata" not in row:
            return
        metadata = row["metadata"]
        if not _is_filled_object(metadata):
            # not an object, or an empty one: kept whole, as JSON, in a "metadata" column
            self.extra["metadata"] = None
            return
        for key, value in metadata.items():
            if key == "case" and _is_filled_object(value):
                self.case.update(dict.fromkeys(value))
            else:
                self.metadata[key] = None

    def columns(self) -> list[Column]:
        known = [name for name in CASE_FIELDS if name in self.case]
        unknown = [name for name in self.case if name not in CASE_FIELDS]
        names = [
            *ROW_KEYS,
            *(f"case.{name}" for name in known + unknown),
            *(f"metadata.{key}" for key in self.metadata),
            *self.extra,
        ]
        return [Column.parse(name) for name in names]


def _in_order(kept: tuple[str, ...], needed: list[Column]) -> list[Column]:
    """The columns ``kept`` in their order, then every needed column they lack placed right
    after the nearest column before it in canonical order (first when there is none).

    A kept column no row needs any more stays, empty: an empty cell reads as absent, so the
    file reads back the same, and a spreadsheet keeps its shape."""
    if not kept:
        return needed
    names = list(kept)
    present = set(names)
    canonical = [column.name for column in needed]
    for position, name in enumerate(canonical):
        if name in present:
            continue
        anchor = next((c for c in reversed(canonical[:position]) if c in present), None)
        names.insert(names.index(anchor) + 1 if anchor is not None else 0, name)
        present.add(name)
    return [Column.parse(name) for name in names]


def _row_cells(row: dict[str, Any]) -> dict[str, str]:
    """The cells a row fills, by column name (a row without any key fills none)."""
    cells: dict[str, str] = {}
    raw_metadata = row.get("metadata")
    metadata: dict[str, Any] = raw_metadata if isinstance(raw_metadata, dict) else {}
    raw_case = metadata.get("case")
    case: dict[str, Any] = raw_case if isinstance(raw_case, dict) else {}
    for key, value in row.items():
        # "metadata" holds the metadata only when metadata.* columns cannot
        if key != "metadata" or not metadata:
            cells[key] = encode_cell(value)
    for key, value in metadata.items():
        # likewise "metadata.case" holds the case profile only when case.* columns cannot
        if key != "case" or not case:
            cells[f"metadata.{key}"] = encode_cell(value)
    for key, value in case.items():
        cells[f"case.{key}"] = encode_list_cell(value) if key in LIST_FIELDS else encode_cell(value)
    return cells
