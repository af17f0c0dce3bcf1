"""promptfoo's deterministic assertions import as checks of the vocabulary: each type as the
check that decides it as promptfoo does, a test as the acceptable set its checks define (all
of them, or weighted by its threshold), an assert-set as one check, code checks beside a
model-graded one as the row's gate, and what no check decides the same way kept as criteria
with a note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from blueprint.convert import data_rows
from blueprint.formats import REGISTRY
from blueprint.formats.promptfoo import dump_yaml
from blueprint.formats.promptfoo.cases import Suite
from blueprint.formats.promptfoo.importchecks import check_of, infer, js_text

LOWER = {"normalize": ["lowercase"]}


@pytest.mark.parametrize(
    ("assertion", "check"),
    [
        ({"type": "equals", "value": "Paris"}, {"type": "equals", "value": "Paris"}),
        ({"type": "equals", "value": 3}, {"type": "equals", "value": "3"}),
        ({"type": "equals", "value": 2.50}, {"type": "equals", "value": "2.5"}),
        ({"type": "equals", "value": 4.0}, {"type": "equals", "value": "4"}),
        ({"type": "equals", "value": True}, {"type": "equals", "value": "true"}),
        ({"type": "equals", "value": {"a": [1]}}, {"type": "equals", "value": {"a": [1]}}),
        ({"type": "contains", "value": "grub"}, {"type": "contains", "value": "grub"}),
        ({"type": "contains", "value": 42}, {"type": "contains", "value": "42"}),
        ({"type": "icontains", "value": "GRUB"}, {"type": "contains", "value": "GRUB", **LOWER}),
        (
            {"type": "contains-any", "value": 'a, "b, c" ,d'},
            {"type": "contains-any", "values": ["a", "b, c", "d"]},
        ),
        (
            {"type": "icontains-any", "value": ["X", 7]},
            {"type": "contains-any", "values": ["X", "7"], **LOWER},
        ),
        (
            {"type": "contains-all", "value": ["a", "b"]},
            {"type": "contains-all", "values": ["a", "b"]},
        ),
        (
            {"type": "icontains-all", "value": "A,B"},
            {"type": "contains-all", "values": ["A", "B"], **LOWER},
        ),
        ({"type": "starts-with", "value": "Yes"}, {"type": "starts-with", "value": "Yes"}),
        ({"type": "regex", "value": "^\\d+$"}, {"type": "regex", "pattern": "^\\d+$"}),
        ({"type": "is-json"}, {"type": "is-json"}),
        (
            {"type": "is-json", "value": {"type": "object", "required": ["id"]}},
            {"type": "json-schema", "schema": {"type": "object", "required": ["id"]}},
        ),
        (
            {"type": "levenshtein", "value": "Paris"},
            {"type": "levenshtein", "value": "Paris", "maxDistance": 5},
        ),
        (
            {"type": "levenshtein", "value": "Paris", "threshold": 2.5},
            {"type": "levenshtein", "value": "Paris", "maxDistance": 2},
        ),
        (
            {"type": "word-count", "value": 3},
            {"type": "length", "unit": "words", "min": 3, "max": 3},
        ),
        (
            {"type": "word-count", "value": {"max": 50}},
            {"type": "length", "unit": "words", "max": 50},
        ),
        (
            {"type": "word-count", "value": {"min": "2", "max": 5}},
            {"type": "length", "unit": "words", "min": 2, "max": 5},
        ),
    ],
)
def test_each_assertion_type_is_the_check_promptfoo_runs(
    assertion: dict[str, Any], check: dict[str, Any]
) -> None:
    assert check_of(assertion, {}) == check
    negated = {**assertion, "type": f"not-{assertion['type']}"}
    assert check_of(negated, {}) == {"type": "not", "check": check}


def test_a_value_that_is_a_var_is_the_vars_text() -> None:
    assertion = {"type": "icontains", "value": "{{ answer }}"}
    assert check_of(assertion, {"answer": "Paris"}) == {
        "type": "contains",
        "value": "Paris",
        **LOWER,
    }


@pytest.mark.parametrize(
    ("assertion", "why"),
    [
        ({"type": "contains-json"}, "its own scan"),
        ({"type": "regex", "value": "(?<year>\\d{4})"}, "cannot run"),
        ({"type": "contains", "value": "x", "transform": "output.trim()"}, "own transform"),
        ({"type": "contains", "value": "Hi {{ name | upper }}"}, "only when promptfoo runs"),
        ({"type": "contains", "value": "file://answer.txt"}, "only when promptfoo runs"),
        ({"type": "contains", "value": ""}, "no text or number"),
        ({"type": "starts-with", "value": 3}, "no text"),
        ({"type": "contains-any", "value": []}, "no list of texts"),
        ({"type": "is-json", "value": {"type": "string", "format": "email"}}, "draft-07"),
        ({"type": "is-json", "value": "type: object"}, "not written as an object"),
        ({"type": "levenshtein", "value": "x", "threshold": -1}, "no distance"),
        ({"type": "word-count", "value": 2.5}, "not a whole number"),
        ({"type": "word-count", "value": {"min": 5, "max": 2}}, "wrong way round"),
        ({"type": "equals"}, "no value"),
        ({"type": "equals", "value": None}, "no value"),
    ],
)
def test_what_no_check_decides_the_same_way_says_why(assertion: dict[str, Any], why: str) -> None:
    found = check_of(assertion, {})
    assert isinstance(found, str) and why in found
    assert found.startswith(f"{assertion['type']}: ")


@pytest.mark.parametrize("kind", ["llm-rubric", "javascript", "similar", "is-xml", "factuality"])
def test_other_assertions_are_no_check(kind: str) -> None:
    assert check_of({"type": kind, "value": "x"}, {}) is None


def test_javascript_text_of_numbers() -> None:
    numbers = (0, -7, 1.5, 1e20, 0.1, 2.0, False)
    texts = ["0", "-7", "1.5", "100000000000000000000", "0.1", "2", "false"]
    assert [js_text(number) for number in numbers] == texts
    assert js_text(1e-7) is None and js_text(1e21) is None and js_text(float("nan")) is None


def _infer(assertions: list[Any], record: dict[str, Any] | None = None, **defaults: Any) -> Any:
    return infer(assertions, {"input": "q"}, record or {}, Suite(defaults=defaults))


def test_one_check_defines_the_acceptable_set() -> None:
    found = _infer([{"type": "icontains", "value": "grub"}])
    assert (found.oracle, found.evaluator) == ("acceptable-set", "exact-or-programmatic")
    assert found.expected == {"satisfies": {"type": "contains", "value": "grub", **LOWER}}
    assert found.case == {"passLogic": "promptfoo grades it with: icontains 'grub'"}
    assert "evaluationCriteria" not in found.case


def test_several_checks_must_all_pass() -> None:
    found = _infer(
        [
            {"type": "is-json"},
            {"type": "not-contains", "value": "error"},
            {"type": "contains", "value": "ignored", "weight": 0},
        ]
    )
    assert found.expected == {
        "satisfies": {
            "type": "all",
            "checks": [
                {"type": "is-json"},
                {"type": "not", "check": {"type": "contains", "value": "error"}},
            ],
        }
    }


def test_a_threshold_weighs_the_checks() -> None:
    assertions = [
        {"type": "contains", "value": "a", "weight": 3},
        {"type": "regex", "value": "b"},
        {"type": "is-json", "weight": 0},
    ]
    found = _infer(assertions, {"threshold": 0.75})
    assert found.expected == {
        "satisfies": {
            "type": "weighted",
            "checks": [{"type": "contains", "value": "a"}, {"type": "regex", "pattern": "b"}],
            "weights": [3, 1],
            "threshold": 0.75,
        }
    }
    # equal weights are left out; the defaultTest's threshold applies when the test has none
    even = _infer(assertions[1:2] * 2, None, threshold=0.5)
    assert even.expected["satisfies"] == {
        "type": "weighted",
        "checks": [{"type": "regex", "pattern": "b"}] * 2,
        "threshold": 0.5,
    }


def test_a_threshold_no_share_can_be_is_noted() -> None:
    found = _infer([{"type": "contains", "value": "a"}, {"type": "is-json"}], {"threshold": 2})
    assert found.oracle == "rubric"
    assert any("a threshold of 2" in caveat for caveat in found.caveats)


def test_an_assert_set_is_one_check() -> None:
    found = _infer(
        [
            {
                "type": "assert-set",
                "threshold": 0.5,
                "assert": [{"type": "starts-with", "value": "g"}, {"type": "is-json"}],
            },
            {"type": "assert-set", "assert": [{"type": "contains", "value": "x"}] * 2},
            {"type": "not-regex", "value": "z"},
        ]
    )
    assert found.expected == {
        "satisfies": {
            "type": "all",
            "checks": [
                {
                    "type": "weighted",
                    "checks": [{"type": "starts-with", "value": "g"}, {"type": "is-json"}],
                    "threshold": 0.5,
                },
                {"type": "all", "checks": [{"type": "contains", "value": "x"}] * 2},
                {"type": "not", "check": {"type": "regex", "pattern": "z"}},
            ],
        }
    }


def test_an_assert_set_in_a_test_with_a_threshold_counts_by_its_score() -> None:
    one = {"type": "assert-set", "weight": 2, "threshold": 0, "assert": [{"type": "is-json"}]}
    found = _infer([one, {"type": "contains", "value": "a"}], {"threshold": 0.5})
    assert found.expected["satisfies"] == {
        "type": "weighted",
        "checks": [{"type": "is-json"}, {"type": "contains", "value": "a"}],
        "weights": [2, 1],
        "threshold": 0.5,
    }
    # a set of several adds its mean score to the test's, which no check gives
    several = {
        "type": "assert-set",
        "assert": [{"type": "is-json"}, {"type": "regex", "value": "a"}],
    }
    kept = _infer([several, {"type": "contains", "value": "a"}], {"threshold": 0.5})
    assert kept.oracle == "rubric"
    assert any("mean score" in caveat for caveat in kept.caveats)


def test_code_checks_beside_a_judge_are_its_gate() -> None:
    found = _infer(
        [
            {"type": "llm-rubric", "value": "Is polite"},
            {"type": "icontains", "value": "thanks"},
            {"type": "not-contains", "value": "As an AI"},
        ]
    )
    assert (found.oracle, found.evaluator) == ("rubric", "llm-judge")
    assert found.case["evaluationCriteria"] == ["Is polite"]
    assert found.case["checks"] == [
        {"type": "contains", "value": "thanks", **LOWER},
        {"type": "not", "check": {"type": "contains", "value": "As an AI"}},
    ]
    assert "icontains 'thanks'" in found.case["passLogic"]
    assert "metadata.case.checks" in found.derived
    # a judged reference keeps its answer, with the gate
    factual = _infer([{"type": "factuality", "value": "Paris"}, {"type": "is-json"}])
    assert (factual.oracle, factual.expected) == ("reference-answer", "Paris")
    assert factual.case["checks"] == [{"type": "is-json"}]


def test_a_judge_under_a_threshold_keeps_todays_row_with_a_note() -> None:
    assertions = [{"type": "llm-rubric", "value": "Is polite"}, {"type": "is-json"}]
    found = _infer(assertions, {"threshold": 0.5})
    assert found.oracle == "rubric" and "checks" not in found.case
    assert any("threshold weighs" in caveat for caveat in found.caveats)


def test_other_code_beside_checks_keeps_todays_rubric() -> None:
    found = _infer([{"type": "javascript", "value": "output.length > 2"}, {"type": "is-json"}])
    assert found.oracle == "rubric" and found.evaluator is None
    assert "checks" not in found.case and found.caveats == []


def test_a_single_equality_stays_a_reference_answer() -> None:
    for assertion in (
        {"type": "equals", "value": "Paris"},
        {"type": "equals", "value": {"a": 1}},
        {"type": "levenshtein", "value": "Paris", "threshold": 0.75},
    ):
        found = _infer([assertion])
        assert (found.oracle, found.evaluator) == ("reference-answer", "exact-or-programmatic")
    # promptfoo compares a number as its text: "3.0" is not 3, so it is the check of the text
    number = _infer([{"type": "equals", "value": 3}])
    assert number.expected == {"satisfies": {"type": "equals", "value": "3"}}


def test_an_unmappable_check_keeps_todays_rubric_and_says_why() -> None:
    found = _infer([{"type": "icontains", "value": "a"}, {"type": "contains-json"}])
    assert found.oracle == "rubric" and "expected" not in found.case
    assert any("contains-json" in caveat for caveat in found.caveats)


def test_a_transform_keeps_its_finding() -> None:
    found = _infer(
        [{"type": "icontains", "value": "grub"}], {"options": {"transform": "output.trim()"}}
    )
    assert found.oracle == "rubric"
    assert any("transforms the output" in caveat for caveat in found.caveats)
    # the defaultTest's transform too
    default = _infer([{"type": "is-json"}], None, options={"postprocess": "output.trim()"})
    assert default.oracle == "rubric"


def test_an_assert_scoring_function_decides_the_verdict() -> None:
    found = _infer([{"type": "is-json"}], {"assertScoringFunction": "file://score.js"})
    assert found.oracle == "rubric"
    assert any("assertScoringFunction" in caveat for caveat in found.caveats)


def test_default_test_assertions_run_first(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    suite = {
        "prompts": ["{{q}}"],
        "providers": ["echo"],
        "defaultTest": {"assert": [{"type": "not-icontains", "value": "as an ai"}]},
        "tests": [
            {"vars": {"q": "a"}, "assert": [{"type": "starts-with", "value": "Yes"}]},
            {"vars": {"q": "b"}, "assert": [{"type": "llm-rubric", "value": "Is kind"}]},
            {"vars": {"q": "c"}},
        ],
    }
    config.write_bytes(dump_yaml(suite))
    rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    default = {"type": "not", "check": {"type": "contains", "value": "as an ai", **LOWER}}
    assert rows[0]["expected"] == {
        "satisfies": {"type": "all", "checks": [default, {"type": "starts-with", "value": "Yes"}]}
    }
    assert rows[1]["metadata"]["case"]["checks"] == [default]
    assert rows[2]["expected"] == {"satisfies": default}
    derived = rows[0]["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]
    assert "expected" in derived


def test_an_llm_rubrics_threshold_is_the_rows_pass_threshold() -> None:
    rubric = {"type": "llm-rubric", "value": "is polite", "threshold": 0.8}
    found = infer([rubric], {"input": "q"}, {}, Suite())
    assert found.evaluator == "llm-judge" and found.case["passThreshold"] == 0.8
    # beside a test threshold, the judge's score is weighed with the others: no row threshold
    weighed = infer([rubric], {"input": "q"}, {"threshold": 0.5}, Suite())
    assert "passThreshold" not in weighed.case
    # out of range, or on a judge whose threshold means something else: none
    assert "passThreshold" not in infer([{**rubric, "threshold": 3}], {}, {}, Suite()).case
    geval = {"type": "g-eval", "value": "is polite", "threshold": 0.8}
    assert "passThreshold" not in infer([geval], {}, {}, Suite()).case
