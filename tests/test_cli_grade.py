"""blueprint grade: verdicts, reports and exit codes at the command line."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from typer.testing import CliRunner

from blueprint.cli import app
from conftest import EXAMPLES

runner = CliRunner()
SET = EXAMPLES / "support-refunds.json"
COMPLIANT = EXAMPLES / "support-refunds.results.jsonl"


def grade(*args: str) -> Any:
    return runner.invoke(app, ["grade", *map(str, args)])


def results(tmp_path: Path, *items: dict[str, Any], name: str = "results.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def verdicts(done: Any) -> dict[str, str]:
    return {row["id"]: row["verdict"] for row in json.loads(done.stdout)["rows"]}


def test_the_bundled_results_pass(tmp_path: Path) -> None:
    done = grade(SET, COMPLIANT, "--report", "json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["summary"]["verdicts"] == {
        "pass": 6,
        "fail": 0,
        "needs-judge": 0,
        "needs-human": 2,
        "not-run": 0,
    }
    human = [row for row in report["rows"] if row["verdict"] == "needs-human"]
    assert {row["id"] for row in human} == {
        "cs-tone-angry-repeat-contact",
        "cs-escalate-chargeback-threat",
    }
    assert all(row["score"] is None for row in human)  # never a number
    by_type = report["summary"]["byOracleType"]
    assert by_type["expected-tool-calls"]["passRate"] == 1.0
    assert by_type["expected-behavior-only"]["passRate"] is None


def test_a_broken_rule_fails_the_run_and_the_rest_are_not_run(tmp_path: Path) -> None:
    path = results(
        tmp_path,
        {"id": "cs-refund-window-quote", "output": "30 days."},
        {"id": "cs-refund-issue-valid", "toolCalls": [{"name": "issue_store_credit"}]},
    )
    done = grade(SET, path, "--report", "json")
    assert done.exit_code == 1, done.output
    found = verdicts(done)
    assert found["cs-refund-window-quote"] == "fail"
    assert found["cs-refund-issue-valid"] == "fail"
    assert found["cs-eligibility-late-return"] == "not-run"
    assert found["cs-escalate-chargeback-threat"] == "needs-human"


def test_csv_results_grade_as_json_lines_do(tmp_path: Path) -> None:
    items = [json.loads(line) for line in COMPLIANT.read_text("utf-8").splitlines()]
    path = tmp_path / "results.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "output", "toolCalls", "finalState", "judge"])
        for item in items:
            writer.writerow(
                [item["id"], item.get("output", "")]
                + [json.dumps(item[key]) if key in item else "" for key in
                   ("toolCalls", "finalState", "judge")]
            )  # fmt: skip
    from_csv = grade(SET, path, "--report", "json")
    from_jsonl = grade(SET, COMPLIANT, "--report", "json")
    assert from_csv.exit_code == 0, from_csv.output
    assert json.loads(from_csv.stdout)["rows"] == json.loads(from_jsonl.stdout)["rows"]


def test_unusable_results_exit_2_naming_what_is_wrong(tmp_path: Path) -> None:
    unknown = results(tmp_path, {"id": "no-such-row", "output": "x"}, name="unknown.jsonl")
    done = grade(SET, unknown)
    assert done.exit_code == 2 and "no-such-row" in done.output
    twice = results(
        tmp_path,
        {"id": "cs-refund-window-quote", "output": "a"},
        {"id": "cs-refund-window-quote", "output": "b"},
        name="twice.jsonl",
    )
    done = grade(SET, twice, "--report", "json")
    assert done.exit_code == 2
    assert json.loads(done.stdout)["exitCode"] == 2 and "line 1" in done.output
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a"}\n{"id": \n', encoding="utf-8")
    assert grade(SET, broken).exit_code == 2
    assert grade(SET, results(tmp_path, {"output": "x"}, name="noid.jsonl")).exit_code == 2
    calls = results(tmp_path, {"id": "cs-refund-issue-valid", "toolCalls": {}}, name="c.jsonl")
    assert grade(SET, calls).exit_code == 2
    assert grade(SET, tmp_path).exit_code == 2  # a folder, not a results file
    assert grade(SET, tmp_path / "missing.jsonl").exit_code == 2


def test_options_are_checked(tmp_path: Path) -> None:
    assert grade(SET, COMPLIANT, "--workdir", tmp_path / "nope").exit_code == 2
    assert grade(SET, COMPLIANT, "--pass-grade", "2").exit_code == 2
    assert grade(SET, COMPLIANT, "--command-timeout", "0").exit_code == 2


def test_reports_are_junit_markdown_and_files(tmp_path: Path) -> None:
    junit = grade(SET, COMPLIANT, "--report", "junit")
    suite = ElementTree.fromstring(junit.stdout.split("\n", 1)[1])
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("8", "0", "2")
    markdown = grade(SET, COMPLIANT, "--report", "markdown")
    assert "| expected-tool-calls | 1 | 1 | 0 | 0 | 0 | 0 | 100% |" in markdown.stdout
    target = tmp_path / "grades.json"
    assert grade(SET, COMPLIANT, "--report", "json", "-o", target).exit_code == 0
    assert json.loads(target.read_text("utf-8"))["summary"]["rows"] == 8
    again = grade(SET, COMPLIANT, "--report", "json", "-o", target)
    assert again.exit_code == 2  # no overwriting without --force
    assert grade(SET, COMPLIANT, "-o", target, "--force").exit_code == 0


def test_the_text_report_keeps_oracle_types_apart() -> None:
    done = grade(SET, COMPLIANT)
    assert done.exit_code == 0
    assert "by oracle type" in done.stdout and "by case family" in done.stdout
    assert "expected-behavior-only: - (1 needs-human)" in done.stdout


def test_an_inspect_log_and_a_promptfoo_results_file_are_read(tmp_path: Path) -> None:
    log = {
        "version": 2,
        "eval": {"task": "refunds"},
        "samples": [
            {
                "id": "cs-refund-issue-valid",
                "messages": [
                    {"role": "user", "content": "refund"},
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {"id": "1", "function": "issue_store_credit", "arguments": {}}
                        ],
                    },
                ],
                "output": {"completion": "done"},
            },
            {"id": "cs-eligibility-late-return", "output": {"completion": "ineligible"}},
        ],
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    found = verdicts(grade(SET, path, "--report", "json"))
    assert found["cs-refund-issue-valid"] == "fail"  # the forbidden call, read from messages
    assert found["cs-eligibility-late-return"] == "pass"
    results = {
        "results": {
            "results": [
                {
                    "testIdx": 0,
                    "testCase": {"metadata": {"id": "cs-refund-window-quote"}},
                    "response": {"output": "30 days"},
                },
                {
                    "testIdx": 1,
                    "testCase": {
                        "metadata": {"blueprint": json.dumps({"id": "cs-refund-final-sale"})}
                    },
                    "response": {
                        "output": json.dumps(
                            {
                                "refundable": False,
                                "alternative": "store credit if damaged on arrival",
                            }
                        )
                    },
                },
            ]
        }
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    found = verdicts(grade(SET, path, "--report", "json"))
    assert (found["cs-refund-window-quote"], found["cs-refund-final-sale"]) == ("fail", "pass")


def test_a_promptfoo_results_file_gives_its_llm_rubric_verdicts(tmp_path: Path) -> None:
    from conftest import FIXTURES, document, row, write_json

    judged = FIXTURES / "results" / "promptfoo-judged" / "results.json"
    rows = [
        row(f"tone-0{n}", "rubric", evaluator="llm-judge", evaluationCriteria=["kind"])
        for n in (1, 2, 3)
    ]
    path = write_json(tmp_path / "judged.json", document(*rows))
    done = grade(path, judged, "--report", "json")
    # the judge (promptfoo's llm-rubric, run by promptfoo itself) passed 1 and 3, failed 2
    assert verdicts(done) == {"tone-01": "pass", "tone-02": "fail", "tone-03": "pass"}
    assert done.exit_code == 1
