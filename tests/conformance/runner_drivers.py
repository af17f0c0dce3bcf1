"""Recorded outputs through each Python runner's Blueprint scorer, by the runner's own
machinery: DeepEval's ``metric.measure``, LangSmith's evaluator runner, Braintrust's ``Eval``
(nothing sent), Inspect's ``eval`` with the scorer, and the evals package's recorder over
``OracleEval``.

Each driver takes rows of a set (one recorded output each, by row id), exports them with
``convert --graders blueprint`` and gives every row's verdict and score as the runner reports
them: ``(verdict, score)``, or the score alone for Braintrust, which keeps no verdict.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance_tools import QUIET_ENV, openai_evals_python, vendor

from blueprint.convert import ConvertOptions, convert

Found = dict[str, Any]


def exported(
    tmp_path: Path, rows: list[dict[str, Any]], fmt: str, name: str
) -> dict[str, dict[str, Any]]:
    """The rows exported for Blueprint's scorer in ``fmt``, its records by row id."""
    source = tmp_path / "set.json"
    source.write_text(
        json.dumps({"schemaVersion": "blueprint.eval-set/v1", "name": "checks", "rows": rows}),
        encoding="utf-8",
    )
    target = tmp_path / name
    result = convert(source, target, ConvertOptions(target_format=fmt, graders="blueprint"))
    assert result.valid
    text = target.read_text(encoding="utf-8")
    records = (
        json.loads(text) if name.endswith(".json") else list(map(json.loads, text.splitlines()))
    )
    found = {}
    for record in records:
        metadata = record.get("additional_metadata") or record.get("metadata") or {}
        found[str(metadata["blueprint"]["id"])] = record
    assert set(found) == {str(row["id"]) for row in rows}
    return found


def deepeval_verdicts(tmp_path: Path, rows: list[dict[str, Any]], outputs: list[str]) -> Found:
    dataset_module = vendor("deepeval.dataset")
    from deepeval.test_case import LLMTestCase

    from blueprint.integrations.deepeval import OracleMetric

    exported(tmp_path, rows, "deepeval", "goldens.json")
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(tmp_path / "goldens.json"))  # DeepEval's own loader
    goldens = {golden.name: golden for golden in dataset.goldens}
    found = {}
    for row, output in zip(rows, outputs, strict=True):
        golden = goldens[row["id"]]
        test_case = LLMTestCase(
            input=golden.input,
            actual_output=output,
            expected_output=golden.expected_output,
            additional_metadata=golden.additional_metadata,
        )
        metric = OracleMetric()
        metric.measure(test_case)
        assert metric.error is None, (row["id"], metric.reason)
        found[row["id"]] = ("pass" if metric.success else "fail", metric.score)
    return found


def langsmith_verdicts(tmp_path: Path, rows: list[dict[str, Any]], outputs: list[str]) -> Found:
    schemas = vendor("langsmith.schemas")
    evaluation = vendor("langsmith.evaluation.evaluator")
    from blueprint.integrations.langsmith import oracle_evaluator

    examples = exported(tmp_path, rows, "langsmith", "examples.jsonl")
    runner = evaluation.run_evaluator(oracle_evaluator)
    now = datetime.datetime.now(datetime.UTC)
    found = {}
    for row, output in zip(rows, outputs, strict=True):
        example = examples[row["id"]]
        result = runner.evaluate_run(
            schemas.Run(
                id=uuid.uuid4(),
                name="recorded",
                start_time=now,
                run_type="chain",
                inputs=example["inputs"],
                outputs={"output": output},  # where LangSmith puts a target's text
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
        found[row["id"]] = (result.value, result.score)
    return found


def braintrust_scores(tmp_path: Path, rows: list[dict[str, Any]], outputs: list[str]) -> Found:
    braintrust = vendor("braintrust")
    from blueprint.integrations.braintrust import NAME, oracle_scorer

    records = exported(tmp_path, rows, "braintrust", "records.jsonl")
    data = [
        {
            "input": records[row["id"]]["input"],
            "expected": records[row["id"]].get("expected"),
            "metadata": {**records[row["id"]]["metadata"], "index": number},
        }
        for number, row in enumerate(rows)
    ]

    def task(input: Any, hooks: Any) -> Any:
        return outputs[hooks.metadata["index"]]

    outcome = braintrust.Eval(
        "blueprint-checks", data=data, task=task, scores=[oracle_scorer], no_send_logs=True
    )
    # the scorer's verdict goes to the span's metadata; the result keeps the score
    return {rows[result.metadata["index"]]["id"]: result.scores[NAME] for result in outcome.results}


def inspect_verdicts(tmp_path: Path, rows: list[dict[str, Any]], outputs: list[str]) -> Found:
    inspect_ai = vendor("inspect_ai")
    dataset_module = vendor("inspect_ai.dataset")
    model = vendor("inspect_ai.model")
    solvers = vendor("inspect_ai.solver")
    from blueprint.integrations.inspect import oracle_scorer

    exported(tmp_path, rows, "inspect", "samples.jsonl")
    samples = list(dataset_module.json_dataset(str(tmp_path / "samples.jsonl")))
    assert {str(sample.id) for sample in samples} == {row["id"] for row in rows}
    by_id = dict(zip([row["id"] for row in rows], outputs, strict=True))

    @solvers.solver
    def recorded() -> Any:
        """The recorded output as the model's turn."""

        async def solve(state: Any, generate: Any) -> Any:
            message = model.ChatMessageAssistant(content=by_id[str(state.sample_id)])
            state.messages.append(message)
            state.output = model.ModelOutput.from_message(message)
            return state

        return solve

    task = inspect_ai.Task(
        dataset=dataset_module.MemoryDataset(samples), solver=recorded(), scorer=oracle_scorer()
    )
    [log] = inspect_ai.eval(
        task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    found = {}
    for sample in log.samples:
        score = (sample.scores or {}).get("oracle_scorer")
        assert score is not None, sample.id
        found[str(sample.id)] = (score.answer, score.value)
    return found


#: run in the environment that has the evals package: Blueprint's eval class over each
#: recorded completion, through the package's own recorder
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

samples_path, outputs_path = sys.argv[1:3]
outputs = json.load(open(outputs_path, encoding="utf-8"))
completion = Fixed()
run = OracleEval(completion_fns=[completion], samples_jsonl=samples_path, eval_registry_path=None)
recorder = Keep(run_spec=None)
for sample in evals.get_jsonl(samples_path):
    row_id = sample["metadata"]["blueprint"]["id"]
    completion.text = outputs[row_id]
    with recorder.as_default_recorder(row_id):
        run.eval_sample(dict(sample), None)
found = {}
for row_id, kind, data in recorder._events:
    if kind == "match":
        found[row_id] = ["pass" if data["correct"] else "fail", data.get("score")]
print(json.dumps(found))
"""


def openai_evals_verdicts(tmp_path: Path, rows: list[dict[str, Any]], outputs: list[str]) -> Found:
    python = openai_evals_python()
    exported(tmp_path, rows, "openai-evals", "samples.jsonl")
    by_id = dict(zip([row["id"] for row in rows], outputs, strict=True))
    (tmp_path / "outputs.json").write_text(json.dumps(by_id), encoding="utf-8")
    (tmp_path / "runner.py").write_text(EVALS_RUNNER, encoding="utf-8")
    done = subprocess.run(
        [
            python,
            str(tmp_path / "runner.py"),
            str(tmp_path / "samples.jsonl"),
            str(tmp_path / "outputs.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **QUIET_ENV, "OPENAI_API_KEY": "offline-placeholder"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {row_id: tuple(value) for row_id, value in found.items()}


Driver = Callable[[Path, list[dict[str, Any]], list[str]], Found]

#: each runner's driver, and which part of ``(verdict, score)`` it reports (None: both)
DRIVERS: dict[str, tuple[Driver, int | None]] = {
    "deepeval": (deepeval_verdicts, None),
    "langsmith": (langsmith_verdicts, None),
    "braintrust": (braintrust_scores, 1),
    "inspect": (inspect_verdicts, None),
    "openai-evals": (openai_evals_verdicts, None),
}
