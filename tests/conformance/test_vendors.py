"""The real vendor tools accept our exports, and grade them the way the oracle type says."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import promptfoo, promptfoo_eval, quiet_vendors, vendor

from blueprint.convert import data_rows
from blueprint.formats import REGISTRY, WriteOptions

pytestmark = pytest.mark.conformance

ROOT = Path(__file__).parents[2]
AWKWARD = ROOT / "tests" / "fixtures" / "awkward" / "awkward.json"
EXAMPLE = ROOT / "examples" / "support-refunds.json"
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "conformance"}


def export(source: Path, fmt: str, target: Path, **options: Any) -> Any:
    rows = list(data_rows(REGISTRY["json"].open(source)))
    return REGISTRY[fmt].write(HEADER, iter(rows), target, WriteOptions(**options))


def case(row_id: str, value: Any, expected: Any, oracle: str = "reference-answer") -> dict:
    return {
        "id": row_id,
        "input": value,
        "expected": expected,
        "metadata": {
            "case": {
                "caseId": row_id,
                "oracleType": oracle,
                "expectedBehavior": "repeats its input",
                "provenance": "expert-authored",
            }
        },
    }


def echo_set(tmp_path: Path, *, matching: bool) -> Path:
    """Rows whose expected answers equal their inputs (or, with matching=False, never do)."""

    def answer(text: str) -> str:
        return text if matching else f"not {text}"

    calls = [{"name": "lookup", "arguments": {"order_id": "A-1"}}]
    rows = [
        case("plain", "Paris", answer("Paris")),
        case(
            "template-text",
            "{{7*7}} and {% raw %} stay literal",
            answer("{{7*7}} and {% raw %} stay literal"),
        ),
        case("assertion-like", "contains: x", answer("contains: x")),
        case("python-like", "python: 1+1", answer("python: 1+1")),
        case("unknown-var", "Hello {{name}}, {% if x %}", answer("Hello {{name}}, {% if x %}")),
        case("comment-closer", "a #} b {#} c", answer("a #} b {#} c")),
        case("escape-lookalike", '{{ "#" }} and {{ "{" }}', answer('{{ "#" }} and {{ "{" }}')),
        case("file-like", "file://nowhere.txt", answer("file://nowhere.txt")),
        case(
            "braced-member", "{{x}}", {"acceptable": ["{{y}}", answer("{{x}}")]}, "acceptable-set"
        ),
        case("object-input", {"input": "same"}, answer("same")),
        case("unicode", "smile 😀 𝔘", answer("smile 😀 𝔘")),
        case("member", "yes", {"acceptable": ["no", answer("yes")]}, "acceptable-set"),
        case(
            "graded",
            "maybe",
            {
                # a member passes at grade 1, as blueprint grade passes it
                "graded": [
                    {"value": answer("maybe"), "grade": 1},
                    {"value": "certainly", "grade": 0.5},
                ]
            },
            "acceptable-set",
        ),
        case(
            "tool-calls",
            json.dumps(calls),
            {
                "calls": calls if matching else [{"name": "refund", "arguments": {}}],
                "order": "exact",
            },
            "expected-tool-calls",
        ),
    ]
    path = tmp_path / ("pass.json" if matching else "fail.json")
    path.write_text(json.dumps({**HEADER, "rows": rows}, ensure_ascii=False), encoding="utf-8")
    return path


# --- promptfoo ---------------------------------------------------------------------------------


def run_promptfoo(promptfoo: str, folder: Path, tests: str) -> dict[str, Any]:
    config = folder / "promptfooconfig.yaml"
    config.write_text(
        f'description: conformance\nprompts:\n  - "{{{{input}}}}"\nproviders:\n  - echo\n'
        f"tests: file://{tests}\n",
        encoding="utf-8",
    )
    return promptfoo_eval(promptfoo, config)


@pytest.mark.parametrize("matching", [True, False], ids=["answers-match", "answers-differ"])
def test_promptfoo_grades_our_tests_with_the_echo_provider(
    promptfoo: str, tmp_path: Path, matching: bool
) -> None:
    source = echo_set(tmp_path, matching=matching)
    result = export(source, "promptfoo", tmp_path / "tests.yaml")
    results = run_promptfoo(promptfoo, tmp_path, "tests.yaml")
    stats = results["stats"]
    assert stats["errors"] == 0
    if matching:
        assert (stats["successes"], stats["failures"]) == (result.rows, 0)
    else:
        assert (stats["successes"], stats["failures"]) == (0, result.rows)


def test_promptfoo_validates_an_exported_example_set(promptfoo: str, tmp_path: Path) -> None:
    export(EXAMPLE, "promptfoo", tmp_path / "tests.yaml")
    (tmp_path / "promptfooconfig.yaml").write_text(
        'prompts:\n  - "{{input}}"\nproviders:\n  - echo\ntests: file://tests.yaml\n',
        encoding="utf-8",
    )
    completed = subprocess.run(
        [promptfoo, "validate", "-c", str(tmp_path / "promptfooconfig.yaml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ.copy(),
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]


# --- DeepEval ----------------------------------------------------------------------------------


def test_deepeval_loads_our_goldens(tmp_path: Path) -> None:
    dataset_module = vendor("deepeval.dataset")
    target = tmp_path / "goldens.json"
    result = export(AWKWARD, "deepeval", target)
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(target))
    assert len(dataset.goldens) == result.rows
    exported = json.loads(target.read_text(encoding="utf-8"))
    for golden, written in zip(dataset.goldens, exported, strict=True):
        assert golden.input == written["input"]
        assert golden.expected_output == written.get("expected_output")
        assert golden.name == written["name"]
        assert golden.additional_metadata == written["additional_metadata"]
        if "expected_tools" in written:
            assert [tool.name for tool in golden.expected_tools] == [
                tool["name"] for tool in written["expected_tools"]
            ]


def test_deepeval_exact_match_grades_reference_answers(tmp_path: Path) -> None:
    dataset_module = vendor("deepeval.dataset")
    metrics = vendor("deepeval.metrics")
    test_case = vendor("deepeval.test_case")
    target = tmp_path / "goldens.json"
    export(EXAMPLE, "deepeval", target)
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(target))
    graded = [g for g in dataset.goldens if g.expected_output is not None]
    assert graded
    for golden in graded:
        metric = metrics.ExactMatchMetric()
        metric.measure(
            test_case.LLMTestCase(
                input=golden.input,
                actual_output=golden.expected_output,
                expected_output=golden.expected_output,
            )
        )
        assert metric.score == 1


# --- LangSmith ---------------------------------------------------------------------------------


def test_every_langsmith_example_validates_against_the_sdk_schema(tmp_path: Path) -> None:
    schemas = vendor("langsmith.schemas")
    target = tmp_path / "examples.jsonl"
    result = export(AWKWARD, "langsmith", target, include_human_review=True)
    lines = target.read_text(encoding="utf-8").splitlines()
    assert len(lines) == result.rows
    for line in lines:
        data = json.loads(line)
        example = schemas.ExampleCreate.model_validate(data)
        assert str(example.id) == data["id"]
        assert example.inputs == data["inputs"]
        assert example.outputs == data.get("outputs")
        assert example.metadata == data["metadata"]


# --- Braintrust --------------------------------------------------------------------------------


def test_braintrust_records_build_eval_cases_and_run_locally(tmp_path: Path) -> None:
    braintrust = vendor("braintrust")
    autoevals = vendor("autoevals")
    target = tmp_path / "records.jsonl"
    result = export(EXAMPLE, "braintrust", target)
    records = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert len(records) == result.rows
    cases = [braintrust.EvalCase(**record) for record in records]
    for record in records:
        assert len(set(record["tags"])) == len(record["tags"])
    answers = {json.dumps(r["input"], sort_keys=True): r.get("expected") for r in records}

    def task(value: Any) -> Any:
        return answers[json.dumps(value, sort_keys=True)]

    evaluation = braintrust.Eval(
        "blueprint-conformance",
        data=cases,
        task=task,
        scores=[autoevals.ExactMatch],
        no_send_logs=True,
    )
    assert evaluation.summary.scores["ExactMatch"].score == 1
