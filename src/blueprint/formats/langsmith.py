"""LangSmith examples: {id, inputs, outputs, metadata, split}, as JSON Lines or a JSON array.

Each line is what ``Client.create_examples`` takes (``ExampleCreate``). Example ids are UUIDs:
an imported example keeps its own; a row authored in Blueprint gets a UUID derived from the
set's name and the row's id, so two sets never share example ids.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_json_lines
from blueprint.formats.base import SetSource
from blueprint.formats.canonical_json import element_lines
from blueprint.formats.native import ABSENT, NativeShape, same
from blueprint.formats.sniffing import Fit, first_line_object, json_head
from blueprint.formats.vendor import (
    ExportRow,
    Framing,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    extras_of,
    imported_row,
    oracle_for_expected,
    read_json_document,
    read_json_text,
)
from blueprint.io import jsonvalues

#: the namespace example ids are derived in: one set and row id always give the same UUID
ID_NAMESPACE: Final = uuid.uuid5(uuid.NAMESPACE_URL, "urn:blueprint:row")

#: keys LangSmith's example records may carry besides inputs and outputs
EXAMPLE_KEYS: Final = frozenset(
    {
        "id",
        "inputs",
        "outputs",
        "reference_outputs",
        "metadata",
        "split",
        "created_at",
        "modified_at",
        "dataset_id",
        "source_run_id",
        "attachments",
        "name",
    }
)


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False


def example_id(row_id: str, set_name: str) -> str:
    """The UUID an example gets: the row id itself when it is a UUID (an imported example's),
    else one derived from the set's name and the row id."""
    if _is_uuid(row_id):
        return row_id
    return str(uuid.uuid5(ID_NAMESPACE, f"{set_name}\x00{row_id}"))


def _is_split(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    )


def _dataset_head(
    header: dict[str, Any], made_up: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The dataset object an imported LangSmith dataset file had around its examples: its
    keys before the examples, and after them; None for a set that came from no such file."""
    extensions = header.get("extensions")
    ours = extensions.get("langsmith") if isinstance(extensions, dict) else None
    if not isinstance(ours, dict) or not isinstance(ours.get("dataset"), dict):
        return None
    head = {k: v for k, v in ours["dataset"].items() if k != "examples"}
    for key in ("name", "description"):
        # the set's own name and description, unless a reader made them up
        if key in header and key not in head and key not in made_up:
            head[key] = header[key]
    order = ours.get("keys")
    order = [key for key in order if isinstance(key, str)] if isinstance(order, list) else []
    at = order.index("examples") if "examples" in order else len(order)
    before = {key: head[key] for key in order[:at] if key in head}
    after = {key: head[key] for key in order[at:] if key in head}
    rest = {key: value for key, value in head.items() if key not in before and key not in after}
    return {**before, **rest}, after


def _wrapper(path: Path) -> Any:
    if path.suffix.lower() != ".json":
        return None
    document = read_json_document(path)
    if isinstance(document, dict):
        return {key: value for key, value in document.items() if key != "examples"}
    return None


def _outputs(row: ExportRow, *, native: bool) -> Any:
    """The example's outputs for a row; ABSENT when it has none."""
    if row.oracle_type == "reference-answer":
        if native and isinstance(row.expected, dict):
            return row.expected  # an imported example's outputs, as they were
        return {"output": row.expected}
    if row.has_expected:
        return row.expected
    criteria = row.case.get("evaluationCriteria") or []
    if criteria:
        return {
            "assertions": [
                {"key": f"criterion-{number}", "comment": text}
                for number, text in enumerate(criteria, start=1)
            ]
        }
    return ABSENT


_SHAPE: Final = NativeShape(
    mapped={
        "id": ("id",),
        "inputs": ("input",),
        "outputs": (
            "expected",
            "case.oracleType",
            "case.evaluationCriteria",
        ),
        # what newer SDKs call outputs; a record that uses it keeps it
        "reference_outputs": (
            "expected",
            "case.oracleType",
            "case.evaluationCriteria",
        ),
        "metadata": ("extras",),
        "split": ("extras",),
    },
    grading=("outputs", "reference_outputs"),
)


class LangsmithCodec(VendorCodec):
    name: ClassVar[str] = "langsmith"
    title: ClassVar[str] = "LangSmith examples (JSONL, or a JSON array)"
    read_extensions: ClassVar[tuple[str, ...]] = (".jsonl", ".json")
    write_forms: ClassVar[dict[str, str]] = {".jsonl": "jsonl", ".json": "json"}
    refused_forms: ClassVar[dict[str, str]] = {
        ".csv": "LangSmith parses uploaded CSV on its server, by rules it does not publish;"
        " write .jsonl and load it with Client.create_examples"
    }
    what: ClassVar[str] = "a LangSmith example"
    shape: ClassVar[NativeShape] = _SHAPE

    def records(self, path: Path) -> Records:
        return self._read(path)[1]

    def open(self, path: Path) -> SetSource:
        header, records = self._read(path)
        return self.source(path, header, self.rows(records))

    def _read(self, path: Path) -> tuple[dict[str, Any] | None, Records]:
        """The set-level fields and the examples of a file, read once. A dataset object
        ({name, description, examples}) gives the set its name and description; its other
        keys are kept so the export writes the same object."""
        if path.suffix.lower() != ".json":
            return None, read_json_lines(path)
        document, text = read_json_text(path)
        if not isinstance(document, dict) or not isinstance(document.get("examples"), list):
            if not isinstance(document, list):
                raise ParseError(
                    path,
                    "a JSON file of LangSmith examples is an array of them, or a dataset"
                    " object with an examples array",
                )
            return None, list(zip(element_lines(text, len(document)), document, strict=True))
        examples = document["examples"]
        lines = element_lines(text, len(examples), "examples")
        del text  # a large file should not stay in memory twice
        header: dict[str, Any] = {}
        for key in ("name", "description"):
            if isinstance(document.get(key), str) and document[key]:
                header[key] = document[key]
        rest = {k: v for k, v in document.items() if k not in header and k != "examples"}
        header["extensions"] = {"langsmith": {"dataset": rest, "keys": list(document)}}
        return header, list(zip(lines, examples, strict=True))

    def framing(self, path: Path, context: WriteContext) -> Framing:
        parts = _dataset_head(context.header, context.options.derived_fields)
        if context.form != "json" or parts is None:
            return super().framing(path, context)
        before, after = parts
        start = jsonvalues.dumps(before)[:-1]
        opening = (start + b', "examples": [') if before else b'{"examples": ['
        end = b"]" + (b", " + jsonvalues.dumps(after)[1:] if after else b"}")
        return Framing(
            opening=opening,
            first=b"\n  ",
            between=b",\n  ",
            closing=b"\n" + end + b"\n",
            empty=end + b"\n",
        )

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        if context.form != "json" or _dataset_head(header) is None:
            return set()
        written = {"extensions.langsmith"}
        return written | {key for key in ("name", "description") if key in header}

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        changes = []
        if not same(_wrapper(original), _wrapper(exported)):
            changes.append("the dataset object around the examples changed")
        return changes + super().compare_native(original, exported)

    def problem(self, record: dict[str, Any]) -> str | None:
        if isinstance(record.get("inputs"), dict):
            return None
        return "a LangSmith example has an inputs object"

    # --- reading -----------------------------------------------------------------------------

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        inputs = record.get("inputs", ABSENT)
        outputs = record.get("outputs", record.get("reference_outputs", ABSENT))
        values = Values()
        if native_mode:
            values.input = inputs
            values.expected = outputs if isinstance(outputs, dict) and outputs else ABSENT
            values.extras = extras_of(record.get("metadata"))
            if "split" in record:
                values.extras["split"] = record["split"]
            return values
        values.input = inputs
        if isinstance(inputs, dict) and set(inputs) == {"input"}:
            values.input = inputs["input"]
        if isinstance(outputs, dict) and set(outputs) == {"output"}:
            values.expected = outputs["output"]
        elif isinstance(outputs, dict) and "assertions" not in outputs:
            values.expected = outputs
        if "split" in record:
            values.extras["split"] = record["split"]
        return values

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {}
        row_id = record.get("id")
        if not isinstance(row_id, str) or not row_id:
            row_id = f"example-{position + 1}"
            derived["id"] = "the example has no id; numbered by position"
        values = self.values_of(record, True, suite)
        outputs = record.get("outputs", record.get("reference_outputs", ABSENT))
        case: dict[str, Any] = {}
        assertions = outputs.get("assertions") if isinstance(outputs, dict) else None
        expected = values.expected
        if expected is ABSENT:
            oracle = "expected-behavior-only"
            derived["metadata.case.oracleType"] = "the example has no outputs"
        elif isinstance(assertions, list) and set(outputs) == {"assertions"}:
            oracle, expected = "rubric", ABSENT
            case["evaluationCriteria"] = [
                str(item.get("comment") or item.get("key")) if isinstance(item, dict) else str(item)
                for item in assertions
            ]
            derived["metadata.case.oracleType"] = "outputs hold only assertions"
            derived["metadata.case.evaluationCriteria"] = "taken from the outputs' assertions"
        else:
            oracle = oracle_for_expected(expected)
            derived["metadata.case.oracleType"] = "inferred from the shape of outputs"
        derived["metadata.case.expectedBehavior"] = (
            "LangSmith examples carry no behaviour description"
        )
        return imported_row(
            row_id=row_id,
            input_value=record.get("inputs"),
            expected=expected,
            oracle_type=oracle,
            expected_behavior="(imported from LangSmith without a behaviour description)",
            format_name=self.name,
            derived=derived,
            case=case,
            metadata=values.extras,
        )

    # --- writing -----------------------------------------------------------------------------

    def _set_name(self, context: WriteContext) -> str:
        name = context.header.get("name")
        return name if isinstance(name, str) else ""

    def _example(self, row: ExportRow, context: WriteContext, *, native: bool) -> dict[str, Any]:
        inputs = row.input if isinstance(row.input, dict) else {"input": row.input}
        example: dict[str, Any] = {
            "id": example_id(row.id, self._set_name(context)),
            "inputs": inputs,
        }
        outputs = _outputs(row, native=native)
        if outputs is not ABSENT:
            example["outputs"] = outputs
        return example

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        example = self._example(row, context, native=False)
        example["metadata"] = row.labels()
        split = row.extra.get("split")
        if _is_split(split):
            example["split"] = split
        return example

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        extras = dict(row.extra)
        split = extras.pop("split", ABSENT)
        example = self._example(row, context, native=True)
        if extras:
            example["metadata"] = extras
        if split is not ABSENT:
            example["split"] = split
        return example

    def sniff(self, path: Path, head: bytes) -> Fit:
        if path.suffix.lower() == ".json":
            outline = json_head(head)
            if outline.kind == "object" and "examples" in outline.keys:
                return Fit.yes()  # a dataset object: {name, description, examples: [...]}
            keys = set(outline.keys) if outline.kind == "array" else set()
        else:
            first = first_line_object(head)
            keys = set(first) if isinstance(first, dict) else set()
        if "inputs" in keys and keys <= EXAMPLE_KEYS | {"use_source_run_io"}:
            return Fit.yes()
        if "inputs" in keys and keys & {"outputs", "metadata", "split", "created_at"}:
            return Fit.yes()
        return Fit.no("a LangSmith example has inputs (with outputs, metadata or split)")

    def sniff_named(self, path: Path, head: bytes) -> Fit:
        """Whether a file named as LangSmith examples is one: an example needs only its
        inputs object (the reader names a later one without it)."""
        if path.suffix.lower() == ".json":
            outline = json_head(head)
            if outline.kind == "object" and "examples" in outline.keys:
                return Fit.yes()
            keys = set(outline.keys) if outline.kind == "array" else set()
        else:
            first = first_line_object(head)
            keys = set(first) if isinstance(first, dict) else set()
        if "inputs" in keys:
            return Fit.yes()
        return Fit.no("a LangSmith example has an inputs object")
