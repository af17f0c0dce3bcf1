"""Braintrust dataset records: JSON Lines of {id, input, expected, metadata, tags}."""

from __future__ import annotations

from typing import Any, ClassVar

from blueprint.formats.mapping import NAMESPACE
from blueprint.formats.vendor import (
    ABSENT,
    HUMAN_REVIEW,
    ExportRow,
    JsonLinesVendorCodec,
    first_json_line,
    imported_row,
    oracle_for_expected,
    payload_of,
    restored_row,
)

_SERVER_KEYS = frozenset(
    {
        "_xact_id",
        "created",
        "span_id",
        "root_span_id",
        "is_root",
        "_pagination_key",
        "origin",
        "dataset_id",
        "project_id",
        "comments",
        "audit_data",
        "facets",
        "classifications",
    }
)
_RECORD_KEYS = frozenset(
    {"id", "input", "expected", "metadata", "tags", "output", "_xact_id", "created"}
)


_KNOWN_KEYS = _RECORD_KEYS | _SERVER_KEYS


def record_for(row: ExportRow) -> dict[str, Any]:
    record: dict[str, Any] = {"id": row.id, "input": row.input}
    if row.has_expected:
        record["expected"] = row.expected
    record["metadata"] = {NAMESPACE: row.payload(), **row.labels()}
    tags = [row.oracle_type, f"provenance:{row.case['provenance']}"]
    if "caseFamily" in row.case:
        tags.append(f"family:{row.case['caseFamily']}")
    if row.evaluator:
        tags.append(f"evaluator:{row.evaluator}")
    if row.starter:
        tags.append("starter-example")
    if row.human_only:
        tags.append(HUMAN_REVIEW)
    record["tags"] = list(dict.fromkeys(tags))
    return record


def row_from_record(record: dict[str, Any], position: int) -> dict[str, Any]:
    """A canonical row from one record: restored exactly, or inferred and flagged."""
    expected = record.get("expected", record.get("output", ABSENT))
    payload = payload_of(record.get("metadata"))
    if payload is not None:
        return restored_row(payload, record.get("id"), record.get("input"), expected)
    derived: dict[str, str] = {}
    row_id = record.get("id")
    if not isinstance(row_id, str) or not row_id:
        row_id = f"record-{position + 1}"
        derived["id"] = "the record has no id; numbered by position"
    if "input" not in record:
        derived["input"] = "the record has no input"
    if expected is ABSENT:
        oracle = "expected-behavior-only"
        derived["metadata.case.oracleType"] = "the record has no expected value"
    else:
        oracle = oracle_for_expected(expected)
        derived["metadata.case.oracleType"] = "inferred from the shape of expected"
    derived["metadata.case.expectedBehavior"] = "Braintrust records carry no behaviour description"
    raw_metadata = record.get("metadata")
    metadata = dict(raw_metadata) if isinstance(raw_metadata, dict) else {}
    if record.get("tags"):
        metadata["tags"] = record["tags"]
    extra = {k: v for k, v in record.items() if k not in _RECORD_KEYS}
    return imported_row(
        row_id=row_id,
        input_value=record.get("input"),
        expected=expected,
        oracle_type=oracle,
        expected_behavior="(imported from Braintrust without a behaviour description)",
        format_name="braintrust",
        derived=derived,
        metadata=metadata,
        vendor_extension={"record": extra} if extra else None,
    )


class BraintrustCodec(JsonLinesVendorCodec):
    name: ClassVar[str] = "braintrust"
    title: ClassVar[str] = "Braintrust dataset records (JSONL)"
    extensions: ClassVar[tuple[str, ...]] = (".jsonl",)
    lossless: ClassVar[bool] = False
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    what: ClassVar[str] = "a Braintrust record"

    def to_row(self, record: dict[str, Any], position: int) -> dict[str, Any]:
        return row_from_record(record, position)

    def to_record(self, row: ExportRow) -> dict[str, Any]:
        return record_for(row)

    def sniff(self, head: bytes) -> bool:
        first = first_json_line(head)
        if not isinstance(first, dict) or "input" not in first or not set(first) <= _KNOWN_KEYS:
            return False
        metadata = first.get("metadata")
        if isinstance(metadata, dict) and isinstance(metadata.get("case"), dict):
            return False  # a canonical row
        # a record Braintrust wrote, or one of ours; a bare {id, input, metadata} could be a
        # canonical row that lost its case profile, so it is not claimed
        return (
            payload_of(metadata) is not None
            or "tags" in first
            or bool(set(first) & _SERVER_KEYS)
            or "metadata" not in first
        )
