"""What every vendor codec shares: reading records into rows, writing rows as records.

Two kinds of row reach a vendor writer. A row authored in Blueprint (or imported from
another format) is written in *Blueprint mode*: native fields where the vendor has them, and
the rest of the row under one namespaced key in the vendor's free-form metadata
(``metadata.blueprint``), so importing the file restores the row exactly. A row imported
from the same format is written in *native mode*: the vendor's record as it came in (see
:mod:`blueprint.formats.native`), with the case profile in the same namespaced key.

Imports of records that did not come from Blueprint infer what they must, set provenance
``imported``, and record every derived value under ``case.extensions["blueprint-import"]``,
which ``blueprint validate`` reports as ``derived-value`` so a person reviews it. Every key
of such a record that is not read into a canonical field is kept, so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from pydantic import ValidationError

from blueprint.core import admissibility, jsonpath
from blueprint.core.errors import BlueprintError, LossyExportRefused, ParseError
from blueprint.core.model import (
    EVALUATOR_TYPES,
    EXPECTED_SHAPES,
    OMITTED_FIELDS,
    SCHEMA_VERSION,
    STARTER_PROVENANCES,
    Row,
    fits,
)
from blueprint.formats import native
from blueprint.formats._io import read_text
from blueprint.formats.base import (
    ExportResult,
    LossyField,
    SetSource,
    SourceRow,
    UnreadableRow,
    WriteOptions,
)
from blueprint.formats.mapping import NAMESPACE, VendorMapping, load_mapping
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.sniffing import Fit
from blueprint.io import jsonvalues
from blueprint.io.atomic import AtomicOutputs

IMPORT_EXTENSION: Final = "blueprint-import"
HUMAN_REVIEW: Final = "human-review"
STARTER_NOTE: Final = "starter example, not validated gold"

#: metadata keys a vendor record may have that cannot be row metadata keys: the case
#: profile's own key, the payload's, and the fields the schema leaves out on purpose. Import
#: keeps them in the extension (the vendor's metadata is restored whole on export).
RESERVED_METADATA: Final = frozenset({"case", NAMESPACE, *OMITTED_FIELDS})


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

    @classmethod
    def of(cls, data: dict[str, Any], family_evaluator: str | None = None) -> ExportRow:
        metadata = data["metadata"]
        extra = {key: value for key, value in metadata.items() if key != "case"}
        return cls(data, data["id"], metadata["case"], extra, family_evaluator)

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

    def extension(self, format_name: str) -> dict[str, Any] | None:
        """What an import from ``format_name`` kept of the vendor's record, if it came so."""
        extensions = self.case.get("extensions")
        found = extensions.get(format_name) if isinstance(extensions, dict) else None
        return found if isinstance(found, dict) else None

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
    rows: Iterable[Any],
    format_name: str,
    header: dict[str, Any] | None = None,
    accepted: Callable[[Any], bool] | None = None,
) -> Iterator[ExportRow]:
    """Check each row against the schema and take it apart; a broken row stops the export.

    Rows that name no evaluator inherit their case family's, from ``header``. A row that
    ``accepted`` says the validator accepted is not checked against the schema again.
    """
    inherited = family_evaluators(header or {})
    for index, data in enumerate(rows):
        if accepted is None or not accepted(data):
            _require_valid(data, index, format_name)
        case = data["metadata"]["case"]
        exported = ExportRow.of(data, inherited.get(case.get("caseFamily", "")))
        evaluator = exported.evaluator
        barred = evaluator and admissibility.verdict(case["oracleType"], evaluator) == "barred"  # type: ignore[arg-type]
        if barred:
            whose = "names" if "evaluator" in case else "inherits from its case family"
            raise InvalidRowForExport(
                f"row {index} ({data['id']!r}) {whose} the evaluator {evaluator}, which"
                f" {case['oracleType']} bars; fix the set first (blueprint validate;"
                " --allow-invalid writes canonical formats only)"
            )
        yield exported


def _require_valid(data: Any, index: int, format_name: str) -> None:
    """Refuse a row that breaks the schema, or whose expected value does not fit its oracle
    type: no vendor record can be made of it reliably."""
    try:
        Row.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        row_id = data.get("id") if isinstance(data, dict) else None
        raise InvalidRowForExport(
            f"row {index} ({row_id!r}) is not a valid row ({where}: {first['msg']});"
            f" a {format_name} export needs a valid set: run blueprint validate"
            " (--allow-invalid writes canonical formats only)"
        ) from None
    case = data["metadata"]["case"]
    shapes = EXPECTED_SHAPES[case["oracleType"]]
    shaped = (
        "expected" not in data
        if shapes is None
        else "expected" in data and (not shapes or any(fits(m, data["expected"]) for m in shapes))
    )
    if not shaped:
        raise InvalidRowForExport(
            f"row {index} ({data['id']!r}): its expected value does not fit the oracle type"
            f" {case['oracleType']}; a {format_name} export needs a valid set: run"
            " blueprint validate (--allow-invalid writes canonical formats only)"
        )


@dataclass
class ExportTally:
    """What an export left out, dropped or weakened, by kind, for the lossy report (the
    set-level fields it drops come from the mapping file)."""

    mapping: VendorMapping
    excluded: dict[str, list[str]] = field(default_factory=dict)
    dropped: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    weakened: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: set-level fields the export wrote (so they are not reported as lost)
    set_written: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    written: int = 0
    #: what a codec remembers from row to row of one export
    memo: dict[str, Any] = field(default_factory=dict)

    def exclude(self, kind: str, row: ExportRow) -> None:
        self.excluded.setdefault(kind, []).append(row.id)

    def drop(self, path: str, reason: str, row: ExportRow) -> None:
        """A field of this row that the export could not write as it is."""
        self.dropped.setdefault((path, reason), []).append(row.id)

    def weaken(self, row: ExportRow) -> None:
        for rule in self.mapping.weakened_rules(row.data, row.oracle_type, row.evaluator):
            self.weakened.setdefault((rule.field, rule.reason), []).append(row.id)

    def lossy(self, header: dict[str, Any], derived: frozenset[str]) -> list[LossyField]:
        # set-level values the reader made up (a name taken from the file) are not losses
        real = {key: value for key, value in header.items() if key not in derived}
        losses = self.mapping.set_loss(real, frozenset(self.set_written))
        losses += [self.mapping.exclusion(kind, ids) for kind, ids in self.excluded.items()]
        losses += [
            LossyField(path, reason, tuple(ids)) for (path, reason), ids in self.dropped.items()
        ]
        losses += [
            LossyField(path, reason, tuple(ids), kind="weakened")
            for (path, reason), ids in self.weakened.items()
        ]
        return losses

    def finish(
        self, header: dict[str, Any], files: list[Path], options: WriteOptions
    ) -> ExportResult:
        """The export result; raises (so nothing is committed) for a refused strict export."""
        lossy = self.lossy(header, options.derived_fields)
        if options.strict and lossy:
            raise LossyExportRefused(self.mapping.format, lossy)
        if options.every_row and any(item.kind == "excluded" for item in lossy):
            raise LossyExportRefused(self.mapping.format, lossy, every_row=True)
        return ExportResult(
            format=self.mapping.format,
            files=files,
            rows=self.written,
            lossy=lossy,
            notes=self.notes,
        )


# --- the payload: the case profile, and what the record cannot give back -------------------


def payload_of(metadata: Any) -> dict[str, Any] | None:
    """The blueprint payload inside vendor metadata, when the record came from Blueprint."""
    if isinstance(metadata, dict):
        payload = metadata.get(NAMESPACE)
        if isinstance(payload, str):  # kept as JSON text where the vendor would load strings
            try:
                payload = jsonvalues.loads(payload)
            except jsonvalues.JSONError:
                return None
        if isinstance(payload, dict) and isinstance(payload.get("case"), dict):
            return payload
    return None


@dataclass
class Values:
    """The canonical values a record gives back by itself, without the payload."""

    input: Any = ABSENT
    expected: Any = ABSENT
    extras: dict[str, Any] = field(default_factory=dict)


#: the payload's keys and the JSON types each must have
_PAYLOAD_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "id": (str,),
    "case": (dict,),
    "metadata": (dict,),
    "notMetadata": (list,),
    "native": (dict,),
    "noExpected": (bool,),
}


def _check_payload(payload: dict[str, Any]) -> None:
    """Refuse a payload someone damaged, with what is wrong (read as an unreadable row)."""
    for key, types in _PAYLOAD_TYPES.items():
        if key in payload and not isinstance(payload[key], types):
            raise ValueError(f"its blueprint metadata is damaged: {key} has the wrong type")
    if not all(isinstance(name, str) for name in payload.get("notMetadata", [])):
        raise ValueError("its blueprint metadata is damaged: notMetadata holds a non-text key")
    native_part = payload.get("native", {})
    for key, types in (("entries", (dict,)), ("keys", (list, type(None))), ("more", (dict,))):
        if key in native_part and not isinstance(native_part[key], types):
            raise ValueError(f"its blueprint metadata is damaged: native.{key} has the wrong type")


def _strip_payload(metadata: Any) -> Any:
    """Vendor metadata without the payload (ABSENT when nothing else was there)."""
    if not isinstance(metadata, dict) or NAMESPACE not in metadata:
        return metadata
    payload = payload_of(metadata)
    if payload is None:
        return metadata  # the vendor's own key of that name, not a payload
    rest = {key: value for key, value in metadata.items() if key != NAMESPACE}
    if "displaced" in payload:
        rest[NAMESPACE] = payload["displaced"]
    if not rest:
        was = payload.get("metadataWas")
        if was == "absent":
            return ABSENT
        if was == "null":
            return None
    return rest


# --- reading ---------------------------------------------------------------------------------


Records = Iterable[tuple[int | None, Any] | UnreadableRow]


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
    profile["extensions"] = {IMPORT_EXTENSION: {"format": format_name, "derived": derived}}
    row: dict[str, Any] = {"id": row_id, "input": input_value}
    if expected is not ABSENT:
        row["expected"] = expected
    row["metadata"] = {"case": profile, **(metadata or {})}
    return row


def extras_of(metadata: Any) -> dict[str, Any]:
    """The row metadata a vendor's metadata object gives: every key but the reserved ones."""
    if not isinstance(metadata, dict):
        return {}
    return {key: value for key, value in metadata.items() if key not in RESERVED_METADATA}


def oracle_for_expected(expected: Any) -> str:
    """The oracle type a bare expected value most plausibly has: the shape of another oracle
    type only when the value fits it whole, else a reference answer (any value is one)."""
    for oracle_type in ("acceptable-set", "expected-tool-calls", "expected-final-state"):
        shapes = EXPECTED_SHAPES[oracle_type] or ()
        if any(fits(model, expected) for model in shapes):
            return oracle_type
    return "reference-answer"


def read_json_document(path: Path) -> Any:
    text = read_text(path)
    try:
        return jsonvalues.loads(text)
    except jsonvalues.JSONError as error:
        raise ParseError(path, error.reason, line=error.line, column=error.column) from None


def json_array_records(path: Path, what: str) -> list[tuple[int | None, Any]]:
    document = read_json_document(path)
    if not isinstance(document, list):
        raise ParseError(path, f"a JSON file of {what}s is an array of them")
    return [(None, item) for item in document]


@dataclass(frozen=True)
class WriteContext:
    """What a record writer may need beyond the row: the set, the options, the file's form."""

    header: dict[str, Any]
    options: WriteOptions
    form: str
    #: what the set says for every record of the format (promptfoo's defaultTest)
    suite: Any = None


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
JSON_ARRAY: Final = Framing(
    opening=b"[", first=b"\n  ", between=b",\n  ", closing=b"\n]\n", empty=b"]\n"
)


class VendorCodec:
    """A vendor format: records read into rows and rows written as records.

    A subclass says how its records map to rows (:attr:`shape`, :meth:`native_row`,
    :meth:`values_of`), how a row is written in each mode (:meth:`blueprint_record`,
    :meth:`native_record`), and where its records keep free-form metadata
    (:attr:`metadata_key`). Reading, the payload, native restoring, exclusions and the lossy
    report are shared.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    lossless: ClassVar[bool] = False
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True
    #: extensions read, and the form each written extension takes (the first is the default)
    read_extensions: ClassVar[tuple[str, ...]]
    write_forms: ClassVar[dict[str, str]]
    #: extensions refused for writing, with the reason
    refused_forms: ClassVar[dict[str, str]] = {}
    #: how a record is named in messages ("a Braintrust record")
    what: ClassVar[str]
    shape: ClassVar[NativeShape]
    #: the record key holding free-form metadata, where the payload goes; None for a format
    #: whose records have no free-form place (a strict schema): what the record cannot say
    #: is then declared lost, field by field, by reading the record back
    metadata_key: ClassVar[str | None] = "metadata"
    #: whether the format is written only when named (--to), never chosen by an output's
    #: extension alone (omk's .yaml beside promptfoo's)
    named_only: ClassVar[bool] = False
    #: whether the file is one document holding every record (a TOML suite, a YAML file
    #: with a samples list) rather than records written one after another
    document: ClassVar[bool] = False

    @property
    def extensions(self) -> tuple[str, ...]:
        return tuple(self.write_forms)

    # --- to implement ------------------------------------------------------------------------

    def records(self, path: Path) -> Records:
        raise NotImplementedError

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        """A row from a record that did not come from Blueprint, inferred and flagged.

        ``suite`` is what the file says for every record (promptfoo's defaultTest), or None.
        """
        raise NotImplementedError

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        """What a record gives back by itself, as written in the given mode."""
        raise NotImplementedError

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        raise NotImplementedError

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        """The mapped keys of a record written back to the format it came from."""
        raise NotImplementedError

    def problem(self, record: dict[str, Any]) -> str | None:
        """Why a record that is an object still cannot be read, or None."""
        return None

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        """The exclusion kind for a row the format can never grade, or None."""
        return None

    def marks(self, record: dict[str, Any]) -> dict[str, Any]:
        """What the extension must also say of how the record was written (where promptfoo's
        YAML had unquoted dates), beyond its keys and values."""
        return {}

    def weakened(self, row: ExportRow, context: WriteContext) -> list[tuple[str, str]] | None:
        """The rules this row's record leaves unenforced, when the mapping file cannot say
        (field, reason); None to go by the mapping file's grading rules."""
        return None

    def framing(self, path: Path, context: WriteContext) -> Framing:
        return JSON_ARRAY if context.form == "json" else JSON_LINES

    def document_bytes(self, records: list[dict[str, Any]], context: WriteContext) -> bytes:
        """The whole file of a :attr:`document` format, holding every record written."""
        raise NotImplementedError

    def document_notes(
        self, records: list[dict[str, Any]], path: Path, context: WriteContext
    ) -> list[str]:
        """What the export must say of the document a :attr:`document` format wrote at
        ``path`` (where the vendor's loader would refuse it), from the records it holds."""
        return []

    def encode(self, record: dict[str, Any], context: WriteContext) -> bytes:
        return jsonvalues.dumps(record)

    def header_of(self, path: Path) -> dict[str, Any] | None:
        """Set-level fields the file carries (most vendor files carry none)."""
        return None

    def suite_of(self, header: dict[str, Any]) -> Any:
        """What the set says for every record of this format, when writing (None: nothing)."""
        return None

    def finish_native(
        self, record: dict[str, Any], restored: native.Restored, row: ExportRow
    ) -> None:
        """Adjust a record written back in native mode (after keys were regenerated)."""

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        return set()

    def sniff(self, path: Path, head: bytes) -> Fit:
        raise NotImplementedError

    # --- reading -----------------------------------------------------------------------------

    def open(self, path: Path) -> SetSource:
        records = self.records(path)
        return self.source(path, self.header_of(path), self.rows(records))

    def source(
        self, path: Path, header: dict[str, Any] | None, rows: Iterator[SourceRow | UnreadableRow]
    ) -> SetSource:
        """A source for a vendor file; set-level fields it has are completed with the ones
        the schema requires (the name taken from the file name, and said to be made up)."""
        made_up: set[str] = set()
        if header is not None:
            if "name" not in header:
                header = {"name": path.stem, **header}
                made_up.add("name")
            if "schemaVersion" not in header:
                header = {"schemaVersion": SCHEMA_VERSION, **header}
                made_up.add("schemaVersion")
        return SetSource(
            path=path, format=self.name, header=header, rows=rows, made_up=frozenset(made_up)
        )

    def rows(self, records: Records, suite: Any = None) -> Iterator[SourceRow | UnreadableRow]:
        ids = _UniqueIds()
        for index, item in enumerate(records):
            if isinstance(item, UnreadableRow):
                yield UnreadableRow(index, item.line, item.column, item.reason)
                continue
            line, record = item
            problem = (
                f"{self.what} is a JSON object; item {index + 1} is {jsonvalues.json_type(record)}"
                if not isinstance(record, dict)
                else self.problem(record)
            )
            if problem:
                yield UnreadableRow(index, line, None, problem)
                continue
            try:
                row = self.row_of(record, index, ids, suite)
            except ValueError as error:  # e.g. a damaged blueprint payload
                yield UnreadableRow(index, line, None, str(error))
                continue
            yield SourceRow(index, line, row)

    def row_of(
        self, record: dict[str, Any], position: int, ids: _UniqueIds, suite: Any
    ) -> dict[str, Any]:
        payload = payload_of(record.get(self.metadata_key)) if self.metadata_key else None
        if payload is None:
            row = self.native_row(record, position, suite)
            ids.settle(row, self.name)
            extensions = row["metadata"]["case"]["extensions"]
            # the record's keys first: what kind of record it is can depend on them
            extensions[self.name] = {"keys": list(record)}
            regenerated = self.native_record(ExportRow.of(row), _READING)
            extension = native.extension_for(self.shape, record, regenerated, row)
            extensions[self.name] = {**extension, **self.marks(record)}
            return row
        row = self.restored_row(record, payload, suite)
        ids.settle(row, self.name)
        return row

    def restored_row(
        self, record: dict[str, Any], payload: dict[str, Any], suite: Any
    ) -> dict[str, Any]:
        _check_payload(payload)
        case = dict(payload["case"])
        native_mode = "native" in payload
        if native_mode:

            def strip(key: str, value: Any) -> Any:
                return _strip_payload(value) if key == self.metadata_key else value

            extension = native.rebuild(self.shape, record, payload["native"], strip)
            extensions = case.get("extensions")
            case["extensions"] = {
                **(extensions if isinstance(extensions, dict) else {}),
                self.name: extension,
            }
        given = self.values_of(record, native_mode, suite)
        row: dict[str, Any] = {"id": payload.get("id"), "input": payload.get("input", given.input)}
        if row["input"] is ABSENT:
            raise ValueError(f"{self.what} from Blueprint lost its input")
        expected = payload.get("expected", given.expected)
        if expected is not ABSENT and not payload.get("noExpected"):
            row["expected"] = expected
        unwanted = payload.get("notMetadata", [])
        extras = {k: v for k, v in given.extras.items() if k not in unwanted}
        more = payload.get("metadata", {})
        row["metadata"] = {"case": case, **extras, **more}
        return row

    # --- writing -----------------------------------------------------------------------------

    def write(
        self, header: dict[str, Any], rows: Iterable[Any], path: Path, options: WriteOptions
    ) -> ExportResult:
        form = self.write_forms.get(path.suffix.lower(), next(iter(self.write_forms.values())))
        context = WriteContext(header, options, form, self.suite_of(header))
        tally = ExportTally(load_mapping(self.name))
        tally.set_written = self.set_fields_written(header, context)
        with AtomicOutputs([path], force=options.force, follow_links=options.in_place) as outputs:
            handle = outputs.open(path, "wb")
            records = (
                record
                for row in export_rows(rows, self.name, header, options.accepted)
                if (record := self.record_for(row, context, tally)) is not None
            )
            if self.document:
                collected = []
                for record in records:
                    collected.append(record)
                    tally.written += 1
                handle.write(self.document_bytes(collected, context))
                tally.notes += self.document_notes(collected, path, context)
                return tally.finish(header, [path], options)
            framing = self.framing(path, context)
            handle.write(framing.opening)
            for record in records:
                handle.write(framing.first if tally.written == 0 else framing.between)
                handle.write(self.encode(record, context))
                tally.written += 1
            handle.write(framing.closing if tally.written else framing.empty)
            return tally.finish(header, [path], options)

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        """The record to write for a row, or None when it is left out (and tallied)."""
        extension = row.extension(self.name)
        restored = None
        if extension is not None:
            restored = native.restore(
                self.shape, self.native_record(row, context), extension, row.data
            )
        # a vendor's own grading, restored as it was, is written whatever Blueprint would say
        natively_graded = restored is not None and all(
            key in restored.kept for key in self.shape.grading
        )
        if not natively_graded:
            kind = self.skip(row, context)
            if kind is not None:
                tally.exclude(kind, row)
                return None
            if row.human_only and not context.options.include_human_review:
                tally.exclude(HUMAN_REVIEW, row)
                return None
            own = self.weakened(row, context)
            if own is None:
                tally.weaken(row)
            for path, reason in own or []:
                tally.weakened.setdefault((path, reason), []).append(row.id)
        if restored is not None:
            record = restored.record
            self.finish_native(record, restored, row)
            tally.notes += restored.notes
            written = [key for key in restored.edited if key in record]
            if written:
                edited = ", ".join(written)
                tally.notes.append(
                    f"{row.id}: {edited} regenerated from the row, which was edited after it"
                    f" was imported from {self.name}"
                )
        else:
            record = self.blueprint_record(row, context)
        self.attach_payload(row, record, restored, context, tally)
        return record

    def attach_payload(
        self,
        row: ExportRow,
        record: dict[str, Any],
        restored: native.Restored | None,
        context: WriteContext,
        tally: ExportTally,
    ) -> None:
        """Put the case profile, and what the record cannot give back, in its metadata."""
        if self.metadata_key is None:
            self.declare_unkept(row, record, context, tally)
            return
        case = row.case
        if "evaluator" not in case and row.family_evaluator is not None:
            # the file cannot hold the case family, so the evaluator the row inherits from it
            # travels on the row, and comes back written there
            case = {**case, "evaluator": row.family_evaluator}
            tally.drop(
                "metadata.case.evaluator",
                f"the row inherits its evaluator from its case family, which a {self.name} file"
                " has no place for; the evaluator travels on the row and comes back written there",
                row,
            )
        native_mode = restored is not None
        payload: dict[str, Any] = {"id": row.id}
        if restored is not None:
            extensions = {k: v for k, v in case["extensions"].items() if k != self.name}
            case = {**case, "extensions": extensions}
            payload["case"] = case
            payload["native"] = restored.payload
        else:
            payload["case"] = case
        metadata = record.get(self.metadata_key, ABSENT)
        given = self.values_of(record, native_mode, context.suite)
        if not native.same(given.input, row.input):
            payload["input"] = row.input
        if row.has_expected and not native.same(given.expected, row.expected):
            payload["expected"] = row.expected
        elif not row.has_expected and given.expected is not ABSENT:
            payload["noExpected"] = True
        more = {
            key: value
            for key, value in row.extra.items()
            if key not in given.extras or not native.same(given.extras[key], value)
        }
        if more:
            payload["metadata"] = more
        unwanted = [key for key in given.extras if key not in row.extra]
        if unwanted:
            payload["notMetadata"] = unwanted
        if metadata is ABSENT or metadata is None:
            payload["metadataWas"] = "absent" if metadata is ABSENT else "null"
            metadata = {}
        elif not isinstance(metadata, dict):
            # the vendor's own metadata is not an object: the record goes as the vendor had
            # it, with no payload, and reading it back infers the row again
            again = self.row_of(record, 0, _UniqueIds(), context.suite)
            reason = (
                f"the record's {self.metadata_key} is not an object, so the case profile has"
                " no place to travel; reading the record back infers it again"
            )
            for path in changed_fields(row.data, again):
                tally.drop(path, reason, row)
            return
        elif NAMESPACE in metadata:
            payload["displaced"] = metadata[NAMESPACE]
        record[self.metadata_key] = {**metadata, NAMESPACE: self.payload_value(payload)}

    def payload_value(self, payload: dict[str, Any]) -> Any:
        return payload

    def declare_unkept(
        self, row: ExportRow, record: dict[str, Any], context: WriteContext, tally: ExportTally
    ) -> None:
        """For a format with no free-form place: read the record back as an import of the
        whole file would (numbered by its position, a repeated id renamed), and declare lost
        every field that does not come back as the row has it.

        Fields are compared one level into the row's metadata and its case profile
        (``metadata.case.provenance``), so the report names what was lost, with the reason
        the mapping file gives for that field and the row's oracle type.
        """
        ids = tally.memo.setdefault("ids", _UniqueIds())
        again = self.row_of(record, tally.written, ids, context.suite)
        for path in changed_fields(row.data, again):
            tally.drop(path, tally.mapping.row_loss_reason(path, row.oracle_type), row)

    # --- comparing native files --------------------------------------------------------------

    def native_records(self, path: Path) -> list[Any]:
        """The records a file holds, as the vendor would read them."""
        found = []
        for item in self.records(path):
            if isinstance(item, UnreadableRow):
                raise ParseError(path, item.reason, line=item.line, column=item.column)
            found.append(self.without_payload(item[1]))
        return found

    def without_payload(self, record: Any) -> Any:
        """A record as the vendor sees it: Blueprint's payload taken out of its metadata."""
        if not isinstance(record, dict) or self.metadata_key not in record:
            return record
        metadata = _strip_payload(record[self.metadata_key])
        rest = {key: value for key, value in record.items() if key != self.metadata_key}
        if metadata is ABSENT or metadata == {} or metadata is None:
            return rest
        return {**rest, self.metadata_key: metadata}

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        """What differs, for the vendor, between a file and the export of what it held."""
        return compare_records(self.native_records(original), self.native_records(exported))


#: the context native records are regenerated in while reading (nothing is written)
_READING: Final = WriteContext({}, WriteOptions(), "")


class _UniqueIds:
    """Makes row ids unique while reading: a repeat becomes ``id-2`` and is flagged."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def settle(self, row: dict[str, Any], format_name: str) -> None:
        row_id = row.get("id")
        if not isinstance(row_id, str):
            return
        if row_id not in self.seen:
            self.seen.add(row_id)
            return
        number = 2
        while f"{row_id}-{number}" in self.seen:
            number += 1
        unique = f"{row_id}-{number}"
        self.seen.add(unique)
        row["id"] = unique
        case = row["metadata"]["case"]
        case["caseId"] = unique
        # a damaged profile is left as it came (validation says why); only a missing part is added
        extensions = case.setdefault("extensions", {})
        if isinstance(extensions, dict):
            record = extensions.setdefault(IMPORT_EXTENSION, {"format": format_name})
            derived = record.setdefault("derived", {}) if isinstance(record, dict) else None
            if isinstance(derived, dict):
                derived["id"] = (
                    f"the id {row_id!r} repeats in the file; "
                    "this row was renamed to keep ids unique"
                )


def changed_fields(row: dict[str, Any], again: dict[str, Any]) -> list[str]:
    """The fields of ``row`` that ``again`` (the row read back) does not give back as they
    were: top-level fields, the keys of ``metadata`` and the keys of its case profile (an
    object on one side only is one changed field)."""
    changed: list[str] = []

    def compare(
        before: dict[str, Any], after: dict[str, Any], prefix: list[str], inner: str
    ) -> None:
        for key in dict.fromkeys([*before, *after]):
            old, new = before.get(key, ABSENT), after.get(key, ABSENT)
            if key == inner and isinstance(old, dict) and isinstance(new, dict):
                continue
            if not native.same(old, new):
                # named as the diff names it (metadata['odd key']), so the two always agree
                changed.append(jsonpath.join("$", [*prefix, key]).removeprefix("$."))

    compare(row, again, [], "metadata")
    metadata, metadata_again = row.get("metadata"), again.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata_again, dict):
        compare(metadata, metadata_again, ["metadata"], "case")
        case, case_again = metadata.get("case"), metadata_again.get("case")
        if isinstance(case, dict) and isinstance(case_again, dict):
            compare(case, case_again, ["metadata", "case"], "")
    return changed


def compare_records(before: list[Any], after: list[Any], what: str = "record") -> list[str]:
    """The differences between two lists of records, key by key, for a person to read."""
    changes = []
    if len(before) != len(after):
        changes.append(f"{len(before)} {what}s became {len(after)}")
    for number, (old, new) in enumerate(zip(before, after, strict=False), start=1):
        if native.same(old, new):
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            keys = [
                key
                for key in dict.fromkeys([*old, *new])
                if not native.same(old.get(key, ABSENT), new.get(key, ABSENT))
            ]
            changes.append(f"{what} {number}: {', '.join(keys)} changed")
        else:
            changes.append(f"{what} {number} changed")
    return changes
