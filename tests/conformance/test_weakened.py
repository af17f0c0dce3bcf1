"""What an export reports as weakened is what the vendor's own grader really lets through.

For each weakened rule the lossy report names, the vendor's grader is run on an output that
breaks the rule: it passes anyway (that is the weakening). Where the report names no
weakening (promptfoo's assertions for tool calls), the same output fails.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import promptfoo, promptfoo_eval, quiet_vendors, vendor

from blueprint.formats import REGISTRY, WriteOptions

pytestmark = pytest.mark.conformance

HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "weakened"}
CALLS = [
    {"name": "lookup_order", "arguments": {"order_id": "A-1"}},
    {"name": "issue_refund", "arguments": {"order_id": "A-1", "amount": 20}},
]
FORBIDDEN = {"name": "close_account"}


def case(row_id: str, oracle: str, expected: Any, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"id": row_id, "input": "refund order A-1"}
    if expected is not None:
        row["expected"] = expected
    row["metadata"] = {
        "case": {
            "caseId": row_id,
            "oracleType": oracle,
            "expectedBehavior": "refunds the order and nothing else",
            "provenance": "expert-authored",
            **fields,
        }
    }
    return row


TOOL_ROW = case(
    "refund", "expected-tool-calls", {"calls": CALLS, "order": "exact", "forbidden": [FORBIDDEN]}
)


def export(fmt: str, rows: list[dict[str, Any]], target: Path) -> dict[str, set[str]]:
    """Write rows; return the weakened fields with the rows they were reported for."""
    result = REGISTRY[fmt].write(HEADER, iter(rows), target, WriteOptions())
    weakened: dict[str, set[str]] = {}
    for lossy in result.lossy:
        if lossy.kind == "weakened":
            weakened.setdefault(lossy.field, set()).update(lossy.row_ids)
    return weakened


# --- DeepEval ----------------------------------------------------------------------------------


def tool_correctness(golden: Any, called: list[dict[str, Any]]) -> float:
    metrics = vendor("deepeval.metrics")
    models = vendor("deepeval.models")
    test_case = vendor("deepeval.test_case")

    class NoModel(models.DeepEvalBaseLLM):  # ToolCorrectnessMetric wants one; never called
        def __init__(self) -> None:
            super().__init__(model="none")

        def load_model(self) -> None:
            return None

        def generate(self, prompt: str, schema: Any = None) -> str:
            raise AssertionError("the metric must not call a model")

        async def a_generate(self, prompt: str, schema: Any = None) -> str:
            raise AssertionError("the metric must not call a model")

        def get_model_name(self) -> str:
            return "none"

    metric = metrics.ToolCorrectnessMetric(model=NoModel())
    metric.measure(
        test_case.LLMTestCase(
            input=golden.input,
            actual_output="done",
            expected_tools=golden.expected_tools,
            tools_called=[
                test_case.ToolCall(name=c["name"], input_parameters=c.get("arguments", {}))
                for c in called
            ],
        ),
        _show_indicator=False,
    )
    return float(metric.score)


def test_deepeval_lets_through_what_the_export_reports_as_weakened(tmp_path: Path) -> None:
    dataset_module = vendor("deepeval.dataset")
    target = tmp_path / "goldens.json"
    weakened = export("deepeval", [TOOL_ROW], target)
    assert {"expected.forbidden", "expected.order", "expected.calls[*].arguments"} <= set(weakened)
    assert weakened["expected.forbidden"] == {"refund"}
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(target))
    (golden,) = dataset.goldens
    assert tool_correctness(golden, CALLS) == 1.0
    # a forbidden call, the calls reversed, wrong arguments: each still scores 1.0
    assert tool_correctness(golden, [*CALLS, FORBIDDEN]) == 1.0
    assert tool_correctness(golden, list(reversed(CALLS))) == 1.0
    wrong = [{**CALLS[0], "arguments": {"order_id": "Z-9"}}, CALLS[1]]
    assert tool_correctness(golden, wrong) == 1.0


def test_deepeval_exact_match_ignores_surrounding_whitespace(tmp_path: Path) -> None:
    dataset_module = vendor("deepeval.dataset")
    metrics = vendor("deepeval.metrics")
    test_case = vendor("deepeval.test_case")
    target = tmp_path / "goldens.json"
    weakened = export("deepeval", [case("capital", "reference-answer", "Paris")], target)
    assert weakened["expected"] == {"capital"}
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(target))
    (golden,) = dataset.goldens
    metric = metrics.ExactMatchMetric()
    metric.measure(
        test_case.LLMTestCase(
            input=golden.input, actual_output="  Paris\n", expected_output=golden.expected_output
        )
    )
    assert metric.score == 1  # not the exact answer, yet it passes


# --- Braintrust --------------------------------------------------------------------------------


def test_braintrust_exact_match_cannot_read_an_acceptable_set(tmp_path: Path) -> None:
    autoevals = vendor("autoevals")
    target = tmp_path / "records.jsonl"
    rows = [
        case("sizes", "acceptable-set", {"acceptable": ["S", "small"]}),
        case("order", "reference-answer", {"city": "Paris", "zip": "75001"}),
    ]
    weakened = export("braintrust", rows, target)
    assert weakened["expected"] == {"sizes", "order"}
    records = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    sizes, order = records
    # "S" is an acceptable answer, yet ExactMatch over the record's expected scores 0
    assert autoevals.ExactMatch()(output="S", expected=sizes["expected"]).score == 0
    # the same object with its keys in another order scores 0
    reordered = {"zip": "75001", "city": "Paris"}
    assert autoevals.ExactMatch()(output=reordered, expected=order["expected"]).score == 0


# --- promptfoo ---------------------------------------------------------------------------------


def run_promptfoo(promptfoo: str, folder: Path, outputs: list[str]) -> list[bool]:
    """Run tests.yaml with each test given its output (providerOutput); pass or fail each."""
    from blueprint.formats.promptfoo import dump_yaml, read_yaml

    tests = read_yaml(folder / "tests.yaml")
    for test, output in zip(tests, outputs, strict=True):
        test["providerOutput"] = output
    (folder / "tests.yaml").write_bytes(dump_yaml(tests))
    (folder / "promptfooconfig.yaml").write_text(
        'prompts:\n  - "{{input}}"\nproviders:\n  - echo\ntests: file://tests.yaml\n',
        encoding="utf-8",
    )
    rows = promptfoo_eval(promptfoo, folder / "promptfooconfig.yaml")["results"]
    return [row["success"] for row in sorted(rows, key=lambda row: row["testIdx"])]


def test_promptfoo_enforces_tool_calls_but_not_a_pass_logic(promptfoo: str, tmp_path: Path) -> None:
    trimmed = case("trimmed", "reference-answer", "Paris", passLogic="exact match after trimming")
    again = case("again", "expected-tool-calls", TOOL_ROW["expected"])
    weakened = export("promptfoo", [TOOL_ROW, again, trimmed], tmp_path / "tests.yaml")
    assert "expected.forbidden" not in weakened  # promptfoo's assertion checks it
    assert weakened["metadata.case.passLogic"] == {"trimmed"}
    calls = json.dumps([*CALLS, FORBIDDEN])
    reversed_calls = json.dumps(list(reversed(CALLS)))
    outcome = run_promptfoo(promptfoo, tmp_path, [calls, reversed_calls, "Paris "])
    # the forbidden call and the wrong order fail; "Paris " fails though passLogic allows it
    assert outcome == [False, False, False]
