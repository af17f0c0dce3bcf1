"""The check vocabulary exported with ``--graders blueprint`` to each Python runner (DeepEval,
LangSmith, Braintrust, Inspect, OpenAI Evals) gives each recorded output the verdict
``blueprint grade`` gives, with the runner's own machinery calling Blueprint's scorer:
DeepEval's ``metric.measure``, LangSmith's evaluator runner, Braintrust's ``Eval`` (nothing
sent), Inspect's ``eval`` with the scorer, and the evals package's recorder over
``OracleEval``.

The set is the table of checks (every case with a text output, as an acceptable set defined
by the check), reference answers and acceptable sets compared under declared normalisations
and tolerances, graded sets with a pass threshold, and rows with a gate of checks."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import QUIET_ENV, openai_evals_python, quiet_vendors, vendor

from blueprint.convert import ConvertOptions, convert
from blueprint.grading import Recorded, grade_row
from check_table import CASES

pytestmark = pytest.mark.conformance

#: rows compared under declared rules: (oracle, case fields, expected, output)
COMPARED: list[tuple[str, dict[str, Any], Any, str]] = [
    ("reference-answer", {"normalize": ["trim", "lowercase"]}, "Paris", " PARIS\n"),
    ("reference-answer", {"normalize": ["lowercase"]}, "Paris", "PARIS\n"),  # a newline stays
    ("reference-answer", {}, "Paris", "Paris\n"),  # a trailing newline differs
    ("reference-answer", {"normalize": ["trim"]}, "Paris", "Paris\n"),
    ("reference-answer", {}, "Paris", "paris"),  # case differs
    ("reference-answer", {"normalize": ["nfc"]}, "caf\u00e9", "cafe\u0301"),  # NFC vs NFD
    ("reference-answer", {"normalize": ["nfc"]}, "cafe\u0301", "caf\u00e9"),
    ("reference-answer", {}, "caf\u00e9", "cafe\u0301"),
    ("reference-answer", {"normalize": ["collapse-whitespace"]}, "a b", "a \t b"),
    ("reference-answer", {"tolerance": 0.01}, 3.14, "3.15"),  # a number within tolerance
    ("reference-answer", {"tolerance": 0.01}, 3.14, "3.16"),
    ("reference-answer", {"tolerance": 0.5}, "10", "10.4"),
    ("reference-answer", {}, 42, "42"),
    (
        "acceptable-set",
        {"normalize": ["trim", "lowercase"]},
        {"acceptable": ["Paris", "Lyon"]},
        "LYON\n",
    ),
    ("acceptable-set", {}, {"acceptable": ["Paris", "Lyon"]}, "lyon"),
    ("acceptable-set", {"tolerance": 0.1}, {"acceptable": [1, 2]}, "2.05"),
    (
        "acceptable-set",
        {"passThreshold": 0.5, "normalize": ["lowercase"]},
        {"graded": [{"value": "paris", "grade": 1}, {"value": "paris, france", "grade": 0.5}]},
        "Paris, France",
    ),
    (
        "acceptable-set",
        {"passThreshold": 0.75},
        {"graded": [{"value": "Paris", "grade": 1}, {"value": "Lutetia", "grade": 0.5}]},
        "Lutetia",
    ),
]

#: a gate of code checks every output must also pass
GATE: list[dict[str, Any]] = [
    {"type": "not", "check": {"type": "contains", "value": "sorry", "normalize": ["lowercase"]}},
    {"type": "regex", "pattern": "^ok\\b", "flags": "im"},
]
GATED: list[tuple[Any, str]] = [
    ("ok", "ok"),
    ("ok", "Sorry\nok"),  # the regex passes on the second line, the not fails
    ("ok", "OK"),  # the answer differs though the gate passes
    ({"satisfies": {"type": "starts-with", "value": "no"}}, "no\nOK then"),
    ({"satisfies": {"type": "starts-with", "value": "no"}}, "no, okay"),
]


def _row(number: int, oracle: str, expected: Any, **case: Any) -> dict[str, Any]:
    row_id = f"row-{number}"
    return {
        "id": row_id,
        "input": f"question {number}",
        "expected": expected,
        "metadata": {
            "case": {
                "caseId": row_id,
                "oracleType": oracle,
                "expectedBehavior": "b",
                "provenance": "expert-authored",
                "evaluator": "exact-or-programmatic",
                **case,
            }
        },
    }


def check_set() -> tuple[list[dict[str, Any]], list[str]]:
    """The rows and each row's recorded output (text, as a provider returns it)."""
    rows: list[dict[str, Any]] = []
    outputs: list[str] = []
    for check, output, _ in CASES:
        if isinstance(output, str):
            rows.append(_row(len(rows), "acceptable-set", {"satisfies": check}))
            outputs.append(output)
    for oracle, case, expected, output in COMPARED:
        rows.append(_row(len(rows), oracle, expected, **case))
        outputs.append(output)
    for expected, output in GATED:
        oracle = "acceptable-set" if isinstance(expected, dict) else "reference-answer"
        rows.append(_row(len(rows), oracle, expected, checks=GATE))
        outputs.append(output)
    return rows, outputs


ROWS, OUTPUTS = check_set()
#: what ``blueprint grade`` gives each row's output: its verdict and score
GRADED = {
    row["id"]: grade_row(row, Recorded(id=row["id"], output=output, has_output=True))
    for row, output in zip(ROWS, OUTPUTS, strict=True)
}
VERDICTS = {row_id: (found.verdict, found.score) for row_id, found in GRADED.items()}


def test_the_set_has_both_verdicts_and_every_check_type() -> None:
    assert {verdict for verdict, _ in VERDICTS.values()} == {"pass", "fail"}
    passed = sum(verdict == "pass" for verdict, _ in VERDICTS.values())
    assert 10 < passed < len(ROWS) - 10
    from blueprint.core.model import CHECK_TYPES

    assert {row["expected"]["satisfies"]["type"] for row in ROWS[: len(CASES)] if
            "satisfies" in row["expected"]} == set(CHECK_TYPES)  # fmt: skip


def exported(tmp_path: Path, fmt: str, name: str) -> dict[str, dict[str, Any]]:
    """The set exported for Blueprint's scorer in ``fmt``, its records by row id."""
    source = tmp_path / "set.json"
    source.write_text(
        json.dumps({"schemaVersion": "blueprint.eval-set/v1", "name": "checks", "rows": ROWS}),
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
    assert set(found) == set(VERDICTS)
    return found


def verdicts_agree(found: dict[str, Any], part: int | None = None) -> None:
    """Each row's verdict and score in the runner are those ``blueprint grade`` gives (or
    only the score, ``part`` 1, where the runner keeps no verdict)."""
    assert len(found) == len(ROWS)
    wrong = {
        row["id"]: (row["expected"], row["metadata"]["case"], output, found[row["id"]])
        for row, output in zip(ROWS, OUTPUTS, strict=True)
        if found[row["id"]] != (VERDICTS[row["id"]] if part is None else VERDICTS[row["id"]][part])
    }
    assert not wrong


def test_deepeval_metric(tmp_path: Path) -> None:
    dataset_module = vendor("deepeval.dataset")
    from deepeval.test_case import LLMTestCase

    from blueprint.integrations.deepeval import OracleMetric

    exported(tmp_path, "deepeval", "goldens.json")
    dataset = dataset_module.EvaluationDataset()
    dataset.add_goldens_from_json_file(str(tmp_path / "goldens.json"))  # DeepEval's own loader
    goldens = {golden.name: golden for golden in dataset.goldens}
    found = {}
    for row, output in zip(ROWS, OUTPUTS, strict=True):
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
    verdicts_agree(found)


def test_langsmith_evaluator(tmp_path: Path) -> None:
    schemas = vendor("langsmith.schemas")
    evaluation = vendor("langsmith.evaluation.evaluator")
    from blueprint.integrations.langsmith import oracle_evaluator

    examples = exported(tmp_path, "langsmith", "examples.jsonl")
    runner = evaluation.run_evaluator(oracle_evaluator)
    now = datetime.datetime.now(datetime.UTC)
    found = {}
    for row, output in zip(ROWS, OUTPUTS, strict=True):
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
    verdicts_agree(found)


def test_braintrust_eval(tmp_path: Path) -> None:
    braintrust = vendor("braintrust")
    from blueprint.integrations.braintrust import NAME, oracle_scorer

    records = exported(tmp_path, "braintrust", "records.jsonl")
    data = [
        {
            "input": records[row["id"]]["input"],
            "expected": records[row["id"]].get("expected"),
            "metadata": {**records[row["id"]]["metadata"], "index": number},
        }
        for number, row in enumerate(ROWS)
    ]

    def task(input: Any, hooks: Any) -> Any:
        return OUTPUTS[hooks.metadata["index"]]

    outcome = braintrust.Eval(
        "blueprint-checks", data=data, task=task, scores=[oracle_scorer], no_send_logs=True
    )
    # the scorer's verdict goes to the span's metadata; the result keeps the score
    found = {
        ROWS[result.metadata["index"]]["id"]: result.scores[NAME] for result in outcome.results
    }
    verdicts_agree(found, part=1)


def test_inspect_scorer(tmp_path: Path) -> None:
    inspect_ai = vendor("inspect_ai")
    dataset_module = vendor("inspect_ai.dataset")
    model = vendor("inspect_ai.model")
    solvers = vendor("inspect_ai.solver")
    from blueprint.integrations.inspect import oracle_scorer

    exported(tmp_path, "inspect", "samples.jsonl")
    samples = list(dataset_module.json_dataset(str(tmp_path / "samples.jsonl")))
    by_id = {str(sample.id): number for number, sample in enumerate(samples)}
    assert set(by_id) == set(VERDICTS)
    outputs = dict(zip([row["id"] for row in ROWS], OUTPUTS, strict=True))

    @solvers.solver
    def recorded() -> Any:
        """The recorded output as the model's turn."""

        async def solve(state: Any, generate: Any) -> Any:
            message = model.ChatMessageAssistant(content=outputs[str(state.sample_id)])
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
    verdicts_agree(found)


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


def test_openai_evals_class(tmp_path: Path) -> None:
    python = openai_evals_python()
    exported(tmp_path, "openai-evals", "samples.jsonl")
    outputs = dict(zip([row["id"] for row in ROWS], OUTPUTS, strict=True))
    (tmp_path / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
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
    verdicts_agree({row_id: tuple(value) for row_id, value in found.items()})
