"""Blueprint's scorer in each runner gives every recorded result the verdict `blueprint grade`
gives: DeepEval's ``metric.measure``, LangSmith's own evaluator runner and Braintrust's
``Eval`` (with nothing sent), each over the records of the bundled example's export."""

from __future__ import annotations

import datetime
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor

from blueprint.convert import ConvertOptions, convert
from blueprint.grading import Recorded, grade_row
from conftest import EXAMPLES
from grading_table import EXAMPLE, ROWS, TABLE

pytestmark = pytest.mark.conformance
FAMILIES = {family["id"]: family.get("evaluator") for family in EXAMPLE["caseFamilies"]}
IDS = [f"{row_id}-{expected}-{number}" for number, (row_id, _, expected) in enumerate(TABLE)]


def reference(row_id: str, result: dict[str, Any]) -> tuple[str, float | None]:
    """What ``blueprint grade`` gives the result: the verdict and its score."""
    row = ROWS[row_id]
    recorded = Recorded(
        id=row_id,
        output=result.get("output"),
        has_output="output" in result,
        tool_calls=result.get("toolCalls"),
        judge=result.get("judge"),
    )
    family = FAMILIES.get(row["metadata"]["case"].get("caseFamily"))
    verdict = grade_row(row, recorded, family_evaluator=family)
    return verdict.verdict, verdict.score


def exported(tmp_path: Path, fmt: str, name: str) -> dict[str, dict[str, Any]]:
    """The example's records in a vendor format, by row id (human rows included)."""
    target = tmp_path / name
    options = ConvertOptions(target_format=fmt, include_human_review=True, graders="blueprint")
    convert(EXAMPLES / "support-refunds.json", target, options)
    text = target.read_text(encoding="utf-8")
    records = (
        json.loads(text) if name.endswith(".json") else list(map(json.loads, text.split("\n")[:-1]))
    )
    return {record_id(record): record for record in records}


def record_id(record: dict[str, Any]) -> str:
    metadata = record.get("additional_metadata") or record.get("metadata") or {}
    return str(metadata["blueprint"]["id"])


def scored(verdict: str) -> bool:
    return verdict in ("pass", "fail")


@pytest.mark.parametrize(("row_id", "result", "expected"), TABLE, ids=IDS)
def test_deepeval_metric(
    tmp_path: Path, row_id: str, result: dict[str, Any], expected: str
) -> None:
    dataset_module = vendor("deepeval.dataset")
    from deepeval.test_case import LLMTestCase, ToolCall

    from blueprint.integrations.deepeval import OracleMetric

    exported(tmp_path, "deepeval", "goldens.json")
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(tmp_path / "goldens.json"))  # DeepEval's own loader
    [golden] = [golden for golden in dataset.goldens if golden.name == row_id]
    calls = result.get("toolCalls")
    test_case = LLMTestCase(
        input=golden.input,
        actual_output=result.get("output"),
        expected_output=golden.expected_output,
        expected_tools=golden.expected_tools,
        tools_called=None
        if calls is None
        else [
            ToolCall(name=call["name"], input_parameters=call.get("arguments")) for call in calls
        ],
        additional_metadata=golden.additional_metadata,
    )
    metric = OracleMetric()
    score = metric.measure(test_case)
    verdict, reference_score = reference(row_id, result)
    assert verdict == expected
    assert (score, metric.success) == (
        reference_score,
        verdict == "pass" if scored(verdict) else None,
    ), metric.reason


@pytest.mark.parametrize(("row_id", "result", "expected"), TABLE, ids=IDS)
def test_langsmith_evaluator(
    tmp_path: Path, row_id: str, result: dict[str, Any], expected: str
) -> None:
    schemas = vendor("langsmith.schemas")
    evaluation = vendor("langsmith.evaluation.evaluator")
    from blueprint.integrations.langsmith import KEY, oracle_evaluator

    example = exported(tmp_path, "langsmith", "examples.jsonl")[row_id]
    now = datetime.datetime.now(datetime.UTC)
    found = evaluation.run_evaluator(oracle_evaluator).evaluate_run(
        schemas.Run(
            id=uuid.uuid4(),
            name="recorded",
            start_time=now,
            run_type="chain",
            inputs=example["inputs"],
            outputs=result,
            trace_id=uuid.uuid4(),
        ),
        schemas.Example(
            id=uuid.uuid4(),
            dataset_id=uuid.uuid4(),
            inputs=example["inputs"],
            outputs=example.get("outputs"),
            metadata=example.get("metadata"),
            created_at=now,
        ),
    )
    assert found.key == KEY
    assert (found.value, found.score) == reference(row_id, result), found.comment


def test_braintrust_eval(tmp_path: Path) -> None:
    braintrust = vendor("braintrust")
    from blueprint.integrations.braintrust import NAME, oracle_scorer

    records = exported(tmp_path, "braintrust", "records.jsonl")
    data = [
        {
            "input": records[row_id]["input"],
            "expected": records[row_id].get("expected"),
            "metadata": {**records[row_id]["metadata"], "tableIndex": number},
        }
        for number, (row_id, _, _) in enumerate(TABLE)
    ]

    def task(input: Any, hooks: Any) -> Any:
        return TABLE[hooks.metadata["tableIndex"]][1]

    outcome = braintrust.Eval(
        "blueprint-grading", data=data, task=task, scores=[oracle_scorer], no_send_logs=True
    )
    assert len(outcome.results) == len(TABLE)
    for found in outcome.results:
        row_id, result, expected = TABLE[found.metadata["tableIndex"]]
        verdict, score = reference(row_id, result)
        assert verdict == expected
        assert found.scores[NAME] == score, (row_id, result)
