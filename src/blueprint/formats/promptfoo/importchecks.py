"""promptfoo's deterministic assertions read as checks of the vocabulary (docs/grading.md).

Each assertion promptfoo decides in code with a rule a check decides the same way becomes
that check, as promptfoo 0.121 runs it:

- ``equals``: a text value compared exactly (``String(value) === output``), so a number or
  true/false is compared as its JavaScript text; an object, list or null as a JSON value
  (``isDeepStrictEqual`` with the output read as JSON);
- ``contains``, ``starts-with``: the value as text; ``icontains`` lowercases both sides
  (``toLowerCase``: the ``lowercase`` normalisation);
- ``contains-any``, ``contains-all`` and their ``i`` forms: a text value split at commas as
  promptfoo splits it ("quoted, fields" kept whole), each member as text;
- ``regex``: ``new RegExp(value)``, no flags; a pattern Blueprint's dialect refuses is not
  mapped;
- ``is-json``: with no value, is-json; with an object value, a json-schema check (a schema
  whose meaning could differ between promptfoo's Ajv, draft-07 with formats, and Draft
  2020-12 is not mapped);
- ``levenshtein``: at most ``threshold`` edits (promptfoo's default 5), as a whole number;
- ``word-count``: a number is the exact count, ``{min, max}`` bounds it: a ``length`` in
  words;
- every ``not-`` form: ``{"type": "not", "check": ...}``.

A test whose assertions all map is an acceptable set that check defines (several: all of
them; with the test's ``threshold``: weighted by each assertion's ``weight``, promptfoo's
rule); an ``assert-set`` is one check of its own. A test mixing a model-graded assertion
with code checks, and no threshold, keeps its judged row with the code checks as its gate
(``metadata.case.checks``). Anything else reads as :func:`assertions.infer` reads it, with a
note saying why a check was not mapped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Final

from blueprint.core.checks import check_problem
from blueprint.formats.native import same
from blueprint.formats.promptfoo.assertions import (
    Inference,
    _as_compared,
    _describe,
    _flat,
    unknown_types,
)
from blueprint.formats.promptfoo.assertions import infer as infer_criteria
from blueprint.formats.promptfoo.cases import Suite, _comma_separated, output_transform

#: the assertion types a check of the vocabulary decides as promptfoo does
MAPPED: Final = frozenset(
    {
        "equals",
        "contains",
        "icontains",
        "contains-any",
        "icontains-any",
        "contains-all",
        "icontains-all",
        "starts-with",
        "regex",
        "is-json",
        "levenshtein",
        "word-count",
    }
)
#: assertion types promptfoo decides in code that no check decides the same way
_UNMAPPED: Final = {
    "contains-json": "promptfoo finds JSON anywhere in the output by its own scan, which no"
    " check repeats",
}
#: keys of a JSON Schema that Ajv's draft-07 (promptfoo's) and Draft 2020-12 (Blueprint's)
#: read differently, or that Ajv checks and Blueprint does not (format)
_DRAFT_KEYS: Final = frozenset(
    {
        "$schema",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "additionalItems",
        "dependencies",
        "dependentRequired",
        "dependentSchemas",
        "format",
        "prefixItems",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def js_text(value: Any) -> str | None:
    """A number, true or false as JavaScript's ``String`` writes it; None where Python's
    text could differ (exponents, which the two write at other sizes)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) < 10**21 else None
    if isinstance(value, float) and math.isfinite(value):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        text = repr(value)
        return None if "e" in text else text
    return None


def _schema_differs(schema: Any) -> bool:
    """Whether a schema uses what draft-07 and Draft 2020-12 read differently."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if _DRAFT_KEYS & node.keys() or isinstance(node.get("items"), list):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _texts(value: Any) -> list[str] | None:
    """The members of a contains-any/-all value as promptfoo compares them (``String(v)``)."""
    if isinstance(value, str):
        value = _comma_separated(value)
    if not isinstance(value, list) or not value:
        return None
    members = [member if isinstance(member, str) else js_text(member) for member in value]
    texts = [member for member in members if member is not None]
    return texts if len(texts) == len(members) else None


def _whole(value: Any) -> int | None:
    """A whole number of at least 0, from a number or the digits of one."""
    if isinstance(value, str) and re.fullmatch(r"\d+", value):
        return int(value)
    if _number(value) and math.isfinite(value) and value >= 0 and float(value).is_integer():
        return int(value)
    return None


def _base_check(base: str, value: Any, assertion: dict[str, Any]) -> dict[str, Any] | str:
    """The check one of :data:`MAPPED` is, given its value as promptfoo compares it, or why
    none decides it the same way."""
    lower = {"normalize": ["lowercase"]} if base.startswith("icontains") else {}
    if base == "equals":
        if isinstance(value, str | dict | list):
            return {"type": "equals", "value": value}
        text = js_text(value)
        return {"type": "equals", "value": text} if text is not None else "its value's text"
    if base in ("contains", "icontains"):
        text = value if isinstance(value, str) else js_text(value)
        if not text or isinstance(value, bool):
            return "promptfoo stops on a value that is no text or number"
        return {"type": "contains", "value": text, **lower}
    if base.endswith(("-any", "-all")):
        members = _texts(value) if value else None
        if members is None:
            return "its value is no list of texts"
        return {"type": base.removeprefix("i"), "values": members, **lower}
    if base in ("starts-with", "regex"):
        if not isinstance(value, str) or not value:
            return "promptfoo stops on a value that is no text"
        key = "value" if base == "starts-with" else "pattern"
        return {"type": base, key: value}
    if base == "is-json":
        if not value:
            return {"type": "is-json"}
        if not isinstance(value, dict):
            return "its schema is not written as an object"
        if _schema_differs(value):
            return "its schema uses what draft-07 (promptfoo's Ajv) and Draft 2020-12 differ on"
        return {"type": "json-schema", "schema": value}
    if base == "levenshtein":
        threshold = assertion.get("threshold")
        threshold = 5 if threshold is None else threshold
        if not isinstance(value, str) or not _number(threshold) or not threshold >= 0:
            return "its value is no text or its threshold no distance"
        if not math.isfinite(threshold):
            return "its threshold is no distance"
        return {"type": "levenshtein", "value": value, "maxDistance": math.floor(threshold)}
    # word-count
    if isinstance(value, dict):
        given: dict[str, int] = {}
        for key in ("min", "max"):
            if key in value:
                bound = _whole(value[key])
                if bound is None:
                    return "its bounds are not whole numbers"
                given[key] = bound
        if not given or given.get("min", 0) > given.get("max", given.get("min", 0)):
            return "promptfoo stops on bounds that are absent or the wrong way round"
        return {"type": "length", "unit": "words", **given}
    count = _whole(value)
    if count is None:
        return "its count is not a whole number"
    return {"type": "length", "unit": "words", "min": count, "max": count}


def check_of(assertion: dict[str, Any], variables: dict[str, Any]) -> dict[str, Any] | str | None:
    """The check a promptfoo assertion is: None when it is no deterministic check of
    :data:`MAPPED`, text saying why when it is one no check decides the same way."""
    kind = assertion.get("type")
    if not isinstance(kind, str):
        return None
    base = kind.removeprefix("not-")
    if base in _UNMAPPED:
        return f"{kind}: {_UNMAPPED[base]}"
    if base not in MAPPED:
        return None
    if "transform" in assertion:
        return f"{kind}: its own transform changes the output before the check"
    if assertion.get("value") is None and base != "is-json":
        return f"{kind}: a check with no value, which promptfoo cannot compare as written"
    value, known = _as_compared(assertion.get("value"), variables)
    loaded = isinstance(value, str) and value.startswith(("file://", "package:"))
    if assertion.get("value") is not None and (not known or loaded):
        return f"{kind}: its value is known only when promptfoo runs the test"
    check = _base_check(base, value, assertion)
    if isinstance(check, str):
        return f"{kind}: {check}"
    problem = check_problem(check)
    if problem is not None:
        return f"{kind}: {problem}"
    return {"type": "not", "check": check} if kind.startswith("not-") else check


@dataclass
class _Units:
    """A test's assertions sorted: checks (each with its weight), the assertions a model or
    other code grades, and why a deterministic one could not be mapped."""

    checks: list[dict[str, Any]] = field(default_factory=list)
    weights: list[int | float] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _weight(item: dict[str, Any]) -> int | float | None:
    weight = item.get("weight", 1)
    return weight if _number(weight) and math.isfinite(weight) and weight >= 0 else None


def _set_check(
    item: dict[str, Any], variables: dict[str, Any], scored: bool
) -> dict[str, Any] | str:
    """An assert-set as one check, or why it is none: all of its checks, or weighted by
    its threshold; inside a test with a threshold, promptfoo adds the set's score (its
    weighted mean), so only a set of one check counts as that check."""
    members = item.get("assert")
    if not isinstance(members, list):
        return "an assert-set with no list of assertions"
    if any(isinstance(member, dict) and member.get("type") == "assert-set" for member in members):
        return "an assert-set inside an assert-set, which promptfoo does not run"
    units = _sorted(members, variables)
    if units.problems or units.others:
        return "; ".join(units.problems) or "an assert-set with checks a model or code grades"
    if not units.checks:
        return "an assert-set with no check that counts"
    if scored and len(units.checks) > 1:
        return (
            "an assert-set of several checks in a test with a threshold: promptfoo adds the"
            " set's mean score, which no check gives"
        )
    if scored:
        return units.checks[0]  # its score is its one check's, whatever its own threshold
    return _combined(units, item.get("threshold"))


def _sorted(items: list[Any], variables: dict[str, Any], scored: bool = False) -> _Units:
    units = _Units()
    for item in items:
        if not isinstance(item, dict):
            units.problems.append("an assertion that is not an object")
            continue
        weight = _weight(item)
        if weight is None:
            units.problems.append(f"{item.get('type')}: its weight is no number of at least 0")
            continue
        if item.get("type") == "assert-set":
            if scored and weight == 0:
                continue  # promptfoo counts no score of it
            check: dict[str, Any] | str | None = _set_check(item, variables, scored)
        elif weight == 0:
            continue  # promptfoo passes it whatever it finds, and counts no score of it
        else:
            check = check_of(item, variables)
        if check is None:
            units.others.append(item)
        elif isinstance(check, str):
            units.problems.append(check)
        else:
            units.checks.append(check)
            units.weights.append(weight)
    return units


def _combined(units: _Units, threshold: Any) -> dict[str, Any] | str:
    """The checks as one: the only one, all of them, or weighted at a threshold."""
    if _number(threshold):
        if not 0 <= threshold <= 1:
            return f"a threshold of {threshold}, which no share of checks can be"
        weighted: dict[str, Any] = {"type": "weighted", "checks": units.checks}
        if any(weight != 1 for weight in units.weights):
            weighted["weights"] = units.weights
        return {**weighted, "threshold": threshold}
    if len(units.checks) == 1:
        return units.checks[0]
    return {"type": "all", "checks": units.checks}


def _default(record: dict[str, Any], suite: Suite, key: str) -> Any:
    """A test's own value of a key, else its defaultTest's (promptfoo's ``??``)."""
    own = record.get(key)
    return own if own is not None else suite.defaults.get(key)


def infer(assertions: list[Any], variables: dict[str, Any], record: Any, suite: Suite) -> Inference:
    """The row a promptfoo test's assertions (its defaultTest's first) amount to: read by
    :func:`assertions.infer`, then with its deterministic assertions as checks where every
    one of them maps and promptfoo's verdict is theirs (see the module's docstring), and an
    llm-rubric's threshold as the row's passThreshold."""
    record = record if isinstance(record, dict) else {}
    inference = _infer(assertions, variables, record, suite)
    threshold = _rubric_threshold(assertions, record, suite)
    if threshold is not None and inference.evaluator == "llm-judge":
        inference.case["passThreshold"] = threshold
    return inference


def _rubric_threshold(assertions: list[Any], record: dict[str, Any], suite: Suite) -> Any:
    """The threshold of a test's one llm-rubric, which promptfoo applies as a row's
    passThreshold is (the judge passes, and its score reaches it): None when the test has
    no such one, or a threshold of its own that weighs the judge with other scores."""
    if _default(record, suite, "threshold") is not None or not _flat(assertions):
        return None
    judges = [
        item for item in assertions if isinstance(item, dict) and "rubric" in str(item.get("type"))
    ]
    if len(judges) != 1 or judges[0].get("type") != "llm-rubric":
        return None
    threshold: Any = judges[0].get("threshold")
    return threshold if _number(threshold) and 0 <= threshold <= 1 else None


def _infer(
    assertions: list[Any], variables: dict[str, Any], record: dict[str, Any], suite: Suite
) -> Inference:
    transform = output_transform(record.get("options"), suite)
    inference = infer_criteria(assertions, variables, transform)
    if not _flat(assertions) or unknown_types(assertions):
        return inference
    threshold = _default(record, suite, "threshold")
    scored = _number(threshold)
    units = _sorted(assertions, variables, scored)
    if not units.checks and not units.problems:
        return inference  # nothing is a check: a model or other code grades it all
    if transform is not None:
        return inference  # the checks grade the transformed output: the caveat says so
    why: str | None = None
    if units.problems:
        why = "; ".join(units.problems)
    elif _default(record, suite, "assertScoringFunction") is not None:
        why = "the test's assertScoringFunction decides its verdict"
    elif threshold is not None and not scored:
        why = f"its threshold {threshold!r} is no number"
    if why is None and not units.others:
        if _equality(inference, units.checks) and (not scored or 0 < threshold <= 1):
            return inference  # an equality: the reference answer, as it always was
        combined = _combined(units, threshold)
        if isinstance(combined, str):
            why = combined
        else:
            return _acceptable(inference, combined, scored)
    elif why is None and scored:
        why = (
            "the test's threshold weighs the scores of assertions no check decides (a model's,"
            " or other code's) with the checks' ones, which no gate of checks does"
        )
    elif why is None:
        judged = infer_criteria(units.others, variables, None)
        if judged.evaluator == "llm-judge":
            return _gated(judged, units.checks, assertions)
    if why is not None:
        inference.caveats.append(f"its code checks stay criteria, not checks: {why}")
    return inference


def _equality(inference: Inference, checks: list[dict[str, Any]]) -> bool:
    """Whether the test is one equality the reference answer states as promptfoo decides
    it (an equals of a text or JSON value, a levenshtein of distance 0)."""
    if inference.oracle != "reference-answer" or len(checks) != 1:
        return False
    check = checks[0]
    if check["type"] == "levenshtein":
        return bool(check["maxDistance"] == 0)
    return check["type"] == "equals" and same(check["value"], inference.expected)


def _listed(assertions: list[Any]) -> str:
    return "; ".join(_describe(item) for item in _flat(assertions))


def _acceptable(inference: Inference, check: dict[str, Any], scored: bool) -> Inference:
    case = {"passLogic": inference.case["passLogic"]}
    derived = {
        "metadata.case.passLogic": inference.derived["metadata.case.passLogic"],
        "expected": "the test's assertions as the check that decides them as promptfoo does"
        + (", weighted by the test's threshold" if scored else ""),
    }
    return Inference(
        "acceptable-set",
        {"satisfies": check},
        "exact-or-programmatic",
        case,
        derived,
        inference.caveats,
    )


def _gated(judged: Inference, checks: list[dict[str, Any]], assertions: list[Any]) -> Inference:
    """The judged row of a test's model-graded assertions, its code checks as the gate."""
    case = {**judged.case, "passLogic": f"promptfoo grades it with: {_listed(assertions)}"}
    case["checks"] = checks
    derived = {
        **judged.derived,
        "metadata.case.checks": "the test's code assertions, which promptfoo requires to pass"
        " besides its model-graded ones",
    }
    return Inference(
        judged.oracle,
        judged.expected,
        judged.evaluator,
        case,
        derived,
        judged.caveats,
    )
