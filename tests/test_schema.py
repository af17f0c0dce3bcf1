"""The published schemas: committed, current, and in agreement with the models."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from blueprint.cli.docgen import stale_schemas
from blueprint.core.model import (
    AcceptableSetEnumerated,
    AcceptableSetGraded,
    EvalSet,
    ExpectedFinalState,
    ExpectedToolCalls,
    Row,
)
from blueprint.core.schema import (
    SCHEMA_FILES,
    accepts,
    published_schemas,
    validator_for,
)
from conftest import document, row
from strategies import eval_sets, mutated, rows

SCHEMAS = Path(__file__).parent.parent / "schemas"


def test_committed_schemas_are_current() -> None:
    assert stale_schemas(SCHEMAS) == [], "run: blueprint schema --write schemas"


def test_schemas_declare_dialect_and_id() -> None:
    for name, document_ in published_schemas().items():
        assert document_["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert document_["$id"] == SCHEMA_FILES[name]


def test_closed_objects_in_schema() -> None:
    row_schema = published_schemas()["row.schema.json"]
    assert row_schema["additionalProperties"] is False
    assert row_schema["$defs"]["CaseProfile"]["additionalProperties"] is False
    assert set(row_schema["required"]) == {"id", "input", "metadata"}


def _agree(model: type[BaseModel], schema: str, data: object, subschema: str | None = None) -> None:
    try:
        model.model_validate(data)
        model_ok = True
    except ValidationError:
        model_ok = False
    schema_ok = validator_for(schema, subschema).is_valid(data)
    assert model_ok == schema_ok, (model_ok, schema_ok, data)
    compiled_ok = accepts(schema, subschema)(data)  # the validator's fast path
    assert compiled_ok == schema_ok, (compiled_ok, schema_ok, data)


@given(data=st.data(), original=rows())
def test_row_model_and_schema_agree(data: st.DataObject, original: dict) -> None:
    _agree(Row, "row.schema.json", original)
    _agree(Row, "row.schema.json", data.draw(mutated(original)))


@given(data=st.data(), original=eval_sets(max_rows=2))
def test_set_model_and_schema_agree(data: st.DataObject, original: dict) -> None:
    _agree(EvalSet, "eval-set.schema.json", original)
    _agree(EvalSet, "eval-set.schema.json", data.draw(mutated(original)))


SHAPES: list[tuple[type[BaseModel], str, dict]] = [
    (AcceptableSetEnumerated, "AcceptableSetEnumerated", {"acceptable": ["a", 1]}),
    (AcceptableSetGraded, "AcceptableSetGraded", {"graded": [{"value": "a", "grade": 0.5}]}),
    (ExpectedToolCalls, "ExpectedToolCalls", {"calls": [{"name": "f", "arguments": {"x": 1}}]}),
    (
        ExpectedFinalState,
        "ExpectedFinalState",
        {"checks": [{"kind": "command", "run": "make test", "exitCode": 0}]},
    ),
]


@given(data=st.data(), which=st.sampled_from(SHAPES))
def test_expected_shapes_and_schema_agree(data: st.DataObject, which: tuple) -> None:
    model, name, example = which
    _agree(model, "expected.schema.json", example, name)
    _agree(model, "expected.schema.json", data.draw(mutated(example)), name)


def test_known_disagreements_are_closed() -> None:
    """Where stock jsonschema and pydantic differ, our validator sides with both specs."""
    good = row(
        "a",
        "expected-final-state",
        expected={"checks": [{"kind": "command", "run": "x", "exitCode": 0}]},
    )
    float_exit = row(
        "a",
        "expected-final-state",
        expected={"checks": [{"kind": "command", "run": "x", "exitCode": 0.0}]},
    )
    _agree(ExpectedFinalState, "expected.schema.json", float_exit["expected"], "ExpectedFinalState")
    _agree(ExpectedFinalState, "expected.schema.json", good["expected"], "ExpectedFinalState")
    newline_family = row("a", caseFamily="policy-lookup\n")
    _agree(Row, "row.schema.json", newline_family)
    assert not validator_for("row.schema.json").is_valid(newline_family)
    _agree(EvalSet, "eval-set.schema.json", document(row("a", expected="1")))


def test_the_validator_checks_with_the_shipped_files_which_equal_the_generated_ones() -> None:
    from blueprint.core.schema import _shipped_folder, checking_schemas, published_schemas

    assert _shipped_folder() is not None
    assert checking_schemas() == published_schemas()
