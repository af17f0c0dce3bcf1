"""What every vendor codec shares: row checks, the blueprint payload, exclusions, import flags.

Exports map what a vendor has a native field for, and keep the rest of the row under one
namespaced key in the vendor's free-form metadata (``metadata.blueprint``), so that importing
the file restores the row exactly. Imports of files that did not come from Blueprint infer
what they must, set provenance ``imported``, and record every derived value under
``case.extensions["blueprint-import"]``, which ``blueprint validate`` reports as
``derived-value`` so a person reviews it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from pydantic import ValidationError

from blueprint import admissibility, jsonvalues
from blueprint.atomic import AtomicOutputs
from blueprint.errors import BlueprintError, LossyExportRefused, ParseError
from blueprint.formats._io import BOM, read_json_lines
from blueprint.formats.base import (
    ExportResult,
    LossyField,
    SetSource,
    SourceRow,
    UnreadableRow,
    WriteOptions,
)
from blueprint.formats.mapping import NAMESPACE, VendorMapping, load_mapping
from blueprint.model import EVALUATOR_TYPES, STARTER_PROVENANCES, Row

IMPORT_EXTENSION: Final = "blueprint-import"
HUMAN_REVIEW: Final = "human-review"
STARTER_NOTE: Final = "starter example, not validated gold"


class InvalidRowForExport(BlueprintError, ValueError):
    """A row that breaks the schema cannot be mapped to a vendor format reliably."""

    exit_code = 1


@dataclass(frozen=True)
class ExportRow:
    """A valid canonical row, taken apart for mapping."""

    data: dict[str, Any]
    id: str
    case: dict[str, Any]
    #: metadata keys other than `case`
    extra: dict[str, Any]
    #: the evaluator the row's case family names, which the row inherits when it names none
    family_evaluator: str | None = None

    @property
    def oracle_type(self) -> str:
        return str(self.case["oracleType"])

    @property
    def evaluator(self) -> str | None:
        """The evaluator that grades the row: its own, else its case family's."""
        if "evaluator" in self.case:
            return self.case["evaluator"]
        return self.family_evaluator

    @property
    def has_expected(self) -> bool:
        return "expected" in self.data

    @property
    def expected(self) -> Any:
        return self.data.get("expected")

    @property
    def input(self) -> Any:
        return self.data["input"]

    @property
    def starter(self) -> bool:
        return self.case.get("provenance") in STARTER_PROVENANCES

    @property
    def human_only(self) -> bool:
        return not admissibility.automatically_gradable(self.oracle_type, self.evaluator)

    def labels(self) -> dict[str, Any]:
        """Plain metadata keys a vendor can filter on; the payload holds the full profile."""
        labels: dict[str, Any] = {
            "oracleType": self.oracle_type,
            "provenance": self.case["provenance"],
        }
        if "caseFamily" in self.case:
            labels["caseFamily"] = self.case["caseFamily"]
        if self.starter:
            labels["starterExample"] = True
        if self.human_only:
            labels["humanReview"] = True
        return labels

    def payload(self, **more: Any) -> dict[str, Any]:
        """What travels under the namespaced metadata key: everything the vendor lacks."""
        body: dict[str, Any] = {"id": self.id, "case": self.case}
        if self.extra:
            body["metadata"] = self.extra
        body.update(more)
        return body


def family_evaluators(header: dict[str, Any]) -> dict[str, str]:
    """The evaluator each declared case family names, by family id."""
    families = header.get("caseFamilies")
    return {
        family["id"]: family["evaluator"]
        for family in (families if isinstance(families, list) else [])
        if isinstance(family, dict)
        and isinstance(family.get("id"), str)
        and family.get("evaluator") in EVALUATOR_TYPES
    }


def export_rows(
    rows: Iterable[Any], format_name: str, header: dict[str, Any] | None = None
) -> Iterator[ExportRow]:
    """Check each row against the schema and take it apart; a broken row stops the export.

    Rows that name no evaluator inherit their case family's, from ``header``.
    """
    inherited = family_evaluators(header or {})
    for index, data in enumerate(rows):
        try:
            Row.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            row_id = data.get("id") if isinstance(data, dict) else None
            raise InvalidRowForExport(
                f"row {index} ({row_id!r}) is not a valid row ({where}: {first['msg']});"
                f" a {format_name} export needs a valid set: run blueprint validate"
            ) from None
        metadata = data["metadata"]
        case = metadata["case"]
        family = inherited.get(case.get("caseFamily", ""))
        exported = ExportRow(data, data["id"], case, {}, family)
        evaluator = exported.evaluator
        barred = evaluator and admissibility.verdict(case["oracleType"], evaluator) == "barred"  # type: ignore[arg-type]
        if barred:
            whose = "names" if "evaluator" in case else "inherits from its case family"
            raise InvalidRowForExport(
                f"row {index} ({data['id']!r}) {whose} the evaluator {evaluator}, which"
                f" {case['oracleType']} bars; fix the set first (blueprint validate)"
            )
        extra = {key: value for key, value in metadata.items() if key != "case"}
        yield ExportRow(data, data["id"], case, extra, family)


@dataclass
class ExportTally:
    """Rows left out of an export, by kind, for the lossy report."""

    mapping: VendorMapping
    excluded: dict[str, list[str]] = field(default_factory=dict)
    written: int = 0

    def exclude(self, kind: str, row: ExportRow) -> None:
        self.excluded.setdefault(kind, []).append(row.id)

    def keep(self, row: ExportRow, options: WriteOptions) -> bool:
        """Whether a row goes into the export; human-only rows only when asked for."""
        if row.human_only and not options.include_human_review:
            self.exclude(HUMAN_REVIEW, row)
            return False
        return True

    def lossy(self, header: dict[str, Any], derived: frozenset[str]) -> list[LossyField]:
        # set-level values the reader made up (a name taken from the file) are not losses
        real = {key: value for key, value in header.items() if key not in derived}
        losses = self.mapping.set_loss(real)
        losses += [self.mapping.exclusion(kind, ids) for kind, ids in self.excluded.items()]
        return losses

    def finish(
        self, header: dict[str, Any], files: list[Path], options: WriteOptions
    ) -> ExportResult:
        """The export result; raises (so nothing is committed) for a refused strict export."""
        lossy = self.lossy(header, options.derived_fields)
        if options.strict and lossy:
            raise LossyExportRefused(self.mapping.format, lossy)
        return ExportResult(format=self.mapping.format, files=files, rows=self.written, lossy=lossy)


# --- reading ---------------------------------------------------------------------------------


Records = Iterable[tuple[int | None, Any] | UnreadableRow]


def vendor_rows(
    records: Records,
    to_row: Callable[[dict[str, Any], int], dict[str, Any]],
    *,
    what: str,
    check: Callable[[dict[str, Any]], str | None] | None = None,
) -> Iterator[SourceRow | UnreadableRow]:
    """Canonical rows from vendor records; a record that is not an object is unreadable."""
    for index, item in enumerate(records):
        if isinstance(item, UnreadableRow):
            yield UnreadableRow(index, item.line, item.column, item.reason)
            continue
        line, record = item
        if not isinstance(record, dict):
            problem: str | None = f"{what} is a JSON object"
        else:
            problem = check(record) if check else None
        if problem:
            yield UnreadableRow(index, line, None, problem)
            continue
        try:
            yield SourceRow(index, line, to_row(record, index))
        except ValueError as error:  # e.g. a damaged blueprint payload
            yield UnreadableRow(index, line, None, str(error))


@dataclass(frozen=True)
class Framing:
    """The bytes around and between exported records."""

    opening: bytes = b""
    first: bytes = b""
    between: bytes = b""
    closing: bytes = b""
    #: written instead of ``closing`` when no record was written
    empty: bytes = b""


JSON_LINES: Final = Framing(between=b"\n", closing=b"\n")


def write_export(
    format_name: str,
    header: dict[str, Any],
    rows: Iterable[Any],
    path: Path,
    options: WriteOptions,
    *,
    encode: Callable[[ExportRow], bytes],
    framing: Framing = JSON_LINES,
    skip: Callable[[ExportRow], str | None] = lambda row: None,
) -> ExportResult:
    """Write a vendor export: rows the format cannot use are left out and reported.

    ``skip`` names the exclusion kind (a key of the mapping's ``excluded``) for rows the
    format can never grade; human-only rows are left out unless the options include them.
    """
    tally = ExportTally(load_mapping(format_name))
    with AtomicOutputs([path], force=options.force) as outputs:
        handle = outputs.open(path, "wb")
        handle.write(framing.opening)
        for row in export_rows(rows, format_name, header):
            kind = skip(row)
            if kind is not None:
                tally.exclude(kind, row)
                continue
            if not tally.keep(row, options):
                continue
            handle.write(framing.first if tally.written == 0 else framing.between)
            handle.write(encode(row))
            tally.written += 1
        handle.write(framing.closing if tally.written else framing.empty)
        return tally.finish(header, [path], options)


def read_json_document(path: Path) -> Any:
    from blueprint.formats._io import read_text

    text = read_text(path)
    try:
        return jsonvalues.loads(text)
    except jsonvalues.JSONError as error:
        raise ParseError(path, error.reason, line=error.line, column=error.column) from None


def first_json_line(head: bytes) -> Any:
    """The first non-blank line of a head of bytes, decoded, or None."""
    for line in head.removeprefix(BOM).split(b"\n"):
        if line.strip():
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def payload_of(metadata: Any) -> dict[str, Any] | None:
    """The blueprint payload inside vendor metadata, when the file came from Blueprint."""
    if isinstance(metadata, dict):
        payload = metadata.get(NAMESPACE)
        if isinstance(payload, dict) and isinstance(payload.get("case"), dict):
            return payload
    return None


def restored_row(payload: dict[str, Any], row_id: Any, input_value: Any, expected: Any) -> dict:
    """A canonical row from a blueprint payload; `expected` is ABSENT when there is none."""
    extra = payload.get("metadata", {})
    if not isinstance(extra, dict):
        raise ValueError("its blueprint metadata is damaged: metadata is not an object")
    row: dict[str, Any] = {"id": payload.get("id", row_id), "input": input_value}
    if expected is not ABSENT:
        row["expected"] = expected
    row["metadata"] = {"case": payload["case"], **extra}
    return row


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final[Any] = _Absent()


def imported_row(
    *,
    row_id: str,
    input_value: Any,
    expected: Any,
    oracle_type: str,
    expected_behavior: str,
    format_name: str,
    derived: dict[str, str],
    case: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    vendor_extension: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A canonical row from a vendor record that did not come from Blueprint.

    ``derived`` maps each field path that had to be inferred to how it was inferred; the
    validator reports each one as ``derived-value``.
    """
    profile: dict[str, Any] = {
        "caseId": row_id,
        "oracleType": oracle_type,
        "expectedBehavior": expected_behavior,
        "provenance": "imported",
        **(case or {}),
    }
    extensions: dict[str, Any] = {IMPORT_EXTENSION: {"format": format_name, "derived": derived}}
    if vendor_extension:
        extensions[format_name] = vendor_extension
    profile["extensions"] = extensions
    row: dict[str, Any] = {"id": row_id, "input": input_value}
    if expected is not ABSENT:
        row["expected"] = expected
    extra = dict(metadata or {})
    if "case" in extra:  # the key is the case profile's; keep the vendor's value beside it
        extra["imported.case"] = extra.pop("case")
        derived["metadata.imported.case"] = "the vendor metadata had a key named case"
    row["metadata"] = {"case": profile, **extra}
    return row


def oracle_for_expected(expected: Any) -> str:
    """The oracle type a bare expected value most plausibly has."""
    if isinstance(expected, dict):
        if set(expected) <= {"acceptable"} and isinstance(expected.get("acceptable"), list):
            return "acceptable-set"
        if set(expected) <= {"graded"} and isinstance(expected.get("graded"), list):
            return "acceptable-set"
        if "calls" in expected and set(expected) <= {"calls", "order", "forbidden"}:
            return "expected-tool-calls"
        if set(expected) == {"checks"}:
            return "expected-final-state"
    return "reference-answer"


class JsonLinesVendorCodec:
    """A vendor format of one JSON object per line: reading and writing, given the mapping
    from a record to a row (``to_row``) and back (``to_record``)."""

    name: ClassVar[str]
    #: how a record is named in messages ("a Braintrust record")
    what: ClassVar[str]

    def to_row(self, record: dict[str, Any], position: int) -> dict[str, Any]:
        raise NotImplementedError

    def to_record(self, row: ExportRow) -> dict[str, Any]:
        raise NotImplementedError

    def problem(self, record: dict[str, Any]) -> str | None:
        """Why a record that is an object still cannot be read, or None."""
        return None

    def open(self, path: Path) -> SetSource:
        rows = vendor_rows(read_json_lines(path), self.to_row, what=self.what, check=self.problem)
        return SetSource(path=path, format=self.name, header=None, rows=rows)

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        def encode(row: ExportRow) -> bytes:
            return jsonvalues.dumps(self.to_record(row))

        return write_export(self.name, header, rows, path, options, encode=encode)
