"""promptfoo: test cases (YAML, JSON, JSONL) and configs; reads CSV test files too.

Rows authored in Blueprint become tests whose assertions are chosen from the oracle type and
the evaluator, with every text kept literal through promptfoo's template rendering. Tests
imported from a promptfoo suite go back as they came: their own assertions, vars (live
templates, file references and lists included), options and thresholds, and the config's
``defaultTest``, prompts and providers, kept at set level.
"""

from __future__ import annotations

import copy
import csv
import glob
import io
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

import yaml

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_json_lines, read_text
from blueprint.formats.base import SetSource, UnreadableRow, confined
from blueprint.formats.cells import FloatText, IntText
from blueprint.formats.native import ABSENT, NativeShape, Restored, same
from blueprint.formats.sniffing import Fit, csv_header, first_line_object, json_head, text_of
from blueprint.formats.vendor import (
    ExportRow,
    ExportTally,
    Framing,
    Values,
    VendorCodec,
    WriteContext,
    compare_records,
    extras_of,
    imported_row,
    read_json_document,
)
from blueprint.formats.yamlblock import block_yaml, quoted_in_both
from blueprint.io import jsonvalues, limits, yamlload
from blueprint.io.yamlload import BoundedLoader

FINAL_STATE: Final = "final-state"
NO_ASSERTION: Final = "no-assertion"
_ID_PREFIX: Final = re.compile(r"^\[([^\]]+)\]")
_YAML11_ONLY: Final = frozenset(
    {
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
    }
)

# --- keeping text literal through promptfoo's template handling -----------------------------
#
# promptfoo renders var values and assertion values with Nunjucks, substitutes {{name}} for
# known vars before that, and loads strings that start with file:// or package:. A "{" that
# opens a tag is therefore written as the expression {{ "{" }}, which renders back to "{" and
# leaves nothing for the substitution to find; the "#" of a stray comment closer "#}" (an
# error for Nunjucks) is written {{ "#" }}; a leading file:// or package: gets an empty
# expression in front. Rendering gives back exactly the original text.

_SPECIAL: Final = re.compile(r"\{(?=[{%#])|#(?=\})")
_BRACE: Final = '{{ "{" }}'
_HASH: Final = '{{ "#" }}'
_ESCAPED: Final = re.compile(re.escape(_BRACE) + "|" + re.escape(_HASH))
_LOADED_PREFIXES: Final = ("file://", "package:")
_GUARD: Final = '{{ "" }}'
_TEMPLATE: Final = re.compile(r"\{[{%#]")


def literal(text: str) -> str:
    """Text that promptfoo's template handling turns back into exactly ``text``."""
    escaped = _SPECIAL.sub(lambda match: _BRACE if match.group() == "{" else _HASH, text)
    if escaped.startswith(_LOADED_PREFIXES):
        escaped = _GUARD + escaped
    return escaped


def unliteral(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    # one pass, left to right, so text that happens to read {{ "#" }} stays as it was
    return _ESCAPED.sub(
        lambda match: "{" if match.group() == _BRACE else "#", value.removeprefix(_GUARD)
    )


def risky(value: Any) -> bool:
    """Whether promptfoo would load a string somewhere inside the value as a file or package."""
    if isinstance(value, str):
        return value.startswith(_LOADED_PREFIXES)
    if not isinstance(value, dict | list):
        return False
    # a string that starts so is, in JSON, a quote and the prefix; the JSON text without one
    # (nearly every value) is answered by one search, without a walk through the value
    try:
        encoded = jsonvalues.dumps(value)
    except ValueError:
        return _risky_inside(value)
    return any(mark in encoded for mark in _LOADED_MARKS) and _risky_inside(value)


_LOADED_MARKS: Final = tuple(b'"' + prefix.encode() for prefix in _LOADED_PREFIXES)


def _risky_inside(value: Any) -> bool:
    if isinstance(value, str):
        return value.startswith(_LOADED_PREFIXES)
    if isinstance(value, dict):
        return any(_risky_inside(key) or _risky_inside(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_risky_inside(item) for item in value)
    return False


# --- input <-> vars --------------------------------------------------------------------------

#: row metadata carried as promptfoo vars too, so a prompt can use {{retrieval_context}}
CONTEXT_VARS: Final = ("context", "retrieval_context")


def vars_for(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        return {"input": literal(value)}
    nested_risk = isinstance(value, dict) and any(
        risky(key) or (not isinstance(item, str) and risky(item)) for key, item in value.items()
    )
    if isinstance(value, dict) and value and not nested_risk:
        return {
            key: literal(item) if isinstance(item, str) else item
            for key, item in value.items()
            if item is not None  # promptfoo rejects null vars
        }
    return {"input": literal(jsonvalues.dumps_text(value))}


def input_from_vars(variables: Any, *, authored: bool) -> Any:
    """The input a test's vars give: one ``input`` text var is the text itself. Vars written
    by Blueprint (``authored``) are read back through the literal escape."""
    if not isinstance(variables, dict):
        return variables if variables is not None else ABSENT
    read = unliteral if authored else (lambda item: item)
    if set(variables) == {"input"} and isinstance(variables["input"], str):
        return read(variables["input"])
    return {key: read(item) for key, item in variables.items()}


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


def _description(row: ExportRow) -> str:
    note = " (starter example, not validated gold)" if row.starter else ""
    review = " [needs human review]" if row.human_only else ""
    behaviour = row.case["expectedBehavior"].strip().replace("\n", " ")
    if len(behaviour) > 100:
        behaviour = behaviour[:99] + "\N{HORIZONTAL ELLIPSIS}"
    return f"[{row.id}]{review}{note} {behaviour}".rstrip()


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


# --- the suite around the tests: defaultTest and the config ---------------------------------


@dataclass
class Suite:
    """What a config says for every test: its defaultTest, and the rest of it."""

    defaults: dict[str, Any] = field(default_factory=dict)
    #: the config's keys other than tests and description, as it wrote them
    config: dict[str, Any] | None = None
    description: Any = ABSENT


def merged_vars(test: dict[str, Any], suite: Suite) -> Any:
    own = test.get("vars")
    defaults = suite.defaults.get("vars")
    if isinstance(own, dict) or own is None:
        merged = dict(defaults) if isinstance(defaults, dict) else {}
        merged.update(own or {})
        return merged
    return own  # a file reference or a list of them: kept as it is


def suite_of_header(header: dict[str, Any]) -> Suite:
    extensions = header.get("extensions")
    ours = extensions.get("promptfoo") if isinstance(extensions, dict) else None
    config = ours.get("config") if isinstance(ours, dict) else None
    if not isinstance(config, dict):
        return Suite()
    defaults = config.get("defaultTest")
    return Suite(
        defaults=defaults if isinstance(defaults, dict) else {},
        config=config,
        description=header.get("description", ABSENT),
    )


# --- YAML that js-yaml and PyYAML read alike -------------------------------------------------

# Most YAML is written by yamlblock, which writes what LibYAML writes for these nodes; the
# dumper below writes the rest (dates, keys that need the complex form). LibYAML's emitter
# (PyYAML's C binding) writes the same YAML some hundred times faster than the pure-Python
# one; the pure one stands in only where PyYAML was built without LibYAML
_SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_SafeDumper):  # type: ignore[valid-type,misc]
    def ignore_aliases(self, data: Any) -> bool:
        return True

    # the emitter asks for every node where it is in the document, for path resolvers; YAML
    # written here has none, so the answers cost nothing
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # asked twice for every scalar: the tag it would have quoted (always str) and plain,
        # which depends on the text alone; the keys and short values that recur are answered
        # from memory
        if kind is not yaml.ScalarNode:
            return super().resolve(kind, value, implicit)
        if not implicit[0]:
            return self.DEFAULT_SCALAR_TAG
        if len(value) > _REMEMBERED_LENGTH:
            return super().resolve(kind, value, implicit)
        tag = _PLAIN_TAGS.get(value)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_PLAIN_TAGS) >= _REMEMBERED_TEXTS:
                _PLAIN_TAGS.clear()
            _PLAIN_TAGS[value] = tag
        return tag


#: what the plain scalars written lately resolve to, by text: at most this many texts of at
#: most this length, so memory stays flat however many rows are written
_PLAIN_TAGS: dict[str, str] = {}
_REMEMBERED_TEXTS: Final = 4096
_REMEMBERED_LENGTH: Final = 40


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = '"' if quoted_in_both(data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)
# numbers a CSV cell was read with (their text kept for the CSV) are plain numbers in YAML
_Dumper.add_representer(IntText, yaml.SafeDumper.represent_int)
_Dumper.add_representer(FloatText, yaml.SafeDumper.represent_float)


def dump_yaml(data: Any) -> bytes:
    """``data`` as block YAML that js-yaml and PyYAML read alike."""
    text = block_yaml(data)
    return (_libyaml_text(data) if text is None else text).encode("utf-8")


def _libyaml_text(data: Any) -> str:
    stream = io.StringIO()
    dumper = _Dumper(
        stream, allow_unicode=True, sort_keys=False, width=100, default_flow_style=False
    )
    try:
        dumper.open()
        # the nodes are built here rather than by the dumper's representer, whose generic
        # dispatch (and bookkeeping for aliases, which are never written) cost more than the
        # C emitter; they are the nodes the representer builds
        dumper.serialize(_node(data, dumper))
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue()


_STR: Final = "tag:yaml.org,2002:str"
_MAP: Final = "tag:yaml.org,2002:map"
_SEQ: Final = "tag:yaml.org,2002:seq"


def _node(value: Any, dumper: yaml.SafeDumper) -> yaml.Node:
    """The node ``_Dumper``'s representers make for a JSON-like value."""
    kind = type(value)
    if kind is str:
        return yaml.ScalarNode(_STR, value, style='"' if quoted_in_both(value) else None)
    if kind is dict:
        pairs = [(_node(key, dumper), _node(item, dumper)) for key, item in value.items()]
        return yaml.MappingNode(_MAP, pairs, flow_style=False)
    if kind is list:
        return yaml.SequenceNode(_SEQ, [_node(item, dumper) for item in value], flow_style=False)
    if kind is bool:
        return yaml.ScalarNode("tag:yaml.org,2002:bool", "true" if value else "false")
    if kind is int:
        return yaml.ScalarNode("tag:yaml.org,2002:int", str(value))
    if value is None:
        return yaml.ScalarNode("tag:yaml.org,2002:null", "null")
    return dumper.represent_data(value)  # floats, dates: the representer's own rules


# --- reading native promptfoo files ----------------------------------------------------------


class Yaml12Loader(BoundedLoader):
    """PyYAML's safe loader with YAML 1.2 core scalars, as js-yaml (and so promptfoo) reads:
    only true/false are booleans, 0o17 is octal, and no dates or base-60 numbers."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _YAML11_ONLY]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = loader.construct_scalar(node)  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 0) if text.startswith("0x") else int(text)


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


class YamlDate(str):
    """Text that promptfoo's YAML reader takes for a date (an unquoted 2024-01-01): kept as
    text here, and written unquoted again so that promptfoo still reads a date."""


def _construct_date(loader: yaml.SafeLoader, node: yaml.Node) -> YamlDate:
    return YamlDate(loader.construct_scalar(node))  # type: ignore[arg-type]


# promptfoo's js-yaml schema reads timestamps (and YAML 1.2 core scalars otherwise)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:timestamp",
    re.compile(
        r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
        r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
        r"(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?"
        r"(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"
    ),
    list("0123456789"),
)
Yaml12Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_date)


def date_paths(value: Any, at: tuple[Any, ...] = ()) -> list[list[Any]]:
    """Where a value read from YAML holds dates."""
    if isinstance(value, YamlDate):
        return [list(at)]
    if isinstance(value, dict):
        return [path for key, item in value.items() for path in date_paths(item, (*at, key))]
    if isinstance(value, list):
        return [path for n, item in enumerate(value) for path in date_paths(item, (*at, n))]
    return []


def mark_dates(record: dict[str, Any], paths: Any) -> None:
    """Turn the texts at ``paths`` back into dates for the YAML writer."""
    for path in paths if isinstance(paths, list) else []:
        if not isinstance(path, list) or not path:
            continue
        holder: Any = record
        for part in path[:-1]:
            holder = _child(holder, part)
        last = path[-1]
        if isinstance(_child(holder, last), str):
            holder[last] = YamlDate(holder[last])


def _child(holder: Any, part: Any) -> Any:
    if isinstance(holder, dict):
        return holder.get(part)
    if isinstance(holder, list) and isinstance(part, int) and 0 <= part < len(holder):
        return holder[part]
    return None


def _represent_date(dumper: yaml.SafeDumper, data: YamlDate) -> yaml.Node:
    # tagged as the timestamp a plain scalar reads as, so the writer leaves it unquoted
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", str(data), style=None)


_Dumper.add_representer(YamlDate, _represent_date)


#: promptfoo's base assertion types, in the order its CSV reader tries them (promptfoo
#: 0.121's BaseAssertionTypesSchema); a "not-" prefix negates any of them
ASSERTION_TYPES: Final = (
    "agent-rubric",
    "answer-relevance",
    "bleu",
    "classifier",
    "contains",
    "contains-all",
    "contains-any",
    "contains-html",
    "contains-json",
    "contains-sql",
    "contains-xml",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "cost",
    "equals",
    "factuality",
    "finish-reason",
    "g-eval",
    "gleu",
    "guardrails",
    "icontains",
    "icontains-all",
    "icontains-any",
    "is-html",
    "is-json",
    "is-refusal",
    "is-sql",
    "is-valid-function-call",
    "is-valid-openai-function-call",
    "is-valid-openai-tools-call",
    "is-xml",
    "javascript",
    "latency",
    "levenshtein",
    "llm-rubric",
    "pi",
    "meteor",
    "model-graded-closedqa",
    "model-graded-factuality",
    "moderation",
    "perplexity",
    "perplexity-score",
    "python",
    "regex",
    "rouge-n",
    "ruby",
    "similar",
    "similar:cosine",
    "similar:dot",
    "similar:euclidean",
    "starts-with",
    "skill-used",
    "trajectory:goal-success",
    "trajectory:tool-args-match",
    "trajectory:step-count",
    "trajectory:tool-sequence",
    "trajectory:tool-used",
    "trace-error-spans",
    "trace-span-count",
    "trace-span-duration",
    "search-rubric",
    "webhook",
    "word-count",
    "select-best",
    "human",
    "max-score",
    "assert-set",
)
#: types whose CSV form takes a threshold, with the one promptfoo assumes when none is given
_CSV_THRESHOLDS: Final = frozenset(
    {
        "answer-relevance",
        "classifier",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "cost",
        "latency",
        "levenshtein",
        "perplexity-score",
        "perplexity",
        "rouge-n",
        "similar",
        "starts-with",
    }
)
_CSV_ASSERTION: Final = re.compile(
    r"^(not-)?("
    + "|".join(re.escape(kind) for kind in ASSERTION_TYPES)
    + r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$"
)
_JAVASCRIPT_FILE: Final = re.compile(r"\.(?:js|cjs|mjs|ts|cts|mts)$", re.IGNORECASE)
_NUMBER: Final = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


def _finite_number(text: str | None) -> float | int | None:
    """promptfoo's reading of a numeric CSV cell: a whole numeric literal, else nothing."""
    trimmed = (text or "").strip()
    if not _NUMBER.match(trimmed):
        return None
    number = float(trimmed)
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return int(number) if number.is_integer() and re.fullmatch(r"[+-]?\d+", trimmed) else number


def _comma_separated(value: str) -> list[str]:
    """promptfoo's split of a contains-any value: commas, with "quoted, fields" kept whole."""
    found: list[str] = []
    index = 0
    while index < len(value):
        while index < len(value) and (value[index].isspace() or value[index] == ","):
            index += 1
        if index >= len(value):
            break
        if value[index] == '"':
            index += 1
            field = ""
            while index < len(value):
                if value[index] == "\\" and index + 1 < len(value) and value[index + 1] in '"\\':
                    field += value[index + 1]
                    index += 2
                elif value[index] == '"' and index + 1 < len(value) and value[index + 1] == '"':
                    field += '"'
                    index += 2
                elif value[index] == '"':
                    index += 1
                    break
                else:
                    field += value[index]
                    index += 1
            found.append(field)
            while index < len(value) and value[index].isspace():
                index += 1
        else:
            end = value.find(",", index)
            end = len(value) if end < 0 else end
            found.append(value[index:end].strip())
            index = end
    return found


def assertion_from_cell(cell: str) -> dict[str, Any]:
    """promptfoo's reading of an __expected cell (its CSV assertion grammar)."""
    text = cell.strip()
    if text.startswith(("javascript:", "fn:", "eval:")) or (
        text.startswith("file://") and _JAVASCRIPT_FILE.search(text[7:])
    ):
        cut = next((len(p) for p in ("javascript:", "fn:", "eval:") if text.startswith(p)), 0)
        return {"type": "javascript", "value": text[cut:].strip()}
    if text.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": text[6 if text.startswith("grade:") else 11 :]}
    if text.startswith("python:") or (
        text.startswith("file://") and (text.endswith(".py") or ".py:" in text)
    ):
        return {"type": "python", "value": text[7:].strip()}
    match = _CSV_ASSERTION.match(text)
    if not match:
        return {"type": "equals", "value": text}
    negate, kind, threshold_text, value = match.groups()
    assertion: dict[str, Any] = {"type": f"not-{kind}" if negate else kind}
    if kind in ("contains-all", "contains-any", "icontains-all", "icontains-any"):
        if value is not None:
            assertion["value"] = _comma_separated(value) if value else value
    elif kind in ("contains-json", "is-json"):
        if value is not None:
            assertion["value"] = value
    else:
        if value is not None:
            assertion["value"] = value.strip()
        if kind in _CSV_THRESHOLDS:
            threshold = _finite_number(threshold_text)
            assertion["threshold"] = (
                threshold if threshold is not None else 0.8 if kind == "similar" else 0.75
            )
    return assertion


def _refuse_repeated_columns(path: Path, names: Sequence[str]) -> None:
    """A CSV header naming a column twice: the reader would keep only the last one's cells."""
    first: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        key = name.strip()  # cells are read by the stripped name
        if key in first:
            raise ParseError(
                path,
                f"the header names the column {key!r} twice (columns {first[key]} and"
                f" {position}): only one of them would be read; rename or merge them",
                line=1,
            )
        first[key] = position


def _csv_tests(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Tests from a promptfoo CSV file, read as promptfoo 0.121 reads them."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.DictReader(read_text(path).splitlines(keepends=True))
    _refuse_repeated_columns(path, reader.fieldnames or [])
    for record in reader:
        variables: dict[str, Any] = {}
        assertions: list[dict[str, Any]] = []
        options: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        configs: dict[int, dict[str, Any]] = {}
        extra: dict[str, Any] = {}
        metric: str | None = None
        for raw_key, cell in record.items():
            if raw_key is None:
                raise ParseError(path, "a row has more cells than the header", line=reader.line_num)
            key, value = raw_key.strip(), cell if cell is not None else ""
            if key.startswith("__expected"):
                if value.strip():
                    assertions.append(assertion_from_cell(value))
            elif key in ("__prefix", "__suffix"):
                options[key[2:]] = value
            elif key == "__description":
                if value:
                    extra["description"] = value
            elif key == "__providerOutput":
                if value:
                    extra["providerOutput"] = value
            elif key == "__metric":
                metric = value
            elif key == "__threshold":
                number = _finite_number(value)
                if number is not None:
                    extra["threshold"] = number
            elif key.startswith("__metadata:"):
                name = key[len("__metadata:") :]
                if value.strip() and name.endswith("[]"):
                    metadata[name[:-2]] = [
                        part.strip().replace("\\,", ",") for part in re.split(r"(?<!\\),", value)
                    ]
                elif value.strip():
                    metadata[name] = value
            elif key == "__metadata":
                continue  # promptfoo warns and ignores a __metadata column without a key
            elif key.startswith("__config:"):
                configs_of(path, reader.line_num, key, value, configs)
            else:
                variables[key] = value
        for position, assertion in enumerate(assertions):
            if metric is not None:
                assertion["metric"] = metric
            for name, number in configs.get(position, {}).items():
                assertion[name] = number
                metadata[name] = number
        test: dict[str, Any] = {"vars": variables, "assert": assertions, "options": options}
        test.update(extra)
        if metadata:
            test["metadata"] = metadata
        yield reader.line_num, test


def configs_of(
    path: Path, line: int, key: str, value: str, configs: dict[int, dict[str, Any]]
) -> None:
    """A __config:__expected<N>:threshold column, as promptfoo reads it (or refuses it)."""
    parts = key[len("__config:") :].split(":")
    if len(parts) != 2:
        return  # promptfoo warns and ignores a __config column of another shape
    target, name = parts
    number_match = re.fullmatch(r"__expected(\d+)", target)
    if target == "__expected":
        index = 0
    elif number_match and int(number_match.group(1)) >= 1:
        index = int(number_match.group(1)) - 1
    else:
        raise ParseError(path, f"{key}: must name __expected or __expected<N>", line=line)
    if name != "threshold":
        raise ParseError(path, f"{key}: the only config key is threshold", line=line)
    number = _finite_number(value)
    if number is None:
        raise ParseError(path, f"{key}: {value!r} is not a number", line=line)
    configs.setdefault(index, {})[name] = number


def _not_json(value: Any) -> str | None:
    """Why a YAML value cannot be JSON (a key that is not text, a date, binary data), or None.

    The loader has bounded what aliases expand to, so the walk is bounded too."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key in current:
                if not isinstance(key, str):
                    return f"the key {key!r} is not text, which JSON (and Blueprint) needs"
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
        elif current is not None and not isinstance(current, str | int | float | bool):
            kind = type(current).__name__
            return f"holds a YAML {kind} value, which JSON has no place for"
    return None


def read_yaml(path: Path) -> Any:
    data = yamlload.load(read_text(path), path, loader=Yaml12Loader)
    problem = _not_json(data)
    if problem:
        raise ParseError(path, problem)
    return data


def _document(path: Path) -> Any:
    suffix = path.suffix.lower()
    return read_json_document(path) if suffix == ".json" else read_yaml(path)


def _pointer(document: Any, pointer: str, path: Path) -> Any:
    target = document
    for part in pointer.removeprefix("#/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise ParseError(path, f"$ref {pointer!r} points at nothing in the config")
    return target


class _References:
    """``{$ref: '#/...'}`` objects of one document replaced by what they point at.

    Like YAML aliases, references can make a few hundred bytes stand for billions of values:
    the values reached through them are counted, over the whole document, against
    ``max_alias_nodes``, and the nesting they make against ``max_depth``.
    """

    def __init__(self, document: Any, path: Path) -> None:
        self.document = document
        self.path = path
        self.limits = limits.current()
        self.reached = 0

    def resolve(self, value: Any) -> Any:
        return self._walk(value, 0, 0)

    def _walk(self, value: Any, references: int, depth: int) -> Any:
        if references:
            self.reached += 1
            if self.limits.max_alias_nodes and self.reached > self.limits.max_alias_nodes:
                raise ParseError(
                    self.path,
                    f"$ref references expand to more than {self.limits.max_alias_nodes:,}"
                    f" values (max_alias_nodes; {limits.hint('max_alias_nodes')})",
                )
        if references > 32:
            raise ParseError(self.path, "$ref references nest too deeply (or form a loop)")
        if not isinstance(value, dict | list):
            return value
        if depth >= self.limits.max_depth:
            raise ParseError(
                self.path,
                f"$ref references nest values deeper than {self.limits.max_depth} levels"
                f" (max_depth; {limits.hint('max_depth')})",
            )
        if isinstance(value, list):
            return [self._walk(item, references, depth + 1) for item in value]
        reference = value.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/") and len(value) == 1:
            target = _pointer(self.document, reference, self.path)
            return self._walk(target, references + 1, depth)
        return {key: self._walk(item, references, depth + 1) for key, item in value.items()}


@dataclass
class Loaded:
    """A promptfoo file read: its tests (each with the line it starts on, where known)."""

    tests: list[tuple[int | None, Any]]
    suite: Suite


def load(path: Path) -> Loaded:
    """Read a promptfoo config or tests file, following ``tests: file://...`` references.

    References are read only inside the config's folder or the working folder (or an
    allowed path, see ReadOptions), each file once however often it is named; a loop of
    references is an error, and so are more than ``max_included_files`` includes in all.
    """
    return _Inclusion(path).load(path, top=True)


class _Inclusion:
    """One config's reading of the files it refers to, and of the files those refer to."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.base = top.parent.resolve()
        #: each file read so far (by resolved path): what it holds, and how many includes
        #: it stands for once its own includes are followed
        self.done: dict[Path, tuple[Loaded, int]] = {}
        self.chain: list[Path] = []
        self.included = 0

    def load(self, path: Path, *, top: bool = False) -> Loaded:
        resolved = path.resolve()
        if resolved in self.chain:
            loop = " -> ".join(str(step) for step in [*self.chain, resolved])
            raise ParseError(path, f"the promptfoo config includes itself ({loop})")
        self.chain.append(resolved)
        try:
            return self._read(path, top=top)
        finally:
            self.chain.pop()

    def include(self, target: Path, *, by: Path, entry: str) -> Loaded:
        """The tests of a file a config names, read once, counted each time."""
        resolved = target.resolve()
        if resolved in self.done:
            loaded, size = self.done[resolved]
            self._count(1 + size, by, entry)
            return Loaded(copy.deepcopy(loaded.tests), loaded.suite)
        self._count(1, by, entry)
        before = self.included
        loaded = self.load(target)
        self.done[resolved] = (loaded, self.included - before)
        return loaded

    def _count(self, files: int, by: Path, entry: str) -> None:
        self.included += files
        if limits.exceeded("max_included_files", self.included):
            raise ParseError(
                by,
                f"tests: {entry} makes the config include more than"
                f" {limits.current().max_included_files:,} files once every include is"
                f" followed{'' if by == self.top else f', reading {self.top}'}"
                f" (max_included_files; {limits.hint('max_included_files')})",
                line=_line_naming(by, entry),
            )

    def _read(self, path: Path, *, top: bool) -> Loaded:
        suffix = path.suffix.lower()
        if suffix == ".csv":
            return Loaded(list(_csv_tests(path)), Suite())
        if suffix == ".jsonl":
            found: list[tuple[int | None, Any]] = []
            for item in read_json_lines(path):
                if isinstance(item, UnreadableRow):
                    raise ParseError(path, item.reason, line=item.line, column=item.column)
                found.append(item)
            return Loaded(found, Suite())
        data = _document(path)
        if isinstance(data, dict) and set(data) & CONFIG_KEYS:
            return _config(path, data, self, top=top)
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise ParseError(path, "a promptfoo tests file is a list of test cases")
        references = _References(data, path)
        return Loaded([(None, references.resolve(test)) for test in data], Suite())

    def targets(self, config: Path, entry: str) -> list[Path]:
        """The files a ``tests:`` entry (a file or a glob) names, each checked to lie inside
        the folders references may lead to."""
        name = entry.removeprefix("file://")
        reference = config.parent / name
        if not any(char in name for char in "*?["):
            self.confine(reference, config, entry)
            return [reference]
        # a glob is checked before it is expanded (file:///**/*.yaml would walk the whole
        # disk), then every match is (a link inside the folder may lead out)
        fixed = Path(*_parts_before_magic(reference))
        self.confine(fixed, config, entry)
        # absolute or relative, as promptfoo allows: Path.glob takes relative only; in the
        # order the file system gives, as promptfoo's glob does
        matches = [Path(match) for match in glob.glob(str(reference))]  # noqa: PTH207
        if not matches:
            raise ParseError(
                config,
                f"tests: {entry} matches no file, so it adds no test (promptfoo would run"
                " none from it); check the pattern",
                line=_line_naming(config, entry),
            )
        for match in matches:
            self.confine(match, config, entry)
        return matches

    def confine(self, target: Path, config: Path, entry: str) -> None:
        if not confined(target, self.base):
            try:
                where = f" ({target} is {target.resolve()})" if target.is_symlink() else ""
            except (OSError, RuntimeError):
                where = f" ({target} is a link that leads nowhere)"
            raise ParseError(
                config,
                f"tests: {entry}{where} leads outside the config's folder ({self.base}) and the"
                f" working folder ({Path.cwd()}); Blueprint reads referenced files only there"
                " (allow another folder with --allow-path DIR)",
                line=_line_naming(config, entry),
            )
        from blueprint.formats import refuse_special_file  # the registry imports this module

        refuse_special_file(target)


def _parts_before_magic(path: Path) -> list[str]:
    parts = []
    for part in path.parts:
        if any(char in part for char in "*?["):
            break
        parts.append(part)
    return parts or ["."]


def _line_naming(path: Path, text: str) -> int | None:
    """The first line of a file that holds ``text``, for an error about a reference."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if text in line:
                    return number
    except OSError:
        pass
    return None


def _rebased(test: Any, folder: Path, base: Path) -> Any:
    """A test from a file in ``folder``, its var files named from ``base`` instead.

    promptfoo reads a test's ``vars: path.yaml`` (a file, a glob or a list of them) from the
    folder of the file the test is in; written inline in a config, the test is read from the
    config's folder, so the paths are rewritten to keep naming the same files.
    """
    if not isinstance(test, dict) or folder == base:
        return test
    variables = test.get("vars")

    def rebase(name: Any) -> Any:
        if not isinstance(name, str) or name.startswith("file://") or Path(name).is_absolute():
            return name
        return os.path.relpath(folder / name, base)

    if isinstance(variables, str):
        return {**test, "vars": rebase(variables)}
    if isinstance(variables, list):
        return {**test, "vars": [rebase(name) for name in variables]}
    return test


#: keys only a promptfoo config has (a test case has none of them)
CONFIG_KEYS: Final = frozenset(
    {
        "tests",
        "prompts",
        "providers",
        "targets",
        "scenarios",
        "defaultTest",
        "evaluateOptions",
        "outputPath",
        "sharing",
        "env",
        "nunjucksFilters",
        "assertionTemplates",
        "derivedMetrics",
        "redteam",
        "commandLineOptions",
        "tracing",
        "writeLatestResults",
    }
)
#: a reference promptfoo would fetch (https://, huggingface://, a Google Sheet)
_URL: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_GENERATOR: Final = re.compile(r"\.(?:py|js|cjs|mjs|ts|cts|mts)(?::[\w.]+)?$", re.IGNORECASE)


def _config(path: Path, config: dict[str, Any], inclusion: _Inclusion, *, top: bool) -> Loaded:
    references = _References(config, path)
    tests = config.get("tests")
    entries = tests if isinstance(tests, list) else [] if tests is None else [tests]
    found: list[tuple[int | None, Any]] = []
    for entry in entries:
        if isinstance(entry, str) and _GENERATOR.search(entry):
            raise ParseError(path, f"tests: {entry} is a test generator, which runs code; not read")
        if isinstance(entry, str) and _URL.match(entry) and not entry.startswith("file://"):
            raise ParseError(
                path,
                f"tests: {entry} is a URL; Blueprint fetches nothing (download the tests and"
                " name the file)",
                line=_line_naming(path, entry),
            )
        if isinstance(entry, str):
            for target in inclusion.targets(path, entry):
                found += [
                    (line, _rebased(test, target.parent, path.parent))
                    for line, test in inclusion.include(target, by=path, entry=entry).tests
                ]
        elif isinstance(entry, dict) and "path" in entry and "vars" not in entry:
            raise ParseError(path, "test generators (tests: {path: ...}) run code; not read")
        else:
            found.append((None, references.resolve(entry)))
    defaults = config.get("defaultTest")
    if isinstance(defaults, str) and defaults.startswith("file://"):
        target = path.parent / defaults.removeprefix("file://")
        inclusion.confine(target, path, defaults)
        defaults = _document(target)
    defaults = references.resolve(defaults) if isinstance(defaults, dict) else {}
    rest = {key: value for key, value in config.items() if key not in ("tests", "description")}
    suite = Suite(defaults=defaults, config=rest if top else None)
    if top and "description" in config:
        suite.description = config["description"]
    return Loaded(found, suite)


# --- the codec -------------------------------------------------------------------------------

_SHAPE: Final = NativeShape(
    mapped={
        "description": ("case.expectedBehavior",),
        "vars": ("input",),
        "assert": (
            "expected",
            "case.oracleType",
            "case.evaluator",
            "case.evaluationCriteria",
            "case.expectedBehavior",
            "case.unacceptableBehavior",
            "case.passLogic",
        ),
        "metadata": ("id", "extras"),
    },
    grading=("assert",),
)


class PromptfooCodec(VendorCodec):
    name: ClassVar[str] = "promptfoo"
    title: ClassVar[str] = "promptfoo tests or config (YAML, JSON, JSONL; reads CSV tests)"
    read_extensions: ClassVar[tuple[str, ...]] = (".yaml", ".yml", ".json", ".jsonl", ".csv")
    write_forms: ClassVar[dict[str, str]] = {
        ".yaml": "yaml",
        ".yml": "yaml",
        ".json": "json",
        ".jsonl": "jsonl",
    }
    refused_forms: ClassVar[dict[str, str]] = {
        ".csv": "promptfoo reads an __expected cell as assertion syntax and trims it, and its"
        " CSV cells are text only, so a CSV tests file cannot say what the set says; write"
        " .yaml, .json or .jsonl"
    }
    what: ClassVar[str] = "a promptfoo test case"
    shape: ClassVar[NativeShape] = _SHAPE

    # --- reading -----------------------------------------------------------------------------

    def open(self, path: Path) -> SetSource:
        loaded = load(path)
        suite = loaded.suite
        header: dict[str, Any] | None = None
        if suite.config is not None:
            header = {"extensions": {"promptfoo": {"config": suite.config}}}
            if suite.description is not ABSENT:
                header = {"description": suite.description, **header}
        return self.source(path, header, self.rows(loaded.tests, suite))

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        suite = suite or Suite()
        derived: dict[str, str] = {}
        metadata = record.get("metadata")
        description = record.get("description")
        row_id = metadata.get("id") if isinstance(metadata, dict) else None
        if not isinstance(row_id, str) or not row_id:
            match = _ID_PREFIX.match(description) if isinstance(description, str) else None
            if match:
                row_id = match.group(1)
            else:
                row_id = f"test-{position + 1}"
                derived["id"] = "promptfoo tests have no id; numbered by position"
        values = self.values_of(record, True, suite)
        value = values.input
        if value is ABSENT:
            value = {}
        self._flag_vars(record, suite, value, derived)
        own = record.get("assert")
        defaults = suite.defaults.get("assert")
        assertions = [
            *(defaults if isinstance(defaults, list) else []),
            *(own if isinstance(own, list) else []),
        ]
        inference = infer(assertions, value if isinstance(value, dict) else {"input": value})
        derived.update(inference.derived)
        derived["metadata.case.oracleType"] = (
            "inferred from the assertions ("
            + ", ".join(str(a.get("type")) for a in _flat(assertions))
            + ")"
            if assertions
            else "the test has no assertion, so nothing checks it automatically"
        )
        case = dict(inference.case)
        if inference.evaluator:
            case["evaluator"] = inference.evaluator
            derived["metadata.case.evaluator"] = "inferred from the assertion types"
        behaviour = description if isinstance(description, str) and description.strip() else None
        if behaviour is None:
            derived["metadata.case.expectedBehavior"] = "the test has no description"
        else:
            derived["metadata.case.expectedBehavior"] = "taken from the test's description"
        return imported_row(
            row_id=row_id,
            input_value=value,
            expected=inference.expected,
            oracle_type=inference.oracle,
            expected_behavior=behaviour or "(imported from promptfoo without a description)",
            format_name=self.name,
            derived=derived,
            case=case,
            metadata=values.extras,
        )

    @staticmethod
    def _flag_vars(
        record: dict[str, Any], suite: Suite, value: Any, derived: dict[str, str]
    ) -> None:
        if not isinstance(value, dict):
            if isinstance(value, str | list) and not isinstance(record.get("vars"), dict):
                derived["input"] = (
                    "the test's vars are a file reference promptfoo loads at run time"
                )
            return
        default_options = suite.defaults.get("options")
        own_options = record.get("options")
        options = {
            **(default_options if isinstance(default_options, dict) else {}),
            **(own_options if isinstance(own_options, dict) else {}),
        }
        notes = []
        lists = [k for k, v in value.items() if isinstance(v, list)]
        if lists and not options.get("disableVarExpansion"):
            notes.append(f"promptfoo runs one test per value of the list vars {', '.join(lists)}")
        files = [k for k, v in value.items() if isinstance(v, str) and v.startswith("file://")]
        if files:
            notes.append(f"{', '.join(files)} name files promptfoo loads at run time")
        dates = [k for k, v in value.items() if isinstance(v, YamlDate)]
        if dates:
            notes.append(f"promptfoo reads {', '.join(dates)} as dates (unquoted in its YAML)")
        templates = [k for k, v in value.items() if isinstance(v, str) and _TEMPLATE.search(v)]
        if templates:
            notes.append(f"{', '.join(templates)} hold promptfoo templates, rendered at run time")
        if notes:
            derived["input"] = "; ".join(notes)

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        suite = suite or Suite()
        metadata = record.get("metadata")
        if not native_mode:
            variables = record.get("vars")
            return Values(
                input=input_from_vars(variables, authored=True),
                expected=expected_from_assertions(record.get("assert")),
            )
        extras = extras_of(metadata)
        if isinstance(metadata, dict) and isinstance(metadata.get("id"), str) and metadata["id"]:
            extras.pop("id", None)  # it is the row's id
        return Values(
            input=input_from_vars(merged_vars(record, suite), authored=False),
            expected=ABSENT,
            extras=extras,
        )

    # --- writing -----------------------------------------------------------------------------

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        variables = vars_for(row.input)
        for key in CONTEXT_VARS:
            value = row.extra.get(key)
            if key not in variables and isinstance(value, list) and value:
                variables[key] = value
        # rows for human review go out unasserted: an automated check would misrepresent them
        assertions = [] if row.human_only else assertions_for(row)
        test: dict[str, Any] = {"description": _description(row), "vars": variables}
        if assertions:
            test["assert"] = assertions
        if any(isinstance(value, list) for value in variables.values()):
            test["options"] = {"disableVarExpansion": True}
        metadata: dict[str, Any] = {"id": row.id, **row.labels()}
        if risky(row.id):
            del metadata["id"]
        test["metadata"] = metadata
        return test

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        test: dict[str, Any] = {
            "description": row.case["expectedBehavior"],
            "vars": vars_for(row.input),
        }
        assertions = assertions_for(row)
        if assertions:
            test["assert"] = assertions
        test["metadata"] = {"id": row.id, **row.extra}
        return test

    def marks(self, record: dict[str, Any]) -> dict[str, Any]:
        dates = date_paths(record)
        return {"dates": dates} if dates else {}

    def finish_native(self, record: dict[str, Any], restored: Restored, row: ExportRow) -> None:
        extension = row.extension(self.name) or {}
        mark_dates(record, extension.get("dates"))
        variables = record.get("vars")
        if "vars" in restored.kept or not isinstance(variables, dict):
            return
        # the input was edited: vars it did not change keep the suite's own text (a live
        # template, a file:// reference, a list promptfoo expands); the edited ones are
        # Blueprint's, literal, and a list among them must not multiply the test
        entry = restored.payload["entries"].get("vars")
        original = entry.get("value") if isinstance(entry, dict) else None
        value = row.input if isinstance(row.input, dict) else {"input": row.input}
        authored_list = False
        edited = []
        for key, item in list(variables.items()):
            if (
                isinstance(original, dict)
                and key in original
                and same(value.get(key), original[key])
            ):
                variables[key] = original[key]
                continue
            edited.append(key)
            authored_list = authored_list or isinstance(item, list)
        if authored_list:
            options = record.get("options")
            record["options"] = {
                **(options if isinstance(options, dict) else {}),
                "disableVarExpansion": True,
            }
        assertions = record.get("assert") if "assert" in restored.kept else None
        used = [
            key
            for key in edited
            if re.search(r"\{\{\s*" + re.escape(key) + r"\b", jsonvalues.dumps_text(assertions))
        ]
        if used:
            restored.notes.append(
                f"{row.id}: the test's own assertions read the edited vars {', '.join(used)};"
                " check that the row's expected value still agrees with them"
            )

    def suite_of(self, header: dict[str, Any]) -> Any:
        return suite_of_header(header)

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        before, after = load(original), load(exported)
        changes = []
        for name, old, new in (
            ("description", before.suite.description, after.suite.description),
            ("config", before.suite.config, after.suite.config),
        ):
            if not same(old, new):
                changes.append(f"the config's {name} changed")
        tests = [self.without_payload(test) for _, test in before.tests]
        written = [self.without_payload(test) for _, test in after.tests]
        for number, (old, new) in enumerate(zip(tests, written, strict=False), start=1):
            if date_paths(old) != date_paths(new):  # equal text, but a date for promptfoo
                changes.append(f"test {number}: which values are YAML dates changed")
        return changes + compare_records(tests, written, "test")

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        record = super().record_for(row, context, tally)
        if record is not None and context.form == "jsonl" and context.suite.defaults:
            # a JSON Lines tests file has no config: the defaultTest goes into every test,
            # so promptfoo still grades each test as the suite did
            _merge_defaults(record, context.suite.defaults)
            if not tally.memo.get("merged"):
                tally.notes.append(
                    "the config's defaultTest is merged into every test: a JSON Lines tests"
                    " file has no config to hold it"
                )
            tally.memo["merged"] = True
            if row.extension(self.name) is not None:
                tally.drop(
                    "metadata.case.extensions.promptfoo",
                    "the test is written with the config's defaultTest merged into it (a JSON"
                    " Lines tests file has no config), so it no longer reads as it came in",
                    row,
                )
        defaults = context.suite.defaults.get("assert") if context.suite else None
        config_form = context.form in ("yaml", "json") and context.suite.config is not None
        if record is not None and defaults and config_form and row.extension(self.name) is None:
            if not tally.memo.get("defaulted"):
                tally.notes.append(
                    "rows authored in Blueprint are also graded by the config's defaultTest"
                    " assertions, which promptfoo adds to every test"
                )
            tally.memo["defaulted"] = True
        return record

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        if row.oracle_type == "expected-final-state":
            return FINAL_STATE
        if not row.human_only and not asserted(row):
            return NO_ASSERTION
        return None

    def payload_value(self, payload: dict[str, Any]) -> Any:
        # promptfoo would load file:// strings in metadata too; JSON text keeps them inert
        return jsonvalues.dumps_text(payload) if risky(payload) else payload

    def framing(self, path: Path, context: WriteContext) -> Framing:
        suite = suite_of_header(context.header)
        if context.form == "yaml":
            if suite.config is None:
                note = f"# promptfoo test cases; use them with: tests: file://{path.name}\n"
                return Framing(opening=note.encode("utf-8"), empty=b"[]\n")
            head = _config_head(context.header, suite)
            opening = (dump_yaml(head) if head else b"") + b"tests:"
            return Framing(opening=opening, first=b"\n", empty=b" []\n")
        if context.form == "json":
            if suite.config is None:
                return super().framing(path, context)
            start = jsonvalues.dumps(_config_head(context.header, suite))[:-1]
            opening = (start + b', "tests": [') if start != b"{" else b'{"tests": ['
            return Framing(
                opening=opening,
                first=b"\n  ",
                between=b",\n  ",
                closing=b"\n]}\n",
                empty=b"]}\n",
            )
        return super().framing(path, context)

    def encode(self, record: dict[str, Any], context: WriteContext) -> bytes:
        if context.form == "yaml":
            # one single-item list per test: the concatenation is the whole list
            return dump_yaml([record])
        return jsonvalues.dumps(record)

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        if context.form in ("yaml", "json") and suite_of_header(header).config is not None:
            return {"description", "extensions.promptfoo"} & _present(header)
        return set()

    def sniff(self, path: Path, head: bytes) -> Fit:
        suffix = path.suffix.lower()
        test_keys = {"vars", "assert", "description", "options", "threshold", "providerOutput"}
        config_keys = {"tests", "prompts", "providers", "defaultTest", "scenarios"}
        if suffix == ".csv":
            columns = csv_header(head)
            if any(column.startswith("__") for column in columns):
                return Fit.yes()
            return Fit.no(
                "promptfoo CSV tests have __expected, __description or __metadata columns"
            )
        if suffix == ".jsonl":
            first = first_line_object(head)
            if isinstance(first, dict) and set(first) & {"vars", "assert"}:
                return Fit.yes()
            return Fit.no("a promptfoo test has vars or assert")
        if suffix == ".json":
            outline = json_head(head)
            keys = set(outline.keys)
            if outline.kind == "object" and keys & config_keys:
                return Fit.yes()
            if (
                outline.kind == "array"
                and keys & {"vars", "assert"}
                and keys
                <= test_keys
                | {
                    "metadata",
                    "provider",
                    "providers",
                    "prompts",
                    "assertScoringFunction",
                }
            ):
                return Fit.yes()
            return Fit.no("a promptfoo config has tests, prompts or providers; a test has vars")
        if _YAML_KEYS.search(text_of(head)):
            return Fit.yes()
        return Fit.no("promptfoo YAML has tests, prompts, providers, vars or assert keys")


#: a key only promptfoo's YAML has, anywhere in a block or flow mapping
_YAML_KEYS: Final = re.compile(
    r"(?:^|[\s{,\-])[\"']?(vars|assert|tests|prompts|providers|defaultTest|scenarios|providerOutput)"
    r"[\"']?\s*:(?:\s|$)",
    re.MULTILINE,
)


def _merge_defaults(test: dict[str, Any], defaults: dict[str, Any]) -> None:
    """A test with a defaultTest merged in, as promptfoo applies it: the default assertions
    first, vars, options and metadata key by key (the test's own win), the rest only where
    the test has none."""
    for key, default in defaults.items():
        own = test.get(key)
        if key == "assert" and isinstance(default, list):
            test[key] = [*default, *(own if isinstance(own, list) else [])]
        elif key in ("vars", "options", "metadata") and isinstance(default, dict):
            if own is None or isinstance(own, dict):
                test[key] = {**default, **(own or {})}
        elif key not in test:
            test[key] = default


def _present(header: dict[str, Any]) -> set[str]:
    present = {key for key in header if key != "extensions"}
    extensions = header.get("extensions")
    if isinstance(extensions, dict) and "promptfoo" in extensions:
        present.add("extensions.promptfoo")
    return present


def _config_head(header: dict[str, Any], suite: Suite) -> dict[str, Any]:
    head: dict[str, Any] = {}
    if "description" in header:
        head["description"] = header["description"]
    config = suite.config or {}
    head.update(
        {key: value for key, value in config.items() if key not in ("tests", "description")}
    )
    return head
