"""Inspect AI samples: JSON Lines, a JSON array, or CSV, as ``json_dataset``/``csv_dataset`` read.

A sample has ``input`` (text or chat messages), ``target`` (text, or a list of texts any of
which is right), ``choices``, ``id``, ``metadata``, ``sandbox``, ``files``, ``setup`` and
``checkpoint``.
Inspect's default reading turns a target into text (``str``), so an answer that is not text
goes as its JSON text, and a target of ``""`` is Inspect's default: no target at all.

From CSV, Inspect reads every cell as text, except ``metadata``, ``files`` and
``checkpoint`` (JSON text),
``sandbox`` (a name, or a JSON list) and ``choices`` (split on commas). A CSV export writes
what those rules give back; a row a cell cannot hold (chat messages, a list of targets) is
left out with the reason.
"""

from __future__ import annotations

import csv
import io
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.core.errors import LossyExportRefused
from blueprint.formats._io import read_json_lines, read_text
from blueprint.formats.answers import (
    answer_text,
    answers_of,
    criteria_text,
)
from blueprint.formats.base import ExportResult, UnreadableRow, WriteOptions
from blueprint.formats.mapping import load_mapping
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.sniffing import Fit, csv_header, first_line_object, foreign_marks, json_head
from blueprint.formats.spreadsheet import FormulaGuard
from blueprint.formats.vendor import (
    ExportRow,
    ExportTally,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    export_rows,
    extras_of,
    imported_row,
    read_json_document,
)
from blueprint.io import jsonvalues
from blueprint.io.atomic import AtomicOutputs

#: the keys Inspect's default record-to-sample reads
SAMPLE_KEYS: Final = (
    "id",
    "input",
    "choices",
    "target",
    "metadata",
    "sandbox",
    "files",
    "setup",
    "checkpoint",
)
#: keys besides input that only an Inspect sample has, among the formats that read .jsonl
_SAMPLE_MARKS: Final = frozenset(SAMPLE_KEYS) - {"id", "input", "metadata"}
#: the message roles Inspect reads from a dataset, and the keys it reads of each
_MESSAGE_KEYS: Final = {
    "system": frozenset({"role", "content"}),
    "user": frozenset({"role", "content"}),
    "assistant": frozenset({"role", "content"}),
    "tool": frozenset({"role", "content", "tool_call_id", "function"}),
}
#: the content parts Inspect reads in a message's content list, by type: the keys each may
#: have, with the values a key must take (None: any text)
_PARTS: Final[dict[str, dict[str, frozenset[str] | None]]] = {
    "text": {"text": None},
    "image": {"image": None, "detail": frozenset({"auto", "low", "high", "original"})},
    "audio": {"audio": None, "format": frozenset({"wav", "mp3"})},
    "video": {"video": None, "format": frozenset({"mp4", "mpeg", "mov"})},
    "document": {"document": None, "filename": None, "mime_type": None},
}
#: and the keys each must have
_PART_NEEDS: Final = {
    "text": frozenset({"text"}),
    "image": frozenset({"image"}),
    "audio": frozenset({"audio", "format"}),
    "video": frozenset({"video", "format"}),
    "document": frozenset({"document"}),
}
#: CSV columns Inspect reads as JSON text
_JSON_COLUMNS: Final = frozenset({"metadata", "files", "checkpoint"})

_SHAPE: Final = NativeShape(
    mapped={
        "id": ("id",),
        "input": ("input",),
        "target": ("expected", "case.oracleType", "case.evaluationCriteria"),
        "metadata": ("extras",),
    },
    grading=("target",),
)


def _part(part: Any) -> bool:
    """Whether a value is a content part Inspect reads (text, an image, audio, a video, a
    document), with no key it would refuse."""
    if not isinstance(part, dict):
        return False
    kind = part.get("type")
    if not isinstance(kind, str) or kind not in _PARTS:
        return False
    keys = _PARTS[kind]
    if not _PART_NEEDS[kind] <= part.keys():
        return False
    for key, value in part.items():
        if key == "type":
            continue
        if key not in keys or not isinstance(value, str):
            return False
        allowed = keys[key]
        if allowed is not None and value not in allowed:
            return False
    return True


def _messages(value: Any) -> bool:
    """Whether a value is a list of chat messages Inspect reads as such: each a role it
    knows, its content text or a list of content parts it reads (text, image, audio, video,
    document), and no key it would ignore."""
    if not isinstance(value, list) or not value:
        return False
    for message in value:
        if not isinstance(message, dict) or message.get("role") not in _MESSAGE_KEYS:
            return False
        if not set(message) <= _MESSAGE_KEYS[message["role"]]:
            return False
        content = message.get("content")
        if not (isinstance(content, str) or (content and isinstance(content, list))):
            return False
        if isinstance(content, list) and not all(_part(part) for part in content):
            return False
        if not all(isinstance(v, str) for k, v in message.items() if k != "content"):
            return False
    return True


def _prompt(value: Any) -> Any:
    """An input as Inspect takes it: text or chat messages as they are, anything else as its
    JSON text."""
    if isinstance(value, str) or _messages(value):
        return value
    return jsonvalues.dumps_text(value)


def _target(row: ExportRow) -> str | list[str]:
    if row.oracle_type == "reference-answer":
        return answer_text(row.expected)
    if row.oracle_type == "acceptable-set":
        return answers_of(row.expected)
    if row.oracle_type == "rubric":
        return criteria_text(row.case)
    return ""


def _no_target(value: Any) -> bool:
    """Inspect's default target is "", so an empty one says nothing."""
    return value is ABSENT or value is None or value == "" or value == []


# --- CSV, as csv_dataset reads it -----------------------------------------------------------


def _choices_of_cell(cell: str) -> list[str]:
    """Choices from a cell, as Inspect splits them: on commas, else on whitespace."""
    parts = cell.split(",")
    if len(parts) == 1:
        parts = cell.split()
    return [part.strip() for part in parts if part.strip()]


def _csv_samples(path: Path) -> Iterator[tuple[int, Any] | UnreadableRow]:
    """Records from an Inspect CSV file, with the cells Inspect parses parsed; an empty cell
    is a key the record does not have."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    # lines end only at \n, \r\n or \r, as Python's csv and Inspect's reading take them
    # (str.splitlines would also break at separators such as \x1e inside a cell)
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""), dialect="unix")
    index = 0
    for cells in reader:
        line = reader.line_num
        if None in cells or None in cells.values():
            yield UnreadableRow(index, line, None, "the row has not as many cells as the header")
            index += 1
            continue
        if not any(cell.strip() for cell in cells.values()):
            continue  # Inspect skips a blank row
        record: dict[str, Any] = {}
        problem = None
        for key, cell in cells.items():
            if cell == "":
                continue
            # files, metadata and checkpoint are JSON text; a sandbox is a name or a JSON list
            if key in _JSON_COLUMNS or (key == "sandbox" and cell.strip().startswith("[")):
                try:
                    record[key] = jsonvalues.loads(cell)
                except jsonvalues.JSONError as error:
                    problem = f"{key}: not JSON text ({error.reason})"
                    break
            elif key == "choices":
                choices = _choices_of_cell(cell)
                if choices:  # a cell of commas and blanks gives no choices
                    record[key] = choices
            else:
                record[key] = cell
        if problem:
            yield UnreadableRow(index, line, None, problem)
        else:
            yield line, record
        index += 1


def _csv_cell(key: str, value: Any) -> str | None:
    """The cell for a record's value, or None when no cell gives it back to Inspect (chat
    messages, a list of targets, choices a comma would split otherwise)."""
    if key == "choices" and isinstance(value, list):
        cell = ",".join(str(choice) for choice in value)
        # a lone choice with a space in it keeps a trailing comma, so it is split on commas
        for written in (cell, cell + ","):
            if _choices_of_cell(written) == value:
                return written
        return None
    if key in ("input", "target") and isinstance(value, list):
        return None  # Inspect reads the cell as text
    if isinstance(value, str):
        return value
    return jsonvalues.dumps_text(value)


def _field_of(key: str, row: ExportRow) -> str:
    """The canonical field an Inspect CSV column holds for a row (for the loss report)."""
    if key == "target":
        return "metadata.case.evaluationCriteria" if row.oracle_type == "rubric" else "expected"
    return key if key in ("id", "input") else f"metadata.case.extensions.inspect.{key}"


#: why a record has no CSV row, by the key whose cell cannot hold its value
_CSV_EXCLUSIONS: Final = {"input": "csv-input", "target": "csv-target", "choices": "csv-choices"}


class InspectCodec(VendorCodec):
    name: ClassVar[str] = "inspect"
    title: ClassVar[str] = "Inspect AI samples (JSONL, a JSON array, or CSV)"
    read_extensions: ClassVar[tuple[str, ...]] = (".jsonl", ".json", ".csv")
    write_forms: ClassVar[dict[str, str]] = {".jsonl": "jsonl", ".json": "json", ".csv": "csv"}
    what: ClassVar[str] = "an Inspect sample"
    shape: ClassVar[NativeShape] = _SHAPE

    def records(self, path: Path) -> Records:
        suffix = path.suffix.lower()
        if suffix == ".csv":
            return list(_csv_samples(path))
        if suffix == ".json":
            document = read_json_document(path)
            # json_dataset reads an array of samples, or a single one
            items = document if isinstance(document, list) else [document]
            return [(None, item) for item in items]
        return read_json_lines(path)

    # --- reading -----------------------------------------------------------------------------

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        target = record.get("target", ABSENT)
        if _no_target(target):
            expected = ABSENT
        elif isinstance(target, list) and not record.get("choices"):
            expected = {"acceptable": target}
        else:
            expected = target
        metadata = record.get("metadata")
        if isinstance(metadata, str):  # Inspect parses metadata given as JSON text
            try:
                metadata = jsonvalues.loads(metadata)
            except jsonvalues.JSONError:
                metadata = None
        return Values(
            input=record.get("input", ABSENT),
            expected=expected,
            extras=extras_of(metadata) if native_mode else {},
        )

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {}
        row_id = record.get("id")
        if isinstance(row_id, int) and not isinstance(row_id, bool):
            row_id = str(row_id)
            derived["id"] = "the sample's id is a number; the row's id is its text"
        if not isinstance(row_id, str) or not row_id:
            row_id = f"sample-{position + 1}"
            derived["id"] = "the sample has no id; numbered by position, as auto_id does"
        values = self.values_of(record, True, suite)
        value = values.input
        if value is ABSENT or value in (None, "", []):
            value = None if value is ABSENT else value
            derived["input"] = "the sample has no input (Inspect refuses such a sample)"
        expected = values.expected
        if expected is ABSENT:
            oracle = "expected-behavior-only"
            derived["metadata.case.oracleType"] = (
                "the sample has no target; a scorer of its task decides what passes"
            )
        elif record.get("choices"):
            oracle = "reference-answer"
            derived["metadata.case.oracleType"] = (
                "a multiple-choice sample: the target names the right choice letters, which"
                " Inspect's choice scorer requires exactly; the choices are kept in"
                " case.extensions.inspect"
            )
        elif isinstance(record.get("target"), list):
            oracle = "acceptable-set"
            derived["metadata.case.oracleType"] = "the sample's target is a list: any is right"
        else:
            oracle = "reference-answer"
            derived["metadata.case.oracleType"] = "the sample has a target"
            if not isinstance(expected, str):
                derived["expected"] = "Inspect reads a target as text; this one is not"
        derived["metadata.case.expectedBehavior"] = "Inspect samples carry no behaviour description"
        return imported_row(
            row_id=row_id,
            input_value=value,
            expected=expected,
            oracle_type=oracle,
            expected_behavior="(imported from Inspect without a behaviour description)",
            format_name=self.name,
            derived=derived,
            metadata=values.extras,
        )

    # --- writing -----------------------------------------------------------------------------

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return {
            "id": row.id,
            "input": _prompt(row.input),
            "target": _target(row),
            "metadata": row.labels(),
        }

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        record: dict[str, Any] = {"id": row.id, "input": _prompt(row.input)}
        target = _target(row)
        if not _no_target(target):
            record["target"] = target
        if row.extra:
            record["metadata"] = dict(row.extra)
        return record

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        if row.input == "":
            return "empty-input"
        return None

    def holds_media(self, row: ExportRow, context: WriteContext) -> bool:
        # chat messages with content parts go as they are, but a CSV cell holds only text
        return context.form != "csv" and _messages(row.input)

    def weakened(self, row: ExportRow, context: WriteContext) -> list[tuple[str, str]] | None:
        extra = []
        if isinstance(row.input, list) and not _messages(row.input):
            extra.append(
                (
                    "input",
                    "a list that is not chat messages Inspect reads (a role of system, user,"
                    " assistant or tool, text content or Inspect's content parts, no other"
                    " keys) goes as its JSON text, so the model sees JSON",
                )
            )
        if context.form == "csv":
            # csv_dataset opens the file with universal newlines
            why = (
                "csv_dataset opens the file with universal newlines, so a carriage return in a"
                " cell reaches Inspect as a line feed; write .jsonl"
            )
            if isinstance(row.input, str) and "\r" in row.input:
                extra.append(("input", why))
            target = _target(row)
            if isinstance(target, str) and "\r" in target:
                where = (
                    "metadata.case.evaluationCriteria"
                    if row.oracle_type == "rubric"
                    else "expected"
                )
                extra.append((where, why))
        if not extra:
            return None
        rules = load_mapping(self.name).weakened_rules(row.data, row.oracle_type, row.evaluator)
        return [(rule.field, rule.reason) for rule in rules] + extra

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        if context.form != "csv":
            return super().record_for(row, context, tally)
        # a CSV row is written only when its cells give the record back: try it aside
        scratch = ExportTally(tally.mapping, memo=tally.memo)
        record = super().record_for(row, context, scratch)
        if record is not None:
            for key, kind in _CSV_EXCLUSIONS.items():
                if key in record and _csv_cell(key, record[key]) is None:
                    tally.exclude(kind, row)
                    return None
        tally.merge(scratch)
        return record

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        if self.write_forms.get(path.suffix.lower()) != "csv":
            return super().write(header, rows, path, options)
        context = WriteContext(header, options, "csv")
        tally = ExportTally(load_mapping(self.name))
        records: list[tuple[ExportRow, dict[str, Any]]] = []
        for row in export_rows(rows, self.name, header, options.accepted):
            record = self.record_for(row, context, tally)
            if record is not None:
                records.append((row, record))
        columns = list(dict.fromkeys(key for _, record in records for key in record))
        if not columns:
            columns = ["id", "input", "target", "metadata"]
        guard = FormulaGuard(options.spreadsheet_safe)
        keys_of = {key: [row.id for row, record in records if key in record] for key in columns}
        buffer = io.StringIO()
        # every cell quoted (the unix dialect): a lone \r in an unquoted cell would end the row
        writer = csv.writer(buffer, dialect="unix")
        writer.writerow(guard.header(columns, keys_of))
        for index, (row, record) in enumerate(records):
            cells = []
            for key in columns:
                cell = _csv_cell(key, record[key]) if key in record else ""
                field = _field_of(key, row)
                cells.append(
                    guard.cell(cell or "", column=key, field=field, row_index=index, row_id=row.id)
                )
            writer.writerow(cells)
        tally.written = len(records)
        with AtomicOutputs([path], force=options.force, follow_links=options.in_place) as outputs:
            outputs.open(path, "wb").write(buffer.getvalue().encode("utf-8"))
            changed = guard.lossy()
            if options.strict and changed:
                raise LossyExportRefused(
                    self.name, [*tally.lossy(header, options.derived_fields), *changed]
                )
            result = tally.finish(header, [path], options)
            result.lossy.extend(changed)
            result.findings.extend(guard.findings)
            return result

    def sniff(self, path: Path, head: bytes) -> Fit:
        suffix = path.suffix.lower()
        why = "an Inspect sample has input and target (or choices, files, setup, sandbox)"
        if suffix == ".csv":
            keys = set(csv_header(head))
            if "input" in keys and "target" in keys and not any(k.startswith("__") for k in keys):
                return Fit.yes()
            return Fit.no("an Inspect CSV has input and target columns")
        if suffix == ".json":
            outline = json_head(head)
            keys = set(outline.keys) if outline.kind in ("array", "object") else set()
        else:
            first = first_line_object(head)
            keys = set(first) if isinstance(first, dict) else set()
        if "input" in keys and keys & _SAMPLE_MARKS and not keys & {"ideal", "expected"}:
            return Fit.yes()
        return Fit.no(why)

    def sniff_named(self, path: Path, head: bytes) -> Fit:
        """Whether a file named as Inspect samples is one: more loosely than detection, a
        sample needs only its input (its target is optional); without one Inspect's default
        reading refuses the file ("No input in dataset"), and reads other field names only
        through a ``FieldSpec`` of the task's code. An eval log is not a dataset."""
        suffix = path.suffix.lower()
        if suffix == ".csv":
            keys = set(csv_header(head))
        elif suffix == ".json":
            outline = json_head(head)
            keys = set(outline.keys) if outline.kind in ("array", "object") else set()
            if outline.kind == "object" and {"eval", "samples"} & keys and "input" not in keys:
                return Fit.no(
                    "an Inspect eval log (eval, results, samples), not a dataset of samples"
                )
        else:
            first = first_line_object(head)
            keys = set(first) if isinstance(first, dict) else set()
        if "input" in keys:
            return foreign_marks(keys, self.name)
        return Fit.no(
            "an Inspect sample has an input (Inspect reads other field names only through a"
            " FieldSpec in the task's code)"
        )
