"""blueprint grade: verdicts, reports and exit codes at the command line."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
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
        "invalid": 0,
    }
    assert report["summary"]["scored"] == 6
    assert report["summary"]["starterExamples"]["rows"] == 0
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
    assert "| expected-tool-calls | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 100% |" in markdown.stdout
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


# --- the set is obeyed before anything is graded ----------------------------------------------


def _tool_row(row_id: str, **fields: Any) -> dict[str, Any]:
    from conftest import row

    expected = {
        "calls": [{"name": "lookup", "arguments": {}}],
        "forbidden": [{"name": "delete_account"}],
    }
    return row(row_id, "expected-tool-calls", expected=expected, **fields)


def test_a_row_whose_evaluator_its_oracle_type_bars_gets_no_verdict(tmp_path: Path) -> None:
    from conftest import document, write_json

    barred = _tool_row("judged-calls", evaluator="llm-judge")
    fine = _tool_row("checked-calls", evaluator="trajectory-or-state-check")
    path = write_json(tmp_path / "set.json", document(barred, fine))
    forbidden = [{"name": "lookup"}, {"name": "delete_account"}]
    recorded = results(
        tmp_path,
        # the judge passes it, and a forbidden call was made: neither decides anything
        {"id": "judged-calls", "toolCalls": forbidden, "judge": {"pass": True, "score": 1}},
        {"id": "checked-calls", "toolCalls": [{"name": "lookup"}]},
    )
    done = grade(path, recorded, "--report", "json")
    assert done.exit_code == 1
    report = json.loads(done.stdout)
    rows = {row["id"]: row for row in report["rows"]}
    assert (rows["judged-calls"]["verdict"], rows["judged-calls"]["score"]) == ("invalid", None)
    assert rows["checked-calls"]["verdict"] == "pass"
    assert report["summary"]["verdicts"]["invalid"] == 1
    junit = grade(path, recorded, "--report", "junit")
    suite = ElementTree.fromstring(junit.stdout.split("\n", 1)[1])
    assert (suite.get("errors"), suite.get("failures")) == ("1", "0")
    assert junit.exit_code == 1


def test_a_row_the_validator_finds_an_error_in_is_invalid(tmp_path: Path) -> None:
    from conftest import document, row, write_json

    mismatched = row("a", expected="yes")
    mismatched["metadata"]["case"]["caseId"] = "not-a"  # case-id-mismatch, an error
    path = write_json(tmp_path / "set.json", document(mismatched, row("b", expected="yes")))
    recorded = results(tmp_path, {"id": "a", "output": "yes"}, {"id": "b", "output": "yes"})
    done = grade(path, recorded, "--report", "json")
    assert done.exit_code == 1
    assert verdicts(done) == {"a": "invalid", "b": "pass"}
    assert "case-id-mismatch" in json.loads(done.stdout)["rows"][0]["reason"]


def test_an_error_of_no_row_refuses_the_whole_set(tmp_path: Path) -> None:
    from conftest import document, row, write_json

    families = [{"id": "f", "oracleType": "reference-answer"}] * 2  # declared twice
    path = write_json(
        tmp_path / "set.json", document(row("a", caseFamily="f"), caseFamilies=families)
    )
    done = grade(path, results(tmp_path, {"id": "a", "output": "yes"}))
    assert done.exit_code == 2 and "duplicate-case-family" in done.output


def test_a_refusal_names_the_first_errors_of_no_row_and_counts_the_rest(tmp_path: Path) -> None:
    from blueprint.grading import grade_set
    from blueprint.grading.report import SetNotGradable
    from conftest import document, row, write_json

    families = [{"id": "f", "oracleType": "reference-answer"}] * 9  # eight repeats
    path = write_json(
        tmp_path / "set.json", document(row("a", caseFamily="f"), caseFamilies=families)
    )
    with pytest.raises(SetNotGradable) as refused:
        grade_set(path, results(tmp_path, {"id": "a", "output": "yes"}))
    assert refused.value.count == 8
    assert [issue.code for issue in refused.value.issues] == ["duplicate-case-family"] * 5
    assert "and 3 more" in str(refused.value)


def test_starter_rows_are_examples_in_every_report(tmp_path: Path) -> None:
    from conftest import document, row, write_json

    starter = row("starter", provenance="starter-example")
    gold = row("gold", provenance="expert-authored")
    path = write_json(tmp_path / "set.json", document(starter, gold))
    # the starter example fails, the gold row passes: the gate is green
    recorded = results(tmp_path, {"id": "starter", "output": "no"}, {"id": "gold", "output": "yes"})
    done = grade(path, recorded, "--report", "json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    rows = {row["id"]: row for row in report["rows"]}
    assert rows["starter"]["starterExample"] is True and rows["gold"]["starterExample"] is False
    assert rows["starter"]["verdict"] == "fail"  # shown, never counted
    summary = report["summary"]
    assert summary["verdicts"]["fail"] == 0 and summary["scored"] == 1
    assert summary["starterExamples"] == {
        "rows": 1,
        "verdicts": {
            "pass": 0,
            "fail": 1,
            "needs-judge": 0,
            "needs-human": 0,
            "not-run": 0,
            "invalid": 0,
        },
    }
    group = summary["byOracleType"]["reference-answer"]
    assert (group["rows"], group["fail"], group["starterExamples"], group["passRate"]) == (
        2,
        0,
        1,
        1.0,
    )
    from blueprint.grading.semantics import STARTER_MARK

    text = grade(path, recorded)
    [line] = [line for line in text.stdout.splitlines() if line.startswith("fail        starter")]
    assert STARTER_MARK in line
    markdown = grade(path, recorded, "--report", "markdown")
    assert f"| starter | fail {STARTER_MARK} |" in markdown.stdout
    junit = grade(path, recorded, "--report", "junit")
    suite = ElementTree.fromstring(junit.stdout.split("\n", 1)[1])
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "1")
    [skipped] = [case for case in suite if case.get("name") == "starter"]
    assert STARTER_MARK in skipped[0].get("message", "")


def test_results_that_score_nothing_are_not_a_green_gate(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    assert grade(SET, empty).exit_code == 1
    assert grade(SET, empty, "--min-scored", "0").exit_code == 0
    human_only = results(tmp_path, {"id": "cs-escalate-chargeback-threat", "output": "x"})
    assert grade(SET, human_only).exit_code == 1  # a person's row scores nothing
    assert grade(SET, COMPLIANT, "--min-scored", "6").exit_code == 0
    assert grade(SET, COMPLIANT, "--min-scored", "7").exit_code == 1
    assert grade(SET, COMPLIANT, "--min-scored", "-1").exit_code == 2


@pytest.mark.parametrize(
    "result",
    [
        {"id": "cs-tone-angry-repeat-contact", "judge": {"pass": "false"}},
        {"id": "cs-tone-angry-repeat-contact", "judge": {"score": "0.9"}},
        {"id": "cs-tone-angry-repeat-contact", "judge": {"score": 1.5}},
        {"id": "cs-refund-ledger-entry", "finalState": {"commands": {"pytest -q": "0"}}},
        {"id": "cs-refund-ledger-entry", "finalState": {"commands": {"pytest -q": True}}},
        {
            "id": "cs-refund-ledger-entry",
            "finalState": {"commands": [{"run": "x", "exitCode": "0"}]},
        },
        {"id": "cs-refund-ledger-entry", "finalState": {"files": [1]}},
        {"id": "cs-refund-ledger-entry", "finalState": {"records": "x"}},
        {"id": "cs-refund-issue-valid", "toolCalls": ["get_order"]},
    ],
)
def test_a_field_of_the_wrong_type_is_unusable_input(
    tmp_path: Path, result: dict[str, Any]
) -> None:
    done = grade(SET, results(tmp_path, result), "--report", "json")
    assert done.exit_code == 2, done.output
    assert json.loads(done.stdout)["exitCode"] == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("metadata", [1]),  # no object: the row's case cannot be read
        ("provenance", []),  # a list (unhashable) where a name goes
        ("normalize", [None]),
        ("normalize", 1),
        ("tolerance", "x"),
        ("checks", [{"type": "contains", "value": "30 days", "normalize": 5}]),
        ("checks", [{"type": "regex"}]),
        ("checks", [{"type": "length", "min": [1]}]),
    ],
)
def test_a_row_of_the_wrong_shape_is_invalid_not_a_crash(
    tmp_path: Path, field: str, value: Any
) -> None:
    """The set's error makes the row invalid; the row is still read to grade it, and a
    value of any type there gives the verdict, never an internal error."""
    data = json.loads(SET.read_text(encoding="utf-8"))
    first = data["rows"][0]
    if field == "metadata":
        first["metadata"] = value
    else:
        first["metadata"]["case"][field] = value
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = grade(path, COMPLIANT, "--report", "json")
    assert done.exit_code == 1, done.output  # an invalid row
    assert verdicts(done)[first["id"]] == "invalid"
