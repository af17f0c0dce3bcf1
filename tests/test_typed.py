"""The typed row structures: generated from the published schema, and in agreement with it and
with the pydantic models on every row the tests can make or find."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from blueprint.core.model import Row
from blueprint.core.schema import accepts
from blueprint.core.typed import UntranslatableSchema, _Translator, fits_row, row_types
from conftest import row
from strategies import mutated, rows

ROOT = Path(__file__).parent.parent


def _verdicts(value: Any) -> tuple[bool, bool, bool]:
    try:
        Row.model_validate(value)
        model_ok = True
    except ValidationError:
        model_ok = False
    return fits_row(value), accepts("row.schema.json")(value), model_ok


def _agree(value: Any) -> None:
    typed_ok, schema_ok, model_ok = _verdicts(value)
    assert typed_ok == schema_ok == model_ok, (typed_ok, schema_ok, model_ok, value)


@given(data=st.data(), original=rows())
def test_typed_structures_schema_and_models_agree(data: st.DataObject, original: dict) -> None:
    _agree(original)
    _agree(data.draw(mutated(original)))
    _agree(data.draw(mutated(data.draw(mutated(original)))))


def _objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def _fixture_rows() -> list[Any]:
    """Every object in the repository's JSON and JSON Lines files that looks like a row (an
    ``id`` beside ``metadata``), valid or not."""
    found = []
    for folder in ("tests/fixtures", "examples", "packs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".json", ".jsonl") or not path.is_file():
                continue
            text = path.read_text("utf-8", errors="replace")
            lines = text.splitlines() if path.suffix == ".jsonl" else [text]
            for line in lines:
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                found.extend(item for item in _objects(value) if {"id", "metadata"} <= set(item))
    return found


FIXTURE_ROWS = _fixture_rows()


def test_fixtures_hold_rows_of_both_kinds() -> None:
    verdicts = [fits_row(value) for value in FIXTURE_ROWS]
    assert verdicts.count(True) > 50
    assert verdicts.count(False) > 5


@pytest.mark.parametrize("index", range(len(FIXTURE_ROWS)))
def test_typed_structures_agree_on_every_fixture_row(index: int) -> None:
    _agree(FIXTURE_ROWS[index])


@pytest.mark.parametrize(
    "value",
    [
        row("a", caseFamily="policy-lookup\n"),  # ECMA-262 $: no final newline
        row("a", caseFamily="Policy"),
        row("a", evaluator="LLM-judge"),
        row("a", reversibility="R4"),
        row("a", unacceptableBehavior=["x", 1]),
        row("a", extensions={"tool": "not an object"}),
        {**row("a"), "id": ""},
        {**row("a"), "extra": 1},
        {**row("a"), "metadata": {"split": "test"}},
        {**row("a"), "metadata": {"case": {**row("a")["metadata"]["case"], "caseId": ""}}},
        {**row("a"), "metadata": {"case": {**row("a")["metadata"]["case"], "unknown": 1}}},
        {**row("a"), "metadata": {"case": {**row("a")["metadata"]["case"], "actor": True}}},
    ],
)
def test_refused_rows_are_refused_by_all_three(value: dict[str, Any]) -> None:
    assert _verdicts(value) == (False, False, False)


def test_a_set_rows_case_and_open_metadata_keys_are_accepted() -> None:
    value = row("a", caseFamily="policy-lookup", extensions={"tool": {"k": [1, {"x": None}]}})
    value["metadata"]["trace"] = {"anything": [1, 2.5, None, {"deep": True}]}
    assert _verdicts(value) == (True, True, True)


def test_the_row_structure_keeps_open_objects_whole() -> None:
    types = row_types()
    assert types.row.__struct_fields__ == ("id", "input", "expected", "metadata")
    assert [attribute for attribute, _ in types.open_fields] == ["metadata"]
    decoded = msgspec.json.decode(
        json.dumps(row("a") | {"metadata": {**row("a")["metadata"], "trace": 1}}).encode(),
        type=types.row,
    )
    assert decoded.metadata["trace"] == 1  # a dict: nothing of metadata is dropped


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        ({"type": "integer"}, 3, [3.0, True, "3"]),
        ({"type": "string", "minLength": 2}, "ab", ["a", 1]),
        ({"enum": ["a", "b"], "type": "string"}, "a", ["c", None]),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, None, [1, []]),
        ({"type": "array", "items": {"type": "string"}, "minItems": 1}, ["x"], [[], [1]]),
        ({"type": "string", "pattern": "^[a-z]+$"}, "ab", ["ab\n", "A"]),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, {"a": 1}, [{"a": "1"}]),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "required": ["a"],
                "additionalProperties": False,
            },
            {"a": 1},
            [{}, {"a": 1, "b": 2}],
        ),
    ],
)
def test_each_keyword_translates(schema: dict[str, Any], good: Any, bad: list[Any]) -> None:
    kind = _Translator({}).type_of(schema, "test")
    assert msgspec.to_builtins(msgspec.convert(good, kind)) == good
    for value in bad:
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(value, kind)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "email"},
        {"oneOf": [{"type": "string"}]},
        {"$ref": "#/$defs/Missing"},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
        {"description": "no type at all"},
    ],
)
def test_a_keyword_the_translation_does_not_know_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(UntranslatableSchema):
        _Translator({}).type_of(schema, "test")
