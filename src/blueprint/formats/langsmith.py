"""LangSmith examples: JSON Lines of {id, inputs, outputs, metadata, split} (ExampleCreate)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.atomic import AtomicOutputs
from blueprint.formats.base import ExportResult, SetSource, SourceRow, UnreadableRow, WriteOptions
from blueprint.formats.mapping import NAMESPACE, load_mapping
from blueprint.formats.vendor import (
    ABSENT,
    ExportRow,
    ExportTally,
    export_rows,
    first_json_line,
    imported_row,
    oracle_for_expected,
    payload_of,
    read_json_lines,
    restored_row,
    write_json_lines,
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
    payload = ExportRow(row.data, row.id, row.case, extra).payload(**markers)
    metadata: dict[str, Any] = {NAMESPACE: payload, "oracleType": row.oracle_type}
    metadata["provenance"] = row.case["provenance"]
    if "caseFamily" in row.case:
        metadata["caseFamily"] = row.case["caseFamily"]
    if row.starter:
        metadata["starterExample"] = True
    if row.human_only:
        metadata["humanReview"] = True
    example["metadata"] = metadata
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


class LangsmithCodec:
    name: ClassVar[str] = "langsmith"
    title: ClassVar[str] = "LangSmith examples (JSONL)"
    extensions: ClassVar[tuple[str, ...]] = (".jsonl",)
    lossless: ClassVar[bool] = False
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    def open(self, path: Path) -> SetSource:
        return SetSource(path=path, format=self.name, header=None, rows=self._rows(path))

    def _rows(self, path: Path) -> Iterator[SourceRow | UnreadableRow]:
        for index, item in enumerate(read_json_lines(path)):
            if isinstance(item, UnreadableRow):
                yield UnreadableRow(index, item.line, item.column, item.reason)
                continue
            line, example = item
            if not isinstance(example, dict) or not isinstance(example.get("inputs"), dict):
                yield UnreadableRow(
                    index, line, None, "a LangSmith example is an object with an inputs object"
                )
                continue
            yield SourceRow(index, line, row_from_example(example, index))

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        tally = ExportTally(load_mapping(self.name))
        with AtomicOutputs([path], force=options.force) as outputs:
            handle = outputs.open(path, "wb")

            def examples() -> Iterator[dict[str, Any]]:
                for row in export_rows(rows, self.name):
                    if tally.keep(row, options):
                        tally.written += 1
                        yield example_for(row)

            write_json_lines(handle, examples())
            return tally.finish(header, [path], options)

    def sniff(self, head: bytes) -> bool:
        first = first_json_line(head)
        return isinstance(first, dict) and isinstance(first.get("inputs"), dict)
