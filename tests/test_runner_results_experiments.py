"""LangSmith experiments, Braintrust experiments and OpenAI Evals record logs read back by
``blueprint grade``: each file names its rows through Blueprint's metadata or feedback, and
the judge's verdict (with its model and template) comes back as the row's ``judge``.

The files in tests/fixtures/results/judged-runners were written by each runner's own SDK
over the judged set with a stand-in judge that fails the rubric row asking for a refund date
(see their README); here they are read, reshaped into the other shapes each runner gives an
experiment in, and broken."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from blueprint.core.errors import ParseError
from blueprint.grading import grade_set, read_results
from conftest import FIXTURES

SET = FIXTURES / "judged" / "judged-set.json"
RUNS = FIXTURES / "results" / "judged-runners"
#: what the stand-in judge and the row's rules give each row
EXPECTED = {
    "judged-reference": "pass",
    "judged-acceptable": "pass",
    "judged-graded": "pass",
    "judged-rubric": "fail",
    "judged-by-family": "pass",
    "tool-calls": "pass",
    "exact-reference": "pass",
}
ORACLES = {
    row["id"]: row["metadata"]["case"]["oracleType"]
    for row in json.loads(SET.read_text(encoding="utf-8"))["rows"]
}
JUDGED = {row_id for row_id, oracle in ORACLES.items() if row_id.startswith("judged-")}


def graded(path: Path) -> dict[str, tuple[str, dict[str, str] | None]]:
    """Each row's verdict and the judge its verdict names."""
    return {row.id: (row.verdict, row.judge) for row in grade_set(SET, path).rows}


def assert_judged_verdicts(path: Path, *, named: bool = True) -> None:
    found = graded(path)
    assert {row_id: verdict for row_id, (verdict, _) in found.items()} == EXPECTED
    for row_id, (_, judge) in found.items():
        if row_id not in JUDGED or not named:
            assert judge is None, row_id
            continue
        assert judge is not None, row_id
        assert judge["model"] == "stub-judge"
        assert judge["template"].split("@")[0] == ORACLES[row_id]


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "name",
    [
        "langsmith-experiment.json",
        "langsmith-experiment.csv",
        "braintrust-events.json",
        "openai-evals-record.jsonl",
    ],
)
def test_each_runners_results_give_the_judges_verdicts(name: str) -> None:
    assert_judged_verdicts(RUNS / name)


def test_the_judges_reason_comes_back_with_its_verdict() -> None:
    for name in ("langsmith-experiment.json", "braintrust-events.json"):
        judge = read_results(RUNS / name)["judged-rubric"].judge
        assert judge is not None
        assert (judge["pass"], judge["score"]) == (False, 0.0)
        assert "no date" in judge["reason"]


def test_tool_calls_come_back_from_each_runner() -> None:
    calls = [{"name": "lookup_order", "arguments": {"order_id": "A-1"}}]
    for name in (
        "langsmith-experiment.json",
        "langsmith-experiment.csv",  # pandas wrote the list as its Python repr
        "braintrust-events.json",
        "openai-evals-record.jsonl",
    ):
        assert read_results(RUNS / name)["tool-calls"].tool_calls == calls, name


# --- LangSmith: the other shapes an experiment comes in -----------------------------------------


def langsmith_rows() -> list[dict[str, Any]]:
    return json.loads((RUNS / "langsmith-experiment.json").read_text(encoding="utf-8"))


def test_langsmith_runs_with_their_feedback_beside_them(tmp_path: Path) -> None:
    rows = langsmith_rows()
    runs = [row["run"] for row in rows]
    feedback = [
        {**result, "run_id": row["run"]["id"]}
        for row in rows
        for result in row["evaluation_results"]["results"]
    ]
    assert_judged_verdicts(write(tmp_path / "runs.json", {"runs": runs, "feedback": feedback}))


def test_langsmith_runs_each_with_its_feedback(tmp_path: Path) -> None:
    runs = [
        {**row["run"], "feedback": row["evaluation_results"]["results"]} for row in langsmith_rows()
    ]
    assert_judged_verdicts(write(tmp_path / "runs.json", runs))


def test_an_uploaded_langsmith_experiment(tmp_path: Path) -> None:
    results = [
        {
            "row_id": row["example"]["id"],
            "inputs": row["run"]["inputs"],
            "expected_outputs": row["example"]["outputs"],
            "actual_outputs": row["run"]["outputs"],
            "evaluation_scores": row["evaluation_results"]["results"],
            "start_time": "2026-01-01T00:00:01",
            "end_time": "2026-01-01T00:00:02",
        }
        for row in langsmith_rows()
    ]
    document = {
        "experiment_name": "judged",
        "experiment_start_time": "2026-01-01T00:00:00",
        "experiment_end_time": "2026-01-01T00:00:03",
        "dataset_name": "judged",
        "results": results,
    }
    assert_judged_verdicts(write(tmp_path / "upload.json", document))


def test_langsmith_flat_rows_as_json_records(tmp_path: Path) -> None:
    records = []
    for row in langsmith_rows():
        record: dict[str, Any] = {f"outputs.{k}": v for k, v in row["run"]["outputs"].items()}
        for result in row["evaluation_results"]["results"]:
            score = result.get("score")
            record[f"feedback.{result['key']}"] = score if score is not None else result["value"]
        record["example_id"] = row["example"]["id"]
        records.append(record)
    assert_judged_verdicts(write(tmp_path / "flat.json", records))


def test_a_langsmith_row_named_by_its_example_alone(tmp_path: Path) -> None:
    """Without Blueprint's row feedback, the example's metadata names the row; the judge's
    verdict is then openevals' own feedback (key ``score``)."""
    rows = langsmith_rows()
    for row in rows:
        results = row["evaluation_results"]["results"]
        judge = next((r for r in results if r["key"] == "blueprint_judge"), None)
        kept = []
        if judge is not None:
            verdict = json.loads(judge["value"])
            kept.append({"key": "score", "score": verdict["pass"], "comment": verdict["reason"]})
        row["evaluation_results"]["results"] = kept
    found = graded(write(tmp_path / "rows.json", rows))
    assert {row_id: verdict for row_id, (verdict, _) in found.items()} == EXPECTED
    assert read_results(tmp_path / "rows.json")["judged-rubric"].judge == {
        "pass": False,
        "reason": "stand-in judge: no date is named",
    }


def test_a_langsmith_run_that_names_no_row_is_refused(tmp_path: Path) -> None:
    rows = langsmith_rows()
    rows[2]["example"]["metadata"] = {}
    rows[2]["evaluation_results"]["results"] = []
    with pytest.raises(ParseError) as caught:
        read_results(write(tmp_path / "rows.json", rows))
    assert caught.value.line is None
    assert "record 3" in caught.value.reason


def test_a_langsmith_judge_feedback_that_is_not_json_is_refused(tmp_path: Path) -> None:
    rows = langsmith_rows()
    for result in rows[0]["evaluation_results"]["results"]:
        if result["key"] == "blueprint_judge":
            result["value"] = "passed"
    with pytest.raises(ParseError):
        read_results(write(tmp_path / "rows.json", rows))


def test_a_failed_langsmith_run_is_not_run(tmp_path: Path) -> None:
    rows = langsmith_rows()
    rows[0]["run"]["outputs"] = None
    rows[0]["run"]["error"] = "ValueError('boom')"
    found = graded(write(tmp_path / "rows.json", rows))
    assert found["judged-reference"] == ("not-run", None)


def csv_lines(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write_csv(path: Path, lines: list[dict[str, str]], header: list[str]) -> Path:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=header, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(lines)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_langsmith_csv_without_the_row_feedback_is_refused(tmp_path: Path) -> None:
    """get_test_results keeps numeric feedback only: its CSV names no row."""
    source = RUNS / "langsmith-experiment.csv"
    header = [name for name in csv_lines(source)[0] if name != "feedback.blueprint_row"]
    path = write_csv(tmp_path / "results.csv", csv_lines(source), header)
    with pytest.raises(ParseError) as caught:
        read_results(path)
    assert caught.value.line == 1


def test_a_langsmith_csv_with_openevals_own_judge(tmp_path: Path) -> None:
    lines = csv_lines(RUNS / "langsmith-experiment.csv")
    for line in lines:
        judge = line.pop("feedback.blueprint_judge")
        line["feedback.correctness"] = (
            ("1.0" if json.loads(judge)["pass"] else "0.0") if judge else ""
        )
    path = write_csv(tmp_path / "results.csv", lines, list(lines[0]))
    assert {row_id: verdict for row_id, (verdict, _) in graded(path).items()} == EXPECTED
    assert read_results(path)["judged-rubric"].judge == {"score": 0.0}


# --- Braintrust: rows alone, CSV, an autoevals judge --------------------------------------------


def braintrust_events() -> list[dict[str, Any]]:
    document = json.loads((RUNS / "braintrust-events.json").read_text(encoding="utf-8"))
    events: list[dict[str, Any]] = document["events"]
    return events


def rows_with_scores(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The root spans alone, each with its scorer spans' scores, as an export of rows."""
    rows = []
    for event in events:
        if event.get("span_parents"):
            continue
        row = {
            key: event[key]
            for key in ("id", "input", "output", "expected", "metadata")
            if key in event
        }
        row["scores"] = {
            name: score
            for child in events
            if child.get("root_span_id") == event["root_span_id"] and child.get("scores")
            for name, score in child["scores"].items()
        }
        rows.append(row)
    return rows


def test_braintrust_events_as_a_list(tmp_path: Path) -> None:
    assert_judged_verdicts(write(tmp_path / "events.json", braintrust_events()))


def test_braintrust_rows_alone_give_the_judges_score(tmp_path: Path) -> None:
    """An export of rows keeps the scores but not the scorer spans' metadata: the judge's
    verdict is its score, and the judge is not named."""
    path = write(tmp_path / "rows.json", rows_with_scores(braintrust_events()))
    assert_judged_verdicts(path, named=False)
    assert read_results(path)["judged-rubric"].judge == {"pass": False, "score": 0.0}


def test_braintrust_rows_as_csv(tmp_path: Path) -> None:
    rows = rows_with_scores(braintrust_events())
    lines = [
        {
            key: value if key == "output" and isinstance(value, str) else json.dumps(value)
            for key, value in row.items()
        }
        for row in rows
    ]
    header = ["id", "input", "output", "expected", "scores", "metadata"]
    assert_judged_verdicts(write_csv(tmp_path / "rows.csv", lines, header), named=False)


def test_braintrust_with_an_autoevals_judge(tmp_path: Path) -> None:
    """Where Blueprint's judge was not used, an autoevals LLM scorer's score is the verdict,
    with its rationale."""
    events = [event for event in braintrust_events() if not event.get("span_parents")]
    rubric = next(e for e in events if e["metadata"]["blueprint"]["id"] == "judged-rubric")
    scorer = {
        "id": "factuality",
        "span_id": "factuality",
        "root_span_id": rubric["root_span_id"],
        "span_parents": [rubric["span_id"]],
        "span_attributes": {"type": "score", "name": "Factuality"},
        "scores": {"Factuality": 0.4},
        "metadata": {"choice": "A", "rationale": "a subset of the expert answer"},
    }
    found = read_results(write(tmp_path / "events.json", [*events, scorer]))
    assert found["judged-rubric"].judge == {
        "score": 0.4,
        "reason": "a subset of the expert answer",
    }
    assert found["judged-reference"].judge is None


def test_a_braintrust_row_that_names_no_row_is_refused(tmp_path: Path) -> None:
    rows = rows_with_scores(braintrust_events())
    rows[1]["metadata"] = {"note": "no blueprint here"}
    with pytest.raises(ParseError) as caught:
        read_results(write(tmp_path / "rows.json", rows))
    assert "event 2" in caught.value.reason


# --- OpenAI Evals: the record log ---------------------------------------------------------------


def test_a_record_log_match_from_another_eval_is_let_be(tmp_path: Path) -> None:
    lines = (RUNS / "openai-evals-record.jsonl").read_text(encoding="utf-8").splitlines()
    other = {"run_id": "x", "event_id": 99, "sample_id": "other.dev.0", "type": "match"}
    other["data"] = {"correct": True, "expected": "a", "picked": "a"}
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*lines, json.dumps(other)]) + "\n", encoding="utf-8")
    assert set(read_results(path)) == set(EXPECTED)


def test_a_record_log_with_a_broken_line_names_it(tmp_path: Path) -> None:
    lines = (RUNS / "openai-evals-record.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([*lines[:3], "{not json", *lines[3:]]) + "\n", encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        read_results(path)
    assert caught.value.line == 4


def test_json_lines_results_are_still_blueprints_own(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text(
        json.dumps({"id": "judged-rubric", "output": "x", "judge": {"pass": True}}) + "\n",
        encoding="utf-8",
    )
    assert read_results(path)["judged-rubric"].judge == {"pass": True}


# --- CSV: a runner claims its own by the header, and Blueprint's own CSV is unchanged ----------


def test_blueprints_own_csv_needs_an_id_column(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text("row,output\nexact-reference,30 days\n", encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        read_results(path)
    assert caught.value.line == 1


def test_blueprints_own_csv_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    judge = json.dumps({"pass": True, "model": "m", "template": "t"})
    path.write_text(
        'id,output,judge\nexact-reference,30 days,"' + judge.replace('"', '""') + '"\n',
        encoding="utf-8",
    )
    found = read_results(path)["exact-reference"]
    assert (found.output, found.judge, found.line) == ("30 days", json.loads(judge), 2)


def test_a_runner_csv_keeps_its_line_numbers(tmp_path: Path) -> None:
    lines = csv_lines(RUNS / "langsmith-experiment.csv")
    lines = [*lines, copy.deepcopy(lines[0])]  # the first row twice
    path = write_csv(tmp_path / "results.csv", lines, list(lines[0]))
    with pytest.raises(ParseError) as caught:
        read_results(path)
    assert caught.value.line == len(lines) + 1
