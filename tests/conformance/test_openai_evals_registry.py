"""The open-source openai/evals package grades our samples the way the report says.

The ``evals`` package (3.0.1.post1 checked) is kept out of the conformance extra: it declares
dozens of unrelated libraries (langchain, spacy, playwright, snowflake...) and builds an OpenAI
client when imported. So it lives in a virtual environment of its own, with only what its
basic evals import (``.ci/run`` builds one), named by ``BLUEPRINT_OPENAI_EVALS_PYTHON``. The
check runs Match, Includes and FuzzyMatch over an export with the package's
DummyCompletionFn, offline.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import QUIET_ENV, openai_evals_python, quiet_vendors

from blueprint.formats import REGISTRY, WriteOptions

pytestmark = pytest.mark.conformance

#: what DummyCompletionFn answers
DUMMY = "This is a dummy response."

RUNNER = """
import json, sys
import evals, evals.record
from evals.api import DummyCompletionFn
from evals.elsuite.basic.fuzzy_match import FuzzyMatch
from evals.elsuite.basic.includes import Includes
from evals.elsuite.basic.match import Match

class Keep(evals.record.RecorderBase):
    def record_event(self, type, data=None, sample_id=None):
        self._events.append((self.current_sample_id(), type, data))

path = sys.argv[1]
scores = {}
for cls in (Match, Includes, FuzzyMatch):
    recorder = Keep(run_spec=None)
    run = cls(completion_fns=[DummyCompletionFn()], samples_jsonl=path, eval_registry_path=None)
    for sample in evals.get_jsonl(path):
        with recorder.as_default_recorder(sample["metadata"]["blueprint"]["id"]):
            run.eval_sample(dict(sample), None)
    for sample_id, kind, data in recorder._events:
        if kind == "match":
            scores.setdefault(sample_id, {})[cls.__name__] = data["correct"]
print(json.dumps(scores))
"""


def row(row_id: str, expected: Any, oracle: str = "reference-answer") -> dict[str, Any]:
    return {
        "id": row_id,
        "input": [{"role": "user", "content": "Say something"}],
        "expected": expected,
        "metadata": {
            "case": {
                "caseId": row_id,
                "oracleType": oracle,
                "expectedBehavior": "answers as the dummy completion does",
                "provenance": "expert-authored",
            }
        },
    }


def test_match_is_a_prefix_check_and_includes_a_substring_check(tmp_path: Path) -> None:
    python = openai_evals_python()
    rows = [
        row("exact", DUMMY),
        row("prefix-only", "This is"),
        row("inside-only", "dummy"),
        row("wrong", "Paris"),
        row("set", {"acceptable": ["Paris", DUMMY]}, "acceptable-set"),
    ]
    target = tmp_path / "samples.jsonl"
    header = {"schemaVersion": "blueprint.eval-set/v1", "name": "evals-conformance"}
    REGISTRY["openai-evals"].write(header, iter(rows), target, WriteOptions())
    script = tmp_path / "run_evals.py"
    script.write_text(RUNNER, encoding="utf-8")
    # the package builds an OpenAI client at import; a placeholder key lets it, offline
    env = {**os.environ, **QUIET_ENV, "OPENAI_API_KEY": "offline-placeholder"}
    completed = subprocess.run(
        [python, str(script), str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    scores = json.loads(completed.stdout.strip().splitlines()[-1])
    both = {"Match": True, "Includes": True, "FuzzyMatch": True}
    assert scores["exact"] == both
    assert scores["prefix-only"] == both  # Match passes an answer the output only starts with
    assert scores["inside-only"] == {"Match": False, "Includes": True, "FuzzyMatch": True}
    assert scores["wrong"] == {"Match": False, "Includes": False, "FuzzyMatch": False}
    assert scores["set"] == both  # any of the ideals


#: run each class of a registry YAML over given completions of its samples: the match each
#: records, by sample and completion
CLASS_RUNNER = """
import importlib, json, sys
import evals, evals.record

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

found = {}
for job in json.load(open(sys.argv[1], encoding="utf-8")):
    module, name = job["class"].split(":")
    completion = Fixed()
    run = getattr(importlib.import_module(module), name)(
        completion_fns=[completion], samples_jsonl=job["samples"], eval_registry_path=None,
        **job["args"],
    )
    samples = evals.get_jsonl(job["samples"])
    recorder = Keep(run_spec=None)
    for key, number, text in job["outputs"]:
        completion.text = text
        with recorder.as_default_recorder(key):
            run.eval_sample(dict(samples[number]), None)
    for key, kind, data in recorder._events:
        if kind == "match":
            found[key] = data["correct"]
print(json.dumps(found))
"""

#: ideals, and completions that tell the classes' rules apart: case, a leading space, a
#: trailing newline, NFC against NFD, an empty ideal
IDEALS: list[Any] = ["Paris", ["Yes", "Sure"], "caf\u00e9", "", ["x"]]
COMPLETIONS = [
    "Paris",
    "Paris, France\n",
    "paris",
    " Paris",
    "The capital is Paris.",
    "Yes.",
    "sure thing",
    "Of course: sure",
    "cafe\u0301",
    "Caf\u00c9 au lait",
    "",
    "X",
]
CLASSES = [
    ("evals.elsuite.basic.match:Match", {}),
    ("evals.elsuite.basic.includes:Includes", {}),
    ("evals.elsuite.basic.includes:Includes", {"ignore_case": True}),
]


def _run_classes(python: str, tmp_path: Path, jobs: list[dict[str, Any]]) -> dict[str, bool]:
    (tmp_path / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    script = tmp_path / "run_classes.py"
    script.write_text(CLASS_RUNNER, encoding="utf-8")
    completed = subprocess.run(
        [python, str(script), str(tmp_path / "jobs.json")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **QUIET_ENV, "OPENAI_API_KEY": "offline-placeholder"},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(("eval_class", "args"), CLASSES)
def test_samples_in_a_registry_import_as_the_class_decides(
    tmp_path: Path, eval_class: str, args: dict[str, Any]
) -> None:
    """A samples file the registry runs with Match or Includes imports as acceptable sets
    defined by the check the class applies, and ``blueprint grade`` gives every completion
    the class's own verdict."""
    from blueprint.grading import Recorded, grade_row

    python = openai_evals_python()
    registry = tmp_path / "registry"
    samples = registry / "data" / "capitals" / "samples.jsonl"
    samples.parent.mkdir(parents=True)
    (registry / "evals").mkdir()
    lines = [
        json.dumps({"input": f"question {n}", "ideal": ideal}) for n, ideal in enumerate(IDEALS)
    ]
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = {
        "capitals": {"id": "capitals.dev.v0", "metrics": ["accuracy"]},
        "capitals.dev.v0": {
            "class": eval_class,
            "args": {"samples_jsonl": "capitals/samples.jsonl", **args},
        },
    }
    (registry / "evals" / "capitals.yaml").write_text(json.dumps(spec), encoding="utf-8")
    rows = [item.data for item in REGISTRY["openai-evals"].open(samples).rows]
    assert all("satisfies" in row["expected"] for row in rows)
    outputs = [
        (f"{n}/{m}", n, text) for n in range(len(IDEALS)) for m, text in enumerate(COMPLETIONS)
    ]
    found = _run_classes(
        python,
        tmp_path,
        [{"class": eval_class, "args": args, "samples": str(samples), "outputs": outputs}],
    )
    assert len(found) == len(outputs)
    for key, number, text in outputs:
        row = rows[number]
        verdict = grade_row(row, Recorded(id=row["id"], output=text, has_output=True)).verdict
        assert (verdict == "pass") == found[key], (key, IDEALS[number], text)


def test_an_acceptable_set_by_a_prefix_or_substring_check_exports_for_match_and_includes(
    tmp_path: Path,
) -> None:
    """An acceptable set defined by starts-with (or any of several) goes as its texts in
    ideal, which Match decides as ``blueprint grade`` does; a contains check likewise under
    Includes (with ignore_case where the check lowercases)."""
    from blueprint.grading import Recorded, grade_row

    python = openai_evals_python()
    starts = [
        {"type": "starts-with", "value": "Paris"},
        {"type": "any", "checks": [{"type": "starts-with", "value": v} for v in ("Yes", "Sure")]},
    ]
    contains = [
        {"type": "contains", "value": "Paris"},
        {"type": "any", "checks": [{"type": "contains", "value": v} for v in ("Yes", "sure")]},
    ]
    lowered = [{"type": "contains", "value": "caf\u00e9", "normalize": ["lowercase"]}]
    jobs, rows = [], {}
    for eval_class, args, checks in (
        ("evals.elsuite.basic.match:Match", {}, starts),
        ("evals.elsuite.basic.includes:Includes", {}, contains),
        ("evals.elsuite.basic.includes:Includes", {"ignore_case": True}, lowered),
    ):
        name = f"{eval_class.rsplit(':', 1)[-1]}-{len(jobs)}"
        written = [
            row(f"{name}-{n}", {"satisfies": check}, "acceptable-set")
            for n, check in enumerate(checks)
        ]
        target = tmp_path / f"{name}.jsonl"
        header = {"schemaVersion": "blueprint.eval-set/v1", "name": name}
        result = REGISTRY["openai-evals"].write(header, iter(written), target, WriteOptions())
        weakened = [item for item in result.lossy if item.field == "expected.satisfies"]
        assert weakened and eval_class.rsplit(":", 1)[-1] in weakened[0].reason
        outputs = []
        for n, item in enumerate(written):
            rows[item["id"]] = item
            outputs += [(f"{item['id']}/{m}", n, text) for m, text in enumerate(COMPLETIONS)]
        jobs.append({"class": eval_class, "args": args, "samples": str(target), "outputs": outputs})
    found = _run_classes(python, tmp_path, jobs)
    assert len(found) == sum(len(job["outputs"]) for job in jobs)
    for key, passed in found.items():
        row_id, number = key.split("/")
        text = COMPLETIONS[int(number)]
        verdict = grade_row(rows[row_id], Recorded(id=row_id, output=text, has_output=True))
        assert (verdict.verdict == "pass") == passed, (key, rows[row_id]["expected"], text)
