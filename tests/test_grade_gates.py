"""blueprint grade with a baseline run and gates: a blocker family's regression fails naming
the row, a change within noise in a minor family passes with its interval shown, and every
report says which gate failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

from typer.testing import CliRunner

from blueprint.cli import app

runner = CliRunner()


def _set(tmp_path: Path) -> Path:
    rows = []
    for family, count in (("refunds", 20), ("tone", 20)):
        for number in range(count):
            row_id = f"{family}-{number:02d}"
            case = {
                "caseId": row_id,
                "oracleType": "reference-answer",
                "expectedBehavior": "answers",
                "provenance": "expert-authored",
                "caseFamily": family,
            }
            if family == "refunds":
                case.update(reversibility="R3", blastRadius="B1")
            rows.append(
                {
                    "id": row_id,
                    "input": f"q {row_id}",
                    "expected": "yes",
                    "metadata": {"case": case},
                }
            )
    document = {
        "schemaVersion": "blueprint.eval-set/v1",
        "name": "gated",
        "caseFamilies": [
            {"id": "refunds", "oracleType": "reference-answer", "severity": "blocker"},
            {"id": "tone", "oracleType": "reference-answer", "severity": "minor"},
        ],
        "rows": rows,
    }
    path = tmp_path / "set.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _results(tmp_path: Path, name: str, failing: set[str]) -> Path:
    lines = []
    for family in ("refunds", "tone"):
        for number in range(20):
            row_id = f"{family}-{number:02d}"
            lines.append(json.dumps({"id": row_id, "output": "no" if row_id in failing else "yes"}))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _grade(*arguments: str) -> tuple[int, Any]:
    done = runner.invoke(app, ["grade", *arguments, "--report", "json"])
    return done.exit_code, json.loads(done.stdout)


def test_a_blocker_row_that_regresses_fails_the_gate_naming_it(tmp_path: Path) -> None:
    set_path = _set(tmp_path)
    old = _results(tmp_path, "old.jsonl", set())
    new = _results(tmp_path, "new.jsonl", {"refunds-03"})
    code, report = _grade(str(set_path), str(new), "--baseline", str(old))
    assert code == 1
    gates = report["gates"]["failures"]
    assert [(gate["gate"], gate["rows"]) for gate in gates] == [
        ("blocker-regression", ["refunds-03"])
    ]
    assert report["comparison"]["changes"]["pass->fail"] == 1


def test_a_change_within_noise_in_a_minor_family_passes_with_its_interval(
    tmp_path: Path,
) -> None:
    set_path = _set(tmp_path)
    old = _results(tmp_path, "old.jsonl", {"tone-05"})
    new = _results(tmp_path, "new.jsonl", {"tone-07"})
    done = runner.invoke(app, ["grade", str(set_path), str(new), "--baseline", str(old)])
    assert done.exit_code == 1  # a row fails in this run, as grade always said
    _, report = _grade(str(set_path), str(new), "--baseline", str(old))
    assert report["gates"] == {"passed": True, "failures": []}
    tone = report["comparison"]["byCaseFamily"]["tone"]
    assert tone["difference"] == 0.0 and tone["interval"][0] < 0 < tone["interval"][1]
    assert not tone["dropped"]
    assert "tone: 95% -> 95%" in done.stdout


def test_intervals_and_the_zero_failure_bound_are_in_the_summary(tmp_path: Path) -> None:
    set_path = _set(tmp_path)
    results = _results(tmp_path, "r.jsonl", set())
    code, report = _grade(str(set_path), str(results))
    assert code == 0
    family = report["summary"]["byCaseFamily"]["refunds"]
    assert family["interval"]["method"] == "clopper-pearson"
    assert round(family["failureBound"], 4) == round(1 - 0.05 ** (1 / 20), 4)
    cell = report["summary"]["riskCells"]["R3/B1"]
    assert (cell["pass"], cell["fail"]) == (20, 0)


def test_a_claim_the_high_risk_cell_cannot_make_fails_in_every_report(tmp_path: Path) -> None:
    set_path = _set(tmp_path)
    results = _results(tmp_path, "r.jsonl", set())
    arguments = [str(set_path), str(results), "--claim", "0.1"]
    code, report = _grade(*arguments)
    assert code == 1
    assert [gate["gate"] for gate in report["gates"]["failures"]] == ["risk-claim"]
    junit = runner.invoke(app, ["grade", *arguments, "--report", "junit"]).stdout
    assert 'type="risk-claim"' in junit
    github = runner.invoke(app, ["grade", *arguments, "--report", "github"]).stdout
    assert github.startswith("::error ") and "risk-claim" in github
    markdown = runner.invoke(app, ["grade", *arguments, "--report", "markdown"]).stdout
    assert "| risk-claim | R3/B1 |" in markdown
    assert _grade(*arguments[:2], "--claim", "0.2")[0] == 0  # 14 passes make the 20% claim


def test_unusable_gate_options_are_usage_errors(tmp_path: Path) -> None:
    set_path = _set(tmp_path)
    results = _results(tmp_path, "r.jsonl", set())
    for option in (["--claim", "1.5"], ["--min-scored-share", "2"], ["--confidence", "0"]):
        done = runner.invoke(app, ["grade", str(set_path), str(results), *option])
        assert done.exit_code == 2, option


def test_the_html_report_plots_each_familys_rate_with_its_interval(tmp_path: Path) -> None:
    set_path = _set(tmp_path)
    results = _results(tmp_path, "r.jsonl", {"tone-01", "tone-02"})
    page = tmp_path / "grades.html"
    done = runner.invoke(
        app, ["grade", str(set_path), str(results), "--report", "html", "-o", str(page)]
    )
    assert done.exit_code == 1  # two rows fail
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") == 2 and "<script" not in html
    assert 'src="http' not in html and 'href="http' not in html  # nothing is fetched
    assert ">tone</text>" in html and ">refunds</text>" in html
    assert "90%" in html  # tone: 18 of 20


def test_the_html_report_does_not_gather_the_rows(tmp_path: Path) -> None:
    """The page shows the summary and the gates: a set's rows are not read into it (they
    would be held whole)."""
    from blueprint.grading.report import GradeReport

    set_path = _set(tmp_path)
    results = _results(tmp_path, "r.jsonl", {"tone-01"})
    page = tmp_path / "grades.html"
    with mock.patch.object(GradeReport, "_json_rows", side_effect=AssertionError("rows read")):
        done = runner.invoke(
            app, ["grade", str(set_path), str(results), "--report", "html", "-o", str(page)]
        )
    assert done.exit_code == 1, done.output
    assert "<svg" in page.read_text(encoding="utf-8")
