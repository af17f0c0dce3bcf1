"""The judge prompt: one template per oracle type, the row's rubric, unacceptable behaviours
and reference in it, and the template's identity."""

from __future__ import annotations

from typing import Any

import pytest

from blueprint.core.judgeprompt import (
    JUDGED_ORACLE_TYPES,
    current_template,
    judge_prompt,
    judged,
    template_id,
)
from blueprint.grading import Recorded, grade_row


def _row(
    oracle: str, evaluator: str | None = "llm-judge", expected: Any = None, **case: Any
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "r",
        "input": "How do I get a refund?",
        "metadata": {
            "case": {
                "caseId": "r",
                "oracleType": oracle,
                "expectedBehavior": "explains the refund window",
                "provenance": "expert-authored",
                **({"evaluator": evaluator} if evaluator else {}),
                **case,
            }
        },
    }
    if expected is not None:
        row["expected"] = expected
    return row


def test_a_rubric_prompt_holds_the_criteria_and_what_fails() -> None:
    row = _row(
        "rubric",
        evaluationCriteria=["names the 30-day window"],
        unacceptableBehavior=["promises a refund outside policy"],
        passLogic="pass when both hold",
    )
    prompt = judge_prompt(row)
    assert prompt is not None
    for part in (
        "names the 30-day window",
        "promises a refund outside policy",
        "pass when both hold",
        "How do I get a refund?",
        "explains the refund window",
    ):
        assert part in prompt.text
    assert prompt.template == template_id("rubric")


def test_a_reference_guided_prompt_holds_the_reference() -> None:
    prompt = judge_prompt(_row("reference-answer", expected="Within 30 days, with a receipt."))
    assert prompt is not None and "Within 30 days, with a receipt." in prompt.text
    assert prompt.reference == "Within 30 days, with a receipt."


@pytest.mark.parametrize(
    "expected",
    [
        {"acceptable": ["30 days", "a month"]},
        {"graded": [{"value": "30 days", "grade": 1}, {"value": "a month", "grade": 0.5}]},
    ],
)
def test_an_acceptable_set_prompt_holds_every_member(expected: dict[str, Any]) -> None:
    prompt = judge_prompt(_row("acceptable-set", expected=expected))
    assert prompt is not None
    assert "30 days" in prompt.text and "a month" in prompt.text
    assert prompt.reference == "30 days\na month"


@pytest.mark.parametrize(
    ("oracle", "evaluator", "expected"),
    [
        ("rubric", None, True),
        ("rubric", "rubric-human", False),
        ("reference-answer", "exact-or-programmatic", False),
        ("reference-answer", None, False),
        ("expected-tool-calls", "llm-judge", False),
        ("expected-final-state", "llm-judge", False),
        ("expected-behavior-only", "llm-judge", False),
    ],
)
def test_only_rows_a_judge_grades_get_a_prompt(
    oracle: str, evaluator: str | None, expected: bool
) -> None:
    row = _row(oracle, evaluator)
    assert judged(row) is expected
    assert (judge_prompt(row) is not None) is expected


def test_a_family_evaluator_makes_a_row_judged() -> None:
    row = _row("reference-answer", None, expected="x")
    assert judged(row, "llm-judge") and judge_prompt(row, "llm-judge") is not None


def test_template_ids_name_the_oracle_type_and_a_digest() -> None:
    ids = {template_id(oracle) for oracle in JUDGED_ORACLE_TYPES}
    assert len(ids) == 3
    for oracle in JUDGED_ORACLE_TYPES:
        name, digest = template_id(oracle).split("@")
        assert name == oracle and len(digest) == 12
        assert current_template(template_id(oracle))
    assert not current_template("rubric@000000000000")
    assert not current_template(None)
    with pytest.raises(KeyError):
        template_id("expected-tool-calls")


def test_a_graded_judge_verdict_names_its_judge() -> None:
    judge = {"pass": True, "score": 1, "model": "gpt-x", "template": template_id("rubric")}
    verdict = grade_row(_row("rubric"), Recorded(id="r", output="ok", has_output=True, judge=judge))
    assert verdict.verdict == "pass"
    assert verdict.judge == {"model": "gpt-x", "template": template_id("rubric")}
    assert verdict.to_json()["judge"] == verdict.judge
    plain = _row("reference-answer", "exact-or-programmatic", expected="ok")
    assert (
        grade_row(plain, Recorded(id="r", output="ok", has_output=True, judge=judge)).judge is None
    )
