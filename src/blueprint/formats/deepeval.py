"""DeepEval goldens: JSON (an array) or JSON Lines, loadable by EvaluationDataset; reads CSV.

Single-turn goldens carry ``input`` and ``expected_output`` (or ``expected_tools``);
conversational goldens carry a ``scenario``, ``turns`` and an ``expected_outcome``. A DeepEval
dataset holds one kind or the other, never both, so an export writes the kind of its first
row and leaves out rows of the other kind, saying so.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_json_lines, read_text
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.sniffing import (
    BRAINTRUST_STORED,
    Fit,
    csv_header,
    first_line_object,
    foreign_marks,
    json_head,
    promptfoo_columns,
)
from blueprint.formats.vendor import (
    STARTER_NOTE,
    ExportRow,
    ExportTally,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    extras_of,
    imported_row,
    json_array_records,
)
from blueprint.io import jsonvalues

#: keys only a single-turn golden has; with "input", they tell a goldens file apart
GOLDEN_KEYS: Final = frozenset(
    {
        "expected_output",
        "actual_output",
        "retrieval_context",
        "context",
        "expected_tools",
        "tools_called",
        "additional_metadata",
        "source_file",
        "custom_column_key_values",
        "comments",
        "name",
        "expectations",
    }
)
#: row metadata keys with a native DeepEval field, when they hold a list of strings
CONTEXT_KEYS: Final = ("context", "retrieval_context")
MIXED_TURNS: Final = "mixed-turns"
#: the cells pandas.read_csv reads as missing (its default na_values), as DeepEval loads CSV
PANDAS_NA: Final = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)


def _text_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _conversational(row: ExportRow) -> bool:
    """A row imported from a conversational golden (its turns are the input): the golden had
    a scenario, and one that is not empty (DeepEval reads an empty one as single-turn)."""
    extension = row.extension("deepeval") or {}
    return "scenario" in (extension.get("keys") or []) and bool(row.case.get("scenario"))


def _text(value: Any) -> str:
    """A golden's text fields hold text; any other value goes as its JSON text."""
    return value if isinstance(value, str) else jsonvalues.dumps_text(value)


def _single_turn(row: ExportRow) -> dict[str, Any]:
    """A single-turn golden's input and what it expects, as DeepEval's fields say them."""
    golden: dict[str, Any] = {"input": _text(row.input)}
    if row.oracle_type == "reference-answer":
        golden["expected_output"] = _text(row.expected)
    if row.oracle_type == "expected-tool-calls":
        golden["expected_tools"] = _tools(row.expected)
    return golden


def _tools(expected: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"name": call["name"], "type": "FUNCTION", "inputParameters": call["arguments"]}
        for call in expected["calls"]
    ]


def _calls(tools: list[Any]) -> list[dict[str, Any]]:
    calls = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        arguments = tool.get("inputParameters", tool.get("input_parameters"))
        calls.append(
            {"name": str(tool.get("name", "")), "arguments": arguments if arguments else {}}
        )
    return calls


_SHAPE: Final = NativeShape(
    mapped={
        "name": ("id",),
        "input": ("input",),
        "expected_output": ("expected", "case.oracleType"),
        "expected_tools": ("expected", "case.oracleType"),
        "context": ("extras",),
        "retrieval_context": ("extras",),
        "additional_metadata": ("extras",),
        "scenario": ("case.scenario",),
        "turns": ("input",),
        "expected_outcome": ("case.expectedBehavior",),
    },
    grading=("expected_output", "expected_tools"),
)


class DeepevalCodec(VendorCodec):
    name: ClassVar[str] = "deepeval"
    title: ClassVar[str] = "DeepEval goldens (JSON, JSONL; reads CSV)"
    read_extensions: ClassVar[tuple[str, ...]] = (".json", ".jsonl", ".csv")
    write_forms: ClassVar[dict[str, str]] = {".json": "json", ".jsonl": "jsonl"}
    refused_forms: ClassVar[dict[str, str]] = {
        ".csv": "DeepEval reads CSV goldens through pandas, which turns text such as NA, null"
        " or 0123 into other values, and splits lists on | without an escape; write .json or"
        " .jsonl"
    }
    what: ClassVar[str] = "a golden"
    shape: ClassVar[NativeShape] = _SHAPE
    metadata_key: ClassVar[str] = "additional_metadata"

    def records(self, path: Path) -> Records:
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            return read_json_lines(path)
        if suffix == ".csv":
            return list(_csv_goldens(path))
        return json_array_records(path, "golden")

    # --- reading -----------------------------------------------------------------------------

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        values = Values()
        if record.get("scenario"):
            turns = record.get("turns")
            values.input = turns if turns is not None else []
        elif "input" in record:
            values.input = record["input"]
        if record.get("expected_output") is not None:
            values.expected = record["expected_output"]
        elif isinstance(record.get("expected_tools"), list) and record["expected_tools"]:
            values.expected = {"calls": _calls(record["expected_tools"]), "order": "any"}
        if native_mode:
            values.extras = extras_of(record.get("additional_metadata"))
        for key in CONTEXT_KEYS:
            value = record.get(key)
            if isinstance(value, str):
                value = value.split("|")  # DeepEval's own reading of a joined list
            if value not in (None, []):
                values.extras[key] = value
        return values

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {}
        row_id = record.get("name")
        if not isinstance(row_id, str) or not row_id:
            row_id = f"golden-{position + 1}"
            derived["id"] = "the golden has no name; numbered by position"
        values = self.values_of(record, True, suite)
        case: dict[str, Any] = {}
        conversational = bool(record.get("scenario"))
        expected = values.expected
        if conversational:
            oracle = "expected-behavior-only"
            expected = ABSENT
            if isinstance(record.get("scenario"), str):
                case["scenario"] = record["scenario"]
            derived["metadata.case.oracleType"] = (
                "a conversational golden describes the outcome it expects; no metric is named"
            )
        elif record.get("expected_output") is not None:
            oracle = "reference-answer"
            derived["metadata.case.oracleType"] = "the golden has an expected_output"
            if not isinstance(expected, str):
                derived["expected"] = "DeepEval's expected_output is text; this one is not"
        elif expected is not ABSENT:
            oracle = "expected-tool-calls"
            derived["metadata.case.oracleType"] = "the golden has expected_tools"
            derived["expected.order"] = "DeepEval does not say whether the tool order matters"
        else:
            oracle = "expected-behavior-only"
            derived["metadata.case.oracleType"] = "the golden has no expected output or tools"
        behaviour = record.get("expected_outcome") if conversational else None
        if isinstance(behaviour, str) and behaviour:
            derived["metadata.case.expectedBehavior"] = "taken from the golden's expected_outcome"
        else:
            behaviour = "(imported from DeepEval without a behaviour description)"
            derived["metadata.case.expectedBehavior"] = (
                "DeepEval goldens carry no behaviour description"
            )
        value = values.input
        if value is ABSENT:
            value = None
            derived["input"] = "the golden has no input"
        elif not conversational and not isinstance(value, str):
            derived["input"] = "a golden's input is text; this one is not"
        return imported_row(
            row_id=row_id,
            input_value=value,
            expected=expected,
            oracle_type=oracle,
            expected_behavior=behaviour,
            format_name=self.name,
            derived=derived,
            case=case,
            metadata=values.extras,
        )

    # --- writing -----------------------------------------------------------------------------

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        golden = _single_turn(row)
        for key in CONTEXT_KEYS:
            if _text_list(row.extra.get(key)):
                golden[key] = row.extra[key]
        golden["name"] = row.id
        behaviour = row.case["expectedBehavior"]
        golden["comments"] = f"{STARTER_NOTE}: {behaviour}" if row.starter else behaviour
        golden["additional_metadata"] = row.labels()
        return golden

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        extras = dict(row.extra)
        if _conversational(row):
            golden: dict[str, Any] = {}
            if "scenario" in row.case:
                golden["scenario"] = row.case["scenario"]
            golden["turns"] = row.input
            golden["expected_outcome"] = row.case["expectedBehavior"]
        else:
            golden = _single_turn(row)
        for key in CONTEXT_KEYS:
            if _text_list(extras.get(key)):
                golden[key] = extras.pop(key)
        golden["name"] = row.id
        if extras:
            golden["additional_metadata"] = extras
        return golden

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        # one file holds single-turn or conversational goldens: the first row decides
        kind = "conversational" if _conversational(row) else "single-turn"
        if tally.memo.get("kind", kind) != kind:
            tally.exclude(MIXED_TURNS, row)
            return None
        record = super().record_for(row, context, tally)
        if record is not None:
            tally.memo["kind"] = kind
        return record

    def weakened(self, row: ExportRow, context: WriteContext) -> list[tuple[str, str]] | None:
        if _conversational(row) and row.has_expected:
            return [
                (
                    "expected",
                    "a conversational golden has no expected_output: no DeepEval metric sees"
                    " this expected value, which travels in additional_metadata.blueprint only",
                )
            ]
        return None

    def sniff(self, path: Path, head: bytes) -> Fit:
        suffix = path.suffix.lower()
        why = (
            "a golden has input and one of expected_output, context, expected_tools, name"
            " (or scenario and turns)"
        )
        if suffix == ".csv":
            keys = set(csv_header(head))
        elif suffix == ".jsonl":
            first = first_line_object(head)
            keys = set(first) if isinstance(first, dict) else set()
        else:
            outline = json_head(head)
            keys = set(outline.keys) if outline.kind == "array" else set()
        if keys & BRAINTRUST_STORED:
            return Fit.no(f"{why}; span_id, root_span_id or facets are Braintrust's stored fields")
        if suffix == ".csv" and promptfoo_columns(list(keys)):
            return Fit.no(f"{why}; __expected, __description or __metadata are promptfoo's")
        if ("input" in keys and keys & GOLDEN_KEYS) or {"scenario", "turns"} <= keys:
            return Fit.yes()
        return Fit.no(why)

    def sniff_named(self, path: Path, head: bytes) -> Fit:
        """Whether a file named as DeepEval goldens is one: more loosely than detection, since
        DeepEval loads goldens under custom key names (``input_key_name="query"``), goldens
        with an input and nothing else, and scenarios without turns yet; but not a record
        that holds its answer under another format's key (``ideal``, ``target``,
        ``expected``) and not under DeepEval's, which DeepEval's loader would drop."""
        fit = self.sniff(path, head)
        if fit.ok:
            return fit
        suffix = path.suffix.lower()
        if suffix == ".csv":
            first: Any = dict.fromkeys(csv_header(head), "")
        elif suffix == ".jsonl":
            first = first_line_object(head)
        else:
            outline = json_head(head)
            first = outline.first if outline.kind == "array" else None
        if not isinstance(first, dict):
            return fit
        marks = foreign_marks(set(first), self.name)
        if not marks.ok:
            return marks
        # a golden's input is text: a list there (OpenAI Evals' chat input) is another format
        if isinstance(first.get("input"), str) or first.keys() & (
            GOLDEN_KEYS | {"scenario", "expected_outcome"}
        ):
            return Fit.yes()
        return fit


def _csv_goldens(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Goldens from DeepEval's CSV layout: lists joined with "|", tools and metadata as JSON."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.DictReader(read_text(path).splitlines(keepends=True))
    for record in reader:
        golden: dict[str, Any] = {}
        for key, cell in record.items():
            if key is None or cell is None or cell in PANDAS_NA:
                continue  # DeepEval reads the file with pandas, which takes these for nothing
            if key in CONTEXT_KEYS:
                golden[key] = cell.split("|")
            elif key in (
                "expected_tools",
                "tools_called",
                "additional_metadata",
                "custom_column_key_values",
                "turns",
                "persona",
            ):
                try:
                    golden[key] = jsonvalues.loads(cell)
                except jsonvalues.JSONError as error:
                    raise ParseError(path, f"{key}: {error.reason}", line=reader.line_num) from None
            else:
                golden[key] = cell
        yield reader.line_num, golden
