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
