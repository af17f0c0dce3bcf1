"""The text report of findings, for people: one finding a line, identifiers never broken.

Each finding starts with ``file:line``, its severity and code, and the row id: identifiers are
printed whole, never folded. On a terminal the message is wrapped at the terminal's width
below them (words only, never inside an id, a path or a code); elsewhere (a pipe, a file, a CI
log) every finding stays on one line, so ``grep`` and editors that jump to ``file:line`` work.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterable
from typing import Final

from rich.console import Console
from rich.table import Table

from blueprint.cli._common import escape
from blueprint.core.issues import CodeStatistic, Issue, ValidationReport

STYLE: Final = {"error": "red", "warning": "yellow", "info": "cyan"}
#: how many findings of one code the text report shows for one file; --report json lists them
#: all. A broken export repeats one defect on every row: the first few say what it is, and a
#: count says how often, without a million lines to scroll past.
PER_CODE_LIMIT: Final = 50
_INDENT: Final = "    "


def location(source: str, issue: Issue) -> str:
    """``file:line`` of a finding: the file its line is in, which for a test a promptfoo
    config includes is that tests file, not the config."""
    where = issue.file or source
    return f"{where}:{issue.line}" if issue.line is not None else where


def row_label(issue: Issue) -> str:
    if issue.row_id is not None:
        return issue.row_id
    return f"#{issue.row_index}" if issue.row_index is not None else "(set)"


def print_findings(console: Console, report: ValidationReport, limit: int = PER_CODE_LIMIT) -> None:
    """The findings of one file, up to ``limit`` of each code, then how many more of each."""
    seen: Counter[str] = Counter()
    for issue in report.issues:
        seen[issue.code] += 1
        if seen[issue.code] <= limit:
            print_finding(console, report.source, issue)
    hidden = {code: count - limit for code, count in seen.items() if count > limit}
    for code, count in hidden.items():
        console.print(f"[dim]... and {count} more {code} in {escape(report.source)}[/]")
    if hidden:
        console.print("[dim]--report json lists them all[/]")


def print_finding(console: Console, source: str, issue: Issue) -> None:
    style = STYLE[issue.severity]
    head = (
        f"{escape(location(source, issue))}: [{style}]{issue.severity} {issue.code}[/]"
        f" {escape(row_label(issue))}"
    )
    if not console.is_terminal:
        console.print(
            f"{head}: {escape(issue.message)} [dim]({escape(issue.path)})[/]", soft_wrap=True
        )
        return
    console.print(head, soft_wrap=True)
    width = max(console.width - len(_INDENT), 20)
    # break between words only: an id, a path or a code inside the message stays whole
    for line in textwrap.wrap(issue.message, width, break_long_words=False, break_on_hyphens=False):
        console.print(_INDENT + escape(line), soft_wrap=True)
    console.print(f"{_INDENT}[dim]at {escape(issue.path)}[/]", soft_wrap=True)


def verdict(report: ValidationReport, *, fail_on_warning: bool = False) -> str:
    """``valid``, ``failed`` (valid, but --fail-on warning and warnings found), ``invalid``
    or ``unreadable``, marked up."""
    if report.unreadable:
        return "[bold red]unreadable[/]"
    if not report.valid:
        return "[bold red]invalid[/]"
    if fail_on_warning and report.counts()["warning"]:
        return "[bold red]failed[/]"
    return "[bold green]valid[/]"


def summary_line(report: ValidationReport, *, fail_on_warning: bool = False) -> str:
    counts = report.counts()
    return (
        f"{verdict(report, fail_on_warning=fail_on_warning)}: {escape(report.source)}"
        f" ({report.format}, {report.rows} rows): {counts['error']} error(s),"
        f" {counts['warning']} warning(s), {counts['info']} info"
    )


def statistics_table(statistics: Iterable[CodeStatistic]) -> Table:
    """Findings grouped by code: how many, of which severity, in how many files."""
    table = Table(title="findings by code", title_justify="left")
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("code", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("files", justify="right", no_wrap=True)
    table.add_column("title")
    for stat in statistics:
        table.add_row(
            str(stat.count),
            f"[{STYLE[stat.severity]}]{stat.code}[/]",
            stat.severity,
            str(stat.files),
            escape(stat.title),
        )
    return table
