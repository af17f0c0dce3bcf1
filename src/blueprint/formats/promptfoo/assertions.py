"""promptfoo assertions: those a row's oracle is written as, and the oracle a test's amount to."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from blueprint.formats.native import ABSENT
from blueprint.formats.promptfoo import checks as declared
from blueprint.formats.promptfoo.cases import _comma_separated
from blueprint.formats.promptfoo.javascript import ACCEPTABLE, GRADED, TOOL_CALLS, javascript
from blueprint.formats.promptfoo.judging import rubric_assertion
from blueprint.formats.promptfoo.templating import literal, risky, unliteral
from blueprint.formats.vendor import ExportRow
from blueprint.io import jsonvalues

# --- expected <-> assertions -----------------------------------------------------------------


def assertions_for(row: ExportRow) -> list[dict[str, Any]]:
    """The row's oracle as promptfoo assertions, then its gate of checks (a test passes
    when every assertion does: the gate holds for a judged row too)."""
    oracle = declared.judge_threshold(row, _oracle_assertions(row))
    return oracle + declared.check_assertions(row.case.get("checks"))


def _oracle_assertions(row: ExportRow) -> list[dict[str, Any]]:
    oracle, judge = row.oracle_type, row.evaluator == "llm-judge"
    expected = row.expected
    if oracle == "reference-answer":
        text = expected if isinstance(expected, str) else jsonvalues.dumps_text(expected)
        if judge:
            return [{"type": "factuality", "value": literal(text)}]
        if declared.compared(row):
            return [declared.compared_assertion(row)]
        if isinstance(expected, dict | list) and not risky(expected):
            return [{"type": "equals", "value": expected}]
        return [{"type": "equals", "value": literal(text)}]
    if oracle == "acceptable-set":
        if judge:
            return [rubric_assertion(row)]  # the shared judge template (judging.py)
        if "satisfies" in expected:
            return declared.check_assertions([expected["satisfies"]])
        if declared.compared(row):
            return [declared.compared_assertion(row)]
        if "graded" in expected:
            return [javascript(GRADED, expected["graded"])]
        return [javascript(ACCEPTABLE, expected["acceptable"])]
    if oracle == "rubric" and judge:
        return [rubric_assertion(row)]
    if oracle == "expected-tool-calls":
        return [javascript(TOOL_CALLS, expected)]
    return []


def asserted(row: ExportRow) -> bool:
    """Whether :func:`assertions_for` gives the row any assertion, without building them."""
    oracle = row.oracle_type
    if oracle == "rubric" and not row.case.get("checks"):
        return row.evaluator == "llm-judge"
    return oracle in ("rubric", "reference-answer", "acceptable-set", "expected-tool-calls")


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
#: assertion types graded by a model against criteria: the value is the criteria
_RUBRIC: Final = frozenset(
    {"llm-rubric", "g-eval", "model-graded-closedqa", "agent-rubric", "search-rubric"}
)
#: assertion types a model grades with no reference or criteria of the test's own
_MODEL_GRADED: Final = frozenset(
    {
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "moderation",
        "pi",
        "trajectory:goal-success",
    }
)
#: checks read as "output passes promptfoo's <type> check", naming the check: what they check
#: lies in a model, the provider's response or a trace, not in the test
_GENERIC: Final = _MODEL_GRADED | {
    "classifier",
    "guardrails",
    "skill-used",
    "trace-error-spans",
    "trace-span-count",
    "trace-span-duration",
    "trajectory:step-count",
    "trajectory:tool-args-match",
    "trajectory:tool-sequence",
    "trajectory:tool-used",
}
#: checks whose not- form promptfoo runs exactly as the check itself (their handlers take no
#: inverse), so "not-factuality" passes what factuality passes
_NOT_IGNORED: Final = frozenset(
    {
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "factuality",
        "is-valid-function-call",
        "is-valid-openai-function-call",
        "is-valid-openai-tools-call",
        "model-graded-closedqa",
        "model-graded-factuality",
        "pi",
        "trace-error-spans",
        "trace-span-count",
        "trace-span-duration",
    }
)


#: the assertion types promptfoo 0.121 runs (its ASSERTION_HANDLERS); with any other type
#: among a test's assertions (containsAny, human), promptfoo ends the test with an error
#: ("Unknown assertion type: ...") and runs none of its checks
_KNOWN: Final = frozenset(
    {
        "agent-rubric", "answer-relevance", "bleu", "classifier", "contains", "contains-all",
        "contains-any", "contains-html", "contains-json", "contains-sql", "contains-xml",
        "context-faithfulness", "context-recall", "context-relevance",
        "conversation-relevance", "cost", "equals", "factuality", "finish-reason", "g-eval",
        "gleu", "guardrails", "icontains", "icontains-all", "icontains-any", "is-html",
        "is-json", "is-refusal", "is-sql", "is-valid-function-call",
        "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "javascript",
        "latency", "levenshtein", "llm-rubric", "meteor", "model-graded-closedqa",
        "model-graded-factuality", "moderation", "perplexity", "perplexity-score", "pi",
        "python", "regex", "ruby", "rouge-n", "search-rubric", "skill-used", "similar",
        "similar:cosine", "similar:dot", "similar:euclidean", "starts-with", "tool-call-f1",
        "trajectory:goal-success", "trajectory:tool-args-match", "trajectory:step-count",
        "trajectory:tool-sequence", "trajectory:tool-used", "trace-error-spans",
        "trace-span-count", "trace-span-duration", "webhook", "word-count",
    }
)  # fmt: skip


def unknown_types(assertions: list[Any]) -> list[str]:
    """The assertion types among ``assertions`` (assert-sets opened) that promptfoo does not
    know, each once: with any, promptfoo ends the test with an error."""
    found: list[str] = []
    for item in _flat(assertions):
        kind = item.get("type")
        if not isinstance(kind, str) or kind in found:
            continue
        base = kind.removeprefix("not-")
        handled = base.startswith(("select-", "promptfoo:redteam:")) or base == "max-score"
        if base not in _KNOWN and not handled:
            found.append(kind)
    return found


def _spelled(kind: str) -> str:
    """The type promptfoo knows that an unknown one looks like a spelling of, as a hint."""
    kebab = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_", "-", kind).lower()
    base = kebab.removeprefix("not-")
    return f" (did you mean {kebab}?)" if kebab != kind and base in _KNOWN else ""


def _known(assertions: list[Any], unknown: list[str]) -> list[Any]:
    """``assertions`` without those of an ``unknown`` type (inside assert-sets too)."""
    kept: list[Any] = []
    for item in assertions:
        if isinstance(item, dict) and item.get("type") in unknown:
            continue
        if isinstance(item, dict) and item.get("type") == "assert-set":
            inner = item.get("assert")
            if isinstance(inner, list):
                item = {**item, "assert": _known(inner, unknown)}
        kept.append(item)
    return kept


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


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _scored(item: dict[str, Any]) -> bool:
    """Whether a set's threshold decides it: its members pass it by their score, not each."""
    return item.get("type") == "assert-set" and _number(item.get("threshold"))


def _weightless(item: dict[str, Any]) -> bool:
    """Whether promptfoo counts a check as passed whatever it finds (weight 0)."""
    return _number(item.get("weight")) and item["weight"] == 0


def _required(assertions: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The checks every one of which must pass, and the assert-sets a threshold decides.

    A set with no threshold passes only when all its checks do, so it opens up; one with a
    threshold passes on the weighted mean of their scores, so it stays whole. A check of
    weight 0 always counts as passed: it is neither.
    """
    checks: list[dict[str, Any]] = []
    sets: list[dict[str, Any]] = []
    for item in assertions:
        if not isinstance(item, dict) or _weightless(item):
            continue
        if _scored(item) and isinstance(item.get("assert"), list):
            sets.append(item)
        elif item.get("type") == "assert-set" and isinstance(item.get("assert"), list):
            inner, inner_sets = _required(item["assert"])
            checks += inner
            sets += inner_sets
        else:
            checks.append(item)
    return checks, sets


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


def _as_compared(value: Any, variables: dict[str, Any]) -> tuple[Any, bool]:
    """A check's value as promptfoo compares it, and whether that is known before a run.

    promptfoo renders a string value (and each string of a list) with Nunjucks and the test's
    vars, and loads one that starts with file:// or package:. A value that is only
    ``{{ var }}`` of a text var is that text; text that Blueprint's escaping of itself would
    give (plain text, or Blueprint's own escapes) renders to that text. Anything else is known
    only when promptfoo runs the test.
    """
    if isinstance(value, list):
        members = [_as_compared(member, variables) for member in value]
        return [member for member, _ in members], all(known for _, known in members)
    if not isinstance(value, str):
        return value, value is not None
    resolved, template = _resolve_template(value, variables)
    if template is not None:
        return resolved, isinstance(resolved, str)
    text = unliteral(value)
    return text, literal(text) == value


@dataclass
class Inference:
    oracle: str
    expected: Any
    evaluator: str | None
    case: dict[str, Any] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)
    #: what the row's oracle type must be read with: what promptfoo makes of the test that
    #: its assertions alone do not say (an unknown type, a transform of the output)
    caveats: list[str] = field(default_factory=list)


def _similar(metric: str) -> tuple[str, str]:
    """How a similar check reads, for one of promptfoo's embedding metrics."""
    how = f"{metric} similarity of embeddings at least {{threshold}}"
    return (
        f"output is similar in meaning to {{value}} ({how})",
        f"output is not similar in meaning to {{value}} (no {how})",
    )


def _scores(name: str) -> tuple[str, str]:
    return (
        f"output's {name} score against {{value}} is at least {{threshold}}",
        f"output's {name} score against {{value}} is below {{threshold}}",
    )


#: what each check asks of the output, as promptfoo runs it: (when it passes, when its not-
#: form passes); {value} is the check's value, {threshold} its threshold
_PHRASES: Final = {
    "equals": ("output equals {value} exactly", "output does not equal {value}"),
    "contains": (
        "output contains {value}, matching case",
        "output does not contain {value}, matching case",
    ),
    "icontains": (
        "output contains {value}, ignoring case",
        "output does not contain {value}, ignoring case",
    ),
    "starts-with": (
        "output starts with {value}, matching case",
        "output does not start with {value}, matching case",
    ),
    "regex": (
        "output matches the JavaScript regular expression {value} somewhere (no flags)",
        "output matches the JavaScript regular expression {value} nowhere (no flags)",
    ),
    "contains-any": (
        "output contains at least one of {value}, matching case",
        "output contains none of {value}, matching case",
    ),
    "icontains-any": (
        "output contains at least one of {value}, ignoring case",
        "output contains none of {value}, ignoring case",
    ),
    "contains-all": (
        "output contains every one of {value}, matching case",
        "output lacks at least one of {value}, matching case",
    ),
    "icontains-all": (
        "output contains every one of {value}, ignoring case",
        "output lacks at least one of {value}, ignoring case",
    ),
    "levenshtein": (
        "output differs from {value} by a Levenshtein distance of at most {threshold}",
        "output differs from {value} by a Levenshtein distance of more than {threshold}",
    ),
    "rouge-n": (
        "output's ROUGE-N score against {value}, ignoring case, is at least {threshold}",
        "output's ROUGE-N score against {value}, ignoring case, is below {threshold}",
    ),
    "bleu": _scores("BLEU"),
    "gleu": _scores("GLEU"),
    "meteor": _scores("METEOR"),
    "similar": _similar("cosine"),
    "similar:cosine": _similar("cosine"),
    "similar:dot": _similar("dot-product"),
    "similar:euclidean": (
        "output is similar in meaning to {value} (euclidean distance of embeddings at most"
        " {threshold})",
        "output is not similar in meaning to {value} (euclidean distance of embeddings at"
        " least {threshold})",
    ),
    "javascript": (
        "output passes the JavaScript check {value}",
        "output fails the JavaScript check {value}",
    ),
    "python": ("output passes the Python check {value}", "output fails the Python check {value}"),
    "ruby": ("output passes the Ruby check {value}", "output fails the Ruby check {value}"),
    "webhook": (
        "output passes the webhook check at {value}",
        "output fails the webhook check at {value}",
    ),
    "is-json": ("output is valid JSON", "output is not valid JSON"),
    "contains-json": ("output contains valid JSON", "output contains no valid JSON"),
    "is-xml": ("output is valid XML", "output is not valid XML"),
    "contains-xml": ("output contains valid XML", "output contains no valid XML"),
    "is-sql": ("output is valid SQL", "output is not valid SQL"),
    "contains-sql": ("output contains valid SQL", "output contains no valid SQL"),
    "is-html": ("output is valid HTML", "output is not valid HTML"),
    "contains-html": ("output contains HTML", "output contains no HTML"),
    "is-refusal": ("output is a refusal", "output is not a refusal"),
    "is-valid-function-call": (
        "output is a function call valid against the provider's function definitions",
        "output is a function call valid against the provider's function definitions",
    ),
    "is-valid-openai-function-call": (
        "output is an OpenAI function call valid against the provider's functions",
        "output is an OpenAI function call valid against the provider's functions",
    ),
    "is-valid-openai-tools-call": (
        "output is OpenAI tool calls valid against the provider's tools",
        "output is OpenAI tool calls valid against the provider's tools",
    ),
    "tool-call-f1": (
        "the F1 score of the tools the output calls against the tools {value} is at least"
        " {threshold}",
        "the F1 score of the tools the output calls against the tools {value} is below {threshold}",
    ),
    "word-count": (
        "output's word count fits {value} (a number is the exact count; min and max bound it)",
        "output's word count does not fit {value} (a number is the exact count; min and max"
        " bound it)",
    ),
    "finish-reason": (
        "the model's finish reason is {value}, ignoring case",
        "the model's finish reason is not {value}, ignoring case (or it gives none)",
    ),
    "latency": (
        "the call takes at most {threshold} milliseconds",
        "the call takes more than {threshold} milliseconds",
    ),
    "cost": ("the call costs at most {threshold}", "the call costs more than {threshold}"),
    "perplexity": (
        "output's perplexity, from the provider's log probabilities, is at most {threshold}",
        "output's perplexity, from the provider's log probabilities, is above {threshold}",
    ),
    "perplexity-score": (
        "output's normalised perplexity score, from the provider's log probabilities, is at"
        " least {threshold}",
        "output's normalised perplexity score, from the provider's log probabilities, is"
        " below {threshold}",
    ),
    # compared across the outputs of every prompt and provider for the test
    "select-best": (
        "output is the one a model picks as best, by {value}, of the outputs for the test",
        "output is not the one a model picks as best, by {value}, of the outputs for the test",
    ),
    "max-score": (
        "output has the highest score from the test's other checks of the outputs for the test",
        "output does not have the highest score from the test's other checks of the outputs",
    ),
    "human": ("a person grades the output as passing", "a person grades the output as failing"),
}
#: checks whose value is a schema the output must also match
_SCHEMA: Final = frozenset({"is-json", "contains-json"})
#: checks whose value is code, or names a file of it: shown short, as the test keeps the code
_CODE: Final = frozenset({"javascript", "python", "ruby"})
#: checks whose value promptfoo splits at commas when it is a string
_LISTS: Final = frozenset({"contains-any", "icontains-any", "contains-all", "icontains-all"})
#: how a list of references reads, by check (passing, not- form)
_REFERENCES: Final = {
    **{
        kind: ("at least one of ", "any of ")
        for kind in ("similar", "similar:cosine", "similar:dot", "similar:euclidean")
    },
    **{kind: ("the best of ", "the best of ") for kind in ("bleu", "gleu", "meteor")},
}
#: the threshold promptfoo applies when a check names none (where it does not vary)
_DEFAULT_THRESHOLDS: Final = {
    "levenshtein": 5,
    "rouge-n": 0.75,
    "bleu": 0.5,
    "gleu": 0.5,
    "meteor": 0.5,
    "tool-call-f1": 1,
    **{kind: 0.75 for kind in ("similar", "similar:cosine", "similar:dot", "similar:euclidean")},
}
#: the function promptfoo calls in a script file a check names without one
_ENTRY_POINTS: Final = {"python": "get_assert", "ruby": "get_assert"}


def _quoted(value: Any, short: bool = False) -> str:
    """A value exactly, as its JSON text (one line: a newline reads as \\n)."""
    text = jsonvalues.dumps_text(value)
    return text[:77] + "..." if short and len(text) > 80 else text


def _loaded(base: str, value: str) -> str:
    """How a value promptfoo loads (file:// or package:) reads: what it gives, not its name."""
    reference = value.removeprefix("file://")
    path, _, function = reference.partition(":")
    if value.startswith("package:"):
        return f"the function the package reference {_quoted(value)} exports"
    if base in _CODE:
        named = function or _ENTRY_POINTS.get(base)
        what = f"function {named} in" if named else "code of"
        return f"in the file {_quoted(path)} ({what} it)"
    if re.search(r"\.(?:[cm]?[jt]s|py|rb)$", path, re.IGNORECASE):
        return f"the value the script {_quoted(reference)} returns"
    return f"the contents of the file {_quoted(path)}"


def _value_text(base: str, value: Any, negated: bool) -> str:
    if isinstance(value, str) and value.startswith(("file://", "package:")):
        return _loaded(base, value)
    if base in _LISTS and isinstance(value, str):
        value = _comma_separated(value)
    if base == "tool-call-f1" and isinstance(value, str):
        value = [name.strip() for name in value.split(",")]  # no quoting, unlike contains-any
    if isinstance(value, list) and (
        base in _LISTS or base in _REFERENCES or base == "tool-call-f1"
    ):
        lead = _REFERENCES.get(base, ("", ""))[1 if negated else 0]
        return lead + ", ".join(_quoted(member) for member in value)
    return _quoted(value, short=base in _CODE)


def _threshold_text(base: str, assertion: dict[str, Any]) -> str | None:
    """The threshold a check applies, as text (None when it names none and has no default)."""
    # promptfoo reads thresholds with ??, so an explicit 0 is a threshold of 0
    if assertion.get("threshold") is not None:
        given = assertion["threshold"]
        return str(given) if _number(given) else _quoted(given)
    default = _DEFAULT_THRESHOLDS.get(base)
    return None if default is None else f"{default}, promptfoo's default"


def _sentence(assertion: dict[str, Any], negated: bool, transformed: bool = False) -> str:
    """What a check asks of the output, or (negated) what its not- form asks; ``transformed``:
    of the output as the test's transform leaves it."""
    base = _kind(assertion).removeprefix("not-")
    has_value = "value" in assertion
    value = _value_text(base, assertion.get("value"), negated) if has_value else ""
    threshold = _threshold_text(base, assertion)
    template = _PHRASES.get(base, ("", ""))[1 if negated else 0]
    if template and (threshold is not None or "{threshold}" not in template):
        sentence = template.format(value=value, threshold=threshold)
        if has_value and "{value}" not in template:
            what = "that matches the JSON schema" if base in _SCHEMA else "given"
            sentence += f" {what} {value}"
    else:
        graded = _MODEL_GRADED | _RUBRIC | _JUDGED_REFERENCE
        graded_by = "model-graded " if base in graded and "model-graded" not in base else ""
        verb = "fails" if negated else "passes"
        sentence = f"output {verb} promptfoo's {graded_by}{base} check"
        if has_value:
            sentence += f" with {value}"
        if threshold is not None:
            sentence += f" at threshold {threshold}"
    if transformed and "transform" in assertion:
        sentence += ", after the test's transform of the output and then the check's own"
    elif transformed:
        sentence += ", after the test's transform of the output"
    elif "transform" in assertion:
        sentence += ", after the check's transform of the output"
    return sentence


def _negated(assertion: dict[str, Any]) -> bool:
    """Whether promptfoo runs a check as the negation of its base check."""
    kind = _kind(assertion)
    return kind.startswith("not-") and kind.removeprefix("not-") not in _NOT_IGNORED


def criterion(assertion: dict[str, Any], transformed: bool = False) -> str:
    """A check as a sentence about the output, exactly as promptfoo runs it, naming the check.

    ``{type: icontains, value: grub}`` reads 'output contains "grub", ignoring case (promptfoo
    icontains)'; a not- check reads as its negation, unless promptfoo ignores the not- of
    that check (not-factuality passes what factuality passes).
    """
    kind = _kind(assertion) or str(assertion.get("type", ""))
    note = ", which promptfoo runs as the check itself" if kind.startswith("not-") else ""
    note = "" if _negated(assertion) else note
    return f"{_sentence(assertion, _negated(assertion), transformed)} (promptfoo {kind}{note})"


def forbidden(assertion: dict[str, Any], transformed: bool = False) -> str:
    """What a not- check forbids, as a sentence about the output, naming the check.

    ``{type: not-contains, value: idiot}`` reads 'output contains "idiot", matching case
    (promptfoo not-contains)': an unacceptable behaviour.
    """
    sentence = _sentence(assertion, negated=False, transformed=transformed)
    return f"{sentence} (promptfoo {assertion.get('type', '')})"


def _set_criterion(assertion_set: dict[str, Any], stated: Any, transformed: bool = False) -> str:
    """An assert-set a threshold decides, as one criterion: its score, not each check."""
    members = [item for item in assertion_set["assert"] if isinstance(item, dict)]
    parts = [
        _set_criterion(item, stated, transformed)
        if _scored(item)
        else criterion(stated(item), transformed)
        for item in members
        if not _weightless(item)
    ]
    return (
        f"output scores at least {assertion_set['threshold']} on the weighted mean of these"
        f" checks' scores: {'; '.join(parts)} (promptfoo assert-set)"
    )


def _kind(assertion: dict[str, Any]) -> str:
    """An assertion's type, as text ("" when a file gives something else)."""
    kind = assertion.get("type")
    return kind if isinstance(kind, str) else ""


def _base(assertion: dict[str, Any]) -> str:
    """The check promptfoo runs: a not- form it ignores is the check itself."""
    kind = _kind(assertion)
    return (
        kind.removeprefix("not-") if kind.startswith("not-") and not _negated(assertion) else kind
    )


def _equality(assertion: dict[str, Any], variables: dict[str, Any]) -> bool:
    """Whether a check passes exactly the outputs equal to its value.

    equals does (a JSON value compared as a value), and so does levenshtein with a threshold
    from 0 up to below 1 (promptfoo's CSV reader gives it 0.75), since no edit is then within
    the distance allowed; neither does when a transform changes the output first, or when
    its value is known only when promptfoo runs the test (a file, a template of vars).
    """
    kind = _kind(assertion)
    if kind not in ("equals", "levenshtein") or "transform" in assertion:
        return False
    if "value" not in assertion:
        return False
    value, known = _as_compared(assertion["value"], variables)
    if not known:
        return False
    if kind == "equals":
        return True
    threshold = assertion.get("threshold")
    if not isinstance(threshold, int | float) or isinstance(threshold, bool):
        return False
    return isinstance(value, str) and 0 <= threshold < 1


def infer(assertions: list[Any], variables: dict[str, Any], transform: Any = None) -> Inference:
    """The oracle type, expected value and evaluator a test's assertions amount to.

    Only a check that passes exactly the outputs equal to its value (equals) gives a
    reference answer; factuality gives a reference for an LLM judge and tool-call-f1 (at its
    default threshold of 1) expected tool calls. Every other check is imported as what it
    checks: contains, icontains, starts-with, regex, contains-any and the rest, similar and
    the other scores, is-json, javascript, become the criteria of a rubric, each stating its
    check exactly ('output contains "grub", ignoring case (promptfoo icontains)'), with
    llm-rubric, g-eval and closedqa criteria alongside. Such a rubric claims the llm-judge
    evaluator when a model-graded check is among them and no evaluator otherwise, since
    promptfoo runs the checks as code, which no evaluator a rubric admits does. Negated
    checks become unacceptable behaviours, never an answer. Checks promptfoo does not require
    to pass each (weight 0; members of an assert-set with a threshold) give no answer either.
    The test's own assertions are kept and written back on export to promptfoo, whatever is
    inferred here.

    ``transform`` is the test's own transform of the output (its options.transform, or its
    defaultTest's), which promptfoo applies before every check: the checks grade the output
    as it leaves it, so none is an answer for the output itself, and the row is a rubric of
    what they check after it. An assertion of a type promptfoo does not know (containsAny)
    ends the test with an error before any check runs: the row is what its other checks
    check, or expected-behavior-only when none is left, and the caveat says so.
    """
    flat = _flat(assertions)
    if not flat:
        return Inference("expected-behavior-only", ABSENT, None)
    listed = "; ".join(_describe(item) for item in flat)
    case: dict[str, Any] = {"passLogic": f"promptfoo grades it with: {listed}"}
    derived = {"metadata.case.passLogic": "a description of the test's promptfoo assertions"}
    caveats: list[str] = []
    unknown = unknown_types(assertions)
    if unknown:
        strange = ", ".join(f"{kind}{_spelled(kind)}" for kind in unknown)
        caveats.append(
            f"promptfoo 0.121 knows no assertion type {strange}: it ends the test with an error"
            f' ("Unknown assertion type: {unknown[0]}") and runs none of its checks'
        )
        case["passLogic"] = (
            f"promptfoo ends the test with an error, running none of its checks: it knows no"
            f" assertion type {strange}. Its assertions: {listed}"
        )
        assertions = _known(assertions, unknown)
        if not _flat(assertions):
            caveats.append("no other check is left, so nothing checks it automatically")
            return Inference("expected-behavior-only", ABSENT, None, case, derived, caveats)
    transformed = transform is not None
    if transformed:
        shown = _quoted(transform, short=True)
        case["passLogic"] += f"; each on the output as the test's transform {shown} leaves it"
        caveats.append(
            f"promptfoo transforms the output with {shown} before every check, so the checks"
            " grade the transformed output and none is an answer for the output itself"
        )
    resolved: list[str] = []

    def stated(item: dict[str, Any]) -> dict[str, Any]:
        """The check with a value that is only {{ var }} replaced by the var's text."""
        value, template = _resolve_template(item.get("value"), variables)
        if template is None:
            # Blueprint's own escapes read as the text they keep
            shown, known = _as_compared(item.get("value"), variables)
            return {**item, "value": shown} if known and shown != item.get("value") else item
        if not isinstance(value, str | int | float):
            return item
        resolved.append(str(item["value"]).strip())
        return {**item, "value": value}

    checks, sets = _required(assertions)
    negated = [item for item in checks if _negated(item)]
    positive = [item for item in checks if not _negated(item)]
    if negated:
        case["unacceptableBehavior"] = [forbidden(stated(item), transformed) for item in negated]
        derived["metadata.case.unacceptableBehavior"] = "the test's negated assertions"

    def expected_of(assertion: dict[str, Any], why: str) -> Any:
        value, template = _resolve_template(assertion.get("value"), variables)
        derived["expected"] = why + (
            f"; {template}, resolved from the test's vars" if template else ""
        )
        return _as_compared(value, variables)[0] if template is None else value

    answers = [] if transformed else positive  # no check is an answer for the raw output
    if (chosen := next((item for item in answers if _equality(item, variables)), None)) is not None:
        why = "the value of the test's equals assertion"
        if _kind(chosen) == "levenshtein":
            why = (
                "the value of the test's levenshtein assertion, whose threshold below 1"
                " passes only an output equal to it"
            )
        value = expected_of(chosen, why)
        return Inference("reference-answer", value, "exact-or-programmatic", case, derived, caveats)
    judged_reference = next(
        (
            item
            for item in answers
            if _base(item) in _JUDGED_REFERENCE and isinstance(item.get("value"), str)
        ),
        None,
    )
    if judged_reference is not None:
        kind = _kind(judged_reference)
        value = expected_of(judged_reference, f"the reference of the test's {kind} assertion")
        return Inference("reference-answer", value, "llm-judge", case, derived, caveats)
    tool_calls = next(
        (
            item
            for item in answers
            if _kind(item) == "tool-call-f1"
            and item.get("threshold") in (None, 1)
            and "transform" not in item
        ),
        None,
    )
    if tool_calls is not None:
        names = tool_calls.get("value")
        names = names.split(",") if isinstance(names, str) else names
        names = [str(name).strip() for name in names] if isinstance(names, list) else []
        names = list(dict.fromkeys(name for name in names if name))
        if names:
            derived["expected"] = (
                "tool-call-f1 names tools only, in no order; arguments are unknown; promptfoo"
                " also fails a call of any tool it does not name, which the row allows"
            )
            calls = [{"name": name, "arguments": {}} for name in names]
            expected = {"calls": calls, "order": "any"}
            return Inference(
                "expected-tool-calls", expected, "exact-or-programmatic", case, derived, caveats
            )
    # every other check is a criterion: a model-graded one's own criteria, or what it checks
    criteria: list[str] = []
    for item in checks:
        if _base(item) in _RUBRIC:
            value = item.get("value")
            values = value if isinstance(value, list) else [value]
            criteria += [v if isinstance(v, str) else jsonvalues.dumps_text(v) for v in values]
        else:
            criteria.append(criterion(stated(item), transformed))
    criteria += [_set_criterion(item, stated, transformed) for item in sets]
    if not criteria:
        criteria = [f"promptfoo passes any output: none of its checks counts ({listed})"]
    case["evaluationCriteria"] = [c for c in criteria if c] or [listed]
    # a model decides a negated rubric too
    judged = any(_kind(item).removeprefix("not-") in _RUBRIC for item in checks + _flat(sets))
    derived["metadata.case.evaluationCriteria"] = (
        "the criteria of the test's model-graded assertions, with what its other checks check"
        if judged
        else "what the test's promptfoo checks check; none is an equality with an answer, so"
        " the row is a rubric and promptfoo's own assertions grade it"
    ) + (f"; {', '.join(resolved)} resolved from the test's vars" if resolved else "")
    if transformed:
        derived["metadata.case.evaluationCriteria"] += (
            "; each grades the output as the test's transform leaves it"
        )
    return Inference("rubric", ABSENT, "llm-judge" if judged else None, case, derived, caveats)
