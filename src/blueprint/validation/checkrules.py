"""Findings on how a row is graded: a rubric's criteria, the grading rules a row declares
as data (checks, normalize, tolerance and passThreshold: docs/grading.md), and the rules its
passLogic states in words.

- ``check-unusable``: a check the schema accepts but no grader could run;
- ``rule-not-applied``: a rule on a row whose grading never applies it;
- ``pass-logic-unstated``: passLogic states a threshold or a normalisation that no field of
  the row declares, so ``grade`` would apply something else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, Final, NamedTuple, Protocol

from blueprint.core.checks import check_problem
from blueprint.core.issues import Issue


class RowView(Protocol):
    """What these rules read of a row (``validation.checks.RowView``, whose rule list
    names them)."""

    case: dict[str, Any]
    data: dict[str, Any]
    oracle_type: Any

    def issue(self, code: str, *location: str | int, **context: Any) -> Issue: ...


_HUMAN: Final = frozenset({"human-expert", "rubric-human", "pairwise-preference"})
#: a pass threshold in words: "pass at 0.7", "a pass needs at least 0.5", "threshold 0.8"
_THRESHOLD: Final = re.compile(
    r"\b(?:pass(?:es|ing)?|threshold)\b[^;\d]{0,40}?(?<![\d.])(0?\.\d+|1(?:\.0+)?|0)(?![\d.])",
    re.IGNORECASE,
)
#: comparisons in words, and the normalisations any of which declares each
_WORDED: Final[tuple[tuple[re.Pattern[str], str, frozenset[str]], ...]] = (
    (
        re.compile(
            r"lower-?cas|case[- ]insensitiv|ignor\w* (?:the )?(?:letter )?case|regardless of"
            r" (?:letter )?case|case-?fold",
            re.IGNORECASE,
        ),
        "case is ignored",
        frozenset({"lowercase"}),
    ),
    (
        re.compile(
            r"\btrim|surrounding (?:white ?space|spaces)|leading (?:and|or) trailing",
            re.IGNORECASE,
        ),
        "surrounding white space is ignored",
        frozenset({"trim"}),
    ),
    (
        re.compile(
            r"collaps\w* (?:white ?space|spaces)|ignor\w* (?:extra )?white ?space|white ?space"
            r" (?:is |are )?ignored",
            re.IGNORECASE,
        ),
        "white space is ignored",
        frozenset({"collapse-whitespace", "trim"}),
    ),
    (
        re.compile(r"\bNFC\b|unicode normali[sz]", re.IGNORECASE),
        "text is Unicode-normalised",
        frozenset({"nfc"}),
    ),
)
_TOLERANCE: Final = re.compile(r"±|\+/-|\btolerance\b|\bwithin \d", re.IGNORECASE)


def unusable_check_issues(row: RowView, state: object = None) -> Sequence[Issue]:
    """check-unusable for one row: its checks, and its acceptable set's check."""
    if not row.case:
        return ()
    return list(_unusable(row))


def grading_rule_issues(row: RowView, evaluator: str | None) -> Sequence[Issue]:
    """rule-not-applied and pass-logic-unstated for one row, graded by ``evaluator`` (its
    own, or its family's)."""
    if not row.case:
        return ()
    return list(_findings(row, evaluator))


def check_rubric_criteria(row: RowView, state: object) -> Sequence[Issue]:
    if row.oracle_type == "rubric" and not row.case.get("evaluationCriteria"):
        return [row.issue("rubric-without-criteria", "metadata", "case", "evaluationCriteria")]
    return ()


def _unusable(row: RowView) -> Iterator[Issue]:
    checks = row.case.get("checks")
    for position, check in enumerate(checks if isinstance(checks, list) else []):
        problem = check_problem(check)
        if problem is not None:
            yield row.issue(
                "check-unusable", "metadata", "case", "checks", position, reason=problem
            )
    expected = row.data.get("expected")
    satisfies = expected.get("satisfies") if isinstance(expected, dict) else None
    if satisfies is not None and row.oracle_type == "acceptable-set":
        problem = check_problem(satisfies)
        if problem is not None:
            yield row.issue("check-unusable", "expected", "satisfies", reason=problem)


def _findings(row: RowView, evaluator: str | None) -> Iterator[Issue]:
    case = row.case
    expected = row.data.get("expected")
    human = row.oracle_type == "expected-behavior-only" or evaluator in _HUMAN
    judged = not human and (evaluator == "llm-judge" or row.oracle_type == "rubric")
    for field, reason in _unapplied(row, expected, human=human, judged=judged):
        yield row.issue("rule-not-applied", "metadata", "case", field, field=field, reason=reason)
    logic = case.get("passLogic")
    if isinstance(logic, str) and not human:
        yield from _unstated(row, logic, expected, judged=judged)


def _compared(expected: Any, oracle: Any) -> list[Any]:
    """The values an output is compared with by equality: the reference answer, or the
    members of an enumerated or graded acceptable set."""
    if oracle == "reference-answer":
        return [expected]
    if oracle != "acceptable-set" or not isinstance(expected, dict):
        return []
    if isinstance(expected.get("acceptable"), list):
        return list(expected["acceptable"])
    graded = expected.get("graded")
    members = graded if isinstance(graded, list) else []
    return [member.get("value") for member in members if isinstance(member, dict)]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _unapplied(
    row: RowView, expected: Any, *, human: bool, judged: bool
) -> Iterator[tuple[str, str]]:
    case = row.case
    graded_by_code = not human and not judged
    compared = _compared(expected, row.oracle_type) if graded_by_code else []
    if case.get("normalize") and not any(isinstance(value, str) for value in compared):
        yield "normalize", _why_not(row, human, judged, "no text answer is compared with")
    if case.get("tolerance") is not None and not any(_is_number(value) for value in compared):
        yield "tolerance", _why_not(row, human, judged, "no number is compared with")
    graded = isinstance(expected, dict) and "graded" in expected
    threshold_applies = judged or (
        graded_by_code and row.oracle_type == "acceptable-set" and graded
    )
    if case.get("passThreshold") is not None and not threshold_applies:
        yield "passThreshold", _why_not(row, human, judged, "neither a graded set nor a judge")
    if case.get("checks") and human:
        yield "checks", "a person grades this row, and a person's verdict is not a number"


def _why_not(row: RowView, human: bool, judged: bool, otherwise: str) -> str:
    if human:
        return "a person grades this row"
    if judged:
        return "a judge grades this row; write the rule in its criteria"
    return f"{row.oracle_type}: {otherwise}"


def _objects(case: dict[str, Any], expected: Any) -> Iterator[dict[str, Any]]:
    """Every object in the row's checks and its expected value (the checks among them)."""
    stack: list[Any] = [case.get("checks"), expected]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _declared_normalizations(case: dict[str, Any], expected: Any) -> set[str]:
    """Every normalisation the row declares: its own, its checks' and its acceptable set's
    check's (a regex with the ``i`` flag ignores case)."""
    own = case.get("normalize")
    # the row's own list as its checks' (any other value is a schema finding, not a crash)
    found = {item for item in own if isinstance(item, str)} if isinstance(own, list) else set()
    for node in _objects(case, expected):
        if isinstance(node.get("normalize"), list):
            found.update(item for item in node["normalize"] if isinstance(item, str))
        if node.get("type") == "regex" and "i" in str(node.get("flags", "")):
            found.add("lowercase")
    return found


class _Claims(NamedTuple):
    """What a passLogic text states that a field could declare: a pass threshold (None: none
    stated), which comparisons in words (indices into ``_WORDED``), and a tolerance."""

    threshold: float | None
    worded: tuple[int, ...]
    tolerance: bool


def _claims(logic: str) -> _Claims:
    # a set repeats a few passLogic texts over many rows: each is searched once; a long one
    # (rare, and the memo would keep it) is searched every time
    return _remembered_claims(logic) if len(logic) <= _REMEMBERED_LENGTH else _searched(logic)


#: the longest passLogic text whose claims are remembered (4,096 of them at most)
_REMEMBERED_LENGTH: Final = 1024


def _searched(logic: str) -> _Claims:
    match = _THRESHOLD.search(logic)
    return _Claims(
        None if match is None else float(match.group(1)),
        tuple(number for number, (pattern, _, _) in enumerate(_WORDED) if pattern.search(logic)),
        _TOLERANCE.search(logic) is not None,
    )


_remembered_claims: Final = lru_cache(maxsize=4096)(_searched)


def _unstated(row: RowView, logic: str, expected: Any, *, judged: bool) -> Iterator[Issue]:
    case = row.case
    declared = case.get("passThreshold")
    graded = isinstance(expected, dict) and "graded" in expected
    claims = _claims(logic)
    stated = claims.threshold
    if stated is not None:
        if judged or graded:
            effective = declared if _is_number(declared) else (0.5 if judged else 1.0)
            if stated != effective:
                missing = (
                    f"passThreshold is {declared:g}"
                    if _is_number(declared)
                    else f"no passThreshold is declared, so {effective:g} applies"
                )
                yield _unstated_issue(row, f"a pass at {stated:g}", missing)
        elif row.oracle_type in ("reference-answer", "acceptable-set") and stated not in (0, 1):
            yield _unstated_issue(
                row, f"a pass at {stated:g}", "this row has no grade or score to compare with it"
            )
    if claims.worded:
        names = _declared_normalizations(case, expected)
        for number in claims.worded:
            _, what, satisfied_by = _WORDED[number]
            if not names & satisfied_by:
                wanted = " or ".join(sorted(satisfied_by))
                yield _unstated_issue(row, what, f"no normalize declares it ({wanted})")
    if claims.tolerance and case.get("tolerance") is None and not _has_number_check(case, expected):
        yield _unstated_issue(row, "a tolerance", "no tolerance or number check declares one")


def _has_number_check(case: dict[str, Any], expected: Any) -> bool:
    return any(node.get("type") in ("number", "levenshtein") for node in _objects(case, expected))


def _unstated_issue(row: RowView, what: str, missing: str) -> Issue:
    return row.issue(
        "pass-logic-unstated", "metadata", "case", "passLogic", what=what, missing=missing
    )
