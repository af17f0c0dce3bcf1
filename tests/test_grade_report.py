"""The grade report read in one pass: the JSON report written a row at a time is the whole
report's JSON, byte for byte, and the counts taken in one pass are the counts of the rows."""

from __future__ import annotations

import json
from pathlib import Path

from blueprint.grading import grade_set
from blueprint.grading.gates import GateOptions
from blueprint.grading.report import GradeReport, Totals
from blueprint.grading.semantics import RowVerdict, verdict_counts
from conftest import EXAMPLES

SET = EXAMPLES / "support-refunds.json"
RESULTS = EXAMPLES / "support-refunds.results.jsonl"


def _changed(tmp_path: Path) -> Path:
    """The example's results with every other output changed and one result left out."""
    lines = RESULTS.read_text().splitlines()
    made = []
    for number, line in enumerate(lines[1:]):
        found = json.loads(line)
        if number % 2 and "output" in found:
            found["output"] = "something else — entirely \u2603\n"
        made.append(json.dumps(found, ensure_ascii=False))
    path = tmp_path / "changed.jsonl"
    path.write_text("".join(line + "\n" for line in made), encoding="utf-8")
    return path


def _reports(tmp_path: Path) -> list[GradeReport]:
    changed = _changed(tmp_path)
    gated = grade_set(SET, changed)
    gated.run_gates(GateOptions(min_scored_share=0.9, claim=0.2), grade_set(SET, RESULTS))
    return [grade_set(SET, RESULTS), grade_set(SET, [RESULTS, changed]), gated]


def test_the_json_report_a_row_at_a_time_is_the_whole_report(tmp_path: Path) -> None:
    for report in _reports(tmp_path):
        whole = json.dumps(report.to_json(), indent=2, ensure_ascii=False)
        assert "".join(report.json_text()) == whole
    empty = GradeReport(SET, RESULTS)
    assert "".join(empty.json_text()) == json.dumps(empty.to_json(), indent=2)
    assert json.loads("".join(empty.json_text()))["rows"] == []


def test_the_counts_of_one_pass_are_the_rows_counts(tmp_path: Path) -> None:
    for report in _reports(tmp_path):
        totals = report.totals()
        rows = list(report.rows)
        gold = [row for row in rows if not row.starter]
        assert totals.rows == len(rows)
        assert totals.verdicts == verdict_counts(gold)
        assert totals.starter_verdicts == verdict_counts(r for r in rows if r.starter)
        assert totals.invalid == sum(row.verdict == "invalid" for row in rows)
        assert report.scored == sum(row.scored for row in rows)
        assert report.failed == any(row.verdict == "fail" for row in gold)
        types = {row.oracle_type or "(none)" for row in rows}
        assert set(totals.by_oracle_type) == types
        for name, group in totals.by_oracle_type.items():
            members = [row for row in rows if (row.oracle_type or "(none)") == name]
            assert group.rows == len(members)
            assert group.verdicts == verdict_counts(r for r in members if not r.starter)
            assert group.starters == sum(row.starter for row in members)


def test_a_high_risk_cell_counts_its_counted_rows() -> None:
    rows = [
        RowVerdict("a", "pass", 1.0, "ok", risk="R3/-"),
        RowVerdict("b", "fail", 0.0, "no", risk="R3/-"),
        RowVerdict("c", "pass", 1.0, "ok", starter=True, risk="R3/-"),
        RowVerdict("d", "needs-human", None, "person", risk="-/B2"),
        RowVerdict("e", "pass", 1.0, "ok"),
    ]
    totals = Totals.of(rows)
    assert {cell: counts["pass"] for cell, counts in totals.by_risk_cell.items()} == {
        "R3/-": 1,
        "-/B2": 0,
    }
    assert totals.by_risk_cell["R3/-"]["fail"] == 1
    assert totals.by_risk_cell["-/B2"]["needs-human"] == 1


def test_the_counts_follow_the_rows_they_are_of(tmp_path: Path) -> None:
    report = grade_set(SET, RESULTS)
    assert report.totals().rows == len(list(report.rows)) > 0
    report.rows = []
    assert report.totals().rows == 0 and report.scored == 0


def test_the_junit_report_a_row_at_a_time_is_what_elementtree_writes(tmp_path: Path) -> None:
    """Each report's JUnit, written a case at a time, is the suite ElementTree indents and
    writes whole: parsed, indented and written again, it is the same text."""
    from xml.etree import ElementTree

    from blueprint.cli.grade import _junit

    for report in _reports(tmp_path):
        text = "".join(_junit(report))
        head, body = text.split("\n", 1)
        assert head == '<?xml version="1.0" encoding="utf-8"?>'
        suite = ElementTree.fromstring(body)
        cases = [case for case in suite if case.tag == "testcase"]
        assert len(cases) == len(list(report.rows)) + len(report.gate_failures)
        ElementTree.indent(suite)
        assert ElementTree.tostring(suite, encoding="unicode") + "\n" == body
