"""DeepEval goldens: a JSON array loadable by EvaluationDataset.add_goldens_from_json_file."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint import jsonvalues
from blueprint.errors import ParseError
from blueprint.formats._io import read_json_lines, read_text
from blueprint.formats.base import ExportResult, SetSource, WriteOptions
from blueprint.formats.mapping import NAMESPACE
from blueprint.formats.vendor import (
    ABSENT,
    STARTER_NOTE,
    ExportRow,
    Framing,
    Records,
    imported_row,
    payload_of,
    read_json_document,
    restored_row,
    vendor_rows,
    write_export,
)

#: keys only a golden has; their presence, with "input", tells a goldens file apart
_GOLDEN_KEYS: Final = (
    "expected_output",
    "actual_output",
    "retrieval_context",
    "expected_tools",
    "tools_called",
    "additional_metadata",
    "source_file",
    "custom_column_key_values",
)
#: row metadata keys with a native DeepEval field, when they hold a list of strings
CONTEXT_KEYS: Final = ("context", "retrieval_context")


def _text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def golden_for(row: ExportRow) -> dict[str, Any]:
    extra = dict(row.extra)
    golden: dict[str, Any] = {}
    markers: dict[str, Any] = {}
    if isinstance(row.input, str):
        golden["input"] = row.input
    else:
        golden["input"] = jsonvalues.dumps_text(row.input)
        markers["input"] = row.input
    if row.oracle_type == "reference-answer" and isinstance(row.expected, str):
        golden["expected_output"] = row.expected
    elif row.has_expected:
        if row.oracle_type == "reference-answer":
            golden["expected_output"] = jsonvalues.dumps_text(row.expected)
        markers["expected"] = row.expected
    if row.oracle_type == "expected-tool-calls":
        golden["expected_tools"] = [
            {"name": call["name"], "type": "FUNCTION", "inputParameters": call["arguments"]}
            for call in row.expected["calls"]
        ]
    for key in CONTEXT_KEYS:
        if _text_list(extra.get(key)):
            golden[key] = extra.pop(key)
    golden["name"] = row.id
    behaviour = row.case["expectedBehavior"]
    golden["comments"] = f"{STARTER_NOTE}: {behaviour}" if row.starter else behaviour
    metadata: dict[str, Any] = {
        NAMESPACE: replace(row, extra=extra).payload(**markers),
        **row.labels(),
    }
    golden["additional_metadata"] = metadata
    return golden


def row_from_golden(golden: dict[str, Any], position: int) -> dict[str, Any]:
    payload = payload_of(golden.get("additional_metadata"))
    if payload is not None:
        value = payload["input"] if "input" in payload else golden.get("input")
        if "expected" in payload:
            expected = payload["expected"]
        elif golden.get("expected_output") is not None:
            expected = golden["expected_output"]
        else:
            expected = ABSENT
        bare = {k: v for k, v in payload.items() if k not in ("input", "expected")}
        row = restored_row(bare, golden.get("name"), value, expected)
        for key in CONTEXT_KEYS:
            if golden.get(key) is not None:
                row["metadata"][key] = golden[key]
        return row
    return _native_row(golden, position)


def _native_row(golden: dict[str, Any], position: int) -> dict[str, Any]:
    derived: dict[str, str] = {}
    row_id = golden.get("name")
    if not isinstance(row_id, str) or not row_id:
        row_id = f"golden-{position + 1}"
        derived["id"] = "the golden has no name; numbered by position"
    case: dict[str, Any] = {}
    conversational = bool(golden.get("scenario"))
    if conversational:
        value: Any = {"scenario": golden["scenario"], "turns": golden.get("turns") or []}
    else:
        value = golden.get("input")
    tools = golden.get("expected_tools")
    expected: Any = ABSENT
    if golden.get("expected_output") is not None:
        oracle, expected = "reference-answer", golden["expected_output"]
        derived["metadata.case.oracleType"] = "the golden has an expected_output"
    elif isinstance(tools, list) and tools:
        oracle = "expected-tool-calls"
        expected = {
            "calls": [
                {
                    "name": str(tool.get("name", "")),
                    "arguments": tool.get("inputParameters") or tool.get("input_parameters") or {},
                }
                for tool in tools
                if isinstance(tool, dict)
            ],
            "order": "any",
        }
        derived["metadata.case.oracleType"] = "the golden has expected_tools"
        derived["expected.order"] = "DeepEval does not say whether the tool order matters"
    else:
        oracle = "expected-behavior-only"
        derived["metadata.case.oracleType"] = "the golden has no expected output or tools"
    behaviour = golden.get("expected_outcome") if conversational else None
    if not isinstance(behaviour, str) or not behaviour:
        behaviour = "(imported from DeepEval without a behaviour description)"
        derived["metadata.case.expectedBehavior"] = (
            "DeepEval goldens carry no behaviour description"
        )
    if not isinstance(value, str):
        derived["input"] = "a golden's input is text; this one is not"
    metadata: dict[str, Any] = {}
    additional = golden.get("additional_metadata")
    if isinstance(additional, dict):
        metadata.update(additional)
    elif additional is not None:
        metadata["additional_metadata"] = additional
    for key in (*CONTEXT_KEYS, "comments", "source_file", "custom_column_key_values"):
        if golden.get(key) not in (None, [], ""):
            value_of_key = golden[key]
            if key in CONTEXT_KEYS and isinstance(value_of_key, str):
                value_of_key = value_of_key.split("|")  # DeepEval's own reading of a joined list
            metadata[key] = value_of_key
    return imported_row(
        row_id=row_id,
        input_value=value,
        expected=expected,
        oracle_type=oracle,
        expected_behavior=behaviour,
        format_name="deepeval",
        derived=derived,
        case=case,
        metadata=metadata,
    )


def _csv_goldens(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Goldens from DeepEval's CSV layout: lists joined with "|", tools and metadata as JSON."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.DictReader(read_text(path).splitlines(keepends=True))
    for record in reader:
        golden: dict[str, Any] = {}
        for key, cell in record.items():
            if key is None or cell in (None, ""):
                continue
            if key in CONTEXT_KEYS:
                golden[key] = cell.split("|")
            elif key in ("expected_tools", "tools_called", "additional_metadata", "turns"):
                try:
                    golden[key] = jsonvalues.loads(cell)
                except jsonvalues.JSONError as error:
                    raise ParseError(path, f"{key}: {error.reason}", line=reader.line_num) from None
            else:
                golden[key] = cell
        yield reader.line_num, golden


_JSON_ARRAY: Final = Framing(
    opening=b"[", first=b"\n  ", between=b",\n  ", closing=b"\n]\n", empty=b"]\n"
)


class DeepevalCodec:
    name: ClassVar[str] = "deepeval"
    title: ClassVar[str] = "DeepEval goldens (JSON; reads JSON, JSONL, CSV)"
    extensions: ClassVar[tuple[str, ...]] = (".json",)
    lossless: ClassVar[bool] = False
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    def open(self, path: Path) -> SetSource:
        suffix = path.suffix.lower()
        items: Records
        if suffix == ".jsonl":
            items = read_json_lines(path)
        elif suffix == ".csv":
            items = list(_csv_goldens(path))
        else:
            document = read_json_document(path)
            if not isinstance(document, list):
                raise ParseError(path, "a DeepEval goldens file is a JSON array of goldens")
            items = [(None, golden) for golden in document]
        rows = vendor_rows(items, row_from_golden, what="a golden")
        return SetSource(path=path, format=self.name, header=None, rows=rows)

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        def encode(row: ExportRow) -> bytes:
            return jsonvalues.dumps(golden_for(row))

        return write_export(
            self.name, header, rows, path, options, encode=encode, framing=_JSON_ARRAY
        )

    def sniff(self, head: bytes) -> bool:
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        first = text[:4096]
        return (
            text.startswith(b"[")
            and b'"input"' in first
            and any(f'"{key}"'.encode() in first for key in _GOLDEN_KEYS)
        )
