"""Checks decided against outputs: one verdict per check (docs/grading.md, "Checks").

:func:`run_check` decides a check of the vocabulary (:data:`blueprint.core.model.Check`)
against one output, in pure Python with no model call; ``blueprint grade`` and every
runner's scorer come down to it. Text checks read the output's text: the output itself when
it is text, else its compact JSON text (what ``JSON.stringify`` writes).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from blueprint.core.checks import (
    WHITESPACE,
    describe,
    json_equal,
    levenshtein,
    normalized,
    shown,
    within,
    words,
)
from blueprint.core.regex import RegexError, compile_regex
from blueprint.io import jsonvalues

#: a number as JSON writes it, the whole of the (trimmed) text
_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class CheckResult:
    """A check's verdict on one output, and why in words."""

    passed: bool
    reason: str


def output_text(output: Any) -> str:
    """The text text checks read: the output, or its compact JSON text when not text."""
    return output if isinstance(output, str) else jsonvalues.dumps_text(output)


def as_number(output: Any) -> float | None:
    """The output as a number: a JSON number, or text that is one (white space around it
    ignored); None otherwise."""
    if isinstance(output, bool):
        return None
    if isinstance(output, int | float):
        return float(output)
    if isinstance(output, str):
        text = output.strip(WHITESPACE)
        if _NUMBER.fullmatch(text):
            value = float(text)
            return value if math.isfinite(value) else None
    return None


def as_json(output: Any) -> tuple[bool, Any]:
    """Whether the output is JSON, and its value: any non-text output is; text is when it
    parses as JSON."""
    if not isinstance(output, str):
        return True, output
    try:
        return True, jsonvalues.loads(output)
    except jsonvalues.JSONError:
        return False, None


def values_equal(expected: Any, output: Any, normalize: Any = None, tolerance: Any = None) -> bool:
    """Whether an output is an expected value: text equal after the normalisations (an
    output that is not text is not equal to text); a number within ``tolerance`` when one is
    given (the output a number or the text of one); any other JSON value as a value, the
    output read as JSON first when it is text."""
    if isinstance(expected, str):
        return isinstance(output, str) and normalized(output, normalize) == normalized(
            expected, normalize
        )
    if (
        _is_number(tolerance)  # another value is the schema's finding: no tolerance
        and isinstance(expected, int | float)
        and not isinstance(expected, bool)
    ):
        number = as_number(output)
        return number is not None and within(number, expected, tolerance)
    if isinstance(output, str):
        readable, output = as_json(output)
        if not readable:
            return False
    return json_equal(expected, output)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def run_check(check: Any, output: Any) -> CheckResult:
    """One check's verdict on an output. A check that cannot run (a pattern outside the
    dialect, a schema that is not one) fails, saying why; ``blueprint validate`` reports
    such checks before anything is graded."""
    kind = check.get("type") if isinstance(check, dict) else None
    rule = _RULES.get(kind) if isinstance(kind, str) else None
    if rule is None:
        return CheckResult(False, f"{shown(kind)} is not a check Blueprint knows")
    try:
        return rule(check, output)
    except (RegexError, ValueError, TypeError, KeyError) as error:
        return CheckResult(False, f"{describe(check)} cannot run: {error}")


def _outcome(passed: bool, check: dict[str, Any], output: Any, why: str = "") -> CheckResult:
    said = "passes" if passed else "fails"
    detail = f" ({why})" if why and not passed else ""
    return CheckResult(passed, f"{describe(check)} {said} on {shown(output)}{detail}")


def _equals(check: dict[str, Any], output: Any) -> CheckResult:
    return _outcome(values_equal(check["value"], output, check.get("normalize")), check, output)


def _number(check: dict[str, Any], output: Any) -> CheckResult:
    number = as_number(output)
    if number is None:
        return _outcome(False, check, output, "not a number")
    return _outcome(within(number, check["value"], check.get("tolerance", 0)), check, output)


def _text(check: dict[str, Any], output: Any) -> CheckResult:
    text = normalized(output_text(output), check.get("normalize"))
    value = normalized(check["value"], check.get("normalize"))
    test: Callable[[str], bool] = {
        "contains": text.__contains__,
        "starts-with": text.startswith,
        "ends-with": text.endswith,
    }[check["type"]]
    return _outcome(test(value), check, output)


def _texts(check: dict[str, Any], output: Any) -> CheckResult:
    text = normalized(output_text(output), check.get("normalize"))
    found = [normalized(value, check.get("normalize")) in text for value in check["values"]]
    if check["type"] == "contains-any":
        return _outcome(any(found), check, output, "none of them is there")
    missing = [value for value, hit in zip(check["values"], found, strict=True) if not hit]
    return _outcome(not missing, check, output, f"{shown(missing[0]) if missing else ''} is not")


def _regex(check: dict[str, Any], output: Any) -> CheckResult:
    pattern = compile_regex(check["pattern"], check.get("flags", ""))
    return _outcome(pattern.search(output_text(output)) is not None, check, output, "no match")


def _is_json(check: dict[str, Any], output: Any) -> CheckResult:
    return _outcome(as_json(output)[0], check, output, "not JSON")


@functools.lru_cache(maxsize=256)
def _schema_validator(schema_text: str) -> Any:
    from blueprint.core.schema import ecma_validator

    return ecma_validator(jsonvalues.loads(schema_text))


def _json_schema(check: dict[str, Any], output: Any) -> CheckResult:
    readable, value = as_json(output)
    if not readable:
        return _outcome(False, check, output, "not JSON")
    validator = _schema_validator(jsonvalues.dumps_text(check["schema"], sort_keys=True))
    error = next(iter(validator.iter_errors(value)), None)
    return _outcome(error is None, check, output, error.message if error is not None else "")


def _length(check: dict[str, Any], output: Any) -> CheckResult:
    text = output_text(output)
    unit = check.get("unit", "characters")
    size = words(text) if unit == "words" else len(text)
    low, high = check.get("min"), check.get("max")
    passed = (low is None or size >= low) and (high is None or size <= high)
    return _outcome(passed, check, output, f"{size} {unit}")


def _levenshtein(check: dict[str, Any], output: Any) -> CheckResult:
    limit = check["maxDistance"]
    distance = levenshtein(output_text(output), check["value"], limit)
    shown_distance = f"more than {limit}" if distance > limit else str(distance)
    return _outcome(distance <= limit, check, output, f"distance {shown_distance}")


def _items(check: dict[str, Any], output: Any) -> CheckResult:
    readable, value = as_json(output)
    if not readable or not isinstance(value, list):
        return _outcome(False, check, output, "not a list")
    left = list(value)
    for item in check["required"]:
        match = next((index for index, have in enumerate(left) if json_equal(item, have)), None)
        if match is None:
            return _outcome(False, check, output, f"{shown(item)} is missing")
        del left[match]
    allowed = check.get("allowed") or []
    extra = next((item for item in left if not any(json_equal(item, a) for a in allowed)), None)
    if left and extra is not None:
        return _outcome(False, check, output, f"{shown(extra)} is not allowed")
    return _outcome(True, check, output)


def _not(check: dict[str, Any], output: Any) -> CheckResult:
    inner = run_check(check["check"], output)
    return _outcome(not inner.passed, check, output, inner.reason)


def _all(check: dict[str, Any], output: Any) -> CheckResult:
    for number, part in enumerate(check["checks"], start=1):
        result = run_check(part, output)
        if not result.passed:
            return CheckResult(False, f"check {number} of {len(check['checks'])}: {result.reason}")
    return _outcome(True, check, output)


def _any(check: dict[str, Any], output: Any) -> CheckResult:
    results = [run_check(part, output) for part in check["checks"]]
    if any(result.passed for result in results):
        return _outcome(True, check, output)
    return _outcome(False, check, output, results[0].reason)


def _weighted(check: dict[str, Any], output: Any) -> CheckResult:
    parts = check["checks"]
    weights = check.get("weights") or [1] * len(parts)
    if len(weights) != len(parts):
        raise ValueError(f"{len(weights)} weights for {len(parts)} checks")
    total = sum(weights)
    earned = sum(
        weight
        for part, weight in zip(parts, weights, strict=True)
        if run_check(part, output).passed
    )
    share = earned / total if total > 0 else 0.0
    why = f"share {share:.2f} is below {check['threshold']:g}"
    return _outcome(share >= check["threshold"], check, output, why)


_RULES: Final[dict[str, Callable[[dict[str, Any], Any], CheckResult]]] = {
    "equals": _equals,
    "number": _number,
    "contains": _text,
    "starts-with": _text,
    "ends-with": _text,
    "contains-any": _texts,
    "contains-all": _texts,
    "regex": _regex,
    "is-json": _is_json,
    "json-schema": _json_schema,
    "length": _length,
    "levenshtein": _levenshtein,
    "items": _items,
    "not": _not,
    "all": _all,
    "any": _any,
    "weighted": _weighted,
}
