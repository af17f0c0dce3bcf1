"""The admissibility map, checked against the spec pairing by pairing."""

from __future__ import annotations

import pytest

from blueprint.core.admissibility import (
    ADMISSIBILITY,
    admissible_evaluators,
    automatically_gradable,
    bar_reason,
    conditions,
    verdict,
)
from blueprint.core.model import EVALUATOR_TYPES, ORACLE_TYPES

SPEC = {
    "reference-answer": (
        {"exact-or-programmatic", "rubric-human", "human-expert"},
        {"llm-judge"},
        {"pairwise-preference", "trajectory-or-state-check"},
    ),
    "acceptable-set": (
        {"exact-or-programmatic", "rubric-human", "human-expert"},
        {"llm-judge"},
        {"pairwise-preference", "trajectory-or-state-check"},
    ),
    "rubric": (
        {"rubric-human", "human-expert"},
        {"llm-judge"},
        {"exact-or-programmatic", "pairwise-preference", "trajectory-or-state-check"},
    ),
    "expected-tool-calls": (
        {"trajectory-or-state-check", "exact-or-programmatic", "human-expert"},
        set(),
        {"llm-judge", "pairwise-preference", "rubric-human"},
    ),
    "expected-final-state": (
        {"trajectory-or-state-check", "exact-or-programmatic", "human-expert"},
        set(),
        {"llm-judge", "pairwise-preference", "rubric-human"},
    ),
    "expected-behavior-only": (
        {"human-expert"},
        set(),
        set(EVALUATOR_TYPES) - {"human-expert"},
    ),
}


def test_every_oracle_type_has_a_rule() -> None:
    assert set(ADMISSIBILITY) == set(ORACLE_TYPES)


@pytest.mark.parametrize("oracle_type", ORACLE_TYPES)
def test_map_matches_spec(oracle_type: str) -> None:
    admits, conditional, bars = SPEC[oracle_type]
    rule = ADMISSIBILITY[oracle_type]
    assert set(rule.admits) == admits
    assert set(rule.conditional) == conditional
    assert set(rule.bars) == bars


@pytest.mark.parametrize("oracle_type", ORACLE_TYPES)
def test_each_evaluator_classified_exactly_once(oracle_type: str) -> None:
    rule = ADMISSIBILITY[oracle_type]
    for evaluator in EVALUATOR_TYPES:
        places = [evaluator in rule.admits, evaluator in rule.conditional, evaluator in rule.bars]
        assert places.count(True) == 1, (oracle_type, evaluator)


def test_pairwise_preference_is_admitted_by_no_oracle_type() -> None:
    assert all(verdict(o, "pairwise-preference") == "barred" for o in ORACLE_TYPES)


def test_every_bar_has_a_reason_and_every_condition_two_clauses() -> None:
    for oracle_type, rule in ADMISSIBILITY.items():
        for evaluator in rule.bars:
            assert bar_reason(oracle_type, evaluator)
        for evaluator in rule.conditional:
            assert len(conditions(oracle_type, evaluator)) == 2
            assert "human labels" in conditions(oracle_type, evaluator)[1]


def test_admissible_evaluators_keep_enum_order() -> None:
    assert admissible_evaluators("rubric") == ("rubric-human", "llm-judge", "human-expert")
    assert admissible_evaluators("expected-behavior-only") == ("human-expert",)


@pytest.mark.parametrize(
    ("oracle_type", "evaluator", "expected"),
    [
        ("reference-answer", "exact-or-programmatic", True),
        ("reference-answer", None, True),
        ("rubric", "rubric-human", False),
        ("rubric", "human-expert", False),
        ("expected-behavior-only", None, False),
        ("expected-tool-calls", "trajectory-or-state-check", True),
    ],
)
def test_automatically_gradable(oracle_type: str, evaluator: str | None, expected: bool) -> None:
    assert automatically_gradable(oracle_type, evaluator) is expected
