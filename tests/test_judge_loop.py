"""From a runner's judged results to a validated judge: the studio's labels name the judge,
the report validates that judge (model and template), validate settles the condition with
it, and grade says for each judged verdict whether its judge is the validated one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.judgeprompt import template_id
from blueprint.grading import grade_set
from blueprint.grading.judges import JudgeCheck
from blueprint.grading.report import GradeReport
from blueprint.reports.judging import LabelsError, read_labels
from blueprint.studio.labelling import LabellingSession
from blueprint.validation.validate import validate_file
from conftest import EXAMPLES

runner = CliRunner()
MODEL = "stub/judge-1"


def checked(report: GradeReport) -> list[JudgeCheck]:
    """The judge check of each of a report's rows that has one."""
    return [check for row in report.rows if (check := report.judge_check(row)) is not None]


def judged_set(tmp_path: Path, report: str | None = "set.judge.json") -> tuple[Path, list[dict]]:
    document = json.loads((EXAMPLES / "support-judged.json").read_text(encoding="utf-8"))
    document.pop("judgeValidation", None)
    if report is not None:
        document["judgeValidation"] = report
    path = tmp_path / "set.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path, document["rows"]


def results(
    tmp_path: Path,
    rows: list[dict],
    *,
    model: str | None = MODEL,
    name: str = "results.jsonl",
    failing: bool = True,
) -> Path:
    """A runner's verdicts, each naming the judge: every third row failed by the judge
    (``failing``), else every row passed."""
    lines = []
    for number, row in enumerate(rows):
        oracle = row["metadata"]["case"]["oracleType"]
        judge: dict[str, Any] = {
            "pass": not failing or number % 3 != 0,
            "template": template_id(oracle),
        }
        if model is not None:
            judge["model"] = model
        lines.append(json.dumps({"id": row["id"], "output": f"answer {number}", "judge": judge}))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def labelled_report(set_path: Path, results_path: Path) -> dict[str, Any]:
    """People agree with the judge on every output but one, in the studio; the report is
    written where the set points."""
    session = LabellingSession.open(set_path, results_path, results_path.with_name("l.csv"))
    for number, item in enumerate(session.items):
        label = item.judge
        if number == 4:
            label = "fail" if label == "pass" else "pass"
        session.give(item.case_id, "alice", label)
    return session.write_report(set_path.with_name("set.judge.json"), force=True)


def codes(set_path: Path) -> list[str]:
    return [issue.code for issue in validate_file(set_path).issues]


def test_labels_from_a_runners_results_validate_that_judge(tmp_path: Path) -> None:
    set_path, rows = judged_set(tmp_path)
    found = results(tmp_path, rows)
    report = labelled_report(set_path, found)
    assert report["verdict"] == "pass"
    judges = {entry["family"]: entry["judge"] for entry in report["families"]}
    assert judges == {
        "policy-explanations": {"model": MODEL, "template": template_id("reference-answer")},
        "tone-under-pressure": {"model": MODEL, "template": template_id("rubric")},
    }
    found_codes = codes(set_path)
    assert "judge-validated" in found_codes and "conditional-evaluator" not in found_codes
    graded = grade_set(set_path, found)
    statuses = {check.status for check in checked(graded)}
    assert statuses == {"validated"} and len(checked(graded)) == len(rows)
    assert graded.unvalidated_judges == 0
    row = next(row for row in graded.to_json()["rows"] if row["id"] == rows[0]["id"])
    assert row["judge"]["model"] == MODEL
    assert row["judgeValidation"]["status"] == "validated"


def test_another_model_is_not_the_validated_judge(tmp_path: Path) -> None:
    set_path, rows = judged_set(tmp_path)
    labelled_report(set_path, results(tmp_path, rows))
    other = results(tmp_path, rows, model="stub/judge-2", name="other.jsonl", failing=False)
    graded = grade_set(set_path, other)
    assert {check.status for check in checked(graded)} == {"stale"}
    assert graded.summary()["judgeValidation"]["stale"] == len(rows)
    done = runner.invoke(app, ["grade", str(set_path), str(other), "--validated-judges"])
    assert done.exit_code == 1
    assert runner.invoke(app, ["grade", str(set_path), str(other)]).exit_code == 0


def test_an_edited_template_makes_the_report_stale(tmp_path: Path) -> None:
    set_path, rows = judged_set(tmp_path)
    found = results(tmp_path, rows)
    labelled_report(set_path, found)
    report_path = set_path.with_name("set.judge.json")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    for entry in report["families"]:
        oracle = entry["judge"]["template"].split("@")[0]
        entry["judge"]["template"] = f"{oracle}@000000000000"  # made with another template
    report_path.write_text(json.dumps(report), encoding="utf-8")
    assert "judge-report-stale" in codes(set_path)
    assert "judge-validated" not in codes(set_path)
    assert {check.status for check in checked(grade_set(set_path, found))} == {"stale"}


def test_a_verdict_or_a_report_that_names_no_judge_is_unconfirmed(tmp_path: Path) -> None:
    set_path, rows = judged_set(tmp_path)
    labelled_report(set_path, results(tmp_path, rows))
    anonymous = results(tmp_path, rows, model=None, name="anonymous.jsonl")
    checks = checked(grade_set(set_path, anonymous))
    assert {check.status for check in checks} == {"unconfirmed"}


def test_without_a_report_every_judged_verdict_is_missing_its_validation(
    tmp_path: Path,
) -> None:
    set_path, rows = judged_set(tmp_path, report=None)
    graded = grade_set(set_path, results(tmp_path, rows))
    assert {check.status for check in checked(graded)} == {"missing"}
    assert graded.unvalidated_judges == len(rows)
    done = runner.invoke(app, ["grade", str(set_path), str(tmp_path / "results.jsonl")])
    assert "missing" in done.stdout


def test_labels_from_two_judges_make_no_report(tmp_path: Path) -> None:
    set_path, rows = judged_set(tmp_path)
    lines = ["caseId,judge,judgeModel,judgeTemplate,human"]
    for number, row in enumerate(rows):
        model = "a" if number % 2 else "b"
        oracle = row["metadata"]["case"]["oracleType"]
        lines.append(f"{row['id']},pass,{model},{template_id(oracle)},pass")
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert {case.judge_model for case in read_labels(labels).cases} == {"a", "b"}
    done = runner.invoke(app, ["judge-report", str(labels), "--set", str(set_path)])
    assert done.exit_code == 2, done.output


@pytest.mark.parametrize("value", ['{"judgeModel": 3}', '{"judgeTemplate": ["x"]}'])
def test_a_judge_identity_that_is_not_text_is_refused(tmp_path: Path, value: str) -> None:
    labels = tmp_path / "labels.jsonl"
    record = {"caseId": "policy-01", "judge": "pass", "human": "pass", **json.loads(value)}
    labels.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(LabelsError):
        read_labels(labels)


def test_judge_report_takes_the_judges_labels_from_a_runners_results(tmp_path: Path) -> None:
    set_path, rows = judged_set(tmp_path)
    found = results(tmp_path, rows)
    verdicts = [json.loads(line)["judge"]["pass"] for line in found.read_text().splitlines()]
    lines = ["caseId,human"]  # people's labels only: the judge's come from the results
    for number, (row, passed) in enumerate(zip(rows, verdicts, strict=True)):
        agrees = number != 4
        lines.append(f"{row['id']},{'pass' if passed == agrees else 'fail'}")
    labels = tmp_path / "humans.csv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report_path = tmp_path / "set.judge.json"
    done = runner.invoke(
        app,
        [
            "judge-report",
            str(labels),
            "--set",
            str(set_path),
            "--judge-results",
            str(found),
            "-o",
            str(report_path),
        ],
    )
    assert done.exit_code == 0, done.output
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert {entry["judge"]["model"] for entry in report["families"]} == {MODEL}
    assert {check.status for check in checked(grade_set(set_path, found))} == {"validated"}
    # a judge label in the labels file that is not the results' one: other verdicts
    labels.write_text("caseId,judge,human\n" + f"{rows[0]['id']},pass,pass\n", encoding="utf-8")
    done = runner.invoke(
        app, ["judge-report", str(labels), "--set", str(set_path), "--judge-results", str(found)]
    )
    assert done.exit_code == 2


@pytest.mark.parametrize(
    "results_file",
    [
        "inspect-judged/judged.eval",
        "inspect-judged/judged.json",
        "promptfoo-blueprint-judge/results.json",
        "deepeval-judged/test_run.json",
        "judged-runners/langsmith-experiment.json",
        "judged-runners/braintrust-events.json",
        "judged-runners/openai-evals-record.jsonl",
    ],
)
def test_the_studio_labels_a_runners_results_with_the_judge_named(
    tmp_path: Path, results_file: str
) -> None:
    from conftest import FIXTURES

    set_path = FIXTURES / "judged" / "judged-set.json"
    found = FIXTURES / "results" / results_file
    session = LabellingSession.open(set_path, found, tmp_path / "labels.csv")
    assert session.items
    for item in session.items:
        assert item.judge_template is not None and item.judge_template.split("@")[0] in (
            "reference-answer",
            "acceptable-set",
            "rubric",
        )
        assert item.judge_model
        session.give(item.case_id, "alice", item.judge)
    read = read_labels(tmp_path / "labels.csv")
    assert {(case.judge_model, case.judge_template) for case in read.cases} == {
        (item.judge_model, item.judge_template) for item in session.items
    }


def test_a_family_of_several_oracle_types_is_one_judge_with_a_template_each(
    tmp_path: Path,
) -> None:
    from blueprint.grading.judges import _same_judge
    from blueprint.grading.semantics import RowVerdict
    from blueprint.reports.judging import build_report, read_set_families
    from conftest import FIXTURES

    set_path = FIXTURES / "judged" / "judged-set.json"
    lines = ["caseId,judge,judgeModel,judgeTemplate,human"]
    for case, oracle in (("judged-reference", "reference-answer"), ("judged-rubric", "rubric")):
        lines.append(f"{case},pass,{MODEL},{template_id(oracle)},pass")
    labels = tmp_path / "labels.csv"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = build_report(
        read_labels(labels),
        read_set_families(set_path),
        set_path=str(set_path),
        labels_path=str(labels),
    )
    (entry,) = [entry for entry in report["families"] if entry["family"] is None]
    templates = sorted([template_id("reference-answer"), template_id("rubric")])
    assert entry["judge"] == {"model": MODEL, "templates": templates}

    def verdict(template: str) -> RowVerdict:
        judge = {"model": MODEL, "template": template}
        return RowVerdict("r", "pass", 1.0, "", judge=judge)

    assert _same_judge(verdict(template_id("rubric")), entry["judge"], "r.json").status == (
        "validated"
    )
    other = verdict(template_id("acceptable-set"))
    assert _same_judge(other, entry["judge"], "r.json").status == "stale"


def test_a_large_set_graded_in_buckets_gets_the_same_judge_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blueprint.validation import parallel

    document = json.loads((EXAMPLES / "support-judged.json").read_text(encoding="utf-8"))
    document["judgeValidation"] = "set.judge.json"
    rows = document.pop("rows")
    set_path = tmp_path / "set.jsonl"
    set_path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    set_path.with_name("set.jsonl.set.json").write_text(json.dumps(document), encoding="utf-8")
    found = results(tmp_path, rows)
    labelled_report(set_path, found)
    whole = grade_set(set_path, found, jobs=1)
    assert {check.status for check in checked(whole)} == {"validated"}
    assert len(checked(whole)) == len(rows)
    monkeypatch.setattr(parallel, "BUCKET_BYTES", 500)  # one process, in buckets of a few rows
    monkeypatch.setattr(parallel, "SPAN_BYTES", 700)
    bucketed = grade_set(set_path, found, jobs=1)
    assert bucketed.to_json() == whole.to_json()
    assert all(row.judged for row in bucketed.rows)
