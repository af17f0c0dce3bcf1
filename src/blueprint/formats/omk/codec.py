"""The omk codec: a sample set read as rows, rows written as one sample-set document."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar, Final

import yaml

from blueprint.core.errors import EmptyExportRefused, ParseError
from blueprint.core.issues import Issue, make_issue
from blueprint.core.model import KEBAB_CASE
from blueprint.formats import native
from blueprint.formats.base import SetSource
from blueprint.formats.mapping import load_mapping
from blueprint.formats.native import ABSENT, NativeShape, same
from blueprint.formats.omk.checks import assertions_of
from blueprint.formats.omk.files import (
    _sample_lines,
    _yaml_sample_lines,
    ambiguity,
    check_file,
    read_document,
    read_document_nodes,
)
from blueprint.formats.omk.rules import (
    ROOT_KEYS,
    SCHEMA_VERSION,
    Problem,
    SampleSetCheck,
    check_document,
)
from blueprint.formats.omk.samples import grading_of, oracle_of, prompt_of
from blueprint.formats.sniffing import Fit, json_head, text_of, top_level_value
from blueprint.formats.vendor import (
    STARTER_NOTE,
    ExportRow,
    ExportTally,
    Framing,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    imported_row,
    starter_note,
)
from blueprint.formats.yaml12 import dump_yaml
from blueprint.io import jsonvalues

#: Blueprint provenances and the omk value that says the same, where one does
PROVENANCE_TO_OMK: Final = {
    "expert-authored": "human",
    "observed-incident": "production-trace",
    "production-sample": "production-trace",
    "synthetic-perturbation": "llm-generated",
}

#: the rows a writer leaves out, by kind (the reasons are in exporters/omk.yaml)
EMPTY_PROMPT: Final = "empty-prompt"
FINAL_STATE: Final = "final-state"
NO_CHECK: Final = "no-check"
_KEBAB: Final = re.compile(KEBAB_CASE)


class EmptySampleSet(EmptyExportRefused):
    """omk refuses a sample set with no samples, so nothing is written."""


_SHAPE: Final = NativeShape(
    mapped={
        "sample_id": ("id",),
        "prompt": ("input",),
        "rubric": ("case.oracleType", "case.evaluationCriteria"),
        "assertions": ("expected", "case.oracleType", "case.checks"),
        "provenance": ("case.provenance",),
        "capability": ("case.caseFamily",),
    },
    grading=("rubric", "assertions"),
)


class OmkCodec(VendorCodec):
    name: ClassVar[str] = "omk"
    title: ClassVar[str] = "omk eval-sample set v2 (JSON or YAML)"
    read_extensions: ClassVar[tuple[str, ...]] = (".json", ".yaml", ".yml")
    write_forms: ClassVar[dict[str, str]] = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}
    what: ClassVar[str] = "an omk sample"
    shape: ClassVar[NativeShape] = _SHAPE
    metadata_key: ClassVar[str | None] = None
    named_only: ClassVar[bool] = True

    # --- reading -----------------------------------------------------------------------------

    def records(self, path: Path) -> Records:
        return self._read(path)[1]

    def open(self, path: Path) -> SetSource:
        document, node = read_document_nodes(path)
        header, records = self._parts(path, document, node)
        text = _yaml_text(path, document)
        if text is not None:
            # the file as its author wrote it, so writing the set back edits it in place
            kept = {**_root_extension(header or {}), "source": {"file": path.name, "text": text}}
            header = {"extensions": {self.name: kept}}
        source = self.source(path, header, self.rows(records))
        if header is not None:
            source.header_origin = "the document"
        problems = check_file(path, document, node)
        del node  # the lines are found: a large file's tree should not stay in memory
        source.notes = [self._issue(problem, document) for problem in problems]
        if path.suffix.lower() == ".json":
            starts = _sample_lines(path)
            source.line_of = lambda index: starts[index] if index < len(starts) else None
        return source

    def _issue(self, problem: Problem, document: Any) -> Issue:
        """A problem as a vendor-format issue, on the row of the sample it is in (if any)."""
        index: int | None = None
        row_id = None
        found = re.match(r"\$\.samples\[(\d+)\]", problem.path)
        samples = document.get("samples") if isinstance(document, dict) else document
        if found and isinstance(samples, list) and int(found.group(1)) < len(samples):
            index = int(found.group(1))
            sample = samples[index]
            sample_id = sample.get("sample_id") if isinstance(sample, dict) else None
            row_id = sample_id if isinstance(sample_id, str) else None
        return make_issue(
            "vendor-format",
            path=problem.path,
            row_index=index,
            row_id=row_id,
            line=problem.line,
            format=self.name,
            rule=problem.rule,
            reason=problem.message,
        )

    def _read(self, path: Path) -> tuple[dict[str, Any] | None, Records]:
        return self._parts(path, *read_document_nodes(path))

    def _parts(
        self, path: Path, document: Any, node: yaml.Node | None = None
    ) -> tuple[dict[str, Any] | None, Records]:
        """The set-level fields and the samples of a parsed document (``node``: its YAML
        node tree, which gives the line each sample starts on)."""
        if isinstance(document, list):
            samples: Any = document  # the legacy shape: read, and reported by the checker
            kept: dict[str, Any] = {}
        elif isinstance(document, dict):
            samples = document.get("samples", [])
            kept = {k: v for k, v in document.items() if k not in ("schemaVersion", "samples")}
            version = document.get("schemaVersion", ABSENT)
            if version is not ABSENT and version != SCHEMA_VERSION:
                kept["schemaVersion"] = version
        else:
            raise ParseError(
                path,
                f"an omk sample set is an object with schemaVersion {SCHEMA_VERSION} and"
                f" samples, not {jsonvalues.json_type(document)}",
            )
        if not isinstance(samples, list):
            raise ParseError(path, "samples must be an array of samples")
        # a file with nothing at its root but the samples has no set-level fields at all
        header = {"extensions": {self.name: kept}} if kept else None
        lines = _yaml_sample_lines(node, len(samples))
        return header, [(lines[index], sample) for index, sample in enumerate(samples)]

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        _, expected, _, _ = oracle_of(record)
        return Values(input=record.get("prompt", ABSENT), expected=expected)

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        derived: dict[str, str] = {}
        row_id = record.get("sample_id")
        if not isinstance(row_id, str) or not row_id:
            row_id = f"sample-{position + 1}"
            derived["id"] = "the sample has no sample_id; numbered by position"
        prompt = record.get("prompt", ABSENT)
        if prompt is ABSENT:
            prompt = None
            derived["input"] = "the sample has no prompt"
        oracle, expected, case, how = oracle_of(record)
        derived["metadata.case.oracleType"] = how
        if "evaluationCriteria" in case:
            derived["metadata.case.evaluationCriteria"] = (
                "taken from the rubric's criteria (dimension names and weights stay in"
                " case.extensions.omk)"
            )
        if "checks" in case:
            derived["metadata.case.checks"] = _CHECKS_READ
        if isinstance(expected, dict) and "satisfies" in expected:
            derived["expected"] = _CHECKS_READ
            derived["metadata.case.evaluator"] = "omk runs these assertions as code"
        capability = record.get("capability")
        if (
            isinstance(capability, list)
            and len(capability) == 1
            and isinstance(capability[0], str)
            and _KEBAB.match(capability[0])
        ):
            case["caseFamily"] = capability[0]
            derived["metadata.case.caseFamily"] = "taken from the sample's one capability"
        derived["metadata.case.expectedBehavior"] = "omk samples carry no behaviour description"
        return imported_row(
            row_id=row_id,
            input_value=prompt,
            expected=expected,
            oracle_type=oracle,
            expected_behavior="(imported from omk without a behaviour description)",
            format_name=self.name,
            derived=derived,
            case=case,
        )

    # --- writing -----------------------------------------------------------------------------

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        if row.oracle_type == "expected-final-state":
            return FINAL_STATE
        if row.input == "":
            return EMPTY_PROMPT
        if row.oracle_type != "expected-behavior-only" and not self._grading(row, context):
            return NO_CHECK
        return None

    def weakened(self, row: ExportRow, context: WriteContext) -> list[tuple[str, str]] | None:
        applied = self.applied_by_vendor(row)
        rules = load_mapping(self.name).weakened_rules(row.data, row.oracle_type, row.evaluator)
        return [(rule.field, rule.reason) for rule in rules if rule.field not in applied]

    def applied_by_vendor(self, row: ExportRow) -> set[str]:
        # a check written as the omk assertion that says the same is applied by omk itself
        expected = row.expected if row.has_expected else None
        written = {
            "metadata.case.checks": all(
                assertions_of(check) is not None for check in row.case.get("checks") or []
            ),
            "expected.satisfies": isinstance(expected, dict)
            and assertions_of(expected.get("satisfies")) is not None,
        }
        return {field for field, applied in written.items() if applied}

    def _grading(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        """:func:`grading_of` the row, worked out once for the row's check and its sample."""
        last = context.state.get("grading")
        if last is not None and last[0] is row:
            return last[1]
        grading = grading_of(row)
        context.state["grading"] = (row, grading)
        return grading

    def _sample(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        sample: dict[str, Any] = {"sample_id": row.id, "prompt": prompt_of(row.input)}
        sample.update(self._grading(row, context))
        family = row.case.get("caseFamily")
        if isinstance(family, str):
            sample["capability"] = [family]
        provenance = PROVENANCE_TO_OMK.get(row.case.get("provenance", ""))
        if provenance is not None:
            sample["provenance"] = provenance
        return sample

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return self._sample(row, context)

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return self._sample(row, context)

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        record = super().record_for(row, context, tally)
        if record is None or not row.starter:
            return record
        # omk's loader refuses any field it does not know: a YAML file says it in a comment
        # above the sample, a JSON file cannot say it at all
        if context.form == "yaml":
            context.remember_starter(record)
        how = "an omk sample has no field for it (omk's loader refuses unknown fields): " + (
            f'each has the comment "# {STARTER_NOTE}" above it'
            if context.form == "yaml"
            else "a JSON file has no comment either, so nothing in it says so (write .yaml)"
        )
        tally.note_rows("starters", row, lambda rows: starter_note(rows, how))
        return record

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        if _root_extension(header) or (
            context.form == "yaml" and native.kept_source(header, "omk")
        ):
            return {"extensions.omk"}
        return set()

    # one sample set, written a sample at a time: the root keys, then ``samples``, whose
    # items each encode as they stand in the whole document (YAML: a block sequence in a
    # mapping is not indented; JSON: orjson's two-space indent at the items' depth). Only a
    # YAML file kept from an import is written whole, edited where it was read from.

    def whole_document(self, context: WriteContext) -> bool:
        return context.form == "yaml" and native.kept_source(context.header, "omk") is not None

    def framing(self, path: Path, context: WriteContext) -> Framing:
        head = _document([], context)
        del head["samples"]
        if context.form == "yaml":
            return Framing(opening=dump_yaml(head) + b"samples:", first=b"\n")
        start = jsonvalues.dumps(head, indent=True)[: -len(b"\n}")]
        return Framing(
            opening=start + b',\n  "samples": [',
            first=b"\n",
            between=b",\n",
            closing=b"\n  ]\n}\n",
        )

    def encode(self, record: dict[str, Any], context: WriteContext) -> bytes:
        if context.form == "yaml":
            text = dump_yaml([record])
            return _STARTER_COMMENT + text if context.is_starter(record) else text
        lines = jsonvalues.dumps(record, indent=True).split(b"\n")
        return b"\n".join(b"    " + line for line in lines)

    def observe(self, record: dict[str, Any], index: int, context: WriteContext) -> None:
        check = context.state.get("check")
        if check is None:
            root = _document([], context)
            del root["samples"]
            check = context.state["check"] = SampleSetCheck(root)
        check.add(index, record)

    def stream_notes(self, path: Path, written: int, context: WriteContext) -> list[str]:
        if not written:
            raise _empty_refusal()
        check = context.state["check"]
        check.close()
        return _loader_notes(path, check.problems)

    def document_bytes(self, records: list[dict[str, Any]], context: WriteContext) -> bytes:
        if not records:
            raise _empty_refusal()
        document = _document(records, context)
        # a file kept from an import is edited where it was read from, without comments
        context.starters.clear()
        text = native.kept_source(context.header, "omk")
        if text is not None:
            from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

            as_list = isinstance(yamlkeep.document_of(text), list)
            head = {key: value for key, value in document.items() if key != "samples"}
            edited = yamlkeep.rewrite(
                text,
                None if as_list else "samples",
                [(record, record) for record in records],
                None if as_list else head,
            )
            if edited is not None:
                return edited.encode("utf-8")
        return dump_yaml(document)

    def document_notes(
        self, records: list[dict[str, Any]], path: Path, context: WriteContext
    ) -> list[str]:
        # only what no valid set holds can break omk's rules here: values kept from an omk
        # file that already broke them, or ids a set written with --allow-invalid repeats.
        # The document is checked as written, not read back: both forms give back exactly
        # the values they were written from
        return _loader_notes(path, check_document(_document(records, context)))

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        changes = []
        before, after = read_document(original), read_document(exported)
        if isinstance(before, dict) and isinstance(after, dict):
            root = [
                key
                for key in dict.fromkeys([*before, *after])
                if key != "samples" and not same(before.get(key, ABSENT), after.get(key, ABSENT))
            ]
            if root:
                changes.append(f"the sample set's {', '.join(root)} changed")
        return changes + super().compare_native(original, exported)

    def sniff(self, path: Path, head: bytes) -> Fit:
        why = f"an omk sample set declares schemaVersion {SCHEMA_VERSION}"
        if path.suffix.lower() == ".json":
            outline = json_head(head)
            if outline.kind != "object":
                return Fit.no(why)
            version = top_level_value(head, "schemaVersion")
            return Fit.yes() if version == SCHEMA_VERSION else Fit.no(why)
        for line in text_of(head).splitlines():
            found = re.match(r"""^schemaVersion\s*:\s*(["']?)(.*?)\1\s*(#.*)?$""", line)
            if found:
                return Fit.yes() if found.group(2) == SCHEMA_VERSION else Fit.no(why)
        return Fit.no(why)

    def sniff_named(self, path: Path, head: bytes) -> Fit:
        """Whether a file named as an omk sample set is one: more loosely than detection, a
        set of another schema version, without one, or in the legacy shape (a bare list of
        samples) is read, and omk's rules say what its loader would refuse; a document whose
        top level holds none of a sample set's keys (nor a list of samples) is another
        format's file."""
        why = (
            "an omk sample set is an object with schemaVersion and samples (or, legacy, a list"
            " of samples with sample_id and prompt)"
        )
        version = top_level_value(head, "schemaVersion")
        if isinstance(version, str) and version.startswith("blueprint."):
            return Fit.no(f"{why}; this is a Blueprint set")
        text = text_of(head)
        outline = json_head(head)  # JSON is YAML too: a .yaml file may hold it
        if outline.kind == "object":
            keys = set(outline.keys)
            return Fit.yes() if not keys or keys & set(ROOT_KEYS) else Fit.no(why)
        if outline.kind == "array":
            first = set(outline.keys)
            return Fit.yes() if first & {"sample_id", "prompt"} else Fit.no(why)
        if path.suffix.lower() == ".json":
            return Fit.yes()  # not JSON: the reader says where it breaks
        top = set(re.findall(r"^([A-Za-z_][\w.-]*)\s*:", text, flags=re.MULTILINE))
        if re.search(r"^-\s", text, flags=re.MULTILINE) and not top:  # a bare list
            return Fit.yes() if re.search(r"\b(sample_id|prompt)\s*:", text) else Fit.no(why)
        return Fit.yes() if not top or top & set(ROOT_KEYS) else Fit.no(why)


#: how an import reads a sample's assertions as checks
_CHECKS_READ: Final = (
    "the sample's assertions that check the output's text, as the checks that say the same"
    " (contains as contains under lowercase, equals under trim, assert-set as all or any)"
)

#: the comment above a starter row's sample in a YAML file
_STARTER_COMMENT: Final = f"# {STARTER_NOTE}\n".encode()


def _empty_refusal() -> EmptySampleSet:
    return EmptySampleSet(
        "an omk sample set holds at least one sample (omk's loader refuses an empty"
        " samples list), and no row of this set can be written as one: rows whose"
        " oracle omk cannot check are left out, and human-review rows too unless"
        " --include-human-review is given. Nothing was written"
    )


def _loader_notes(path: Path, problems: list[Problem]) -> list[str]:
    found = [problem for problem in [ambiguity(path)] if problem]
    return [
        f"{path}: omk's loader will refuse this file: {problem.path}: {problem.message}"
        for problem in found + problems
    ]


def _document(records: list[dict[str, Any]], context: WriteContext) -> dict[str, Any]:
    """The sample set written: the root fields an import kept, then the samples."""
    kept = _root_extension(context.header)
    document: dict[str, Any] = {"schemaVersion": kept.get("schemaVersion", SCHEMA_VERSION)}
    document.update({k: v for k, v in kept.items() if k not in ("schemaVersion", "samples")})
    document["samples"] = records
    return document


def _extension(header: dict[str, Any]) -> dict[str, Any]:
    extensions = header.get("extensions")
    kept = extensions.get("omk") if isinstance(extensions, dict) else None
    return kept if isinstance(kept, dict) else {}


def _root_extension(header: dict[str, Any]) -> dict[str, Any]:
    """The root keys of the sample set an import kept (the text of its file apart)."""
    return {key: value for key, value in _extension(header).items() if key != "source"}


def _yaml_text(path: Path, document: Any) -> str | None:
    """The text of a YAML sample set to keep in the set (None for a file whose root has a
    key of that name: omk has none, and it stays the file's)."""
    if isinstance(document, dict) and "source" in document:
        return None
    return native.text_to_keep(path, (".yaml", ".yml"))
