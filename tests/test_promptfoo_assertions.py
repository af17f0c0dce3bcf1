"""How each promptfoo assertion imports: the oracle it amounts to, and the check stated exactly."""

from __future__ import annotations

from typing import Any

import pytest

from blueprint.formats.native import ABSENT
from blueprint.formats.promptfoo import assertions
from blueprint.formats.promptfoo.assertions import criterion, forbidden, infer

#: promptfoo 0.121.20 (the version .ci/run installs), src/types/index.ts:
#: BaseAssertionTypesSchema, each of which also has a not- form
BASE_TYPES = (
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
    "tool-call-f1",
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
)
#: the same file's SpecialAssertionTypesSchema: no not- form
SPECIAL_TYPES = ("select-best", "human", "max-score")
ALL_TYPES = BASE_TYPES + SPECIAL_TYPES

#: checks whose not- form promptfoo runs as the check itself (the handler takes no inverse)
NOT_IGNORED = {
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
#: a model grades these against the criteria that are their value
RUBRIC = {"agent-rubric", "g-eval", "llm-rubric", "model-graded-closedqa", "search-rubric"}
#: (oracle type, evaluator) of a test with only the check, where it is not a rubric of checks
ORACLES = {
    "equals": ("reference-answer", "exact-or-programmatic"),
    "factuality": ("reference-answer", "llm-judge"),
    "model-graded-factuality": ("reference-answer", "llm-judge"),
    "tool-call-f1": ("expected-tool-calls", "exact-or-programmatic"),
    **{kind: ("rubric", "llm-judge") for kind in RUBRIC},
    # the schema lists human, but promptfoo 0.121's runner has no check of that name: it
    # ends the test with an error ("Unknown assertion type: human"), checking nothing
    "human": ("expected-behavior-only", None),
}
#: a value that suits the check, where "grub" does not
VALUES: dict[str, Any] = {
    "contains-all": ["grub", "fridge"],
    "contains-any": ["grub", "fridge"],
    "icontains-all": ["grub", "fridge"],
    "icontains-any": ["grub", "fridge"],
    "javascript": "output.includes('grub')",
    "python": "'grub' in output",
    "ruby": "output.include?('grub')",
    "webhook": "https://example.com/grade",
    "tool-call-f1": ["search", "book"],
    "word-count": {"min": 3, "max": 10},
    "trajectory:step-count": {"max": 3},
    "finish-reason": "stop",
}
#: checks that take no value, and those whose only setting is a threshold
NO_VALUE = {"is-json", "is-xml", "is-sql", "is-html", "contains-json", "contains-xml"}
NO_VALUE |= {"contains-sql", "contains-html", "is-refusal", "is-valid-function-call"}
NO_VALUE |= {"is-valid-openai-function-call", "is-valid-openai-tools-call", "max-score"}
NO_VALUE |= {"human", "guardrails", "moderation", "perplexity", "perplexity-score"}
NO_VALUE |= {"cost", "latency"}
THRESHOLDS = {"cost": 0.01, "latency": 500, "perplexity": 20, "perplexity-score": 0.5}


def check(kind: str) -> dict[str, Any]:
    base = kind.removeprefix("not-")
    made: dict[str, Any] = {"type": kind}
    if base not in NO_VALUE:
        made["value"] = VALUES.get(base, "grub")
    if base in THRESHOLDS:
        made["threshold"] = THRESHOLDS[base]
    return made


def forms() -> list[str]:
    return [*ALL_TYPES, *(f"not-{kind}" for kind in BASE_TYPES)]


@pytest.mark.parametrize("kind", forms())
def test_every_assertion_type_imports_as_what_it_checks(kind: str) -> None:
    assertion = check(kind)
    inferred = infer([assertion], {})
    base = kind.removeprefix("not-")
    negated = kind.startswith("not-") and base not in NOT_IGNORED
    runs_as = kind if negated else base
    oracle, evaluator = ORACLES.get(runs_as, ("rubric", None))
    if negated and base in RUBRIC:
        evaluator = "llm-judge"  # a model still decides the negated rubric
    assert (inferred.oracle, inferred.evaluator) == (oracle, evaluator)
    assert kind in inferred.case["passLogic"]
    if oracle == "reference-answer":
        assert inferred.expected == assertion["value"]
    elif oracle == "expected-tool-calls":
        assert [call["name"] for call in inferred.expected["calls"]] == assertion["value"]
    else:
        assert inferred.expected is ABSENT
    if oracle == "rubric" and runs_as in RUBRIC:
        assert inferred.case["evaluationCriteria"] == [assertion["value"]]
    elif oracle == "rubric":
        assert inferred.case["evaluationCriteria"] == [criterion(assertion)]
        assert f"(promptfoo {kind}" in criterion(assertion)
    if negated:
        assert inferred.case["unacceptableBehavior"] == [forbidden(assertion)]
        assert forbidden(assertion).endswith(f"(promptfoo {kind})")
        # the criterion states the negation, the unacceptable behaviour what it forbids
        assert criterion(assertion) != forbidden(assertion)
    else:
        assert "unacceptableBehavior" not in inferred.case


def test_every_assertion_type_has_a_phrase_or_a_generic_reading_that_names_it() -> None:
    read = set(assertions._PHRASES) | assertions._GENERIC
    read |= assertions._RUBRIC | assertions._JUDGED_REFERENCE
    assert read == set(ALL_TYPES)  # none missing, none that promptfoo does not have
    assert assertions._NOT_IGNORED == NOT_IGNORED
    assert assertions._RUBRIC == RUBRIC
    for kind in set(ALL_TYPES) - set(assertions._PHRASES):
        sentence = criterion(check(kind))
        assert "output passes promptfoo's " in sentence and f"{kind} check" in sentence
    for kind in set(assertions._PHRASES) & set(BASE_TYPES) - NOT_IGNORED:
        passing, negated = assertions._PHRASES[kind]
        assert passing != negated, kind  # a not- form never reads as the check itself


def test_a_substring_check_is_no_reference_answer() -> None:
    inferred = infer([{"type": "icontains", "value": "grub"}], {})
    assert (inferred.oracle, inferred.expected, inferred.evaluator) == ("rubric", ABSENT, None)
    assert inferred.case["evaluationCriteria"] == [
        'output contains "grub", ignoring case (promptfoo icontains)'
    ]


@pytest.mark.parametrize(
    ("threshold", "oracle"),
    [(0, "reference-answer"), (0.75, "reference-answer"), (1, "rubric"), (5, "rubric")],
)
def test_levenshtein_below_one_is_an_equality(threshold: float, oracle: str) -> None:
    inferred = infer([{"type": "levenshtein", "value": "grub", "threshold": threshold}], {})
    assert inferred.oracle == oracle
    assert inferred.expected == ("grub" if oracle == "reference-answer" else ABSENT)


def test_levenshtein_names_promptfoos_default_distance() -> None:
    (text,) = infer([{"type": "levenshtein", "value": "grub"}], {}).case["evaluationCriteria"]
    assert "at most 5, promptfoo's default" in text


def test_contains_any_splits_a_string_as_promptfoo_does() -> None:
    text = criterion({"type": "contains-any", "value": '"grub, fresh", fridge ,milk'})
    assert '"grub, fresh", "fridge", "milk"' in text
    # tool-call-f1 splits at every comma, quotes or not
    assert '"a", "b", "c"' in criterion({"type": "tool-call-f1", "value": "a,b,c"})


@pytest.mark.parametrize(
    "assertion",
    [
        {"type": "equals", "value": "grub", "weight": 0},  # always passes
        {"type": "equals", "value": "grub", "transform": "output.trim()"},
        {"type": "equals", "value": "file://answer.txt"},  # the file's text
        {"type": "equals", "value": "Hello {{ name }}!"},  # rendered with the vars
        {"type": "levenshtein", "value": "grub", "threshold": 0.5, "transform": "output"},
    ],
    ids=["weight-0", "transform", "file", "template", "levenshtein-transform"],
)
def test_an_equality_promptfoo_does_not_require_as_written_is_no_answer(
    assertion: dict[str, Any],
) -> None:
    inferred = infer([assertion], {"name": "Ann"})
    assert inferred.oracle == "rubric" and inferred.expected is ABSENT


@pytest.mark.parametrize(
    "checks",
    [
        [{"type": "equals", "value": "GRUB"}],
        [{"type": "factuality", "value": "grub"}],
        [{"type": "tool-call-f1", "value": ["search"]}],
        [{"type": "icontains", "value": "grub"}, {"type": "not-contains", "value": "x"}],
    ],
    ids=["equals", "factuality", "tool-call-f1", "substring"],
)
def test_checks_after_the_tests_transform_are_no_answer_for_the_output(
    checks: list[dict[str, Any]],
) -> None:
    inferred = infer(checks, {}, "output.toUpperCase()")
    assert inferred.oracle == "rubric" and inferred.expected is ABSENT
    criteria = [
        *inferred.case["evaluationCriteria"],
        *inferred.case.get("unacceptableBehavior", []),
    ]
    if checks[0]["type"] != "factuality":
        assert inferred.evaluator is None
        assert all("after the test's transform of the output" in text for text in criteria)
    assert '"output.toUpperCase()"' in inferred.case["passLogic"]
    (caveat,) = inferred.caveats
    assert "none is an answer for the output itself" in caveat


def test_a_check_of_an_unknown_type_is_said_and_checks_nothing() -> None:
    inferred = infer([{"type": "containsAny", "value": ["grub"]}], {})
    assert (inferred.oracle, inferred.evaluator) == ("expected-behavior-only", None)
    assert "did you mean contains-any?" in inferred.caveats[0]
    assert "ends the test with an error" in inferred.case["passLogic"]
    # beside known checks, the row is what they check; promptfoo still errs on the test
    mixed = infer(
        [
            {"type": "equals", "value": "grub"},
            {"type": "assert-set", "assert": [{"type": "not-containsAny", "value": ["x"]}]},
        ],
        {},
    )
    assert (mixed.oracle, mixed.expected) == ("reference-answer", "grub")
    assert "not-containsAny (did you mean not-contains-any?)" in mixed.caveats[0]
    assert assertions.unknown_types([{"type": "select-best"}, {"type": "max-score"}]) == []


def test_a_value_that_is_a_var_is_the_vars_text() -> None:
    inferred = infer([{"type": "equals", "value": "{{ answer }}"}], {"answer": "grub"})
    assert (inferred.oracle, inferred.expected) == ("reference-answer", "grub")
    escaped = infer([{"type": "equals", "value": '{{ "{" }}{ x }}'}], {})
    assert escaped.expected == "{{ x }}"  # Blueprint's escape renders to the text it keeps


def test_an_assert_set_with_a_threshold_is_one_scored_criterion() -> None:
    scored = {
        "type": "assert-set",
        "threshold": 0.5,
        "assert": [{"type": "equals", "value": "grub"}, {"type": "not-contains", "value": "x"}],
    }
    inferred = infer([scored], {})
    assert inferred.oracle == "rubric" and "unacceptableBehavior" not in inferred.case
    (text,) = inferred.case["evaluationCriteria"]
    assert text.startswith("output scores at least 0.5") and "(promptfoo assert-set)" in text
    assert "(promptfoo equals)" in text and "(promptfoo not-contains)" in text
    plain = {"type": "assert-set", "assert": scored["assert"]}
    opened = infer([plain], {})  # every check must pass: the set opens up
    assert (opened.oracle, opened.expected) == ("reference-answer", "grub")
    assert opened.case["unacceptableBehavior"] == [
        'output contains "x", matching case (promptfoo not-contains)'
    ]


def test_tool_call_f1_below_one_is_no_expected_call_list() -> None:
    inferred = infer([{"type": "tool-call-f1", "value": "a, b", "threshold": 0.5}], {})
    assert inferred.oracle == "rubric"
    assert '"a", "b"' in inferred.case["evaluationCriteria"][0]


def test_a_script_file_reads_as_its_file_and_function() -> None:
    text = criterion({"type": "python", "value": "file://checks/grub.py"})
    assert '"checks/grub.py"' in text and "get_assert" in text
    named = criterion({"type": "javascript", "value": "file://grub.js:check"})
    assert "function check" in named
