"""promptfoo's own judge grades the judged rows of ``convert --graders blueprint``, offline.

The export of the shared judged set runs in promptfoo 0.121 (the echo provider returning a
recorded output); the judge is a stub grading provider (``defaultTest.options.provider``, a
Python script) that keeps every prompt it receives and answers from a mark in the output.
The stub sees each judged row's criteria and its reference or acceptable answers (the shared
template's text), never a tool-call or an exact row (Blueprint's own scorer grades those), and
``blueprint grade`` on promptfoo's results file gives its verdicts, the row's threshold
applied, with the stub named as the model and the template as the export wrote it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import promptfoo, promptfoo_eval, quiet_vendors

import blueprint
from blueprint.convert import ConvertOptions, convert
from blueprint.core.judgeprompt import judge_prompt, template_id
from blueprint.formats.promptfoo import dump_yaml, read_yaml
from blueprint.grading import grade_set
from blueprint.integrations.promptfoo import ASSERTION
from conftest import FIXTURES

pytestmark = pytest.mark.conformance
__all__ = ["promptfoo", "quiet_vendors"]

JUDGED_SET = FIXTURES / "judged" / "judged-set.json"
JUDGED = (
    "judged-reference",
    "judged-acceptable",
    "judged-graded",
    "judged-rubric",
    "judged-by-family",
)

#: the stub judge: it keeps each prompt (with the row its test names) and answers from a
#: mark in the output: GOOD passes at 0.9, MEH passes at 0.4, BAD fails at 0.1
STUB = """\
import json
import os

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "judge-prompts.jsonl")
MARKS = {"GOOD": (True, 0.9), "MEH": (True, 0.4), "BAD": (False, 0.1)}


def call_api(prompt, options, context):
    variables = (context or {}).get("vars") or {}
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"row": variables.get("row"), "prompt": prompt}) + "\\n")
    output = str(variables.get("output", ""))
    verdict, score = next((v for k, v in MARKS.items() if k in output), (False, 0.0))
    reason = "stub: " + ("passes" if verdict else "fails") + " " + output
    return {"output": json.dumps({"pass": verdict, "score": score, "reason": reason})}
"""

#: each row's recorded output, and what the stub says of it (pass, score)
OUTPUTS: dict[str, tuple[str, tuple[bool, float] | None]] = {
    "judged-reference": ("You have 30 days from delivery. GOOD", (True, 0.9)),
    "judged-acceptable": ("About a week. BAD", (False, 0.1)),
    # the stub passes it, at a score below the row's passThreshold of 0.5
    "judged-graded": ("about a month MEH", (True, 0.4)),
    "judged-rubric": ("Sorry for the wait; your refund lands on 3 May. GOOD", (True, 0.9)),
    "judged-by-family": ("Sorry about that. BAD", (False, 0.1)),
    "tool-calls": (json.dumps([{"name": "lookup_order", "arguments": {"order_id": "A-1"}}]), None),
    "exact-reference": ("30 days", None),
}
#: blueprint grade's verdict for each row: the stub's, with the graded row's threshold
VERDICTS = {
    "judged-reference": ("pass", 0.9),
    "judged-acceptable": ("fail", 0.1),
    "judged-graded": ("fail", 0.4),
    "judged-rubric": ("pass", 0.9),
    "judged-by-family": ("fail", 0.1),
    "tool-calls": ("pass", 1.0),
    "exact-reference": ("pass", 1.0),
}


def _rows() -> dict[str, tuple[dict[str, Any], str | None]]:
    document = json.loads(JUDGED_SET.read_text(encoding="utf-8"))
    families = {family["id"]: family.get("evaluator") for family in document["caseFamilies"]}
    return {
        row["id"]: (row, families.get(row["metadata"]["case"].get("caseFamily")))
        for row in document["rows"]
    }


def _seen(log: Path) -> dict[str, list[str]]:
    """The text of every prompt the stub received, by the row its test names."""
    seen: dict[str, list[str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        prompt = entry["prompt"]
        try:
            messages = json.loads(prompt)
        except json.JSONDecodeError:
            messages = [{"content": prompt}]
        text = "\n".join(str(message.get("content", "")) for message in messages)
        seen.setdefault(entry["row"], []).append(text)
    return seen


def _run(
    promptfoo: str, tmp_path: Path, tests: list[dict[str, Any]]
) -> tuple[dict[str, dict[str, Any]], dict[str, list[str]], Path]:
    """promptfoo's eval of the exported tests on their recorded outputs, the stub judging:
    each test's result by row, the prompts the stub saw by row, and the results file."""
    suite = []
    for test in tests:
        row_id = test["metadata"]["id"]
        test["vars"] = {**test["vars"], "recorded": OUTPUTS[row_id][0], "row": row_id}
        suite.append(test)
    (tmp_path / "judge.py").write_text(STUB, encoding="utf-8")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_bytes(
        dump_yaml(
            {
                "prompts": ["{{recorded}}"],
                "providers": ["echo"],
                "defaultTest": {"options": {"provider": "file://judge.py"}},
                "tests": suite,
            }
        )
    )
    found = promptfoo_eval(promptfoo, config)["results"]
    assert len(found) == len(suite)
    log = tmp_path / "judge-prompts.jsonl"
    seen = _seen(log) if log.exists() else {}
    by_row = {entry["testCase"]["metadata"]["id"]: entry for entry in found}
    return by_row, seen, config.with_name(f".results-{config.stem}.json")


@pytest.fixture
def blueprint_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """promptfoo runs the stub and Blueprint's python assertion with this Python, importing
    the Blueprint under test."""
    monkeypatch.setenv("PROMPTFOO_PYTHON", sys.executable)
    monkeypatch.setenv("PYTHONPATH", str(Path(blueprint.__file__).parents[1]))


def test_promptfoos_judge_grades_judged_rows_from_the_shared_template(
    promptfoo: str, tmp_path: Path, blueprint_python: None
) -> None:
    target = tmp_path / "tests.yaml"
    convert(JUDGED_SET, target, ConvertOptions(target_format="promptfoo", graders="blueprint"))
    tests = read_yaml(target)
    for test in tests:
        judged = test["metadata"]["id"] in JUDGED
        assert (test["assert"][0]["type"] == "llm-rubric") == judged, test["assert"]
        if not judged:
            assert test["assert"] == [ASSERTION]
    by_row, seen, results = _run(promptfoo, tmp_path, tests)

    # the stub saw each judged row once, with the row's part of the prompt; no other row
    rows = _rows()
    assert sorted(seen) == sorted(JUDGED)
    for row_id in JUDGED:
        (text,) = seen[row_id]
        row, family = rows[row_id]
        case = row["metadata"]["case"]
        prompt = judge_prompt(row, family)
        assert prompt is not None
        assert prompt.text.strip() in text
        assert OUTPUTS[row_id][0] in text  # promptfoo's own part: the output
        for said in case.get("evaluationCriteria", []) + case.get("unacceptableBehavior", []):
            assert said in text
        expected: Any = row.get("expected")
        if case["oracleType"] == "reference-answer":
            assert expected in text
        if case["oracleType"] == "acceptable-set":
            members = expected.get("acceptable") or [m["value"] for m in expected["graded"]]
            assert all(member in text for member in members)

    # promptfoo's own verdict is Blueprint's: the stub's, the graded row's threshold applied
    for row_id, (verdict, _) in VERDICTS.items():
        assert by_row[row_id]["success"] == (verdict == "pass"), by_row[row_id]["gradingResult"]

    graded = {row.id: row for row in grade_set(JUDGED_SET, results).rows}
    assert {row_id: (row.verdict, row.score) for row_id, row in graded.items()} == VERDICTS
    for row_id in JUDGED:
        oracle = rows[row_id][0]["metadata"]["case"]["oracleType"]
        assert graded[row_id].judge == {"model": "file://judge.py", "template": template_id(oracle)}
    assert graded["tool-calls"].judge is None and graded["exact-reference"].judge is None


def test_the_stock_exports_judge_is_named_too(
    promptfoo: str, tmp_path: Path, blueprint_python: None
) -> None:
    """The stock export (no Python) writes the same llm-rubric for a judged acceptable set or
    rubric; its judged reference answer keeps promptfoo's factuality, left out here (its
    grading prompt asks for another answer than the stub's)."""
    target = tmp_path / "tests.yaml"
    convert(JUDGED_SET, target, ConvertOptions(target_format="promptfoo"))
    tests = [test for test in read_yaml(target) if test["metadata"]["id"] != "judged-reference"]
    stock = {test["metadata"]["id"] for test in tests}
    by_row, seen, results = _run(promptfoo, tmp_path, tests)
    judged = {row_id for row_id in JUDGED if row_id in stock}
    assert judged == {"judged-acceptable", "judged-graded", "judged-rubric", "judged-by-family"}
    assert sorted(seen) == sorted(judged)
    rows = _rows()
    for row_id in judged:
        prompt = judge_prompt(*rows[row_id])
        assert prompt is not None and prompt.text.strip() in seen[row_id][0]
    graded = {row.id: row for row in grade_set(JUDGED_SET, results).rows}
    for row_id in stock:
        assert (graded[row_id].verdict, graded[row_id].score) == VERDICTS[row_id]
        assert by_row[row_id]["success"] == (VERDICTS[row_id][0] == "pass")
    for row_id in judged:
        oracle = rows[row_id][0]["metadata"]["case"]["oracleType"]
        assert graded[row_id].judge == {"model": "file://judge.py", "template": template_id(oracle)}
