"""The validator: one streaming pass over a set, every finding collected as an issue.

Memory stays bounded by the per-set index (row ids and case families); rows are checked as
they are read and then let go. Validation never stops at the first problem, and a row that
cannot be decoded is reported and skipped while the rest of the file is still checked.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from blueprint import checks, jsonpath
from blueprint.errors import ParseError, UsageError
from blueprint.formats import SetSource, SourceRow, StrPath, UnreadableRow, resolve_codec
from blueprint.issues import CODES, Issue, ValidationReport, make_issue

#: the selector that means every code
ALL_CODES: Final = "ALL"


def resolve_codes(entries: Iterable[str], *, where: str = "") -> frozenset[str]:
    """The codes a list of selectors means: a code, a prefix of whole words (``case`` means
    ``case-id-mismatch`` and ``case-family-mismatch``) or ``ALL``. An entry that matches no
    code is an error, so that a typo never silently selects nothing."""
    codes: set[str] = set()
    for entry in entries:
        entry = entry.strip()
        if not entry:
            continue
        matched = (
            set(CODES)
            if entry == ALL_CODES
            else {code for code in CODES if code == entry or code.startswith(entry + "-")}
        )
        if not matched:
            raise UsageError(
                f"{where}unknown issue code or prefix {entry!r}; known codes: {', '.join(CODES)}"
            )
        codes |= matched
    return frozenset(codes)


@dataclass(frozen=True)
class ValidationOptions:
    """Which codes to report: only ``select`` (all when empty), minus ``ignore``; rows of a
    case family named in ``family_ignore`` also skip that family's codes."""

    select: frozenset[str] = frozenset()
    ignore: frozenset[str] = frozenset()
    family_ignore: Mapping[str, frozenset[str]] = field(default_factory=dict)
    #: keep every row's id in the report (``row_ids``), for reports with a line per row
    #: (JUnit); without them memory stays flat however many rows a set has
    row_ids: bool = True

    def __post_init__(self) -> None:
        named = self.select | self.ignore
        for codes in self.family_ignore.values():
            named |= codes
        unknown = sorted(named - set(CODES))
        if unknown:
            raise UsageError(
                f"unknown issue code(s): {', '.join(unknown)}; known codes: {', '.join(CODES)}"
            )

    def wants(self, code: str, family: str | None = None) -> bool:
        if family is not None and code in self.family_ignore.get(family, ()):
            return False
        return (not self.select or code in self.select) and code not in self.ignore


def validate_file(
    path: StrPath,
    *,
    format: str | None = None,
    options: ValidationOptions | None = None,
    judge_reports: Sequence[Path] = (),
    jobs: int = 1,
) -> ValidationReport:
    """Validate a set file of any readable format; ``judge_reports`` are judge-validation
    reports the project configuration names, beside those the set points at.

    With ``jobs`` above 1 (0: one per core), a large JSON Lines file or JSON document is
    validated by that many worker processes; the report is the same as with one.
    """
    path = Path(path)
    options = options or ValidationOptions()
    try:
        codec = resolve_codec(path, format, reading=True)
    except ParseError as error:  # not a file that can be read at all (a pipe, a device)
        return unreadable_report(path, format or "a golden set", error.reason, options)
    try:
        source = codec.open(path)
    except ParseError as error:
        reason = error.reason
        if error.path != path:  # the set file beside the data, not the data itself
            reason = f"{error.path.name}: {reason}"
        return unreadable_report(path, codec.name, reason, options, error.line, error.column)
    report = ValidationReport(source=str(path), format=codec.name)
    _validate_source(source, options, report, jobs)
    # after the pass, not in it: reads the rows again only when a report is referenced
    if judge_reports or _names_judge_reports(source.header):
        from blueprint.judging import settle_judge_conditions

        settle_judge_conditions(report, path, codec, source.header, options.wants, judge_reports)
    return report


def _names_judge_reports(header: Mapping[str, Any] | None) -> bool:
    """Whether the set-level fields point at a judge-validation report (the set's own field or
    a case family's): only then is the judging module, with its statistics, imported."""
    if not header:
        return False
    families = header.get("caseFamilies")
    return bool(header.get("judgeValidation")) or (
        isinstance(families, list)
        and any(isinstance(family, dict) and family.get("judgeValidation") for family in families)
    )


def unreadable_report(
    path: Path,
    format_name: str,
    reason: str,
    options: ValidationOptions,
    line: int | None = None,
    column: int | None = None,
) -> ValidationReport:
    """The report on a file that cannot be read: one ``parse`` finding saying why."""
    report = ValidationReport(source=str(path), format=format_name, unreadable=True)
    if options.wants("parse"):
        report.issues.append(_parse_issue(format_name, reason, line, column))
    return report


def validate_document(
    document: dict[str, Any], *, options: ValidationOptions | None = None, source: str = "<memory>"
) -> ValidationReport:
    """Validate a canonical set held in memory as JSON data (a dict with ``rows``)."""
    options = options or ValidationOptions()
    rows = document.get("rows", [])
    source_set = SetSource(
        path=Path(source),
        format="json",
        header={key: value for key, value in document.items() if key != "rows"},
        rows=iter(
            SourceRow(index, None, row)
            for index, row in enumerate(rows if isinstance(rows, list) else [])
        ),
    )
    report = ValidationReport(source=source, format="json")
    _validate_source(source_set, options, report)
    return report


def _parse_issue(
    format_name: str,
    reason: str,
    line: int | None,
    column: int | None,
    index: int | None = None,
) -> Issue:
    if column is not None:
        reason = f"{reason} (column {column})"
    path = "$" if index is None else jsonpath.row_path(index)
    return make_issue(
        "parse", path=path, row_index=index, line=line, format=format_name, reason=reason
    )


class StreamValidator:
    """Validation one row at a time, for code that reads rows for another purpose (convert).

    ``check_header`` and ``follow`` first, then ``report_reading`` and ``check_row`` for each
    row as it passes, and ``report_reading`` once more at the end; the report fills as it
    goes. Memory stays bounded as in :func:`validate_file`.
    """

    def __init__(self, report: ValidationReport, options: ValidationOptions) -> None:
        self.report = report
        self.options = options
        self.state = checks.SetState()
        self.rules = [
            rule for rule in checks.ROW_RULES if any(options.wants(c) for c in rule.codes)
        ]
        self.check_schema = options.wants("schema")
        self.reading_notes: list[Issue] = []
        self.reading_notes_seen = 0
        self.reported_once: frozenset[tuple[str, ...]] = frozenset()

    def emit(self, found: Iterable[Issue]) -> None:
        self.report.issues.extend(issue for issue in found if self.options.wants(issue.code))

    def follow(self, source: SetSource) -> None:
        """Report what the source's reader finds while its rows are read (see
        ``report_reading``), and leave out of each row what it reports once for the file."""
        self.reading_notes = source.reading_notes
        self.reported_once = source.reported_once

    def report_reading(self) -> None:
        """Add what the reader found since last asked: call it before each row and at the end."""
        if len(self.reading_notes) == self.reading_notes_seen:
            return
        fresh = self.reading_notes[self.reading_notes_seen :]
        self.reading_notes_seen = len(self.reading_notes)
        self.emit(fresh)

    def check_header(self, header: dict[str, Any] | None, notes: Iterable[Issue] = ()) -> None:
        self.emit(notes)
        if header is not None:
            self.emit(checks.header_issues(header))
        self.state = checks.SetState.from_header(header)

    def check_row(self, item: SourceRow | UnreadableRow, format_name: str) -> list[Issue]:
        """Check one row; returns its findings (already added to the report)."""
        report, state = self.report, self.state
        report.rows += 1
        state.lines.append(item.line or 0)
        if isinstance(item, UnreadableRow):
            report.unreadable = True
            if self.options.row_ids:
                report.row_ids.append(None)
            issue = _parse_issue(format_name, item.reason, item.line, item.column, item.index)
            self.emit([issue])
            return [issue]
        row = checks.RowView(item.index, item.data, item.line)
        self.count_row(row.id, row.is_starter)
        found: list[Issue] = []
        if self.check_schema:
            schema = list(checks.check_schema(row, item.data))
            if schema and self.reported_once:
                once = {jsonpath.row_path(item.index, *place) for place in self.reported_once}
                schema = [issue for issue in schema if issue.path not in once]
            found.extend(schema)
        for rule in self.rules:
            found.extend(rule.check(row, state))
        return self.emit_row(found, row.case.get("caseFamily"))

    def count_row(self, row_id: str | None, starter: bool) -> None:
        """Count a readable row in the report (its line is already in the index)."""
        if self.options.row_ids:
            self.report.row_ids.append(row_id)
        if starter:
            self.report.starter_rows += 1

    def emit_row(self, found: list[Issue], family: Any) -> list[Issue]:
        """Add one row's findings to the report, less the codes its case family ignores;
        returns what was added."""
        if found and self.options.family_ignore and isinstance(family, str):
            found = [issue for issue in found if self.options.wants(issue.code, family)]
        if found:
            self.emit(found)
        return found


def _validate_source(
    source: SetSource, options: ValidationOptions, report: ValidationReport, jobs: int = 1
) -> None:
    validator = StreamValidator(report, options)
    validator.check_header(source.header, source.notes)
    validator.follow(source)
    if jobs != 1 and source.format in ("jsonl", "json"):  # the formats the pool reads
        from blueprint import parallel

        jobs = jobs or parallel.default_jobs()
        if parallel.worth_a_pool(source, jobs):
            with _few_collections():
                parallel.validate_with_pool(validator, source, jobs)
            validator.report_reading()
            return
    with _few_collections():
        for item in source.rows:
            validator.report_reading()
            start = len(report.issues)
            found = validator.check_row(item, source.format)
            if found and isinstance(item, SourceRow) and item.line is None:
                line = source.line_of(item.index)
                if line is not None:
                    report.issues[start:] = [
                        replace(issue, line=line) for issue in report.issues[start:]
                    ]
    validator.report_reading()


#: how many container allocations the cyclic garbage collector waits for while a set is read
_BULK_THRESHOLD: Final = 200_000


@contextmanager
def _few_collections() -> Iterator[None]:
    """Rows are freed by reference counting; what the cyclic collector would find while a
    large set is read is its own scans of the same long-lived objects (the per-set index, the
    modules), so those are frozen and young collections made rare."""
    thresholds = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0  # a caller's own frozen objects stay as they were
    if freezing:
        gc.freeze()
    gc.set_threshold(max(thresholds[0], _BULK_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()
