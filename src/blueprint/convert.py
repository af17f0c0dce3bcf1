"""Converting a set between formats, and round-tripping it to prove what a format loses."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blueprint.core.errors import ConversionRefused, NoRowsRead, UsageError
from blueprint.core.issues import ERROR_CODES, ValidationReport
from blueprint.core.model import SCHEMA_VERSION
from blueprint.diff import SetDiff, collect, diff_sets
from blueprint.formats import (
    FOLDER,
    ExportResult,
    LossyField,
    RecordCount,
    SetSource,
    StrPath,
    UnreadableRow,
    WriteOptions,
    get_codec,
    resolve_codec,
)
from blueprint.formats.native import without_kept_text
from blueprint.formats.setfile import set_file_for
from blueprint.formats.vendor import VendorCodec, exporting
from blueprint.formats.vendor.codec import SCORED_FORMATS
from blueprint.io.atomic import scratch_folder
from blueprint.io.samefile import refuse_writing_over
from blueprint.io.typedrows import is_typed_row, row_data
from blueprint.validation.checks import import_record, row_case
from blueprint.validation.stream import StreamValidator, ValidationOptions
from blueprint.validation.validate import few_collections


@dataclass(frozen=True)
class ConvertOptions:
    source_format: str | None = None
    target_format: str | None = None
    force: bool = False
    #: refuse an export that would drop any field (nothing is written)
    strict: bool = False
    #: export rows no automated grader may score, marked for human review
    include_human_review: bool = False
    #: write rubric rows as LLM-judge assertions where the format's runner does not grade
    #: them today (apollia)
    llm_judge: bool = False
    #: write the output even when the set is not valid (the result says it is not)
    allow_invalid: bool = False
    #: the form of the data files, for a format that writes a folder (huggingface)
    data_format: str | None = None
    #: in a CSV output, write cells a spreadsheet would run as formulas with a leading '
    spreadsheet_safe: bool = False
    #: write a vendor file with no Blueprint key at all (for a team that leaves)
    clean: bool = False
    #: "blueprint": the export is graded by Blueprint's scorer in the runner, so only what a
    #: judge or a person decides is reported weakened; "vendor": the runner's stock graders
    graders: str = "vendor"


@dataclass
class ConvertResult:
    source: Path
    source_format: str
    export: ExportResult
    #: what the conversion had to make up, e.g. a set name taken from the file name
    notes: list[str] = field(default_factory=list)
    #: what validating the set on its way through found
    report: ValidationReport | None = None
    #: for a vendor source: where each of its records went (a row, a merge, a refusal)
    records: RecordCount | None = None

    @property
    def valid(self) -> bool:
        return self.report is None or self.report.valid


def open_set(path: StrPath, format: str | None = None) -> SetSource:
    """Open a set file for reading in the format named, or the one its extension implies."""
    path = Path(path)
    return resolve_codec(path, format, reading=True).open(path)


def complete_header(source: SetSource) -> tuple[dict[str, Any], list[str]]:
    """The set-level fields to write, and a note for each one that had to be made up.

    A canonical file's set-level fields are taken as they are (valid or not); a vendor file
    that has some (a promptfoo config's description) gets the required ones made up.
    """
    source.require_structure()
    header = source.header
    if header is not None:
        notes = (
            [f"{source.path}: no set name, so the set is named {header['name']!r} after the file"]
            if "name" in source.made_up
            else []
        )
        return header, notes
    name = source.path.stem
    why = "no set file" if source.format in ("csv", "jsonl") else "no set name"
    completed = {"schemaVersion": SCHEMA_VERSION, "name": name, **(header or {})}
    return completed, [f"{source.path}: {why}, so the set is named {name!r} after the file"]


def kept_sources_from(header: dict[str, Any], source: Path, target: Path) -> dict[str, Any]:
    """A set's fields, written to ``target`` from ``source``: each file the set keeps the text
    of (``extensions.<format>.source``) named, as a set names it, from the folder of the file
    that holds the set, so that writing it back to that format, anywhere, knows where the
    file was read and what its relative names name."""
    extensions = header.get("extensions")
    if not isinstance(extensions, dict) or source.parent.resolve() == target.parent.resolve():
        return header
    rebased = dict(extensions)
    for name, kept in extensions.items():
        file = kept.get("source", {}).get("file") if isinstance(kept, dict) else None
        if not isinstance(file, str) or not isinstance(kept["source"], dict):
            continue
        try:
            read = os.path.normpath(source.parent.absolute() / file)
            named = os.path.relpath(read, target.parent.absolute())
        except ValueError:  # another drive, or a name that is no path
            continue
        rebased[name] = {**kept, "source": {**kept["source"], "file": Path(named).as_posix()}}
    return {**header, "extensions": rebased}


def data_rows(source: SetSource) -> Iterator[Any]:
    """The raw rows of a source; a row that cannot be read stops the conversion."""
    for item in source.rows:
        if isinstance(item, UnreadableRow):
            raise item.error(source.path)
        yield item.data


def convert(
    source_path: StrPath, target_path: StrPath, options: ConvertOptions | None = None
) -> ConvertResult:
    """Convert a set file to another format; the result lists every field the export lost."""
    source_path, target_path = Path(source_path), Path(target_path)
    options = options or ConvertOptions()
    reader = resolve_codec(source_path, options.source_format, reading=True)
    writer = resolve_codec(target_path, options.target_format, reading=False)
    _refuse_writing_over_the_input(source_path, target_path)
    forms: tuple[str, ...] = getattr(writer, "data_formats", ())
    if options.data_format is not None and options.data_format not in forms:
        raise UsageError(
            f"--data-format {options.data_format}: {writer.name} writes one file, whose"
            " extension says its form"
            if not forms
            else f"--data-format {options.data_format}: {writer.name} writes {', '.join(forms)}"
        )
    if options.graders == "blueprint" and writer.name not in SCORED_FORMATS:
        raise UsageError(
            f"--graders blueprint: {writer.name} has no Blueprint scorer yet; these do:"
            f" {', '.join(SCORED_FORMATS)} (docs/grading.md)"
        )
    if options.clean and writer.lossless:
        raise UsageError(
            f"--clean is for vendor formats: a {writer.name} file is Blueprint's own, with no"
            " Blueprint key to leave out"
        )
    # rows that fit the published schema decode straight into typed rows, which the
    # validator need not check against the schema again (canonical JSON Lines and JSON)
    source = getattr(reader, "open_typed", reader.open)(source_path)
    header, notes = complete_header(source)
    made_up = frozenset(header) - frozenset(source.header or {}) | source.made_up
    header = kept_sources_from(header, source_path, target_path)
    derived: Counter[str] = Counter()
    report = ValidationReport(source=str(source_path), format=reader.name)
    # only errors decide whether the set is written; warnings are validate's to report
    # no row ids kept: the report has no line a row, and memory stays flat
    validator = StreamValidator(report, ValidationOptions(select=ERROR_CODES, row_ids=False))
    validator.check_header(header, source.notes)
    validator.follow(source)
    accepted = _Accepted()
    read = Counter[str]()

    def tallied() -> Iterator[Any]:
        # the import leg: count what the reader had to infer, and validate every row on its
        # way through, so that an invalid set is never written as if it were fine. A batch
        # of rows is validated before the writer takes them (see in_batches)
        clean = True
        for batch in exporting.in_batches(source.rows):
            checked = []
            for item in batch:
                validator.report_reading()
                if isinstance(item, UnreadableRow):
                    raise item.error(source.path)
                validator.check_row(item, reader.name)
                data = row_data(item.data) if is_typed_row(item.data) else item.data
                # once anything is wrong, the writer checks every row itself, as alone (and
                # findings are only added, so a report found wrong stays wrong)
                if clean and (report.unreadable or report.issues):
                    clean = report.valid
                if clean:
                    accepted.add(data)
                case = row_case(data)
                if "extensions" in case:
                    for path in import_record(case).get("derived", {}):
                        derived[path] += 1
                checked.append(data)
            read["rows"] += len(checked)
            yield from checked
        validator.report_reading()
        _refuse_no_rows(source)
        if not report.valid and not options.allow_invalid:
            # raised inside the writer's loop, so the output is never committed
            raise ConversionRefused(source_path, report)

    with few_collections():  # a bulk pass, as validation is
        export = writer.write(
            header,
            tallied(),
            target_path,
            WriteOptions(
                force=options.force,
                strict=options.strict,
                include_human_review=options.include_human_review,
                llm_judge=options.llm_judge,
                derived_fields=made_up,
                data_format=options.data_format,
                spreadsheet_safe=options.spreadsheet_safe,
                clean=options.clean,
                graders=options.graders,
                accepted=accepted,
            ),
        )
    if options.graders == "blueprint":
        notes.append(
            f"grade it with Blueprint's scorer in {writer.name}:"
            f" blueprint.integrations.{writer.name.replace('-', '_')} (docs/grading.md), which"
            " runs the runner's own judge on judged rows and leaves rows for a person unscored"
        )
    stale = set_file_for(target_path)
    if not writer.lossless and stale.is_file():
        notes.append(
            f"{stale} beside it belongs to a Blueprint set written there before, not to this"
            f" {writer.name} file; remove it"
        )
    folder = FOLDER in writer.extensions
    if not folder and target_path.suffix.lower() not in writer.extensions:
        notes.append(
            f"{target_path} holds {writer.name}, which its extension does not say;"
            f" read it back with --from {writer.name}"
        )
    if source.records is not None and source.records.read:
        notes.append(f"read from {reader.name}: {source.records.summary()}")
    elif source.records is not None or not report.rows:
        what = source.records.summary() if source.records else "the set has no rows"
        notes.append(f"{source_path}: {what}, so {target_path} holds none")
    if derived:
        listed = ", ".join(f"{path} ({count} rows)" for path, count in derived.most_common())
        notes.append(
            f"read from {reader.name}: values derived on import, to review: {listed}"
            " (blueprint validate lists them as derived-value)"
        )
    return ConvertResult(source_path, reader.name, export, notes, report, source.records)


def _refuse_no_rows(source: SetSource, done: str = "converted") -> None:
    """Refuse a vendor file that holds records none of which became a row: a conversion of
    it would exit as if it had worked, writing an empty file. (A file of no records is an
    empty set, converted to an empty file, and the notes say so.)"""
    records = source.records
    if records is not None and records.read and not records.rows:
        raise NoRowsRead(source.path, records.summary(), done=done)


class _Accepted:
    """Whether a row is one of the last convert passed on, accepted by the validator with
    nothing wrong found before it: the writer then need not check it again."""

    def __init__(self) -> None:
        # the rows themselves, by identity: kept, so that no other row can take an id; the
        # newest batch's and the one before (the writer takes a batch at a time)
        self.rows: dict[int, Any] = {}
        self.before: dict[int, Any] = {}

    def add(self, data: Any) -> None:
        if len(self.rows) >= exporting.BATCH:  # the writer took the older batch long since
            self.before, self.rows = self.rows, {}
        self.rows[id(data)] = data

    def __call__(self, data: Any) -> bool:
        key = id(data)
        return self.rows.get(key) is data or self.before.get(key) is data


def _refuse_writing_over_the_input(source: Path, target: Path) -> None:
    """An output must not be the input, its set file, or a file the input's set file would
    be, by any name (a link, a hard link): with --force, a conversion would otherwise
    replace what it is still reading."""
    refuse_writing_over([target, set_file_for(target)], [source, set_file_for(source)])


@dataclass
class RoundtripResult:
    """Declared loss against actual loss for one export-and-import through a format."""

    via: str
    export: ExportResult
    diff: SetDiff
    #: (row id or "(set)", path): changed on the way back but not declared lossy
    undeclared: list[tuple[str, str]]
    #: (row id or "(set)", field): declared lossy but came back unchanged
    unobserved: list[tuple[str, str]]
    #: for a vendor file sent back to its own format: what differs between the records it
    #: holds and the records the export wrote (tests, assertions, vars...), or None when the
    #: source was not in that format
    vendor_changes: list[str] | None = None

    @property
    def exact(self) -> bool:
        return not self.undeclared and not self.unobserved and not self.vendor_changes


def _covers(lossy: LossyField, path: str) -> bool:
    name = lossy.field
    return name == "*" or path == name or path.startswith((name + ".", name + "["))


def roundtrip(
    path: StrPath, via: str, *, source_format: str | None = None, clean: bool = False
) -> RoundtripResult:
    """Export ``path`` through ``via``, read it back, and compare with the original
    (``clean``: the export writes no Blueprint key, as ``convert --clean`` does)."""
    path = Path(path)
    codec = get_codec(via)
    if clean and codec.lossless:
        raise UsageError(
            f"--clean is for vendor formats: a {codec.name} file is Blueprint's own, with no"
            " Blueprint key to leave out"
        )
    original_source = open_set(path, source_format)
    _refuse_a_file_its_vendor_refuses(original_source)
    original = collect(original_source, str(path))
    _refuse_no_rows(original_source, "round-tripped")
    header, _ = complete_header(original_source)
    native = original_source.format == codec.name and isinstance(codec, VendorCodec)
    suffix = path.suffix.lower() if path.suffix.lower() in codec.write_forms else None
    name = f".{path.stem}.roundtrip{suffix or codec.extensions[0]}"
    with _scratch(name, beside=path if native else None) as target:
        made_up = frozenset(header) - frozenset(original_source.header or {})
        # a format that holds no row of the set still proves its loss: all of it, declared
        options = WriteOptions(
            derived_fields=made_up | original_source.made_up, allow_empty=True, clean=clean
        )
        export = codec.write(header, iter(original.rows_by_key.values()), target, options)
        back_source = codec.open(target)
        back = collect(back_source, f"{path.name} via {via}")
        vendor_changes = (
            codec.compare_native(path, target)
            if isinstance(codec, VendorCodec) and native
            else None
        )
    if original.header is None:
        back.header = None  # the original had no set-level fields to compare against
    # a name the original's reader took from a file name says nothing of the set, on either
    # side; one only the second reader made up stands where the set's own value was lost
    # (a schema version is never lost: every reader knows its own)
    unsaid = original_source.made_up | (back_source.made_up & {"schemaVersion"})
    for loaded, made_up in ((original, unsaid), (back, unsaid | back_source.made_up)):
        if loaded.header is not None:
            loaded.header = {k: v for k, v in loaded.header.items() if k not in made_up}
    diff = diff_sets(original, back)

    declared: dict[str, list[LossyField]] = {}
    for lossy in export.lossy:
        if not lossy.changes_data:
            continue  # a weakened rule is written and read back; the vendor's grader ignores it
        for row_id in lossy.row_ids if lossy.scope == "row" else ("(set)",):
            declared.setdefault(row_id, []).append(lossy)
    actual: list[tuple[str, str]] = [("(set)", c.path.removeprefix("$.")) for c in diff.header]
    if back.header is None and original.header is not None:
        # the format has no set-level fields at all: every one the original had is gone
        # (the text kept of the file the set was read from says nothing of the set)
        actual += [
            ("(set)", name)
            for name in without_kept_text(original.header)
            if name != "schemaVersion"
        ]
    actual += [(row_id, "*") for row_id in diff.removed]
    actual += [(row_id, "*") for row_id in diff.added]
    for row in diff.changed:
        actual += [(row.id, change.path.removeprefix("$.")) for change in row.changes]
    if diff.order_changed:
        actual.append(("(set)", "row order"))

    undeclared = [
        (row_id, lost)
        for row_id, lost in actual
        if not any(_covers(lossy, lost) for lossy in declared.get(row_id, []))
    ]
    unobserved = [
        (row_id, lossy.field)
        for row_id, fields in declared.items()
        for lossy in fields
        if not any(r == row_id and _covers(lossy, lost) for r, lost in actual)
    ]
    return RoundtripResult(via, export, diff, undeclared, unobserved, vendor_changes)


def _refuse_a_file_its_vendor_refuses(source: SetSource) -> None:
    """Refuse, as convert does, a vendor file that breaks its vendor's own rules (an omk
    file in the legacy shape, without its schemaVersion): the vendor would not read the
    original, so no round trip of it is exact."""
    broken = [
        note for note in source.notes if note.code == "vendor-format" and note.severity == "error"
    ]
    if broken:
        report = ValidationReport(source=str(source.path), format=source.format)
        report.issues.extend(broken)
        raise ConversionRefused(source.path, report, done="round-tripped")


@contextmanager
def _scratch(name: str, *, beside: Path | None) -> Iterator[Path]:
    """Where a round trip writes its export, removed afterwards. A vendor file going back
    to its own format is written beside the original, so that the paths it names (prompts,
    var files, a defaultTest file) resolve as they do for the original."""
    if beside is not None and os.access(beside.parent, os.W_OK):
        target = beside.parent / name
        if not target.exists():
            try:
                yield target
            finally:
                if target.is_dir():  # a format that writes a folder
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    target.unlink(missing_ok=True)
            return
    with scratch_folder("roundtrip") as folder:
        yield Path(folder) / name
