"""The base class of the vendor codecs: reading, the payload, native restoring and writing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.core.errors import ParseError
from blueprint.core.judgeprompt import judged
from blueprint.core.model import SCHEMA_VERSION
from blueprint.formats import native
from blueprint.formats.base import (
    ExportResult,
    MergedRecord,
    RecordCount,
    SetSource,
    SourceRow,
    UnreadableRow,
    WriteOptions,
)
from blueprint.formats.mapping import NAMESPACE, load_mapping
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.sniffing import Fit
from blueprint.formats.vendor.exporting import (
    HUMAN_REVIEW,
    JSON_ARRAY,
    JSON_LINES,
    ExportRow,
    ExportTally,
    Framing,
    WriteContext,
    changed_fields,
    compare_records,
    export_rows,
    in_batches,
)
from blueprint.formats.vendor.importing import (
    IMPORT_EXTENSION,
    Records,
    Values,
    _check_payload,
    _strip_payload,
    _UniqueIds,
    kept_form,
    payload_of,
)
from blueprint.io import jsonvalues
from blueprint.io.atomic import AtomicOutputs

#: what an export graded by Blueprint's scorer says of its judged rows: the scorer runs the
#: runner's own judge with Blueprint's judge template, on the model the runner is set up with
JUDGED_NOTE: Final = (
    "{rows} are graded by the runner's own LLM judge ({runner}),"
    " with the judge prompt rendered from Blueprint's template for the row's oracle type (the"
    " reference, the acceptable set or the rubric in it); the judge model is the runner's"
    " configuration, and the judge counts as validated once a judge-report from its verdicts"
    " passes (docs/judge-validation.md)"
)
#: the formats whose runner has a Blueprint scorer (blueprint.integrations.<name>)
SCORED_FORMATS: Final = (
    "promptfoo",
    "deepeval",
    "langsmith",
    "braintrust",
    "inspect",
    "openai-evals",
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
    #: whether a record written back to its own format takes compact bookkeeping (none at
    #: all while it reads back as its row); False for a format whose payload is a column of
    #: its own rather than a key in the record's metadata
    compact: ClassVar[bool] = True
    #: whether the format is written only when named (--to), never chosen by an output's
    #: extension alone (omk's .yaml beside promptfoo's)
    named_only: ClassVar[bool] = False
    #: whether the file is one document holding every record (a TOML suite, a YAML file
    #: with a samples list) rather than records written one after another
    document: ClassVar[bool] = False

    @property
    def extensions(self) -> tuple[str, ...]:
        return tuple(self.write_forms)

    @property
    def record_noun(self) -> str:
        """What one of its records is called ("Braintrust record", "golden")."""
        return self.what.split(" ", 1)[-1]

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

    def applied_by_vendor(self, row: ExportRow) -> set[str]:
        """The fields among the mapping's weakened rules that this row's record has the vendor
        apply after all (a check written as the vendor's own assertion), so their rules are
        not reported; the conformance tests run the vendor on such records."""
        return set()

    def holds_media(self, row: ExportRow, context: WriteContext) -> bool:
        """Whether the record gives the model an image, audio, video or document in this
        row's input as what it is, where the format's prompt is otherwise text (the mapping
        says why, as ``media``)."""
        return False

    def framing(self, path: Path, context: WriteContext) -> Framing:
        return JSON_ARRAY if context.form == "json" else JSON_LINES

    def whole_document(self, context: WriteContext) -> bool:
        """Whether this export writes one document holding every record, though the format
        can be written record by record (a YAML file edited where it was read from)."""
        return False

    def document_bytes(self, records: list[dict[str, Any]], context: WriteContext) -> bytes:
        """The whole file of a :attr:`document` format, holding every record written."""
        raise NotImplementedError

    def document_files(
        self, records: list[dict[str, Any]], context: WriteContext
    ) -> tuple[bytes, dict[Path, bytes], list[str]]:
        """The whole document (:meth:`document_bytes`), the files the export writes beside it
        (the tests files a promptfoo config names, where their tests were edited; they exist
        already, so they are written only with ``--force``), and what to say of them."""
        return self.document_bytes(records, context), {}, []

    def document_notes(
        self, records: list[dict[str, Any]], path: Path, context: WriteContext
    ) -> list[str]:
        """What the export must say of the document a :attr:`document` format wrote at
        ``path`` (where the vendor's loader would refuse it), from the records it holds."""
        return []

    def observe(self, record: dict[str, Any], index: int, context: WriteContext) -> None:
        """See each record a streamed export writes, as it is written (a format's running
        checks of the whole file keep their state in ``context.state``)."""

    def stream_notes(self, path: Path, written: int, context: WriteContext) -> list[str]:
        """What a streamed export must say of the file it wrote, once every record is in;
        may raise to refuse it (nothing is then written)."""
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
        self,
        record: dict[str, Any],
        restored: native.Restored,
        row: ExportRow,
        context: WriteContext,
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
        self,
        path: Path,
        header: dict[str, Any] | None,
        rows: Iterator[SourceRow | UnreadableRow],
        count: RecordCount | None = None,
    ) -> SetSource:
        """A source for a vendor file; set-level fields it has are completed with the ones
        the schema requires (the name taken from the file name, and said to be made up).
        ``count`` says where its records went, when ``rows`` are not :meth:`rows`' own."""
        made_up: set[str] = set()
        if header is not None:
            if "name" not in header:
                header = {"name": path.stem, **header}
                made_up.add("name")
            if "schemaVersion" not in header:
                header = {"schemaVersion": SCHEMA_VERSION, **header}
                made_up.add("schemaVersion")
        if count is None:
            count = getattr(rows, "count", None)
        return SetSource(
            path=path,
            format=self.name,
            header=header,
            rows=rows,
            made_up=frozenset(made_up),
            records=count,
        )

    def rows(self, records: Records, suite: Any = None) -> CountedRows:
        """The rows of a file's records, counting where each record goes (``.count``): a
        row, a merge the reader declared, or a refusal (an unreadable row)."""
        count = RecordCount(self.record_noun)
        return CountedRows(self._rows(records, suite, count), count)

    def _rows(
        self, records: Records, suite: Any, count: RecordCount
    ) -> Iterator[SourceRow | UnreadableRow]:
        ids = _UniqueIds()
        index = 0  # the row's, which a merged record does not take
        for item in records:
            count.read += 1
            if isinstance(item, MergedRecord):
                count.merge(item.reason)
                continue
            if isinstance(item, UnreadableRow):
                count.refuse(item.line, item.reason, item.file)
                yield UnreadableRow(index, item.line, item.column, item.reason, item.file)
                index += 1
                continue
            line, record = item
            problem = (
                f"{self.what} is a JSON object; item {count.read} is {jsonvalues.json_type(record)}"
                if not isinstance(record, dict)
                else self.problem(record)
            )
            if not problem:
                try:
                    row = self.row_of(record, count.read - 1, ids, suite)
                except ValueError as error:  # e.g. a damaged blueprint payload
                    problem = str(error)
            if problem:
                count.refuse(line, problem)
                yield UnreadableRow(index, line, None, problem)
            else:
                count.rows += 1
                yield SourceRow(index, line, row)
            index += 1

    def row_of(
        self, record: dict[str, Any], position: int, ids: _UniqueIds, suite: Any
    ) -> dict[str, Any]:
        payload = payload_of(record.get(self.metadata_key)) if self.metadata_key else None
        if payload is None:
            return self.inferred_row(record, position, ids, suite)
        if kept_form(payload):
            return self.kept_row(record, payload, position, ids, suite)
        row = self.restored_row(record, payload, suite)
        ids.settle(row, self.name)
        return row

    def inferred_row(
        self,
        record: dict[str, Any],
        position: int,
        ids: _UniqueIds,
        suite: Any,
        *,
        kept: bool = True,
    ) -> dict[str, Any]:
        """The row a record with no bookkeeping reads as, with what is kept of it; without
        ``kept``, the extension that keeps it holds only the record's keys (see
        :meth:`read_back`)."""
        row = self.native_row(record, position, suite)
        ids.settle(row, self.name)
        extensions = row["metadata"]["case"]["extensions"]
        # the record's keys first: what kind of record it is can depend on them
        extensions[self.name] = {"keys": list(record)}
        if not kept:
            return row
        regenerated = self.native_record(ExportRow.of(row), _READING)
        extension = native.extension_for(self.shape, record, regenerated, row)
        extensions[self.name] = {**extension, **self.marks(record)}
        return row

    def kept_row(
        self,
        record: dict[str, Any],
        payload: dict[str, Any],
        position: int,
        ids: _UniqueIds,
        suite: Any,
    ) -> dict[str, Any]:
        """A record Blueprint wrote back to its own format with compact bookkeeping: the row
        it reads as, with the bookkeeping's changes applied while the record is as written.
        A record edited since keeps only its row's id; the rest is inferred again."""
        plain = self._as_written(record)
        # as the export saw it: read alone, its id not yet made unique among the file's
        row = self.inferred_row(plain, position, _UniqueIds(), suite)
        operations = payload["patch"]
        if native.digest(plain) != payload["digest"]:
            operations = [op for op in operations if isinstance(op, list) and op[:1] == ["/id"]]
            derived = row["metadata"]["case"]["extensions"][IMPORT_EXTENSION]["derived"]
            derived["metadata.case"] = (
                f"{self.what[:1].upper()}{self.what[1:]} was edited after Blueprint wrote it,"
                " so what Blueprint kept"
                " of its row no longer applies: the row is read from it again"
            )
        row = native.apply_changes(row, operations)
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
        context = WriteContext(header, options, form, self.suite_of(header), path)
        tally = ExportTally(load_mapping(self.name))
        tally.set_written = self.set_fields_written(header, context)
        with AtomicOutputs([path], force=options.force, follow_links=options.in_place) as outputs:
            handle = outputs.open(path, "wb")
            batches = self._batches(rows, context, tally)
            if self.document or self.whole_document(context):
                collected = []
                for batch in batches:
                    collected += batch
                if not collected:
                    # before the document, which may itself refuse to hold no record (omk)
                    tally.refuse(header, options)
                document, companions, notes = self.document_files(collected, context)
                handle.write(document)
                tally.notes += notes + self.document_notes(collected, path, context)
                result = tally.finish(header, [path, *companions], options)
                if companions:
                    # committed just before the file that names them
                    with AtomicOutputs(list(companions), force=True) as others:
                        for companion, content in companions.items():
                            others.open(companion, "wb").write(content)
                return result
            framing = self.framing(path, context)
            handle.write(framing.opening)
            index = 0
            for batch in batches:
                encoded = [self.encode(record, context) for record in batch]
                for record, text in zip(batch, encoded, strict=True):
                    handle.write(framing.first if index == 0 else framing.between)
                    handle.write(text)
                    self.observe(record, index, context)
                    index += 1
            if not tally.written:
                tally.refuse(header, options)  # before a format's own refusal of no record
            tally.notes += self.stream_notes(path, tally.written, context)
            handle.write(framing.closing if tally.written else framing.empty)
            return tally.finish(header, [path], options)

    def _batches(
        self, rows: Iterable[Any], context: WriteContext, tally: ExportTally
    ) -> Iterator[list[dict[str, Any]]]:
        """The records of the rows, a batch at a time (see :func:`in_batches`): a batch of
        rows is read, validated and taken apart, then its records are made, then (by the
        caller) encoded."""
        exported = export_rows(rows, self.name, context.header, context.options.accepted)
        for chunk in in_batches(exported):
            batch = []
            for row in chunk:
                record = self.record_for(row, context, tally)
                if record is not None:
                    batch.append(record)
                    tally.written += 1  # the next record's position in the file
            yield batch

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
        # whoever grades it, the model gets the record's input: media, where the format's
        # prompt is text, as its JSON text
        media = tally.mapping.media is not None and not isinstance(row.input, str)
        if media and not self.holds_media(row, context):
            tally.weaken_media(row)
        if not natively_graded:
            if context.options.graders == "blueprint":
                # Blueprint's scorer enforces every rule, a judged row's with the runner's judge
                if judged(row.data, row.family_evaluator):
                    tally.note_rows(
                        "judged", row, lambda rows: JUDGED_NOTE.format(rows=rows, runner=self.name)
                    )
            else:
                own = self.weakened(row, context)
                if own is None:
                    tally.weaken(row)
                for path, reason in own or []:
                    tally.weaken_rule(path, reason, row)
        if restored is not None:
            record = restored.record
            self.finish_native(record, restored, row, context)
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
        # a CSV record's keys are the columns of every record, in the file's order: whether
        # it reads back as its row is not known record by record, so it takes the full payload
        # Blueprint's scorer reads the row from the record's metadata alone: the whole payload
        compact = (
            restored is not None
            and self.compact
            and context.form != "csv"
            and context.options.graders != "blueprint"
        ) or context.options.clean
        if compact and self.keep_compact(row, record, context, tally):
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

    def keep_compact(
        self, row: ExportRow, record: dict[str, Any], context: WriteContext, tally: ExportTally
    ) -> bool:
        """Bookkeeping for a record written back to its own format, or written clean: none
        when the record reads back as the row, else one compact key (a digest of the record
        and the changes from the row it reads back as). With ``clean``, none at all, and
        every field the record does not give back is declared lost. False when the record's
        metadata is not an object, so the full payload's rules apply."""
        key = self.metadata_key
        assert key is not None
        metadata = record.get(key, ABSENT)
        if metadata is not ABSENT and metadata is not None and not isinstance(metadata, dict):
            return False
        # the vendor's own key of Blueprint's name stays the record's; were it read as
        # Blueprint's, the full payload displaces it
        owned = isinstance(metadata, dict) and NAMESPACE in metadata
        if owned and payload_of(metadata) is not None:
            return False
        if context.options.clean:
            again = self.read_back(
                row, self.as_read_back(record, context), tally.written, _UniqueIds(), context
            )
            reason = (
                f"--clean writes the {self.name} file with no Blueprint key, and the"
                f" {self.what.removeprefix('a ').removeprefix('an ')} alone does not say it"
            )
            for path in changed_fields(row.data, again):
                tally.drop(path, reason, row)
            return True
        again = self.inferred_row(
            self.as_read_back(record, context), tally.written, _UniqueIds(), context.suite
        )
        operations = native.changes(again, row.data)
        if not operations:
            return True
        if owned:
            return False  # the full payload displaces the vendor's key, and restores it
        payload: dict[str, Any] = {"digest": native.digest(record), "patch": operations}
        if metadata is ABSENT or metadata is None:
            payload["metadataWas"] = "absent" if metadata is ABSENT else "null"
            metadata = {}
        record[key] = {**metadata, NAMESPACE: self.payload_value(payload)}
        return True

    def payload_value(self, payload: dict[str, Any]) -> Any:
        return payload

    def as_read_back(self, record: dict[str, Any], context: WriteContext) -> dict[str, Any]:
        """A record as reading the written file gives it back, where the form written
        cannot hold all the record holds (promptfoo's dates, in JSON)."""
        return record

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
        again = self.read_back(row, record, tally.written, ids, context)
        tally.drop_fields(changed_fields(row.data, again), row)

    def read_back(
        self,
        row: ExportRow,
        record: dict[str, Any],
        position: int,
        ids: _UniqueIds,
        context: WriteContext,
    ) -> dict[str, Any]:
        """The row a record with no bookkeeping reads back as, to compare with ``row``, the
        row it was written from. Reading gives every row an extension of this format's own:
        when ``row`` has none, its extensions differ whatever that one holds, so what it
        would keep of the record is not worked out (the most costly part of reading)."""
        extensions = row.case.get("extensions")
        kept = isinstance(extensions, dict) and self.name in extensions
        return self.inferred_row(record, position, ids, context.suite, kept=kept)

    # --- comparing native files --------------------------------------------------------------

    def native_records(self, path: Path) -> list[Any]:
        """The records a file holds, as the vendor would read them."""
        found = []
        for item in self.records(path):
            if isinstance(item, UnreadableRow):
                raise ParseError(path, item.reason, line=item.line, column=item.column)
            record = item.record if isinstance(item, MergedRecord) else item[1]
            found.append(self.without_payload(record))
        return found

    def _as_written(self, record: dict[str, Any]) -> dict[str, Any]:
        """A record with compact bookkeeping as it was before the bookkeeping went in: its
        keys in their order, its metadata as it was (absent, null or an object)."""
        plain = {}
        for key, value in record.items():
            if key == self.metadata_key:
                value = _strip_payload(value)
                if value is ABSENT:
                    continue
            plain[key] = value
        return plain

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


class CountedRows:
    """A vendor file's rows as they are read, and the count of where its records went
    (complete once the rows are consumed). Iterating gives the reading itself."""

    __slots__ = ("_rows", "count")

    def __init__(self, rows: Iterator[SourceRow | UnreadableRow], count: RecordCount) -> None:
        self._rows = rows
        self.count = count

    def __iter__(self) -> Iterator[SourceRow | UnreadableRow]:
        return self._rows

    def __next__(self) -> SourceRow | UnreadableRow:
        return next(self._rows)


#: the context native records are regenerated in while reading (nothing is written)
_READING: Final = WriteContext({}, WriteOptions(), "")
