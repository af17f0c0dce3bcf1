"""The parts of the check vocabulary every layer shares (docs/grading.md, "Checks").

A check is data (:data:`blueprint.core.model.Check`): ``{"type": "contains", "value":
"grub", "normalize": ["lowercase"]}``. This module holds what the validator and the
exporters need of checks as well as the grader: the normalisations and what white space is,
equality of JSON values, a check described in words, and :func:`check_problem`, what keeps a
check from running. :mod:`blueprint.grading.checks` decides checks against outputs.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any, Final

from blueprint.core.regex import RegexError, compile_regex

#: Unicode's White_Space characters: what collapse-whitespace, trim and word counts mean by
#: white space, the same in every runner Blueprint writes checks for
WHITESPACE: Final = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_RUNS: Final = re.compile(f"[{re.escape(WHITESPACE)}]+")
#: the normalisations, in the order they apply whatever order a row lists them in
NORMALIZATION_ORDER: Final = ("nfc", "collapse-whitespace", "trim", "lowercase")


def normalized(text: str, normalize: Any) -> str:
    """``text`` after the normalisations a check or row names (in their fixed order); a
    ``normalize`` that is no list of names (the schema's finding) names none."""
    steps = (
        {step for step in normalize if isinstance(step, str)} if isinstance(normalize, list) else ()
    )
    if "nfc" in steps:
        text = unicodedata.normalize("NFC", text)
    if "collapse-whitespace" in steps:
        text = _RUNS.sub(" ", text)
    if "trim" in steps:
        text = text.strip(WHITESPACE)
    if "lowercase" in steps:
        text = text.lower()
    return text


def json_equal(left: Any, right: Any) -> bool:
    """Equal as JSON values: objects key by key in any order, numbers by value (1 is 1.0),
    and nothing else across types (true is not 1, "1" is not 1)."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and left.keys() == right.keys()
            and all(json_equal(left[key], right[key]) for key in left)
        )
    if isinstance(left, list):
        return (
            isinstance(right, list)
            and len(left) == len(right)
            and all(json_equal(a, b) for a, b in zip(left, right, strict=True))
        )
    return type(left) is type(right) and left == right


def within(number: float, target: float, tolerance: float) -> bool:
    """Whether ``number`` is at most ``tolerance`` from ``target``; a distance equal to the
    tolerance up to binary rounding (3.15 against 3.14 ± 0.01) is within it."""
    distance = abs(number - target)
    return distance <= tolerance or math.isclose(distance, tolerance, rel_tol=1e-9)


def shown(value: Any, limit: int = 60) -> str:
    """A value in a reason: text quoted, anything else as compact JSON, cut to ``limit``."""
    text = (
        repr(value)
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    )
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(check: Any) -> str:
    """A check in a few words, as reasons name it: ``contains 'grub' (lowercase)``."""
    if not isinstance(check, dict):
        return f"check {shown(check)}"
    kind = check.get("type")
    normalize = check.get("normalize")
    how = ""
    if normalize:  # steps of another shape (the schema's finding) are shown as given
        steps = normalize if isinstance(normalize, list) else [normalize]
        how = f" ({', '.join(step if isinstance(step, str) else shown(step) for step in steps)})"
    if kind in ("equals", "contains", "starts-with", "ends-with", "levenshtein"):
        return f"{kind} {shown(check.get('value'))}{how}"
    if kind == "number":
        return f"number {shown(check.get('value'))} ± {shown(check.get('tolerance', 0))}"
    if kind in ("contains-any", "contains-all"):
        return f"{kind} {shown(check.get('values'))}{how}"
    if kind == "regex":
        return f"regex /{check.get('pattern')}/{check.get('flags', '')}"
    if kind == "length":
        bounds = f"{check.get('min', 0)}..{check.get('max', '')}"
        return f"length {bounds} {check.get('unit', 'characters')}"
    if kind == "not":
        return f"not ({describe(check.get('check'))})"
    if kind in ("all", "any", "weighted"):
        return f"{kind} of {len(check_parts(check))} check(s)"
    return kind if isinstance(kind, str) else f"check {shown(kind)}"


def words(text: str) -> int:
    """The words of a text: its runs of characters that are not white space."""
    return len([part for part in _RUNS.split(text) if part])


def levenshtein(left: str, right: str, limit: int) -> int:
    """The edit distance of two texts, or ``limit + 1`` as soon as it is past ``limit`` (a
    band of the table, so a long output costs its length times the limit)."""
    if abs(len(left) - len(right)) > limit:
        return limit + 1
    previous = list(range(len(right) + 1))
    for row, char in enumerate(left, start=1):
        current = [row] + [limit + 1] * len(right)
        start, stop = max(1, row - limit), min(len(right), row + limit)
        for column in range(start, stop + 1):
            cost = previous[column - 1] + (char != right[column - 1])
            current[column] = min(cost, previous[column] + 1, current[column - 1] + 1)
        if min(current[max(0, start - 1) : stop + 1]) > limit:
            return limit + 1
        previous = current
    return min(previous[len(right)], limit + 1)


def check_problem(check: Any) -> str | None:
    """What keeps a check (the schema accepts it) from running, found before any run: a
    pattern outside the dialect, a schema that is not a JSON Schema, weights that do not
    pair with the checks, bounds the wrong way round. None when it can run."""
    if not isinstance(check, dict):
        return None
    kind = check.get("type")
    if kind == "regex" and isinstance(check.get("pattern"), str):
        try:
            compile_regex(check["pattern"], str(check.get("flags", "")))
        except RegexError as error:
            return f"the pattern {shown(check['pattern'])} cannot run: {error}"
    if kind == "json-schema" and isinstance(check.get("schema"), dict):
        from blueprint.core.schema import schema_problem

        return schema_problem(check["schema"])
    if kind == "weighted":
        weights, parts = check.get("weights"), check.get("checks")
        if isinstance(weights, list) and isinstance(parts, list) and len(weights) != len(parts):
            return f"{len(weights)} weights for {len(parts)} checks"
    if kind == "length":
        low, high = check.get("min"), check.get("max")
        if isinstance(low, int) and isinstance(high, int) and low > high:
            return f"min {low} is above max {high}"
    for part in check_parts(check):
        problem = check_problem(part)
        if problem is not None:
            return problem
    return None


def check_parts(check: dict[str, Any]) -> list[Any]:
    """The checks a combinator holds: ``not``'s one, ``all``'s, ``any``'s, ``weighted``'s."""
    if check.get("type") == "not":
        return [check.get("check")]
    parts = check.get("checks")
    return parts if isinstance(parts, list) else []
