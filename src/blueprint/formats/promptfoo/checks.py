"""A row's declared grading rules as promptfoo assertions: its gate of checks, an
acceptable set defined by a check, and answers compared under the row's normalize,
tolerance and passThreshold (the rules of ``blueprint grade``, docs/grading.md)."""

from __future__ import annotations

from typing import Any, Final

from blueprint.core.checks import check_parts
from blueprint.formats.promptfoo.javascript import ALL_CHECKS, COMPARED, javascript
from blueprint.formats.vendor import ExportRow

#: why a json-schema check inside another check is weakened in promptfoo: is-json with a
#: schema runs only as an assertion of its own, and the javascript assertion cannot validate one
NESTED_SCHEMA: Final = (
    "a json-schema check inside not, all, any or weighted is not run by promptfoo (its"
    " is-json assertion validates a schema only as an assertion of its own): the javascript"
    " assertion stops with an error on it; convert --graders blueprint applies it"
)


def compared(row: ExportRow) -> bool:
    """Whether the row compares answers by a rule of its own (normalize, tolerance, a pass
    threshold), which the plain equals and membership assertions do not apply."""
    case = row.case
    return (
        bool(case.get("normalize"))
        or case.get("tolerance") is not None
        or (case.get("passThreshold") is not None)
    )


def compared_assertion(row: ExportRow) -> dict[str, Any]:
    """A reference answer (a set of one), an enumerated or a graded set, compared under
    the row's own rule."""
    expected = row.expected
    if row.oracle_type == "reference-answer":
        members = [{"value": expected, "grade": 1}]
    else:
        members = expected.get("graded") or [
            {"value": member, "grade": 1} for member in expected["acceptable"]
        ]
    threshold = row.case.get("passThreshold")
    rule = {
        "members": members,
        "normalize": row.case.get("normalize") or [],
        "tolerance": row.case.get("tolerance"),
        "threshold": 1 if threshold is None else threshold,
    }
    return javascript(COMPARED, rule)


def check_assertions(checks: Any) -> list[dict[str, Any]]:
    """A gate of checks: a json-schema check as promptfoo's own is-json with its schema,
    the others in one javascript assertion."""
    if not isinstance(checks, list) or not checks:
        return []
    native = [
        {"type": "is-json", "value": check["schema"]}
        for check in checks
        if isinstance(check, dict) and check.get("type") == "json-schema"
    ]
    coded = [
        check
        for check in checks
        if not (isinstance(check, dict) and check.get("type") == "json-schema")
    ]
    return native + ([javascript(ALL_CHECKS, coded)] if coded else [])


def nested_json_schema(row: ExportRow) -> list[tuple[str, str]]:
    """The weakened entries for json-schema checks that sit inside another check, where no
    promptfoo assertion can run them: one per field that holds such a check (the gate in
    ``metadata.case.checks``, an acceptable set's ``expected.satisfies``)."""
    roots: list[tuple[str, Any]] = [("metadata.case.checks", row.case.get("checks") or [])]
    expected = row.expected
    if row.oracle_type == "acceptable-set" and isinstance(expected, dict):
        roots.append(("expected.satisfies", [expected.get("satisfies")]))
    found = []
    for field, checks in roots:
        if not isinstance(checks, list):
            continue
        stack = [part for root in checks if isinstance(root, dict) for part in check_parts(root)]
        while stack:
            node = stack.pop()
            if not isinstance(node, dict):
                continue
            if node.get("type") == "json-schema":
                found.append((field, NESTED_SCHEMA))
                break
            stack.extend(check_parts(node))
    return found


def judge_threshold(row: ExportRow, assertions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The oracle's assertions with the row's passThreshold on its llm-rubric, which
    promptfoo applies as ``grade`` does: the judge must pass the output and its score reach
    the threshold."""
    threshold = row.case.get("passThreshold")
    if threshold is None or row.evaluator != "llm-judge":
        return assertions
    return [
        {**assertion, "threshold": threshold}
        if assertion.get("type") == "llm-rubric"
        else assertion
        for assertion in assertions
    ]
