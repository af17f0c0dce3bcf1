"""promptfoo assertions: those a row's oracle is written as, and the oracle a test's amount to."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from blueprint.formats.native import ABSENT
from blueprint.formats.promptfoo.templating import literal, risky, unliteral
from blueprint.formats.vendor import ExportRow
from blueprint.io import jsonvalues

# --- expected <-> assertions -----------------------------------------------------------------

_JS_HELPERS: Final = """\
const canon = (v) => Array.isArray(v) ? v.map(canon)
  : (v && typeof v === 'object')
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
    : v;
const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
const matches = (member) => {
  if (typeof member === 'string') return output === member;
  try { return same(JSON.parse(output), member); } catch (e) { return false; }
};
"""

_JS_ACCEPTABLE: Final = """\
const acceptable = {data};
{helpers}return acceptable.some(matches);
"""

_JS_GRADED: Final = """\
const graded = {data};
{helpers}let best = 0;
let found = false;
for (const member of graded) {{
  if (matches(member.value)) {{ found = true; best = Math.max(best, member.grade); }}
}}
return {{ pass: best > 0, score: best,
  reason: found ? 'matched an acceptable answer with grade ' + best
    : 'matched no acceptable answer' }};
"""

_JS_TOOL_CALLS: Final = """\
const expected = {data};
{helpers}let parsed = output;
if (typeof output === 'string') {{
  try {{ parsed = JSON.parse(output); }}
  catch (e) {{ return {{ pass: false, score: 0, reason: 'the output holds no tool calls' }}; }}
}}
const raw = Array.isArray(parsed) ? parsed
  : (parsed && (parsed.tool_calls || parsed.toolCalls || parsed.calls)) || [];
const calls = raw.map((call) => {{
  const fn = call.function || call;
  let args = fn.arguments ?? fn.args ?? fn.input ?? {{}};
  if (typeof args === 'string') {{ try {{ args = JSON.parse(args); }} catch (e) {{}} }}
  return {{ name: fn.name, arguments: args }};
}});
const fits = (want, got) => want.name === got.name
  && (want.arguments === undefined || same(want.arguments, got.arguments));
let ok;
if ((expected.order || 'exact') === 'exact') {{
  ok = calls.length === expected.calls.length && expected.calls.every((w, i) => fits(w, calls[i]));
}} else {{
  const left = [...calls];
  ok = calls.length === expected.calls.length && expected.calls.every((w) => {{
    const at = left.findIndex((g) => fits(w, g));
    if (at < 0) return false;
    left.splice(at, 1);
    return true;
  }});
}}
const banned = (expected.forbidden || []).filter((f) => calls.some((g) => fits(f, g)));
return {{ pass: ok && banned.length === 0, score: ok && banned.length === 0 ? 1 : 0,
  reason: banned.length ? 'made a forbidden call: ' + banned.map((f) => f.name).join(', ')
    : ok ? 'the expected calls were made' : 'the calls differ from the expected calls' }};
"""


def _javascript(template: str, data: Any) -> dict[str, Any]:
    code = template.format(data=jsonvalues.dumps_text(data), helpers=_JS_HELPERS)
    return {"type": "javascript", "value": literal(code)}


def _rubric_text(row: ExportRow, lead: str) -> str:
    lines = [lead]
    criteria = row.case.get("evaluationCriteria") or []
    if criteria:
        lines.append("The output passes only if it meets every criterion:")
        lines += [f"- {criterion}" for criterion in criteria]
    unacceptable = row.case.get("unacceptableBehavior") or []
    if unacceptable:
        lines.append("The output fails if it does any of these:")
        lines += [f"- {behaviour}" for behaviour in unacceptable]
    if row.case.get("passLogic"):
        lines.append(f"How to decide pass or fail: {row.case['passLogic']}")
    return "\n".join(lines)


def assertions_for(row: ExportRow) -> list[dict[str, Any]]:
    oracle, judge = row.oracle_type, row.evaluator == "llm-judge"
    expected = row.expected
    if oracle == "reference-answer":
        text = expected if isinstance(expected, str) else jsonvalues.dumps_text(expected)
        if judge:
            return [{"type": "factuality", "value": literal(text)}]
        if isinstance(expected, dict | list) and not risky(expected):
            return [{"type": "equals", "value": expected}]
        return [{"type": "equals", "value": literal(text)}]
    if oracle == "acceptable-set":
        if judge:
            lead = (
                f"{row.case['expectedBehavior']}\nThe output passes only if it matches one of"
                f" these acceptable answers: {jsonvalues.dumps_text(expected)}"
            )
            return [{"type": "llm-rubric", "value": literal(_rubric_text(row, lead))}]
        if "graded" in expected:
            return [_javascript(_JS_GRADED, expected["graded"])]
        return [_javascript(_JS_ACCEPTABLE, expected["acceptable"])]
    if oracle == "rubric" and judge:
        lead = row.case["expectedBehavior"]
        return [{"type": "llm-rubric", "value": literal(_rubric_text(row, lead))}]
    if oracle == "expected-tool-calls":
        return [_javascript(_JS_TOOL_CALLS, expected)]
    return []


def asserted(row: ExportRow) -> bool:
    """Whether :func:`assertions_for` gives the row any assertion, without building them."""
    oracle = row.oracle_type
    if oracle == "rubric":
        return row.evaluator == "llm-judge"
    return oracle in ("reference-answer", "acceptable-set", "expected-tool-calls")


def expected_from_assertions(assertions: Any) -> Any:
    """The reference answer Blueprint's own equals or factuality assertion gives back."""
    if isinstance(assertions, list) and len(assertions) == 1 and isinstance(assertions[0], dict):
        only = assertions[0]
        if only.get("type") in ("equals", "factuality") and isinstance(only.get("value"), str):
            return unliteral(only["value"])
        if only.get("type") == "equals" and isinstance(only.get("value"), dict | list):
            return only["value"]
    return ABSENT


# --- native assertions -> oracle types -------------------------------------------------------

#: assertion types graded by a model against a written reference
_JUDGED_REFERENCE: Final = frozenset({"factuality", "model-graded-factuality"})
#: assertion types graded by a model against criteria
_RUBRIC: Final = frozenset({"llm-rubric", "g-eval", "model-graded-closedqa"})
#: assertion types a model grades with no reference or criteria of the test's own
_MODEL_GRADED: Final = frozenset(
    {
        "answer-relevance",
        "classifier",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "guardrails",
        "max-score",
        "moderation",
        "pi",
        "select-best",
        "trajectory:goal-success",
    }
)
#: "any of these" checks
_MEMBERSHIP: Final = frozenset({"contains-any", "icontains-any"})


def _flat(assertions: list[Any]) -> list[dict[str, Any]]:
    """Assertions with assert-sets opened up, for telling what grades a test."""
    found: list[dict[str, Any]] = []
    for item in assertions:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "assert-set" and isinstance(item.get("assert"), list):
            found += _flat(item["assert"])
        else:
            found.append(item)
    return found


def _describe(assertion: dict[str, Any]) -> str:
    kind = str(assertion.get("type"))
    text = kind
    if "value" in assertion:
        value = assertion["value"]
        shown = value if isinstance(value, str) else jsonvalues.dumps_text(value)
        shown = shown.strip().replace("\n", " ")
        text += f" {shown[:77] + '...' if len(shown) > 80 else shown!r}"
    extras = [f"{key} {assertion[key]}" for key in ("threshold", "weight") if key in assertion]
    return text + (f" ({', '.join(extras)})" if extras else "")


def _resolve_template(value: Any, variables: dict[str, Any]) -> tuple[Any, str | None]:
    """A value that is only ``{{ name }}`` of a var is that var's value (and why)."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*\{\{\s*([A-Za-z_][\w]*)\s*\}\}\s*", value)
        if match and match.group(1) in variables:
            return variables[match.group(1)], f"the assertion's value is {value.strip()}"
    return value, None


@dataclass
class Inference:
    oracle: str
    expected: Any
    evaluator: str | None
    case: dict[str, Any] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)


#: checks whose value is an answer the output should equal, contain or resemble: the value
#: can stand as the row's reference answer (the passLogic says how it is compared)
_ANSWER_LIKE: Final = frozenset(
    {
        "equals",
        "contains",
        "icontains",
        "starts-with",
        "levenshtein",
        "similar",
        "similar:cosine",
        "similar:dot",
        "similar:euclidean",
        "rouge-n",
        "bleu",
        "gleu",
        "meteor",
    }
)
#: how a check reads as a criterion, for the ones people write most
_PHRASES: Final = {
    "equals": ("equals {}", "does not equal {}"),
    "contains": ("contains {}", "does not contain {}"),
    "icontains": ("contains {} in any case", "does not contain {} in any case"),
    "starts-with": ("starts with {}", "does not start with {}"),
    "regex": ("matches the pattern {}", "does not match the pattern {}"),
    "is-json": ("is valid JSON", "is not valid JSON"),
    "contains-json": ("contains valid JSON", "contains no valid JSON"),
    "is-xml": ("is valid XML", "is not valid XML"),
    "is-sql": ("is valid SQL", "is not valid SQL"),
    "contains-all": ("contains all of {}", "does not contain all of {}"),
    "contains-any": ("contains one of {}", "contains none of {}"),
    "icontains-all": ("contains all of {} in any case", "does not contain all of {}"),
    "icontains-any": ("contains one of {} in any case", "contains none of {} in any case"),
    "javascript": ("passes the JavaScript check {}", "fails the JavaScript check {}"),
    "python": ("passes the Python check {}", "fails the Python check {}"),
}


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else jsonvalues.dumps_text(value)
    text = text.strip().replace("\n", " ")
    return repr(text[:77] + "..." if len(text) > 80 else text)


def criterion(assertion: dict[str, Any]) -> str:
    """A check as a sentence about the output ("does not contain 'idiot'")."""
    kind = str(assertion.get("type", ""))
    negated = kind.startswith("not-")
    base = kind.removeprefix("not-")
    value = _shown(assertion["value"]) if "value" in assertion else ""
    if base in _PHRASES:
        phrase = _PHRASES[base][1 if negated else 0].format(value).strip()
    else:
        phrase = f"{'fails' if negated else 'passes'} promptfoo's {base} check {value}".strip()
    return f"{phrase} (promptfoo {kind})"


def _kind(assertion: dict[str, Any]) -> str:
    """An assertion's type, as text ("" when a file gives something else)."""
    kind = assertion.get("type")
    return kind if isinstance(kind, str) else ""


def infer(assertions: list[Any], variables: dict[str, Any]) -> Inference:
    """The oracle type, expected value and evaluator a test's assertions amount to.

    A check that names an answer (equals, contains, similar, ...) gives the reference
    answer; "any of" checks an acceptable set; model-graded checks a reference for an LLM
    judge or a rubric. Negated checks become unacceptable behaviours, never an answer. A test
    graded only by checks that name no answer (is-json, javascript, regex, negations) becomes
    a rubric whose criteria say what the checks check. The test's own assertions are kept
    and written back on export to promptfoo, whatever is inferred here.
    """
    flat = _flat(assertions)
    if not flat:
        return Inference("expected-behavior-only", ABSENT, None)
    listed = "; ".join(_describe(item) for item in flat)
    case: dict[str, Any] = {"passLogic": f"promptfoo grades it with: {listed}"}
    derived = {"metadata.case.passLogic": "a description of the test's promptfoo assertions"}
    negated = [item for item in flat if _kind(item).startswith("not-")]
    positive = [item for item in flat if item not in negated]
    if negated:
        case["unacceptableBehavior"] = [
            criterion({**item, "type": _kind(item).removeprefix("not-")}) for item in negated
        ]
        derived["metadata.case.unacceptableBehavior"] = "the test's negated assertions"

    def first(kinds: frozenset[str] | set[str], answer: bool = False) -> dict[str, Any] | None:
        return next(
            (
                item
                for item in positive
                if _kind(item) in kinds and (not answer or isinstance(item.get("value"), str))
            ),
            None,
        )

    def expected_of(assertion: dict[str, Any], why: str) -> Any:
        value, template = _resolve_template(assertion.get("value"), variables)
        derived["expected"] = why + (
            f"; {template}, resolved from the test's vars" if template else ""
        )
        return value

    if (chosen := first({"equals"})) is not None and "value" in chosen:
        value = expected_of(chosen, "the value of the test's equals assertion")
        return Inference("reference-answer", value, "exact-or-programmatic", case, derived)
    if (chosen := first(_JUDGED_REFERENCE, answer=True)) is not None:
        value = expected_of(chosen, f"the reference of the test's {chosen['type']} assertion")
        return Inference("reference-answer", value, "llm-judge", case, derived)
    if (chosen := first(_MEMBERSHIP)) is not None:
        members = chosen.get("value")
        if isinstance(members, str):
            members = [part.strip() for part in members.split(",")]
        if isinstance(members, list) and members:
            derived["expected"] = f"the values of the test's {chosen['type']} assertion"
            return Inference(
                "acceptable-set", {"acceptable": members}, "exact-or-programmatic", case, derived
            )
    if (chosen := first({"tool-call-f1"})) is not None:
        names = chosen.get("value")
        names = names.split(",") if isinstance(names, str) else names
        names = [str(name).strip() for name in names] if isinstance(names, list) else []
        names = [name for name in names if name]
        if names:
            derived["expected"] = (
                "tool-call-f1 names tools only, in no order; arguments are unknown"
            )
            calls = [{"name": name, "arguments": {}} for name in names]
            expected = {"calls": calls, "order": "any"}
            return Inference(
                "expected-tool-calls", expected, "exact-or-programmatic", case, derived
            )
    if (chosen := first(_ANSWER_LIKE, answer=True)) is not None:
        value = expected_of(
            chosen,
            f"the value of the test's {chosen['type']} assertion; passLogic says how it is"
            " compared",
        )
        return Inference("reference-answer", value, "exact-or-programmatic", case, derived)
    rubric = [item for item in positive if _kind(item) in _RUBRIC]
    criteria: list[str] = []
    for item in rubric:
        value = item.get("value")
        values = value if isinstance(value, list) else [value]
        criteria += [v if isinstance(v, str) else jsonvalues.dumps_text(v) for v in values]
    if rubric:
        derived["metadata.case.evaluationCriteria"] = (
            "the criteria of the test's model-graded assertions"
        )
        case["evaluationCriteria"] = [c for c in criteria if c] or [listed]
        return Inference("rubric", ABSENT, "llm-judge", case, derived)
    # checks that name no answer: what they check, as criteria; no evaluator is claimed,
    # since promptfoo runs them as code and Blueprint has no oracle type for that
    case["evaluationCriteria"] = [criterion(item) for item in flat]
    derived["metadata.case.evaluationCriteria"] = (
        "what the test's promptfoo checks check; they name no answer, so the row is a rubric"
        " and promptfoo's own assertions grade it"
    )
    return Inference("rubric", ABSENT, None, case, derived)
