"""LangSmith examples: JSON Lines of {id, inputs, outputs, metadata, split} (ExampleCreate)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any, ClassVar, Final

from blueprint.formats.mapping import NAMESPACE
from blueprint.formats.vendor import (
    ABSENT,
    ExportRow,
    JsonLinesVendorCodec,
    first_json_line,
    imported_row,
    oracle_for_expected,
    payload_of,
    restored_row,
)

#: the namespace every example id is derived in: the same row id always gives the same UUID
ID_NAMESPACE: Final = uuid.uuid5(uuid.NAMESPACE_URL, "urn:blueprint:row")


def example_id(row_id: str) -> str:
    return str(uuid.uuid5(ID_NAMESPACE, row_id))


def _is_split(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    )


def example_for(row: ExportRow) -> dict[str, Any]:
    markers: dict[str, Any] = {}
    if isinstance(row.input, dict):
        inputs = row.input
    else:
        inputs = {"input": row.input}
        markers["input"] = "inputs.input"
    example: dict[str, Any] = {"id": example_id(row.id), "inputs": inputs}
    if row.oracle_type == "reference-answer":
        example["outputs"] = {"output": row.expected}
        markers["expected"] = "outputs.output"
    elif row.has_expected:
        example["outputs"] = row.expected
        markers["expected"] = "outputs"
    else:
        markers["expected"] = "none"
        criteria = row.case.get("evaluationCriteria") or []
        if criteria:
            example["outputs"] = {
                "assertions": [
                    {"key": f"criterion-{number}", "comment": text}
                    for number, text in enumerate(criteria, start=1)
                ]
            }
    extra = dict(row.extra)
    split = extra.pop("split", None)
    payload = replace(row, extra=extra).payload(**markers)
    example["metadata"] = {NAMESPACE: payload, **row.labels()}
    if _is_split(split):
        example["split"] = split
    elif split is not None or "split" in row.extra:
        payload.setdefault("metadata", {})["split"] = split
    return example


def row_from_example(example: dict[str, Any], position: int) -> dict[str, Any]:
    inputs = example.get("inputs")
    outputs = example.get("outputs", ABSENT)
    payload = payload_of(example.get("metadata"))
    if payload is not None:
        wrapped = payload.get("input") == "inputs.input" and isinstance(inputs, dict)
        value = inputs.get("input") if wrapped and isinstance(inputs, dict) else inputs
        where = payload.get("expected")
        if where == "outputs.output" and isinstance(outputs, dict):
            expected = outputs.get("output")
        elif where == "outputs":
            expected = outputs
        else:
            expected = ABSENT
        bare = {k: v for k, v in payload.items() if k not in ("input", "expected")}
        row = restored_row(bare, example.get("id"), value, expected)
        if "split" in example:
            row["metadata"]["split"] = example["split"]
        return row
    derived: dict[str, str] = {}
    row_id = example.get("id")
    if not isinstance(row_id, str) or not row_id:
        row_id = f"example-{position + 1}"
        derived["id"] = "the example has no id; numbered by position"
    case: dict[str, Any] = {}
    assertions = outputs.get("assertions") if isinstance(outputs, dict) else None
    if outputs is ABSENT or outputs is None or outputs == {}:
        oracle, expected = "expected-behavior-only", ABSENT
        derived["metadata.case.oracleType"] = "the example has no outputs"
    elif isinstance(assertions, list) and set(outputs) == {"assertions"}:
        oracle, expected = "rubric", ABSENT
        case["evaluationCriteria"] = [
            str(item.get("comment") or item.get("key")) if isinstance(item, dict) else str(item)
            for item in assertions
        ]
        derived["metadata.case.oracleType"] = "outputs hold only assertions"
    else:
        expected = outputs
        oracle = oracle_for_expected(outputs)
        derived["metadata.case.oracleType"] = "inferred from the shape of outputs"
    derived["metadata.case.expectedBehavior"] = "LangSmith examples carry no behaviour description"
    raw_metadata = example.get("metadata")
    metadata = dict(raw_metadata) if isinstance(raw_metadata, dict) else {}
    if "split" in example:
        metadata["split"] = example["split"]
    return imported_row(
        row_id=row_id,
        input_value=inputs,
        expected=expected,
        oracle_type=oracle,
        expected_behavior="(imported from LangSmith without a behaviour description)",
        format_name="langsmith",
        derived=derived,
        case=case,
        metadata=metadata,
    )


def _inputs_problem(example: dict[str, Any]) -> str | None:
    if isinstance(example.get("inputs"), dict):
        return None
    return "a LangSmith example has an inputs object"


class LangsmithCodec(JsonLinesVendorCodec):
    name: ClassVar[str] = "langsmith"
    title: ClassVar[str] = "LangSmith examples (JSONL)"
    extensions: ClassVar[tuple[str, ...]] = (".jsonl",)
    lossless: ClassVar[bool] = False
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    what: ClassVar[str] = "a LangSmith example"

    def to_row(self, record: dict[str, Any], position: int) -> dict[str, Any]:
        return row_from_example(record, position)

    def to_record(self, row: ExportRow) -> dict[str, Any]:
        return example_for(row)

    def problem(self, record: dict[str, Any]) -> str | None:
        return _inputs_problem(record)

    def sniff(self, head: bytes) -> bool:
        first = first_json_line(head)
        return isinstance(first, dict) and isinstance(first.get("inputs"), dict)
