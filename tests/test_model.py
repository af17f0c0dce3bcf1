"""The canonical models: strict types, closed keys, the enums exactly as the spec lists them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from blueprint.core.model import (
    EVALUATOR_TYPES,
    ORACLE_TYPES,
    PROVENANCES,
    CaseProfile,
    EvalSet,
    ExpectedFinalState,
    ExpectedToolCalls,
    Row,
    case_profile_fields,
    dump_row,
)
from conftest import document, row


def test_enums_match_the_spec() -> None:
    assert ORACLE_TYPES == (
        "reference-answer",
        "acceptable-set",
        "rubric",
        "expected-tool-calls",
        "expected-final-state",
        "expected-behavior-only",
    )
    assert set(EVALUATOR_TYPES) == {
        "exact-or-programmatic",
        "rubric-human",
        "llm-judge",
        "pairwise-preference",
        "trajectory-or-state-check",
        "human-expert",
    }
    assert set(PROVENANCES) == {
        "observed-incident",
        "production-sample",
        "expert-authored",
        "starter-example",
        "overlay-starter-needs-expert-validation",
        "synthetic-perturbation",
        "imported",
    }


def test_case_profile_fields_in_spec_order() -> None:
    assert case_profile_fields() == [
        "caseId",
        "oracleType",
        "expectedBehavior",
        "provenance",
        "scenario",
        "actor",
        "unacceptableBehavior",
        "evaluationCriteria",
        "reversibility",
        "blastRadius",
        "linkedConcerns",
        "evaluator",
        "toolActionExpectation",
        "escalationExpectation",
        "reviewerExpertise",
        "passLogic",
        "version",
        "retirementCondition",
        "caseFamily",
        "checks",
        "normalize",
        "tolerance",
        "passThreshold",
        "extensions",
    ]


def test_valid_set_loads() -> None:
    loaded = EvalSet.model_validate(document(row("a"), row("b", "rubric")))
    assert [r.id for r in loaded.rows] == ["a", "b"]
    assert loaded.rows[1].metadata.case.oracle_type == "rubric"


@pytest.mark.parametrize(
    ("mutate", "location"),
    [
        (lambda r: r.update(id=1), ("id",)),
        (lambda r: r["metadata"]["case"].update(caseId=7), ("metadata", "case", "caseId")),
        (lambda r: r["metadata"]["case"].update(version=2), ("metadata", "case", "version")),
        (lambda r: r.update(score=3), ("score",)),
        (lambda r: r["metadata"]["case"].update(weight=1), ("metadata", "case", "weight")),
        (lambda r: r["metadata"]["case"].update(oracleType="golden"), None),
        (lambda r: r["metadata"]["case"].update(reversibility="R4"), None),
        (lambda r: r["metadata"]["case"].update(caseFamily="Policy Lookup"), None),
        (lambda r: r["metadata"]["case"].update(caseFamily="policy-lookup\n"), None),
        (lambda r: r["metadata"]["case"].pop("provenance"), None),
        (lambda r: r["metadata"].pop("case"), None),
        (lambda r: r.update(id=""), None),
    ],
)
def test_strict_row_rejects(mutate, location) -> None:
    data = row("a")
    mutate(data)
    with pytest.raises(ValidationError) as caught:
        Row.model_validate(data)
    if location is not None:
        assert caught.value.errors()[0]["loc"] == location


def test_no_coercion_keeps_strings_strings() -> None:
    data = row("a", expected="1", version="2")
    loaded = Row.model_validate(data)
    assert loaded.expected == "1"
    assert loaded.metadata.case.version == "2"
    assert dump_row(loaded) == data


def test_free_form_metadata_is_kept_as_is() -> None:
    data = row("a")
    data["metadata"]["source"] = {"ticket": "OPS-1", "seen": [1, "1", None]}
    assert dump_row(Row.model_validate(data)) == data


def test_absent_expected_stays_absent_and_null_stays_null() -> None:
    absent = row("a", "rubric")
    assert "expected" not in dump_row(Row.model_validate(absent))
    null = row("b", expected=None)
    assert dump_row(Row.model_validate(null))["expected"] is None


def test_extensions_are_namespaces_of_objects() -> None:
    CaseProfile.model_validate(
        {**row("a")["metadata"]["case"], "extensions": {"acme": {"anything": [1, {"x": None}]}}}
    )
    with pytest.raises(ValidationError):
        CaseProfile.model_validate({**row("a")["metadata"]["case"], "extensions": {"acme": 1}})


def test_expected_shapes() -> None:
    ExpectedToolCalls.model_validate({"calls": [{"name": "lookup", "arguments": {}}]})
    with pytest.raises(ValidationError):
        ExpectedToolCalls.model_validate({"calls": [{"name": "lookup"}]})
    with pytest.raises(ValidationError):
        ExpectedToolCalls.model_validate({"calls": [], "order": "sometimes"})
    ExpectedFinalState.model_validate(
        {"checks": [{"kind": "command", "run": "true", "exitCode": 0}]}
    )
    with pytest.raises(ValidationError):
        ExpectedFinalState.model_validate(
            {"checks": [{"kind": "command", "run": "true", "exitCode": 0.0}]}
        )
    with pytest.raises(ValidationError):
        ExpectedFinalState.model_validate({"checks": []})
