"""The text report of findings: identifiers whole, messages wrapped only on a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from blueprint.cli.findings import print_finding, print_findings
from blueprint.core.issues import ValidationReport, make_issue

LONG_ID = "refund-" + "x" * 70


def issue():
    return make_issue(
        "case-id-mismatch",
        path="$.rows[12].metadata.case.caseId",
        row_index=12,
        row_id=LONG_ID,
        line=40,
        case_id="another-" + "y" * 50,
        id=LONG_ID,
    )


def rendered(terminal: bool, width: int) -> list[str]:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=terminal, width=width, color_system=None)
    print_finding(console, "evals/a-long-folder-name/set.csv", issue())
    return buffer.getvalue().splitlines()


def test_on_a_terminal_messages_wrap_and_identifiers_stay_whole() -> None:
    lines = rendered(terminal=True, width=50)
    assert lines[0].startswith("evals/a-long-folder-name/set.csv:40: error case-id-mismatch")
    assert LONG_ID in lines[0]  # the row id, whole, on the finding's first line
    assert len(lines) > 3  # the message was wrapped below it
    assert "$.rows[12].metadata.case.caseId" in lines[-1]
    # every line that holds no identifier fits the terminal
    for line in lines:
        if LONG_ID not in line and "y" * 50 not in line and "$.rows" not in line:
            assert len(line) <= 50, line


def test_piped_every_finding_is_one_line() -> None:
    lines = rendered(terminal=False, width=40)
    assert len(lines) == 1
    assert LONG_ID in lines[0] and "$.rows[12].metadata.case.caseId" in lines[0]


def test_the_text_report_shows_a_few_of_each_code_and_counts_the_rest() -> None:
    issues = [
        make_issue(
            "parse", path=f"$.rows[{n}]", row_index=n, line=n + 1, format="jsonl", reason="x"
        )
        for n in range(7)
    ] + [
        make_issue(
            "duplicate-id", path="$.rows[9].id", row_index=9, id="a", first_index=0, first_where=""
        )
    ]
    report = ValidationReport(source="s.jsonl", format="jsonl", rows=10, issues=issues)
    buffer = io.StringIO()
    print_findings(Console(file=buffer, width=200, color_system=None), report, limit=3)
    lines = buffer.getvalue().splitlines()
    assert [line.split(": ")[1].split()[1] for line in lines[:4]] == ["parse"] * 3 + [
        "duplicate-id"
    ]
    assert lines[4:] == ["... and 4 more parse in s.jsonl", "--report json lists them all"]
    assert len(report.issues) == 8  # the report itself keeps every finding
