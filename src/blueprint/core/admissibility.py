"""The admissibility map: which evaluators each oracle type admits, admits with conditions, or bars.

The map is data. The validator, the builder's narrowing, ``blueprint evaluators``, the docs and
the exporters all read this one table; nothing else decides admissibility.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from blueprint.core.model import EVALUATOR_TYPES, EvaluatorType, OracleType

Verdict = Literal["admitted", "conditional", "barred"]

_JUDGE_VALIDATED: Final = (
    "the judge is validated against human labels on a sample of the task's own cases"
    " (blueprint judge-report measures it; point the set at a passing report)"
)


@dataclass(frozen=True)
class OracleRule:
    """What one oracle type does with each evaluator."""

    oracle_type: OracleType
    summary: str
    admits: tuple[EvaluatorType, ...]
    conditional: dict[EvaluatorType, tuple[str, ...]]
    bars: dict[EvaluatorType, str]

    def verdict(self, evaluator: EvaluatorType) -> Verdict:
        if evaluator in self.admits:
            return "admitted"
        if evaluator in self.conditional:
            return "conditional"
        return "barred"

    def admissible(self) -> tuple[EvaluatorType, ...]:
        """Evaluators that may grade this oracle type, conditional ones included."""
        return tuple(e for e in EVALUATOR_TYPES if e in self.admits or e in self.conditional)


ADMISSIBILITY: Final[dict[OracleType, OracleRule]] = {
    rule.oracle_type: rule
    for rule in (
        OracleRule(
            oracle_type="reference-answer",
            summary="One correct output is written down and the answer is compared with it.",
            admits=("exact-or-programmatic", "rubric-human", "human-expert"),
            conditional={
                "llm-judge": (
                    "the reference answer goes in the judge prompt (reference-guided grading)",
                    _JUDGE_VALIDATED,
                ),
            },
            bars={
                "pairwise-preference": (
                    "a preference between two outputs answers a different question than"
                    " agreement with the reference"
                ),
                "trajectory-or-state-check": "the oracle is a written answer, not a trace",
            },
        ),
        OracleRule(
            oracle_type="acceptable-set",
            summary=(
                "Several outputs are acceptable, enumerated or graded; the check is membership,"
                " not equality with one of them."
            ),
            admits=("exact-or-programmatic", "rubric-human", "human-expert"),
            conditional={
                "llm-judge": (
                    "the acceptable set goes in the judge prompt (reference-guided grading)",
                    _JUDGE_VALIDATED,
                ),
            },
            bars={
                "pairwise-preference": (
                    "the check is membership in the set, never which of two outputs a reader"
                    " prefers"
                ),
                "trajectory-or-state-check": "there is no trace to inspect",
            },
        ),
        OracleRule(
            oracle_type="rubric",
            summary=(
                "A written description of what a good answer must and must not do, judged by a"
                " reader or a model."
            ),
            admits=("rubric-human", "human-expert"),
            conditional={
                "llm-judge": ("the rubric goes in the judge prompt", _JUDGE_VALIDATED),
            },
            bars={
                "exact-or-programmatic": "a string comparison cannot read a criterion",
                "pairwise-preference": "a preference between two outputs is not a rubric score",
                "trajectory-or-state-check": (
                    "the evaluator inspects the path taken, not the quality of the output"
                ),
            },
        ),
        OracleRule(
            oracle_type="expected-tool-calls",
            summary=(
                "The actions, not the words: which calls with which arguments, in what order,"
                " and which must not happen."
            ),
            admits=("trajectory-or-state-check", "exact-or-programmatic", "human-expert"),
            conditional={},
            bars={
                evaluator: (
                    "the calls are recorded, so the check is a comparison against the record;"
                    " only an expert may read the recorded trace in place of code"
                )
                for evaluator in ("llm-judge", "pairwise-preference", "rubric-human")
            },
        ),
        OracleRule(
            oracle_type="expected-final-state",
            summary=(
                "The world after the run, checked by execution: a record, a file, a test that"
                " now passes."
            ),
            admits=("trajectory-or-state-check", "exact-or-programmatic", "human-expert"),
            conditional={},
            bars={
                evaluator: (
                    "the world after the run can be checked by execution; only an expert may"
                    " inspect the resulting state in place of code"
                )
                for evaluator in ("llm-judge", "pairwise-preference", "rubric-human")
            },
        ),
        OracleRule(
            oracle_type="expected-behavior-only",
            summary=(
                "A description of correct behaviour that nobody has turned into a checkable"
                " oracle yet; only a human expert can judge it."
            ),
            admits=("human-expert",),
            conditional={},
            bars={
                evaluator: (
                    "nothing has been turned into a checkable oracle yet, so an automated or"
                    " rubric grader would score a rule nobody wrote"
                )
                for evaluator in EVALUATOR_TYPES
                if evaluator != "human-expert"
            },
        ),
    )
}


def rule_for(oracle_type: OracleType) -> OracleRule:
    return ADMISSIBILITY[oracle_type]


def verdict(oracle_type: OracleType, evaluator: EvaluatorType) -> Verdict:
    return ADMISSIBILITY[oracle_type].verdict(evaluator)


def admissible_evaluators(oracle_type: OracleType) -> tuple[EvaluatorType, ...]:
    return ADMISSIBILITY[oracle_type].admissible()


def bar_reason(oracle_type: OracleType, evaluator: EvaluatorType) -> str | None:
    return ADMISSIBILITY[oracle_type].bars.get(evaluator)


def conditions(oracle_type: OracleType, evaluator: EvaluatorType) -> tuple[str, ...]:
    return ADMISSIBILITY[oracle_type].conditional.get(evaluator, ())


def automatically_gradable(oracle_type: str, evaluator: str | None) -> bool:
    """Whether an automated grader may score the row (false for human-only rows)."""
    if oracle_type == "expected-behavior-only":
        return False
    return evaluator not in ("human-expert", "rubric-human")
