"""One streaming pass of the rules over a set's rows, for any code that reads rows.

:class:`StreamValidator` is what ``validate_file``, the process pool's parent, ``convert`` and
``summary`` share: the options that select codes, the set-level index, and the order each row's
findings are added to the report in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from blueprint.core import jsonpath
from blueprint.core.errors import UsageError
from blueprint.core.issues import CODES, Issue, ValidationReport, make_issue
from blueprint.formats import SetSource, SourceRow, UnreadableRow
from blueprint.validation import checks

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


def parse_issue(
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
        self._checks = tuple(
            checks.check_inputs_across_splits
            if rule.check is checks.check_duplicate_input and not options.wants("duplicate-input")
            else rule.check
            for rule in self.rules
        )
        self.check_schema = options.wants("schema")
        #: the findings that name an earlier row by its id; without them no id is kept
        self.names_earlier_rows = any(options.wants(code) for code in checks.NAMING_EARLIER_ROWS)
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
        if isinstance(item, UnreadableRow):
            self.place_row(item.line or 0, None, item.file)
            report.unreadable = True
            if self.options.row_ids:
                report.row_ids.append(None)
            issue = parse_issue(format_name, item.reason, item.line, item.column, item.index)
            if item.file is not None:
                issue = replace(issue, file=str(item.file))
            self.emit([issue])
            return [issue]
        row = checks.RowView.of(item.index, item.data, item.line)
        self.place_row(item.line or 0, row.id, item.file)
        self.count_row(row.id, row.is_starter)
        found: list[Issue] = []
        if self.check_schema and not row.checked:
            schema = list(checks.check_schema(row, item.data))
            if schema and self.reported_once:
                once = {jsonpath.row_path(item.index, *place) for place in self.reported_once}
                schema = [issue for issue in schema if issue.path not in once]
            found.extend(schema)
        for check in self._checks:
            found += check(row, state)
        if item.file is not None and found:  # its line is in that file, not the set's
            found = [replace(issue, file=str(item.file)) for issue in found]
        return self.emit_row(found, row.case.get("caseFamily"))

    def place_row(self, line: int, row_id: str | None, file: Path | None = None) -> None:
        """Remember the next row's line (and file, when not the set's), and its id where a
        later finding may name it."""
        state = self.state
        if file is not None or state.files.firsts:
            state.files.note(len(state.lines), None if file is None else str(file))
        state.lines.append(line)
        if self.names_earlier_rows:
            self.state.ids.append(row_id)

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
