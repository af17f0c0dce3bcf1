"""Blueprint's scorer in each runner gives every recorded result the verdict `blueprint grade`
gives: promptfoo's own eval (the echo provider returning the recorded output, Blueprint's
python assertion grading it), DeepEval's ``metric.measure``, LangSmith's own evaluator
runner and Braintrust's ``Eval`` (with nothing sent), each over the records of the bundled
example's export."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import (
    QUIET_ENV,
    openai_evals_python,
    promptfoo,
    promptfoo_eval,
    quiet_vendors,
    vendor,
)

from blueprint.convert import ConvertOptions, convert
from blueprint.formats.promptfoo import dump_yaml, read_yaml
from blueprint.grading import Recorded, grade_row
from blueprint.integrations.promptfoo import ASSERTION
from conftest import EXAMPLES
from grading_table import TABLE, graded

pytestmark = pytest.mark.conformance
IDS = [f"{row_id}-{expected}-{number}" for number, (row_id, _, expected) in enumerate(TABLE)]


def reference(row_id: str, result: dict[str, Any]) -> tuple[str, float | None]:
    """What ``blueprint grade`` gives the result: the verdict and its score."""
    found = graded(row_id, result)
    return found.verdict, found.score


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


def recorded_text(result: dict[str, Any]) -> str:
    """A recorded result as the text a provider returns: the output, else the tool calls as
    JSON, else the whole result (a final state) as JSON."""
    if "output" in result:
        return str(result["output"])
    if "toolCalls" in result:
        return json.dumps(result["toolCalls"])
    return json.dumps(result)


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
        # a test case has no place for the world after the run: the scorer reads it here
        additional_metadata={
            **golden.additional_metadata,
            **({"finalState": result["finalState"]} if "finalState" in result else {}),
        },
    )
    metric = OracleMetric()
    score = metric.measure(test_case)
    verdict, reference_score = reference(row_id, result)
    assert verdict == expected
    # a row with no verdict is never a success: DeepEval would count a None as passed
    assert (score, metric.success) == (reference_score, verdict == "pass"), metric.reason
    assert (metric.error is None) == scored(verdict)


def test_deepeval_evaluate_passes_no_row_without_a_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DeepEval's own evaluate() counts a test case whose metric gives None as passed: the
    metric makes such a row an error, so no row without a verdict passes there."""
    monkeypatch.chdir(tmp_path)  # evaluate() writes its last run to .deepeval/ here
    deepeval = vendor("deepeval")
    configs = vendor("deepeval.evaluate.configs")
    dataset_module = vendor("deepeval.dataset")
    from deepeval.test_case import LLMTestCase, ToolCall

    from blueprint.integrations.deepeval import OracleMetric

    exported(tmp_path, "deepeval", "goldens.json")
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(tmp_path / "goldens.json"))
    goldens = {golden.name: golden for golden in dataset.goldens}
    barred = json.loads(json.dumps(goldens["cs-refund-issue-valid"].additional_metadata))
    barred["blueprint"]["case"]["evaluator"] = "llm-judge"  # a bar the set would not allow
    starter = json.loads(json.dumps(goldens["cs-refund-window-quote"].additional_metadata))
    starter["blueprint"]["case"]["provenance"] = "starter-example"
    answer = goldens["cs-refund-window-quote"].expected_output

    def test_case(name: str, output: str, metadata: dict[str, Any], **more: Any) -> Any:
        return LLMTestCase(
            name=name, input=goldens[name].input, actual_output=output,
            expected_output=goldens[name].expected_output,
            expected_tools=goldens[name].expected_tools,
            additional_metadata=metadata, **more,
        )  # fmt: skip

    cases = [
        # a person's row, a row the set bars the judge from, a final state not recorded,
        # a starter example that would pass, and one gold row that passes
        test_case(
            "cs-escalate-chargeback-threat",
            "I will escalate this.",
            goldens["cs-escalate-chargeback-threat"].additional_metadata,
        ),
        test_case(
            "cs-refund-issue-valid",
            "done",
            barred,
            tools_called=[ToolCall(name="issue_store_credit", input_parameters={})],
        ),
        test_case(
            "cs-refund-ledger-entry",
            "Refunded.",
            goldens["cs-refund-ledger-entry"].additional_metadata,
        ),
        test_case("cs-refund-window-quote", answer, starter),
    ]
    gold = test_case(
        "cs-refund-window-quote", answer, goldens["cs-refund-window-quote"].additional_metadata
    )
    outcome = deepeval.evaluate(
        test_cases=[*cases, gold],
        metrics=[OracleMetric()],
        async_config=configs.AsyncConfig(run_async=False),
        display_config=configs.DisplayConfig(show_indicator=False, print_results=False),
        cache_config=configs.CacheConfig(write_cache=False),
        error_config=configs.ErrorConfig(ignore_errors=True),
    )
    found = {result.index if result.index is not None else n: result
             for n, result in enumerate(outcome.test_results)}  # fmt: skip
    assert [found[n].success for n in range(len(cases) + 1)] == [False] * len(cases) + [True]


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


def test_promptfoo_python_assertion(
    promptfoo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # promptfoo runs the assertion with this Python, which has Blueprint installed
    monkeypatch.setenv("PROMPTFOO_PYTHON", sys.executable)
    target = tmp_path / "tests.yaml"
    options = ConvertOptions(target_format="promptfoo", graders="blueprint")
    convert(EXAMPLES / "support-refunds.json", target, options)
    tests = {test["metadata"]["id"]: test for test in read_yaml(target)}
    scored = [
        (number, row_id, result)
        for number, (row_id, result, expected) in enumerate(TABLE)
        if expected in ("pass", "fail")
    ]
    for _, row_id, _ in scored:
        assert tests[row_id]["assert"] == [ASSERTION]  # Blueprint's scorer, not promptfoo's
    promptfoo_agrees(promptfoo, tmp_path, tests, [(row_id, result) for _, row_id, result in scored])


def promptfoo_agrees(
    promptfoo: str,
    tmp_path: Path,
    tests: dict[str, dict[str, Any]],
    cases: list[tuple[str, dict[str, Any]]],
) -> None:
    """promptfoo's own eval of each exported test on its recorded result (the echo provider
    returning it) passes and scores it as ``blueprint grade`` does."""
    suite = []
    for row_id, result in cases:
        test = json.loads(json.dumps(tests[row_id]))
        test["vars"] = {**test["vars"], "recorded": recorded_text(result)}
        suite.append(test)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_bytes(
        dump_yaml({"prompts": ["{{recorded}}"], "providers": ["echo"], "tests": suite})
    )
    results = {row["testIdx"]: row for row in promptfoo_eval(promptfoo, config)["results"]}
    assert len(results) == len(cases)
    for index, (row_id, result) in enumerate(cases):
        verdict, score = reference(row_id, result)
        found = results[index]
        where = (row_id, result, found.get("error"), found["gradingResult"])
        assert found["success"] == (verdict == "pass"), where
        assert found["score"] == score, where


def test_promptfoos_own_assertions_give_the_verdicts_grade_gives(
    promptfoo: str, tmp_path: Path
) -> None:
    """The default export (promptfoo's equals and Blueprint's javascript, no Python) passes
    and scores each recorded result of the table as ``blueprint grade`` does."""
    target = tmp_path / "tests.yaml"
    convert(EXAMPLES / "support-refunds.json", target, ConvertOptions(target_format="promptfoo"))
    tests = {test["metadata"]["id"]: test for test in read_yaml(target)}
    cases = [
        (row_id, result)
        for row_id, result, expected in TABLE
        if expected in ("pass", "fail") and tests.get(row_id, {}).get("assert")
    ]
    # every oracle type the default export asserts is in the table
    assert {row_id for row_id, _ in cases} >= {
        "cs-refund-issue-valid",
        "cs-eligibility-partial-damage",
        "cs-eligibility-late-return",
        "cs-refund-window-quote",
    }
    promptfoo_agrees(promptfoo, tmp_path, tests, cases)


def test_grade_reads_promptfoos_results_file(
    promptfoo: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTFOO_PYTHON", sys.executable)
    target = tmp_path / "tests.yaml"
    options = ConvertOptions(target_format="promptfoo", graders="blueprint")
    convert(EXAMPLES / "support-refunds.json", target, options)
    recorded = {
        item["id"]: item
        for item in map(json.loads, (EXAMPLES / "support-refunds.results.jsonl").open())
    }
    suite = []
    for test in read_yaml(target):
        item = recorded[test["metadata"]["id"]]
        output = item.get("output") if "toolCalls" not in item else json.dumps(item["toolCalls"])
        test["vars"] = {**test["vars"], "recorded": output}
        suite.append(test)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_bytes(
        dump_yaml({"prompts": ["{{recorded}}"], "providers": ["echo"], "tests": suite})
    )
    promptfoo_eval(promptfoo, config)
    results = config.with_name(f".results-{config.stem}.json")
    from blueprint.grading import grade_set

    graded = {row.id: row for row in grade_set(EXAMPLES / "support-refunds.json", results).rows}
    # a final state is no output promptfoo gives: Blueprint's assertion gives that test no
    # verdict (promptfoo shows an error), and blueprint grade reads it as not-run
    assert {row_id: row.verdict for row_id, row in graded.items() if row_id in recorded} == {
        "cs-refund-window-quote": "pass",
        "cs-refund-final-sale": "pass",
        "cs-eligibility-late-return": "pass",
        "cs-eligibility-partial-damage": "pass",
        "cs-tone-angry-repeat-contact": "needs-human",
        "cs-refund-issue-valid": "pass",
        "cs-refund-ledger-entry": "not-run",
        "cs-escalate-chargeback-threat": "needs-human",
    }


def test_inspect_scorer(tmp_path: Path) -> None:
    inspect_ai = vendor("inspect_ai")
    dataset_module = vendor("inspect_ai.dataset")
    model = vendor("inspect_ai.model")
    solvers = vendor("inspect_ai.solver")
    tool = vendor("inspect_ai.tool")
    from blueprint.integrations.inspect import oracle_scorer

    target = tmp_path / "samples.jsonl"
    options = ConvertOptions(target_format="inspect", include_human_review=True)
    convert(EXAMPLES / "support-refunds.json", target, options)
    samples = {sample.id: sample for sample in dataset_module.json_dataset(str(target))}
    dataset = []
    for number, (row_id, _, _) in enumerate(TABLE):
        sample = samples[row_id].model_copy(deep=True)
        sample.metadata = {**(sample.metadata or {}), "tableIndex": number}
        sample.id = f"{row_id}#{number}"
        dataset.append(sample)

    @solvers.solver
    def recorded() -> Any:
        """The recorded result as the model's turn: its text and its tool calls."""

        async def solve(state: Any, generate: Any) -> Any:
            result = TABLE[state.metadata["tableIndex"]][1]
            calls = [
                tool.ToolCall(
                    id=str(number), function=call["name"], arguments=call.get("arguments", {})
                )
                for number, call in enumerate(result.get("toolCalls") or [])
            ]
            message = model.ChatMessageAssistant(
                content=result.get("output", ""), tool_calls=calls or None
            )
            if "finalState" in result:
                state.store.set("finalState", result["finalState"])
            state.messages.append(message)
            state.output = model.ModelOutput.from_message(message)
            return state

        return solve

    task = inspect_ai.Task(
        dataset=dataset_module.MemoryDataset(dataset), solver=recorded(), scorer=oracle_scorer()
    )
    [log] = inspect_ai.eval(
        task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == len(TABLE)
    for sample in log.samples:
        row_id, result, expected = TABLE[sample.metadata["tableIndex"]]
        verdict, score = reference(row_id, result)
        assert verdict == expected
        found = (sample.scores or {}).get("oracle_scorer")
        if score is None:
            assert found is None or found.value is None, (row_id, found)
        else:
            assert found is not None and (found.answer, found.value) == (verdict, score), (
                row_id,
                result,
                found,
            )


#: run in the environment that has the evals package: Blueprint's eval class over each
#: recorded completion of the table, through the package's own recorder
EVALS_RUNNER = """
import json, sys
import evals, evals.record
from blueprint.integrations.openai_evals import OracleEval

class Fixed:
    text = ""
    def __call__(self, prompt, **_):
        text = self.text
        class Result:
            def get_completions(self):
                return [text]
        return Result()

class Keep(evals.record.RecorderBase):
    def record_event(self, type, data=None, sample_id=None):
        self._events.append((self.current_sample_id(), type, data))

samples_path, table_path = sys.argv[1:3]
samples = {s["metadata"]["blueprint"]["id"]: s for s in evals.get_jsonl(samples_path)}
completion = Fixed()
run = OracleEval(completion_fns=[completion], samples_jsonl=samples_path, eval_registry_path=None)
recorder = Keep(run_spec=None)
for number, (row_id, text) in enumerate(json.load(open(table_path))):
    completion.text = text
    with recorder.as_default_recorder(str(number)):
        run.eval_sample(dict(samples[row_id]), None)
found = {}
for number, kind, data in recorder._events:
    if kind in ("match", "blueprint_verdict"):
        found[number] = {"kind": kind, "verdict": data["verdict"], "score": data.get("score")}
print(json.dumps(found))
"""


def test_openai_evals_class(tmp_path: Path) -> None:
    python = openai_evals_python()
    target = tmp_path / "samples.jsonl"
    options = ConvertOptions(
        target_format="openai-evals", graders="blueprint", include_human_review=True
    )
    convert(EXAMPLES / "support-refunds.json", target, options)
    table = [(row_id, recorded_text(result)) for row_id, result, _ in TABLE]
    (tmp_path / "table.json").write_text(json.dumps(table), encoding="utf-8")
    (tmp_path / "runner.py").write_text(EVALS_RUNNER, encoding="utf-8")
    done = subprocess.run(
        [python, str(tmp_path / "runner.py"), str(target), str(tmp_path / "table.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **QUIET_ENV, "OPENAI_API_KEY": "offline-placeholder"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(found) == len(TABLE)
    for number, (row_id, result, expected) in enumerate(TABLE):
        verdict, score = reference(row_id, result)
        assert verdict == expected
        assert (found[str(number)]["verdict"], found[str(number)]["score"]) == (verdict, score)
        assert found[str(number)]["kind"] == ("match" if score is not None else "blueprint_verdict")
