"""Machine renderings of a report: JSON shape, JUnit XML, GitHub annotations."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest

from blueprint.core.issues import Issue, ValidationReport, make_issue
from blueprint.reports.writers import render_github, render_json, render_junit


def sample() -> ValidationReport:
    report = ValidationReport(source="sets/a,b:c.csv", format="csv", rows=2, row_ids=["x", None])
    report.issues = [
        make_issue(
            "case-id-mismatch",
            path="$.rows[0].metadata.case.caseId",
            row_index=0,
            row_id="x",
            line=2,
            case_id="y",
            id="x",
        ),
        make_issue(
            "parse", path="$.rows[1]", row_index=1, line=3, format="csv", reason="bad\nline 100%"
        ),
        make_issue("missing-set-file", path="$", set_file="a.csv.set.json", consequence="unknown"),
        Issue("rubric-without-criteria", "info", "m", "$.rows[0]", 0, "x", None),
    ]
    return report


def test_json_shape() -> None:
    data = json.loads(render_json(sample()))
    assert data["valid"] is False
    assert data["counts"] == {"error": 2, "warning": 1, "info": 1}
    assert set(data["issues"][0]) == {
        "code",
        "severity",
        "rowIndex",
        "rowId",
        "path",
        "line",
        "message",
    }


def test_junit_one_case_per_row_plus_set() -> None:
    root = ElementTree.fromstring(render_junit(sample()))
    suite = root.find("testsuite")
    assert suite is not None
    names = [case.get("name") for case in suite.findall("testcase")]
    assert names == ["set-level fields", "row 0: x", "row 1"]
    assert suite.get("failures") == "2"
    set_case = suite.findall("testcase")[0]
    assert set_case.find("failure") is None and set_case.find("system-out") is not None


def test_github_annotations_escape_properties_and_data() -> None:
    lines = render_github(sample()).splitlines()
    assert lines[0].startswith(
        "::error file=sets/a%2Cb%3Ac.csv,line=2,title=case-id-mismatch at $.rows[0]"
    )
    assert "bad%0Aline 100%25" in lines[1]
    assert lines[2].startswith("::warning ") and ",line=" not in lines[2]
    assert lines[3].startswith("::notice ")


def test_junit_survives_control_characters() -> None:
    report = ValidationReport(source="s.json", format="json", rows=1, row_ids=["a\x01b"])
    report.issues = [Issue("schema", "error", "bad \x02 value", "$.rows[0]", 0, "a\x01b", None)]
    root = ElementTree.fromstring(render_junit(report))
    names = [case.get("name") for case in root.iter("testcase")]
    assert names[1] == "row 0: a\\x01b"


@pytest.mark.parametrize("count", [0, 1, 999, 1000, 1001, 2500])
def test_the_streamed_json_report_is_the_whole_document(count: int) -> None:
    report = ValidationReport(source="évals/set.jsonl", format="jsonl", rows=count)
    report.issues = [
        make_issue(
            "schema",
            path=f"$.rows[{n}].id",
            row_index=n,
            row_id=f"rów-{n}\x1b[31m" if n % 2 else None,
            line=n + 1 if n % 3 else None,
            reason='a "quoted" \\ lone \ud800 surrogate, a tab\t and ✓',
        )
        for n in range(count)
    ]
    assert render_json(report) == json.dumps(report.to_json(), indent=2, ensure_ascii=False)
