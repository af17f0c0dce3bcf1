"""DeepEval's saved test runs read as recorded results: each test case to its row, its
output and tool calls, and the judge's verdict from Blueprint's metric (with the model and
template) or, where Blueprint's metric was not used, from DeepEval's own model-graded
metrics."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.judgeprompt import template_id
from blueprint.grading.results import read_results
from blueprint.grading.runners import deepeval as deepeval_run

FIXTURES = Path(__file__).parent / "fixtures"
RUN = FIXTURES / "results" / "deepeval-judged" / "test_run.json"
SET = FIXTURES / "judged" / "judged-set.json"
runner = CliRunner()


def document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(RUN.read_text(encoding="utf-8"))
    return loaded


def items(found: Any) -> dict[str, dict[str, Any]]:
    found = deepeval_run.items(Path("run.json"), found)
    assert found is not None
    return {item.pop("id"): item for item in found}


def test_each_test_case_gives_its_row_output_tool_calls_and_judge() -> None:
    found = items(document())
    assert found == {
        "judged-graded": {
            "output": "About a month.",
            "judge": {
                "pass": True,
                "score": 0.5,
                "reason": "About a month is a partial answer.",
                "model": "stub-judge",
                "template": template_id("acceptable-set"),
            },
        },
        "judged-rubric": {
            "output": "Sorry for the wait; your refund is on its way.",
            "judge": {
                "pass": False,
                "score": 0.3,
                "reason": "It apologises but names no date.",
                "model": "stub-judge",
                "template": template_id("rubric"),
            },
        },
        "tool-calls": {
            "output": "Order A-1 ships today.",
            "toolCalls": [{"name": "lookup_order", "arguments": {"order_id": "A-1"}}],
        },
    }


def test_blueprint_grade_gives_the_judges_verdict_with_model_and_template() -> None:
    done = runner.invoke(app, ["grade", str(SET), str(RUN), "--report", "json"])
    assert done.exit_code in (0, 1), done.output
    rows = {row["id"]: row for row in json.loads(done.stdout)["rows"]}
    graded = rows["judged-graded"]
    assert (graded["verdict"], graded["score"]) == ("pass", 0.5)
    assert graded["judge"] == {"model": "stub-judge", "template": template_id("acceptable-set")}
    rubric = rows["judged-rubric"]
    assert (rubric["verdict"], rubric["score"]) == ("fail", 0.3)
    assert rubric["judge"] == {"model": "stub-judge", "template": template_id("rubric")}
    assert (rows["tool-calls"]["verdict"], rows["tool-calls"]["score"]) == ("pass", 1.0)
    assert rows["judged-reference"]["verdict"] == "not-run"


def test_the_last_run_deepeval_test_run_keeps_reads_the_same(tmp_path: Path) -> None:
    latest = tmp_path / ".latest_test_run.json"
    latest.write_text(json.dumps({deepeval_run.RUN_DATA: document()}), encoding="utf-8")
    assert read_results(latest) == read_results(RUN)


def test_without_blueprints_metric_the_model_graded_metrics_are_the_judge() -> None:
    run = document()
    for case in run["testCases"]:
        case["metricsData"] = [
            metric for metric in case["metricsData"] if metric["name"] != deepeval_run.METRIC
        ]
    found = items(run)
    # "Helpful [GEval]": the stub gives it 9 of 10 except for "about a month" (5 of 10)
    assert found["judged-graded"]["judge"] == {
        "pass": True,
        "score": 0.5,
        "reason": "About a month is a partial answer.",
        "model": "stub-judge",
    }
    assert found["judged-rubric"]["judge"]["score"] == 0.9


def test_several_model_graded_metrics_pass_together_or_fail() -> None:
    case = {
        "name": "judged-rubric",
        "input": "q",
        "actualOutput": "a",
        "metricsData": [
            {"name": "A [GEval]", "success": True, "score": 1.0, "evaluationModel": "x"},
            {"name": "Faithfulness", "success": False, "score": 0.0, "evaluationModel": "y"},
            {"name": "Exact", "success": True, "score": 1.0},  # no model: not a judge
            {"name": "B [GEval]", "success": False, "error": "timed out"},  # no verdict
        ],
    }
    found = items({"testCases": [case], "metricsScores": []})
    assert found["judged-rubric"]["judge"] == {"pass": False, "score": 0.5, "model": "x, y"}


def test_a_test_case_without_blueprints_metadata_is_its_row_by_name() -> None:
    case = {"name": "judged-reference", "input": "q", "actualOutput": "30 days"}
    final = {"name": "other", "input": "q", "metadata": {"finalState": {"records": {}}}}
    found = items({"testCases": [case, final], "metricsScores": []})
    assert found == {
        "judged-reference": {"output": "30 days"},
        "other": {"finalState": {"records": {}}},
    }


@pytest.mark.parametrize(
    "other",
    [
        {"testCases": []},  # no metricsScores: not a test run
        {"samples": []},
        [],
        {"testRunData": "not a run"},
    ],
)
def test_other_documents_are_not_a_test_run(other: Any) -> None:
    assert deepeval_run.items(Path("x.json"), copy.deepcopy(other)) is None
