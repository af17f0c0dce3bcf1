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

from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors
from runner_drivers import DRIVERS

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


@pytest.mark.parametrize("runner", sorted(DRIVERS))
def test_runner_gives_the_verdicts_grade_gives(runner: str, tmp_path: Path) -> None:
    driver, part = DRIVERS[runner]
    verdicts_agree(driver(tmp_path, ROWS, OUTPUTS), part)
