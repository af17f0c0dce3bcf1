"""Rows as omk samples (prompt, rubric, assertions), and the oracle a sample states."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from blueprint.formats.native import ABSENT
from blueprint.formats.omk.checks import assertions_of, check_of
from blueprint.formats.omk.rules import _is_number, _safe_number, blank
from blueprint.formats.vendor import ExportRow
from blueprint.io import jsonvalues


def prompt_of(value: Any) -> str:
    """The prompt for a row's input: text as it is, any other value as its JSON text."""
    return value if isinstance(value, str) else jsonvalues.dumps_text(value)


def answer_value(value: Any) -> str | int | float:
    """An expected value as omk's equals takes it: text, or a number within JavaScript's safe
    range; anything else as its JSON text."""
    if isinstance(value, str):
        return value
    if _safe_number(value):
        return value
    return jsonvalues.dumps_text(value)


def equal_weights(count: int) -> list[float]:
    """``count`` equal weights whose floating-point sum, added left to right as omk adds
    them, is exactly 1 (the last one takes up the rounding)."""
    weights = [1 / count] * (count - 1)
    running = 0.0
    for weight in weights:
        running += weight
    last = 1.0 - running
    total = running + last
    if total != 1.0:  # pragma: no cover - 1 - x + x is 1 in binary floating point
        last = math.nextafter(last, 2.0 if total < 1 else 0.0)
    return [*weights, last]


def rubric_criteria(row: ExportRow) -> list[str]:
    """The criteria a rubric row's omk rubric holds: its non-blank evaluation criteria, else
    its expected behaviour when that says something."""
    criteria = [text for text in row.case.get("evaluationCriteria") or [] if not blank(text)]
    if criteria:
        return criteria
    behaviour = row.case.get("expectedBehavior", "")
    return [behaviour] if isinstance(behaviour, str) and not blank(behaviour) else []


def rubric_of(criteria: list[str]) -> dict[str, Any]:
    weights = equal_weights(len(criteria))
    return {
        f"criterion-{number}": {"criterion": text, "weight": weight}
        for number, (text, weight) in enumerate(zip(criteria, weights, strict=True), start=1)
    }


def _acceptable_members(expected: dict[str, Any]) -> list[Any]:
    if "acceptable" in expected:
        return list(expected["acceptable"])
    return [item["value"] for item in expected.get("graded", []) if item.get("grade", 0) > 0]


def _plain_forbidden(expected: dict[str, Any]) -> list[str]:
    return [
        call["name"]
        for call in expected.get("forbidden") or []
        if not call.get("arguments")  # a call forbidden by its arguments has no omk form
    ]


def grading_of(row: ExportRow) -> dict[str, Any]:
    """The rubric and assertions that say what the row's oracle says, as far as omk can,
    with an assertion for each check of its gate that omk has (a person's row is never
    scored by its checks)."""
    grading = _oracle_grading(row)
    gate = [] if row.human_only else gate_assertions(row)
    if gate:
        grading["assertions"] = [*grading.get("assertions", []), *gate]
    return grading


def gate_assertions(row: ExportRow) -> list[dict[str, Any]]:
    """The assertions of the row's checks that omk has (the others are left out)."""
    return [
        assertion
        for check in row.case.get("checks") or []
        for assertion in assertions_of(check) or []
    ]


def _oracle_grading(row: ExportRow) -> dict[str, Any]:
    oracle = row.oracle_type
    expected = row.expected
    if oracle == "rubric":
        criteria = rubric_criteria(row)
        return {"rubric": rubric_of(criteria)} if criteria else {}
    if oracle == "reference-answer":
        return {"assertions": [{"type": "equals", "value": answer_value(expected)}]}
    if oracle == "acceptable-set" and "satisfies" in expected:
        found = assertions_of(expected["satisfies"])
        return {"assertions": found} if found else {}
    if oracle == "acceptable-set":
        members = _acceptable_members(expected)
        if not members:
            return {}
        children = [{"type": "equals", "value": answer_value(member)} for member in members]
        return {"assertions": [{"type": "assert-set", "mode": "any", "children": children}]}
    if oracle == "expected-tool-calls":
        assertions: list[dict[str, Any]] = []
        calls = expected.get("calls", [])
        names = [call["name"] for call in calls]
        if names:
            assertions.append({"type": "tools_called", "values": names})
        for call in calls:
            if ":" in call["name"]:
                continue  # omk reads the tool's name up to the first colon
            for key, value in call["arguments"].items():
                needle = argument_text(key, value)
                assertions.append(
                    {"type": "tool_input_contains", "value": f"{call['name']}:{needle}"}
                )
        forbidden = _plain_forbidden(expected)
        if forbidden:
            assertions.append({"type": "tools_not_called", "values": forbidden})
        return {"assertions": assertions} if assertions else {}
    return {}


def argument_text(key: str, value: Any) -> str:
    """An argument as it appears in the JSON text of a tool's input (``"id":"A1"``), compact
    as JavaScript's JSON.stringify writes it, which omk's tool_input_contains searches."""
    return f"{jsonvalues.dumps_text(key)}:{jsonvalues.dumps_text(value)}"


def _argument(text: str, loads: Callable[[str], Any]) -> tuple[str, Any] | None:
    """The one argument an ``"key":value`` text states, when it is written as
    :func:`argument_text` writes it (else omk's substring check says something else)."""
    try:
        parsed = loads("{" + text + "}")
    except jsonvalues.JSONError:
        return None
    if not isinstance(parsed, dict) or len(parsed) != 1:
        return None
    ((key, value),) = parsed.items()
    return (key, value) if argument_text(key, value) == text else None


def _calls(assertions: list[Any], names: list[str]) -> list[dict[str, Any]]:
    """The calls tools_called names, with the arguments tool_input_contains checks of them:
    each argument goes to the first call of its tool that does not have that key yet."""
    calls: list[dict[str, Any]] = [{"name": name, "arguments": {}} for name in names]
    loads = jsonvalues.reader()  # the limits, looked up once for the sample's arguments
    for assertion in assertions:
        value = assertion.get("value") if _plain(assertion, "tool_input_contains") else None
        if not isinstance(value, str):
            continue
        name, _, text = value.partition(":")
        argument = _argument(text, loads)
        if argument is None:
            continue
        key, given = argument
        call = next((c for c in calls if c["name"] == name and key not in c["arguments"]), None)
        if call is not None:
            call["arguments"][key] = given
    return calls


def _plain(assertion: Any, kind: str) -> bool:
    return (
        isinstance(assertion, dict)
        and assertion.get("type") == kind
        and assertion.get("not") is not True
    )


def _equals_value(assertion: Any) -> Any:
    if _plain(assertion, "equals") and (
        isinstance(assertion.get("value"), str) or _is_number(assertion.get("value"))
    ):
        return assertion["value"]
    return ABSENT


def _acceptable_set(assertion: Any) -> list[Any] | None:
    if not _plain(assertion, "assert-set") or assertion.get("mode") != "any":
        return None
    children = assertion.get("children")
    if not isinstance(children, list) or not children:
        return None
    values = [_equals_value(child) for child in children]
    return None if any(value is ABSENT for value in values) else values


def _tool_names(assertions: list[Any], kind: str) -> list[str]:
    return [
        name
        for assertion in assertions
        if _plain(assertion, kind) and isinstance(assertion.get("values"), list)
        for name in assertion["values"]
        if isinstance(name, str) and name
    ]


def _gate(assertions: list[Any], used: Any = None) -> dict[str, Any]:
    """The case's checks: every assertion with a check but the one the oracle came from."""
    checks = [check_of(item) for item in assertions if item is not used]
    found = [check for check in checks if check is not None]
    return {"checks": found} if found else {}


def oracle_of(record: dict[str, Any]) -> tuple[str, Any, dict[str, Any], str]:
    """The oracle type a sample states, its expected value (ABSENT for none), the case fields
    it gives (its checks among them), and how the oracle type was inferred."""
    raw = record.get("assertions")
    assertions = raw if isinstance(raw, list) else []
    rubric = record.get("rubric")
    if isinstance(rubric, dict) and rubric:
        criteria = [
            dimension["criterion"]
            if isinstance(dimension, dict) and isinstance(dimension.get("criterion"), str)
            else jsonvalues.dumps_text(dimension)
            for dimension in rubric.values()
        ]
        case = {"evaluationCriteria": criteria, **_gate(assertions)}
        return "rubric", ABSENT, case, "the sample has a rubric"
    for assertion in assertions:
        value = _equals_value(assertion)
        if value is not ABSENT:
            why = "the sample has an equals assertion"
            return "reference-answer", value, _gate(assertions, assertion), why
    for assertion in assertions:
        members = _acceptable_set(assertion)
        if members is not None:
            why = "the sample has an assert-set of mode any whose children are equals assertions"
            return "acceptable-set", {"acceptable": members}, _gate(assertions, assertion), why
    called = _tool_names(assertions, "tools_called")
    not_called = _tool_names(assertions, "tools_not_called")
    if called or not_called:
        expected: dict[str, Any] = {"calls": _calls(assertions, called), "order": "any"}
        if not_called:
            expected["forbidden"] = [{"name": name} for name in not_called]
        why = (
            "the sample has tools_called or tools_not_called assertions (the arguments from"
            " tool_input_contains; in any order, which omk does not check)"
        )
        return "expected-tool-calls", expected, _gate(assertions), why
    checks = _gate(assertions).get("checks")
    if checks:
        satisfies = checks[0] if len(checks) == 1 else {"type": "all", "checks": checks}
        why = (
            "the sample's assertions are checks of the output with no judge: the acceptable"
            " outputs are those that pass them all"
        )
        case = {"evaluator": "exact-or-programmatic"}
        return "acceptable-set", {"satisfies": satisfies}, case, why
    if assertions:
        why = "its assertions state no reference answer, set, rubric, tool calls or checks"
    else:
        why = "the sample has no rubric and no assertions"
    return "expected-behavior-only", ABSENT, {}, why
