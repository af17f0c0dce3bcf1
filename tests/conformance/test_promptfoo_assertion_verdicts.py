"""An imported promptfoo check means what promptfoo's verdict on it says.

A suite of single-check tests (equals, the contains family, starts-with, regex, levenshtein
and negations) runs with the echo provider on outputs such as "There's grub in the fridge".
Wherever the imported row is a reference answer, promptfoo passes exactly the outputs equal
to its expected value, which is what Blueprint's reference semantics (equality) grade; and
wherever promptfoo passes an output that is not the check's value, the row is no reference
answer but the acceptable set the check defines, which ``blueprint grade`` decides as
promptfoo does.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import promptfoo, promptfoo_eval, quiet_vendors

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY
from blueprint.formats.promptfoo import dump_yaml
from blueprint.grading import Recorded, grade_row

pytestmark = pytest.mark.conformance

OUTPUTS = ("There's grub in the fridge", "grub", "Grub", "grub!", "milk")
CHECKS: list[dict[str, Any]] = [
    {"type": "equals", "value": "grub"},
    {"type": "icontains", "value": "grub"},
    {"type": "contains", "value": "grub"},
    {"type": "starts-with", "value": "grub"},
    {"type": "regex", "value": "^gr.b$"},
    {"type": "contains-any", "value": "grub, milk"},
    {"type": "icontains-any", "value": ["GRUB", "cheese"]},
    {"type": "contains-all", "value": ["grub", "fridge"]},
    {"type": "levenshtein", "value": "grub", "threshold": 0.75},
    {"type": "levenshtein", "value": "grub", "threshold": 5},
    {"type": "levenshtein", "value": "grub", "threshold": 0},
    {"type": "not-equals", "value": "grub"},
    {"type": "not-contains", "value": "milk"},
    {"type": "not-icontains", "value": "GRUB"},
    {"type": "not-regex", "value": "fridge"},
]


def reference_grade(row: dict[str, Any], output: str) -> bool:
    """Blueprint's own grading semantics (blueprint grade) of the row on the output."""
    return grade_row(row, Recorded(id=row["id"], output=output, has_output=True)).verdict == "pass"


def test_reference_rows_pass_exactly_what_promptfoo_passes(promptfoo: str, tmp_path: Path) -> None:
    cases = list(product(CHECKS, OUTPUTS))
    config = tmp_path / "promptfooconfig.yaml"
    suite = {
        "prompts": ["{{output}}"],
        "providers": ["echo"],
        "tests": [{"vars": {"output": output}, "assert": [check]} for check, output in cases],
    }
    config.write_bytes(dump_yaml(suite))
    verdicts = {
        row["testIdx"]: row["success"] for row in promptfoo_eval(promptfoo, config)["results"]
    }
    rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    assert len(verdicts) == len(rows) == len(cases)
    references = 0
    for index, ((check, output), row) in enumerate(zip(cases, rows, strict=True)):
        passed = verdicts[index]
        oracle = row["metadata"]["case"]["oracleType"]
        where = f"{check} on {output!r}: promptfoo {'passes' if passed else 'fails'}"
        if oracle == "reference-answer":
            references += 1
        # every other check is the acceptable set its check defines, graded the same way
        assert oracle in ("reference-answer", "acceptable-set"), where
        assert passed == reference_grade(row, output), where
        if passed and output != check["value"]:
            assert oracle != "reference-answer", where
    # the suite means something: equals and levenshtein below 1 are references; the issue's
    # case, icontains on "There's grub in the fridge", passes in promptfoo and is none
    assert references == 3 * len(OUTPUTS)
    assert verdicts[cases.index((CHECKS[1], OUTPUTS[0]))] is True


#: a transform of the output before the checks: the test's, its defaultTest's, the check's own
TRANSFORMED: list[dict[str, Any]] = [
    {
        "options": {"transform": "output.toUpperCase()"},
        "assert": [{"type": "equals", "value": "GRUB"}],
    },
    {"options": {"postprocess": "output.trim()"}, "assert": [{"type": "equals", "value": "grub"}]},
    {"assert": [{"type": "equals", "value": "GRUB", "transform": "output.toUpperCase()"}]},
    {"assert": [{"type": "equals", "value": "grub"}]},  # the defaultTest's transform
]


def test_a_check_after_a_transform_is_no_answer_for_the_output(
    promptfoo: str, tmp_path: Path
) -> None:
    """promptfoo grades the output as a transform leaves it: an equals after one passes
    outputs that differ from its value, so the row is no reference answer, says which
    transform, and goes back to promptfoo with it, graded the same."""
    outputs = ("grub", " grub ", "Grub", "milk")
    cases = list(product(TRANSFORMED, outputs))
    config = tmp_path / "promptfooconfig.yaml"
    suite = {
        "prompts": ["{{output}}"],
        "providers": ["echo"],
        "defaultTest": {"options": {"transform": "output.toLowerCase()"}},
        "tests": [{"vars": {"output": output}, **test} for test, output in cases],
    }
    config.write_bytes(dump_yaml(suite))
    before = promptfoo_eval(promptfoo, config)["results"]
    verdicts = {row["testIdx"]: row["success"] for row in before}
    rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    assert len(rows) == len(cases)
    for (test, output), row in zip(cases, rows, strict=True):
        case = row["metadata"]["case"]
        assert case["oracleType"] == "rubric", (test, output)
        if "transform" not in test["assert"][0]:
            assert (
                "transform"
                in case["extensions"]["blueprint-import"]["derived"]["metadata.case.oracleType"]
            )
            assert "after the test's transform" in case["evaluationCriteria"][0]
    # promptfoo passes outputs that are not the check's value: no answer could say so
    assert verdicts[cases.index((TRANSFORMED[0], "grub"))] is True
    assert verdicts[cases.index((TRANSFORMED[3], "Grub"))] is True
    # the transforms go back to promptfoo: every test is graded as before
    imported = tmp_path / "set.json"
    convert(config, imported, ConvertOptions())
    back = tmp_path / "back.yaml"
    convert(imported, back, ConvertOptions(target_format="promptfoo"))
    after = promptfoo_eval(promptfoo, back)["results"]
    assert _verdicts(after) == _verdicts(before)


def _verdicts(results: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((row["testIdx"], row["success"], row.get("failureReason")) for row in results)


def test_checks_promptfoo_does_not_run_are_said_on_import(promptfoo: str, tmp_path: Path) -> None:
    """A config's top-level assert is no key promptfoo reads: its tests run with no check and
    pass. An assertion type promptfoo does not know (containsAny, human) ends its test with
    an error, whatever else the test checks. The import says both, on each row."""
    config = tmp_path / "promptfooconfig.yaml"
    suite = {
        "prompts": ["{{output}}"],
        "providers": ["echo"],
        "assert": [{"type": "equals", "value": "never"}],
        "tests": [
            {"vars": {"output": "grub"}},
            {"vars": {"output": "grub"}, "assert": [{"type": "containsAny", "value": ["x"]}]},
            {
                "vars": {"output": "grub"},
                "assert": [
                    {"type": "contains", "value": "grub"},
                    {"type": "containsAny", "value": ["grub"], "weight": 0},
                ],
            },
            {"vars": {"output": "grub"}, "assert": [{"type": "human"}]},
            {"vars": {"output": "grub"}, "assert": [{"type": "contains", "value": "grub"}]},
        ],
    }
    config.write_bytes(dump_yaml(suite))
    results = sorted(promptfoo_eval(promptfoo, config)["results"], key=lambda r: r["testIdx"])
    errors = [bool(row.get("error")) and row["failureReason"] == 2 for row in results]
    assert errors == [False, True, True, True, False]
    assert results[0]["success"] and results[0]["gradingResult"]["reason"] == "No assertions"
    rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    notes = [
        row["metadata"]["case"]["extensions"]["blueprint-import"]["derived"][
            "metadata.case.oracleType"
        ]
        for row in rows
    ]
    assert all("top-level assert" in note for note in notes)
    assert ["ends the test with an error" in note for note in notes] == errors
    assert "promptfoo runs it with no check and passes it" in notes[0]
    assert "did you mean contains-any?" in notes[1]
    oracles = [row["metadata"]["case"]["oracleType"] for row in rows]
    unchecked, rubric, checked = "expected-behavior-only", "rubric", "acceptable-set"
    assert oracles == [unchecked, unchecked, rubric, unchecked, checked]
