"""A judged row in DeepEval, offline: Blueprint's metric grades it with DeepEval's own GEval,
whose judge here is a stub model that records every prompt it receives. The stub's prompts
hold each judged row's criteria and its reference or acceptable answers; tool-call and exact
rows never reach it; and the test run DeepEval saves, read by ``blueprint grade``, gives the
stub's verdict with its model and the template named."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor
from judge_stub import MARKS, MUST_SEE, SET
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert
from blueprint.core.judgeprompt import template_id

pytestmark = pytest.mark.conformance


@pytest.fixture(autouse=True)
def _runner_installed() -> None:
    """Every test here needs the runner: skipped (or failed, where conformance is required)
    before anything imports Blueprint's scorer for it."""
    vendor("deepeval.metrics")


MODEL = "stub-judge"
#: the stub's score (of 10) by row: the rubric row fails, the graded row is half right
SCORES = {"judged-rubric": 2, "judged-graded": 5}
JUDGED = set(MUST_SEE)
#: each judged row's oracle type, whose template its judge prompt is rendered from
ORACLES = {
    "judged-reference": "reference-answer",
    "judged-acceptable": "acceptable-set",
    "judged-graded": "acceptable-set",
    "judged-rubric": "rubric",
    "judged-by-family": "rubric",
}
ANSWERS = {row_id: "You have 30 days; sorry for the trouble." for row_id in MARKS}
ANSWERS["exact-reference"] = "30 days"


def stub_model() -> Any:
    """A DeepEvalBaseLLM that keeps each prompt and answers as GEval asks: its evaluation
    steps are the lines of the criteria, its score the row's (9 of 10 unless SCORES says)."""
    models = vendor("deepeval.models")

    class Stub(models.DeepEvalBaseLLM):  # type: ignore[misc]
        def __init__(self) -> None:
            self.prompts: list[str] = []
            super().__init__(MODEL)

        def load_model(self) -> Any:
            return self

        def get_model_name(self) -> str:
            return MODEL

        def generate(self, prompt: str, schema: Any = None, **_: Any) -> Any:
            self.prompts.append(prompt)
            if "steps" in schema.model_fields:
                criteria = prompt.split("Evaluation Criteria:", 1)[1].split("**", 1)[0]
                return schema(steps=[line for line in criteria.splitlines() if line.strip()])
            row = next(row for row, mark in MARKS.items() if mark in prompt)
            return schema(score=SCORES.get(row, 9), reason=f"the stub's verdict on {row}")

        async def a_generate(self, prompt: str, schema: Any = None, **_: Any) -> Any:
            return self.generate(prompt, schema)

    return Stub()


def goldens(tmp_path: Path) -> dict[str, Any]:
    """The judged set exported for Blueprint's metric, loaded by DeepEval's own loader."""
    dataset_module = vendor("deepeval.dataset")
    target = tmp_path / "goldens.json"
    convert(SET, target, ConvertOptions(target_format="deepeval", graders="blueprint"))
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(target))
    return {golden.name: golden for golden in dataset.goldens}


def llm_case(golden: Any, **more: Any) -> Any:
    from deepeval.test_case import LLMTestCase, ToolCall

    calls = None
    if golden.name == "tool-calls":
        calls = [ToolCall(name="lookup_order", input_parameters={"order_id": "A-1"})]
    return LLMTestCase(
        name=golden.name,
        input=golden.input,
        actual_output=more.pop("actual_output", ANSWERS[golden.name]),
        expected_output=golden.expected_output,
        expected_tools=golden.expected_tools,
        tools_called=calls,
        additional_metadata=more.pop("metadata", golden.additional_metadata),
        **more,
    )


def prompts_by_row(prompts: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for prompt in prompts:
        rows = [row for row, mark in MARKS.items() if mark in prompt]
        assert len(rows) == 1, prompt
        found.setdefault(rows[0], []).append(prompt)
    return found


@pytest.mark.parametrize("run_async", [False, True])
def test_the_stub_judge_sees_each_rows_rubric_and_grade_reads_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_async: bool
) -> None:
    monkeypatch.chdir(tmp_path)  # DeepEval keeps its last run in .deepeval/ here
    deepeval = vendor("deepeval")
    configs = vendor("deepeval.evaluate.configs")
    from blueprint.integrations.deepeval import OracleMetric

    stub = stub_model()
    cases = [llm_case(golden) for golden in goldens(tmp_path).values()]
    results = tmp_path / "results"
    outcome = deepeval.evaluate(
        test_cases=cases,
        metrics=[OracleMetric(judge=stub)],
        async_config=configs.AsyncConfig(run_async=run_async),
        display_config=configs.DisplayConfig(
            show_indicator=False, print_results=False, results_folder=str(results)
        ),
        cache_config=configs.CacheConfig(write_cache=False),
    )
    assert len(outcome.test_results) == len(MARKS)

    seen = prompts_by_row(stub.prompts)
    assert set(seen) == JUDGED  # the tool-call and exact rows never reach the judge
    for row_id, needed in MUST_SEE.items():
        together = "\n".join(seen[row_id])
        assert all(text in together for text in needed), (row_id, together)
        # GEval's scoring prompt has the expected output: the reference or the answers
        if row_id in ("judged-reference", "judged-acceptable", "judged-graded"):
            scoring = [prompt for prompt in seen[row_id] if "Expected Output" in prompt]
            assert scoring and all(needed[-1] in prompt for prompt in scoring)

    [saved] = results.glob("test_run_*.json")
    for path in (saved, tmp_path / ".deepeval" / ".latest_run_full.json"):
        done = CliRunner().invoke(app, ["grade", str(SET), str(path), "--report", "json"])
        assert done.exit_code in (0, 1), done.output
        rows = {row["id"]: row for row in json.loads(done.stdout)["rows"]}
        assert {row_id: (row["verdict"], row["score"]) for row_id, row in rows.items()} == {
            "judged-reference": ("pass", 0.9),
            "judged-acceptable": ("pass", 0.9),
            "judged-graded": ("pass", 0.5),  # at the row's passThreshold
            "judged-rubric": ("fail", 0.2),
            "judged-by-family": ("pass", 0.9),
            "tool-calls": ("pass", 1.0),
            "exact-reference": ("pass", 1.0),
        }
        for row_id, oracle in ORACLES.items():
            assert rows[row_id]["judge"] == {"model": MODEL, "template": template_id(oracle)}
        assert "judge" not in rows["tool-calls"] and "judge" not in rows["exact-reference"]


def test_the_metric_reports_the_judge_and_its_async_measure_agrees(tmp_path: Path) -> None:
    from blueprint.integrations.deepeval import NAME, OracleMetric

    golden = goldens(tmp_path)["judged-rubric"]
    stub = stub_model()
    metric = OracleMetric(judge=stub)
    assert metric.measure(llm_case(golden)) == 0.2
    assert (metric.success, metric.evaluation_model, metric.error) == (False, MODEL, None)
    logged = json.loads(metric.verbose_logs)
    assert logged == {
        "verdict": "fail",
        "judge": {
            "pass": False,
            "score": 0.2,
            "reason": "the stub's verdict on judged-rubric",
            "model": MODEL,
            "template": template_id("rubric"),
        },
    }
    again = OracleMetric(judge=stub)
    assert asyncio.run(again.a_measure(llm_case(golden))) == 0.2
    assert json.loads(again.verbose_logs) == logged
    assert metric.__name__ == NAME


def test_a_barred_pairing_never_reaches_the_judge(tmp_path: Path) -> None:
    """llm-judge on a tool-call row: the set bars it, so the row is invalid and GEval is
    never built, whatever the judge."""
    from blueprint.integrations.deepeval import OracleMetric

    golden = goldens(tmp_path)["tool-calls"]
    metadata = json.loads(json.dumps(golden.additional_metadata))
    metadata["blueprint"]["case"]["evaluator"] = "llm-judge"
    stub = stub_model()
    metric = OracleMetric(judge=stub)
    assert metric.measure(llm_case(golden, metadata=metadata)) is None
    assert stub.prompts == []
    assert metric.verdict is not None and metric.verdict.verdict == "invalid"
    assert metric.success is False and metric.error is not None
    assert metric.judged is None and json.loads(metric.verbose_logs) == {"verdict": "invalid"}


def test_a_judged_row_with_no_output_never_reaches_the_judge(tmp_path: Path) -> None:
    from blueprint.integrations.deepeval import OracleMetric

    golden = goldens(tmp_path)["judged-reference"]
    stub = stub_model()
    metric = OracleMetric(judge=stub)
    assert metric.measure(llm_case(golden, actual_output=None)) is None
    assert stub.prompts == [] and metric.verdict is not None
    assert metric.verdict.verdict == "needs-judge"


def test_a_judge_that_fails_is_the_metrics_error(tmp_path: Path) -> None:
    """DeepEval records a metric's exception as its error: the metric says the judge failed
    and gives no score."""
    from blueprint.integrations.deepeval import OracleMetric

    golden = goldens(tmp_path)["judged-by-family"]
    stub = stub_model()

    def unreachable(prompt: str, schema: Any = None, **_: Any) -> Any:
        raise ConnectionError("the judge's endpoint cannot be reached")

    stub.generate = unreachable
    metric = OracleMetric(judge=stub)
    with pytest.raises(ConnectionError):
        metric.measure(llm_case(golden))
    assert metric.score is None and metric.success is False
    assert metric.error is not None and "endpoint" in metric.error
