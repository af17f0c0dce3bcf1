"""A judged row in OpenAI Evals: Blueprint's eval class (``OracleEval``) grades it with evals'
own model-graded classification, the judge being the completion function the eval's args
name, and ``oaieval``'s record log reads back with ``blueprint grade``.

``oaieval`` runs in the environment that has the evals package, with a registry of its own:
the eval (Blueprint's class over the judged set's samples) and two completion functions, the
system under test and a stand-in judge that writes down every prompt it is shown. The
prompts are checked for each row's criteria and its reference or acceptable answers; the
tool-call and exact rows never reach the judge; its verdicts come back with the judge named.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conformance_tools import QUIET_ENV, openai_evals_python, quiet_vendors
from judge_stub import (
    CALLS,
    EXPECTED,
    FAILS_ON,
    JUDGED,
    OUTPUTS,
    ROWS,
    SET,
    assert_prompts,
)

import blueprint
from blueprint.convert import ConvertOptions, convert
from blueprint.core.judgeprompt import template_id
from blueprint.grading import grade_set, read_results

pytestmark = pytest.mark.conformance

#: the completion functions the registry names: the system under test answers each sample
#: with its row's output, the judge fails the answer that names no refund date
STUBS = """
import json, os

class Text:
    def __init__(self, text):
        self.text = text
    def get_completions(self):
        return [self.text]

class Answer:
    def __init__(self, **_):
        with open(os.environ["STUB_ANSWERS"], encoding="utf-8") as handle:
            self.answers = json.load(handle)
    def __call__(self, prompt, **_):
        return Text(self.answers[json.dumps(prompt, sort_keys=True)])

class Judge:
    def __init__(self, **_):
        pass
    def __call__(self, prompt, **_):
        text = "\\n".join(message["content"] for message in prompt)
        with open(os.environ["STUB_PROMPTS"], "a", encoding="utf-8") as handle:
            handle.write(json.dumps(text) + "\\n")
        passed = FAILS_ON not in text
        return Text("stand-in judge.\\n" + ("pass" if passed else "fail"))
"""


def registry(tmp_path: Path, args: dict[str, str], barred: bool) -> Path:
    """A registry with the eval over the judged set's samples, and the stub functions. With
    ``barred``, the tool-call sample's row says llm-judge (a bar the set would not allow)."""
    root = tmp_path / "registry"
    samples = root / "data" / "judged" / "samples.jsonl"
    samples.parent.mkdir(parents=True)
    convert(SET, samples, ConvertOptions(target_format="openai-evals", graders="blueprint"))
    if barred:
        lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
        for sample in lines:
            if sample["metadata"]["blueprint"]["id"] == "tool-calls":
                sample["metadata"]["blueprint"]["case"]["evaluator"] = "llm-judge"
        samples.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (root / "evals").mkdir()
    spec = {
        "judged": {"id": "judged.dev.v0", "metrics": ["accuracy"]},
        "judged.dev.v0": {
            "class": "blueprint.integrations.openai_evals:OracleEval",
            "args": {"samples_jsonl": "judged/samples.jsonl", **args},
        },
    }
    (root / "evals" / "judged.yaml").write_text(json.dumps(spec), encoding="utf-8")
    (root / "completion_fns").mkdir()
    functions = {"stub-model": {"class": "stubs:Answer"}, "stub-judge": {"class": "stubs:Judge"}}
    (root / "completion_fns" / "stubs.yaml").write_text(json.dumps(functions), encoding="utf-8")
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "stubs.py").write_text(f"FAILS_ON = {FAILS_ON!r}\n" + STUBS, encoding="utf-8")
    answers = {}
    for line in samples.read_text(encoding="utf-8").splitlines():
        sample = json.loads(line)
        row_id = sample["metadata"]["blueprint"]["id"]
        output = json.dumps(CALLS) if row_id == "tool-calls" else OUTPUTS[row_id]
        answers[json.dumps(sample["input"], sort_keys=True)] = output
    (tmp_path / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    return root


def oaieval(
    tmp_path: Path, functions: str, args: dict[str, str], *, barred: bool = False
) -> tuple[Path, list[str]]:
    """Run ``oaieval`` offline; its record log, and the prompts the judge was shown."""
    python = openai_evals_python()
    root = registry(tmp_path, args, barred)
    log = tmp_path / "log.jsonl"
    prompts = tmp_path / "prompts.jsonl"
    source = Path(blueprint.__file__).parents[1]  # this checkout's Blueprint first
    env = {
        **os.environ,
        **QUIET_ENV,
        "OPENAI_API_KEY": "offline-placeholder",
        "PYTHONPATH": os.pathsep.join([str(source), str(tmp_path / "modules")]),
        "STUB_ANSWERS": str(tmp_path / "answers.json"),
        "STUB_PROMPTS": str(prompts),
        "EVALS_THREADS": "2",
    }
    done = subprocess.run(
        [
            str(Path(python).with_name("oaieval")),
            functions,
            "judged",
            "--registry_path",
            str(root),
            "--record_path",
            str(log),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = [json.loads(line) for line in prompts.read_text(encoding="utf-8").splitlines()]
    return log, shown


def assert_graded(log: Path, model: str) -> None:
    graded = {row.id: row for row in grade_set(SET, log).rows}
    assert {row_id: row.verdict for row_id, row in graded.items()} == EXPECTED
    for row_id in JUDGED:
        oracle = ROWS[row_id]["metadata"]["case"]["oracleType"]
        assert graded[row_id].judge == {"model": model, "template": template_id(oracle)}
    judge = read_results(log)["judged-rubric"].judge
    assert judge is not None and (judge["pass"], judge["score"]) == (False, 0.0)


def test_the_judge_the_eval_names_sees_each_judged_row(tmp_path: Path) -> None:
    log, prompts = oaieval(tmp_path, "stub-model", {"judge_completion_fn": "stub-judge"})
    assert_prompts(prompts)
    assert_graded(log, "stub-judge")


def test_the_last_completion_function_is_the_judge(tmp_path: Path) -> None:
    """``oaieval model,judge``, as evals' ModelBasedClassify takes two functions: the judge
    is named by its class where the eval does not name it. A tool-call row whose evaluator
    is llm-judge is invalid there, and never reaches the judge either."""
    log, prompts = oaieval(tmp_path, "stub-model,stub-judge", {}, barred=True)
    assert_prompts(prompts)
    assert_graded(log, "Judge")
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    [barred] = [
        event
        for event in events
        if event.get("type") in ("match", "blueprint_verdict")
        and event["data"]["id"] == "tool-calls"
    ]
    assert (barred["type"], barred["data"]["verdict"]) == ("blueprint_verdict", "invalid")
