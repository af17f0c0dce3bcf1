"""A promptfoo suite of deterministic assertions imports as rows ``blueprint grade`` decides as
promptfoo does.

The suite's tests use icontains, contains-any, regex, is-json, not-contains and starts-with
(with the rest of the contains family, a schema, levenshtein, word-count, a threshold with
weights, an assert-set and a defaultTest assertion). Imported, every test is an acceptable
set defined by a check, graded by exact-or-programmatic, and valid. promptfoo then runs every
test on every recorded output (the echo provider; the output goes through a var as JSON and a
transform, since promptfoo trims vars), and ``grade`` gives each row promptfoo's own verdict.
"""

from __future__ import annotations

import copy
import json
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import promptfoo, promptfoo_eval, quiet_vendors

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY
from blueprint.formats.promptfoo import dump_yaml
from blueprint.grading import Recorded, grade_row
from blueprint.validation.validate import validate_file

pytestmark = pytest.mark.conformance

OUTPUTS = (
    "grub",
    "Grub is GOOD",
    "  grub",
    "grub\n",
    "There's grub in the fridge",
    "As an AI, I cannot say",
    "Refund issued as credit",
    '{"a": 1}',
    '{"b": "grub"}',
    "[1, 2]",
    "3",
    "",
    "ÉCLAIR au café",
    "line one\nline two",
)

TESTS: list[dict[str, Any]] = [
    {"assert": [{"type": "icontains", "value": "GRUB"}]},
    {"assert": [{"type": "contains-any", "value": "refund, credit"}]},
    {"assert": [{"type": "icontains-any", "value": ["REFUND", "éclair"]}]},
    {"assert": [{"type": "contains-all", "value": ["grub", "fridge"]}]},
    {"assert": [{"type": "icontains-all", "value": "REFUND, Credit"}]},
    {"assert": [{"type": "regex", "value": "^g.*b$"}]},
    {"assert": [{"type": "regex", "value": "\\d+"}]},
    {"assert": [{"type": "not-regex", "value": "^\\s"}]},
    {"assert": [{"type": "is-json"}]},
    {"assert": [{"type": "not-is-json"}]},
    {"assert": [{"type": "is-json", "value": {"type": "object", "required": ["a"]}}]},
    {"assert": [{"type": "not-contains", "value": "As an AI"}]},
    {"assert": [{"type": "starts-with", "value": "grub"}]},
    {"assert": [{"type": "not-starts-with", "value": "grub"}]},
    {"assert": [{"type": "equals", "value": 3}]},
    {"assert": [{"type": "levenshtein", "value": "grub"}]},
    {"assert": [{"type": "word-count", "value": {"min": 2, "max": 4}}]},
    {"assert": [{"type": "word-count", "value": 1}]},
    {
        "assert": [
            {"type": "icontains", "value": "grub"},
            {"type": "not-contains", "value": "fridge"},
            {"type": "regex", "value": "b$"},
        ]
    },
    {
        "threshold": 0.6,
        "assert": [
            {"type": "icontains", "value": "grub", "weight": 2},
            {"type": "is-json", "weight": 1},
            {"type": "not-contains", "value": "fridge"},
            {"type": "contains", "value": "never", "weight": 0},
        ],
    },
    {
        "assert": [
            {
                "type": "assert-set",
                "threshold": 0.5,
                "assert": [
                    {"type": "starts-with", "value": "g"},
                    {"type": "regex", "value": "b$"},
                    {"type": "contains", "value": "x"},
                ],
            },
            {"type": "not-regex", "value": "fridge"},
        ]
    },
    {
        "threshold": 0.5,
        "assert": [
            # under the test's threshold a set adds its score: its own threshold decides nothing
            {"type": "assert-set", "weight": 3, "threshold": 0, "assert": [{"type": "is-json"}]},
            {"type": "contains", "value": "grub"},
        ],
    },
]

#: the defaultTest's assertion, which promptfoo runs first in every test of the second suite
DEFAULT = {"type": "not-icontains", "value": "as an ai"}


def _suite(defaults: bool) -> dict[str, Any]:
    suite: dict[str, Any] = {
        "prompts": ["{{question}}"],
        "providers": ["echo"],
        "tests": [
            {"description": f"test {number}", "vars": {"question": "q"}, **copy.deepcopy(test)}
            for number, test in enumerate(TESTS, start=1)
        ],
    }
    if defaults:
        suite["defaultTest"] = {"assert": [DEFAULT]}
    return suite


def _run(suite: dict[str, Any], promptfoo: str, folder: Path) -> dict[tuple[int, str], bool]:
    """promptfoo's verdict on every test of the suite for every output."""
    cases = list(product(range(len(suite["tests"])), OUTPUTS))
    tests = []
    for index, output in cases:
        test = copy.deepcopy(suite["tests"][index])
        test["vars"]["recorded"] = json.dumps(output)
        test["options"] = {"transform": "JSON.parse(context.vars.recorded)"}
        tests.append(test)
    config = folder / "run.yaml"
    config.write_bytes(dump_yaml({**suite, "prompts": ["{{recorded}}"], "tests": tests}))
    results = promptfoo_eval(promptfoo, config)["results"]
    verdicts = {item["testIdx"]: item["success"] for item in results}
    assert len(verdicts) == len(cases)
    return {case: verdicts[index] for index, case in enumerate(cases)}


@pytest.mark.parametrize("defaults", [False, True], ids=["tests", "default-test"])
def test_grade_gives_promptfoos_verdict_for_every_imported_test(
    defaults: bool, promptfoo: str, tmp_path: Path
) -> None:
    suite = _suite(defaults)
    config = tmp_path / "promptfooconfig.yaml"
    config.write_bytes(dump_yaml(suite))
    rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    assert len(rows) == len(TESTS)
    for row in rows:
        case = row["metadata"]["case"]
        assert case["oracleType"] == "acceptable-set", row["id"]
        assert case["evaluator"] == "exact-or-programmatic", row["id"]
        assert "satisfies" in row["expected"], row["id"]
    imported = tmp_path / "set.json"
    convert(config, imported, ConvertOptions())
    report = validate_file(imported)
    assert [issue for issue in report.issues if issue.severity == "error"] == []
    verdicts = _run(suite, promptfoo, tmp_path)
    disagreements = []
    for (index, output), passed in verdicts.items():
        row = rows[index]
        graded = grade_row(row, Recorded(id=row["id"], output=output, has_output=True))
        if passed != (graded.verdict == "pass"):
            disagreements.append((TESTS[index], output, passed, graded.reason))
    assert disagreements == []
    # the suite means something: each test passes some outputs and fails others
    for index in range(len(TESTS)):
        outcomes = {verdicts[(index, output)] for output in OUTPUTS}
        assert outcomes == {True, False}, TESTS[index]


def test_the_imported_suite_goes_back_to_promptfoo_as_it_came(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_bytes(dump_yaml(_suite(defaults=True)))
    imported = tmp_path / "set.json"
    convert(config, imported, ConvertOptions())
    back = tmp_path / "back.yaml"
    convert(imported, back, ConvertOptions(target_format="promptfoo"))
    assert back.read_bytes() == config.read_bytes()
