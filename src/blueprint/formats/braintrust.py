"""Braintrust dataset records: {id, input, expected, metadata, tags}, JSON Lines or an array."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.formats._io import read_json_lines
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.sniffing import (
    BRAINTRUST_STORED,
    Fit,
    first_line_object,
    foreign_marks,
    json_head,
)
from blueprint.formats.vendor import (
    HUMAN_REVIEW,
    ExportRow,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    extras_of,
    imported_row,
    json_array_records,
    oracle_for_expected,
    payload_of,
)

#: fields Braintrust's server adds to a stored record
SERVER_KEYS: Final = frozenset(
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
        "upsert_id",
        "trial_count",
    }
)
RECORD_KEYS: Final = frozenset({"id", "input", "expected", "metadata", "tags", "output"})

_SHAPE: Final = NativeShape(
    mapped={
        "id": ("id",),
        "input": ("input",),
        "expected": ("expected", "case.oracleType"),
        "output": ("expected", "case.oracleType"),
        "metadata": ("extras",),
    },
    grading=("expected", "output"),
)


class BraintrustCodec(VendorCodec):
    name: ClassVar[str] = "braintrust"
    title: ClassVar[str] = "Braintrust dataset records (JSONL, or a JSON array)"
    read_extensions: ClassVar[tuple[str, ...]] = (".jsonl", ".json")
    write_forms: ClassVar[dict[str, str]] = {".jsonl": "jsonl", ".json": "json"}
    refused_forms: ClassVar[dict[str, str]] = {
        ".csv": "a CSV cell holds text only, so Braintrust's importer cannot tell a number or"
        " an object from its text; write .jsonl"
    }
    what: ClassVar[str] = "a Braintrust record"
    shape: ClassVar[NativeShape] = _SHAPE

    def records(self, path: Path) -> Records:
        if path.suffix.lower() == ".json":
            return json_array_records(path, "Braintrust record")
        return read_json_lines(path)

    # --- reading -----------------------------------------------------------------------------

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        expected = record.get("expected", record.get("output", ABSENT))
        return Values(
            input=record.get("input", ABSENT),
            expected=expected,
            extras=extras_of(record.get("metadata")) if native_mode else {},
        )

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {}
        row_id = record.get("id")
        if not isinstance(row_id, str) or not row_id:
            row_id = f"record-{position + 1}"
            derived["id"] = "the record has no id; numbered by position"
        values = self.values_of(record, True, suite)
        value = values.input
        if value is ABSENT:
            value = None
            derived["input"] = "the record has no input"
        if values.expected is ABSENT:
            oracle = "expected-behavior-only"
            derived["metadata.case.oracleType"] = "the record has no expected value"
        else:
            oracle = oracle_for_expected(values.expected)
            derived["metadata.case.oracleType"] = "inferred from the shape of expected"
        derived["metadata.case.expectedBehavior"] = (
            "Braintrust records carry no behaviour description"
        )
        return imported_row(
            row_id=row_id,
            input_value=value,
            expected=values.expected,
            oracle_type=oracle,
            expected_behavior="(imported from Braintrust without a behaviour description)",
            format_name=self.name,
            derived=derived,
            metadata=values.extras,
        )

    # --- writing -----------------------------------------------------------------------------

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        record: dict[str, Any] = {"id": row.id, "input": row.input}
        if row.has_expected:
            record["expected"] = row.expected
        record["metadata"] = row.labels()
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

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        record: dict[str, Any] = {"id": row.id, "input": row.input}
        if row.has_expected:
            record["expected"] = row.expected
        if row.extra:
            record["metadata"] = dict(row.extra)
        return record

    def sniff(self, path: Path, head: bytes) -> Fit:
        if path.suffix.lower() == ".json":
            outline = json_head(head)
            keys = set(outline.keys) if outline.kind == "array" else set()
            first = outline.first
        else:
            first = first_line_object(head)
            keys = set(first) if isinstance(first, dict) else set()
        why = "a Braintrust record has input and expected, metadata or tags (or server fields)"
        if not keys & {"input", "expected"} or keys & _OTHER_ANSWERS:
            return Fit.no(why)
        metadata = first.get("metadata") if isinstance(first, dict) else None
        if isinstance(metadata, dict) and isinstance(metadata.get("case"), dict):
            return Fit.no("a row with a case profile is a Blueprint row, not a record")
        if payload_of(metadata) is not None or keys & _STORED_MARKS:
            return Fit.yes()  # written by Blueprint, or stored by Braintrust's server
        if keys <= RECORD_KEYS | SERVER_KEYS:
            return Fit.yes()
        return Fit.no(why)

    def sniff_named(self, path: Path, head: bytes) -> Fit:
        """Whether a file named as Braintrust records is one: more loosely than detection, a
        record needs none of its keys (every field of a record is optional, and one with
        fields of its own is read as such when named); only another format's answer key
        (OpenAI Evals' ideal, Inspect's target, DeepEval's expected_output, a chat
        transcript's messages...) without an expected value refuses it."""
        if path.suffix.lower() == ".json":
            outline = json_head(head)
            keys = set(outline.keys) if outline.kind == "array" else set()
        else:
            first = first_line_object(head)
            keys = set(first) if isinstance(first, dict) else set()
        return foreign_marks(keys, self.name)


#: the answer keys of other formats' records that share the input key (Inspect's target,
#: OpenAI Evals' ideal and criteria), which a Braintrust record never has
_OTHER_ANSWERS: Final = frozenset({"target", "ideal", "criteria"})

#: fields only a record Braintrust stored has (its UI's and API's exports)
_STORED_MARKS: Final = BRAINTRUST_STORED | {"project_id", "dataset_id"}
