"""The promptfoo codec: tests and configs read as rows, rows written as tests or a config."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Final

from blueprint.formats import native
from blueprint.formats.base import SetSource, SourceRow, UnreadableRow
from blueprint.formats.mapping import load_mapping
from blueprint.formats.native import ABSENT, NativeShape, Restored, same
from blueprint.formats.promptfoo.assertions import (
    _flat,
    asserted,
    assertions_for,
    expected_from_assertions,
)
from blueprint.formats.promptfoo.cases import (
    CONTEXT_VARS,
    Suite,
    ignored_assertions,
    input_from_vars,
    merge_defaults,
    merged_vars,
    moved_prompts,
    native_input,
    suite_of_header,
    vars_for,
    vars_of_input,
)
from blueprint.formats.promptfoo.checks import nested_json_schema
from blueprint.formats.promptfoo.config import load
from blueprint.formats.promptfoo.importchecks import infer
from blueprint.formats.promptfoo.judging import assertions_of, judge_weakened, scored, wired
from blueprint.formats.promptfoo.prompts import read_prompts
from blueprint.formats.promptfoo.references import (
    Unkept,
    as_read,
    moved,
    names_test_files,
    read_from,
    references_kept,
    references_written,
)
from blueprint.formats.promptfoo.templating import _TEMPLATE, risky, unliteral
from blueprint.formats.sniffing import Fit, csv_header, first_line_object, json_head, text_of
from blueprint.formats.vendor import (
    ExportRow,
    ExportTally,
    Framing,
    Values,
    VendorCodec,
    WriteContext,
    compare_records,
    extras_of,
    imported_row,
)
from blueprint.formats.vendor.importing import kept_form, payload_of
from blueprint.formats.yaml12 import YamlDate, date_paths, dump_yaml, mark_dates
from blueprint.io import jsonvalues

FINAL_STATE: Final = "final-state"
NO_ASSERTION: Final = "no-assertion"
_ID_PREFIX: Final = re.compile(r"^\[([^\]]+)\]")


_SHAPE: Final = NativeShape(
    mapped={
        "description": ("case.expectedBehavior",),
        "vars": ("input",),
        "assert": (
            "expected",
            "case.oracleType",
            "case.evaluator",
            "case.evaluationCriteria",
            "case.expectedBehavior",
            "case.unacceptableBehavior",
            "case.passLogic",
            "case.checks",
            "case.passThreshold",
        ),
        "metadata": ("id", "extras"),
    },
    grading=("assert",),
)


class PromptfooCodec(VendorCodec):
    name: ClassVar[str] = "promptfoo"
    title: ClassVar[str] = "promptfoo tests or config (YAML, JSON, JSONL; reads CSV tests)"
    read_extensions: ClassVar[tuple[str, ...]] = (".yaml", ".yml", ".json", ".jsonl", ".csv")
    write_forms: ClassVar[dict[str, str]] = {
        ".yaml": "yaml",
        ".yml": "yaml",
        ".json": "json",
        ".jsonl": "jsonl",
    }
    refused_forms: ClassVar[dict[str, str]] = {
        ".csv": "promptfoo reads an __expected cell as assertion syntax and trims it, and its"
        " CSV cells are text only, so a CSV tests file cannot say what the set says; write"
        " .yaml, .json or .jsonl"
    }
    what: ClassVar[str] = "a promptfoo test case"
    shape: ClassVar[NativeShape] = _SHAPE

    # --- reading -----------------------------------------------------------------------------

    def open(self, path: Path) -> SetSource:
        loaded = load(path)
        suite = loaded.suite
        # the prompts are read once, and kept: writing reads each test as this import did
        suite.prompts = read_prompts(suite.config, path.parent)
        header: dict[str, Any] | None = None
        kept: dict[str, Any] = {}
        if suite.config is not None:
            kept["config"] = suite.config
            if suite.defaults and not isinstance(suite.config.get("defaultTest"), dict):
                # the defaultTest is in another file: what it said, as read, so writing
                # grades and reads each test as reading did
                kept["defaultTest"] = suite.defaults
        if suite.prompts is not None:
            kept["prompts"] = suite.prompts.kept()
        # a config with scenarios is written back as the tests they expand to, not in place
        text = None if suite.scenario_tests else native.text_to_keep(path, (".yaml", ".yml"))
        if text is not None:
            # the file as its author wrote it, so writing the set back edits it in place
            kept["source"] = {"file": path.name, "text": text}
        if kept:
            header = {"extensions": {"promptfoo": kept}}
            if suite.description is not ABSENT:
                header = {"description": suite.description, **header}
        rows = self.rows(loaded.tests, suite)
        return self.source(path, header, _placed(rows, loaded.origins), rows.count)

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        suite = suite or Suite()
        derived: dict[str, str] = {}
        metadata = record.get("metadata")
        description = record.get("description")
        row_id = metadata.get("id") if isinstance(metadata, dict) else None
        if not isinstance(row_id, str) or not row_id:
            match = _ID_PREFIX.match(description) if isinstance(description, str) else None
            if match:
                row_id = match.group(1)
            else:
                row_id = f"test-{position + 1}"
                derived["id"] = "promptfoo tests have no id; numbered by position"
        values = self.values_of(record, True, suite)
        value = values.input
        if value is ABSENT:
            value = {}
        variables = input_from_vars(merged_vars(record, suite), authored=False)
        if variables is ABSENT:
            variables = {}
        self._flag_vars(record, suite, variables, derived)
        prompt_note = native_input(record, suite)[1]
        scenario = suite.scenario_tests.get(position)
        if scenario is not None:
            scenario = f"{scenario}, as promptfoo runs it (the entry's vars, then the test's)"
        if prompt_note or scenario:
            derived["input"] = "; ".join(
                filter(None, (scenario, prompt_note, derived.get("input")))
            )
        own = record.get("assert")
        defaults = suite.defaults.get("assert")
        assertions = [
            *(defaults if isinstance(defaults, list) else []),
            *(own if isinstance(own, list) else []),
        ]
        inference = infer(
            assertions,
            variables if isinstance(variables, dict) else {"input": variables},
            record,
            suite,
        )
        derived.update(inference.derived)
        derived["metadata.case.oracleType"] = "; ".join(
            [
                "inferred from the assertions ("
                + ", ".join(str(a.get("type")) for a in _flat(assertions))
                + ")"
                if assertions
                else "the test has no assertion, so nothing checks it automatically: promptfoo"
                " runs it with no check and passes it",
                *inference.caveats,
                *ignored_assertions(suite),
            ]
        )
        case = dict(inference.case)
        if inference.evaluator:
            case["evaluator"] = inference.evaluator
            derived["metadata.case.evaluator"] = "inferred from the assertion types"
        behaviour = description if isinstance(description, str) and description.strip() else None
        if behaviour is None:
            derived["metadata.case.expectedBehavior"] = "the test has no description"
        else:
            derived["metadata.case.expectedBehavior"] = "taken from the test's description"
        return imported_row(
            row_id=row_id,
            input_value=value,
            expected=inference.expected,
            oracle_type=inference.oracle,
            expected_behavior=behaviour or "(imported from promptfoo without a description)",
            format_name=self.name,
            derived=derived,
            case=case,
            metadata=values.extras,
        )

    @staticmethod
    def _flag_vars(
        record: dict[str, Any], suite: Suite, value: Any, derived: dict[str, str]
    ) -> None:
        if not isinstance(value, dict):
            if isinstance(value, str | list) and not isinstance(record.get("vars"), dict):
                derived["input"] = (
                    "the test's vars are a file reference promptfoo loads at run time"
                )
            return
        default_options = suite.defaults.get("options")
        own_options = record.get("options")
        options = {
            **(default_options if isinstance(default_options, dict) else {}),
            **(own_options if isinstance(own_options, dict) else {}),
        }
        notes = []
        lists = [k for k, v in value.items() if isinstance(v, list)]
        if lists and not options.get("disableVarExpansion"):
            notes.append(f"promptfoo runs one test per value of the list vars {', '.join(lists)}")
        files = [k for k, v in value.items() if isinstance(v, str) and v.startswith("file://")]
        if files:
            notes.append(f"{', '.join(files)} name files promptfoo loads at run time")
        dates = [k for k, v in value.items() if isinstance(v, YamlDate)]
        if dates:
            notes.append(f"promptfoo reads {', '.join(dates)} as dates (unquoted in its YAML)")
        templates = [k for k, v in value.items() if isinstance(v, str) and _TEMPLATE.search(v)]
        if templates:
            notes.append(f"{', '.join(templates)} hold promptfoo templates, rendered at run time")
        if notes:
            derived["input"] = "; ".join(notes)

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        suite = suite or Suite()
        metadata = record.get("metadata")
        if not native_mode:
            variables = record.get("vars")
            return Values(
                input=input_from_vars(variables, authored=True),
                expected=expected_from_assertions(record.get("assert")),
            )
        extras = extras_of(metadata)
        if isinstance(metadata, dict) and isinstance(metadata.get("id"), str) and metadata["id"]:
            extras.pop("id", None)  # it is the row's id
        return Values(
            input=native_input(record, suite)[0],
            expected=ABSENT,
            extras=extras,
        )

    # --- writing -----------------------------------------------------------------------------

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        variables = vars_for(row.input)
        for key in CONTEXT_VARS:
            value = row.extra.get(key)
            if key not in variables and isinstance(value, list) and value:
                variables[key] = value
        # rows for human review go out unasserted: an automated check would misrepresent them
        assertions = [] if row.human_only else self._assertions(row, context)
        test: dict[str, Any] = {"description": _description(row), "vars": variables}
        if assertions:
            test["assert"] = assertions
        if any(isinstance(value, list) for value in variables.values()):
            test["options"] = {"disableVarExpansion": True}
        metadata: dict[str, Any] = {"id": row.id, **row.labels()}
        if risky(row.id):
            del metadata["id"]
        test["metadata"] = metadata
        return test

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        entry = ((row.extension(self.name) or {}).get("native") or {}).get("vars")
        original = entry.get("value", ABSENT) if isinstance(entry, dict) else ABSENT
        given = vars_of_input(row.input, context.suite, original)[0]
        defaults = context.suite.defaults.get("vars") if context.suite is not None else None
        if isinstance(given, dict) and isinstance(defaults, dict):
            # the input holds the defaultTest's vars too; promptfoo merges them in again, so a
            # test keeps only its own (a file:// var of the defaultTest stays a file promptfoo
            # loads, not text written into the test)
            own = original if isinstance(original, dict) else {}
            given = {
                key: value
                for key, value in given.items()
                if key in own or key not in defaults or not same(value, defaults[key])
            }
        test: dict[str, Any] = {
            "description": row.case["expectedBehavior"],
            "vars": vars_for(given),
        }
        assertions = self._assertions(row, context)
        if assertions:
            test["assert"] = assertions
        test["metadata"] = {"id": row.id, **row.extra}
        return test

    def marks(self, record: dict[str, Any]) -> dict[str, Any]:
        dates = date_paths(record)
        return {"dates": dates} if dates else {}

    def finish_native(
        self, record: dict[str, Any], restored: Restored, row: ExportRow, context: WriteContext
    ) -> None:
        extension = row.extension(self.name) or {}
        if "assert" in restored.edited and "assert" not in record:
            # Blueprint has no assertion for the row as it reads now, but the test's own
            # checks still say what the row says (its description was edited): they stay
            checks = self._checks_still_meant(row, context)
            if checks is not None:
                record["assert"] = checks
                restored.edited.remove("assert")
                restored.kept.add("assert")
        mark_dates(record, extension.get("dates"))
        variables = record.get("vars")
        if "vars" in restored.kept or not isinstance(variables, dict):
            return
        # the input was edited: vars it did not change keep the suite's own text (a live
        # template, a file:// reference, a list promptfoo expands); the edited ones are
        # Blueprint's, literal, and a list among them must not multiply the test
        entry = restored.payload["entries"].get("vars")
        original = entry.get("value") if isinstance(entry, dict) else None
        # what the vars say, as native_record made them of the input (the config's prompt
        # and its vars, or an edited prompt read back into its vars)
        value = {key: unliteral(item) for key, item in variables.items()}
        if isinstance(row.input, str) and "input" not in variables:
            restored.notes.append(
                f"{row.id}: the edited input is read back into the vars"
                f" {', '.join(variables)} of the config's prompt"
            )
        authored_list = False
        edited = []
        for key, item in list(variables.items()):
            if (
                isinstance(original, dict)
                and key in original
                and same(value.get(key), original[key])
            ):
                variables[key] = original[key]
                continue
            edited.append(key)
            authored_list = authored_list or isinstance(item, list)
        # the vars the edit left alone are back as the suite wrote them: its dates too
        mark_dates(record, extension.get("dates"))
        if authored_list:
            options = record.get("options")
            record["options"] = {
                **(options if isinstance(options, dict) else {}),
                "disableVarExpansion": True,
            }
        assertions = record.get("assert") if "assert" in restored.kept else None
        used = [
            key
            for key in edited
            if re.search(r"\{\{\s*" + re.escape(key) + r"\b", jsonvalues.dumps_text(assertions))
        ]
        if used:
            restored.notes.append(
                f"{row.id}: the test's own assertions read the edited vars {', '.join(used)};"
                " check that the row's expected value still agrees with them"
            )

    def suite_of(self, header: dict[str, Any]) -> Any:
        return suite_of_header(header)

    def compare_native(self, original: Path, exported: Path) -> list[str]:
        before, after = load(original), load(exported)
        changes = []
        for name, old, new in (
            ("description", before.suite.description, after.suite.description),
            ("config", before.suite.config, after.suite.config),
        ):
            if not same(old, new):
                changes.append(f"the config's {name} changed")
        tests = [self.without_payload(test) for _, test in before.tests]
        written = [self.without_payload(test) for _, test in after.tests]
        for number, (old, new) in enumerate(zip(tests, written, strict=False), start=1):
            if date_paths(old) != date_paths(new):  # equal text, but a date for promptfoo
                changes.append(f"test {number}: which values are YAML dates changed")
        return changes + compare_records(tests, written, "test")

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        record = super().record_for(row, context, tally)
        if "prompts" not in tally.memo:
            # a YAML config written in another folder than it was read from names its
            # prompt files from there (document_files): they read as where it was read
            origin = read_from(context.header, context.path) if context.path else None
            written_from = origin if origin and self.whole_document(context) else context.path
            tally.memo["prompts"] = moved_prompts(context.suite, written_from)
            tally.notes += [tally.memo["prompts"]] if tally.memo["prompts"] else []
        if record is not None and context.form == "jsonl" and context.suite.defaults:
            # a JSON Lines tests file has no config: the defaultTest goes into every test,
            # so promptfoo still grades each test as the suite did
            merge_defaults(record, context.suite.defaults)
            if not tally.memo.get("merged"):
                tally.notes.append(
                    "the config's defaultTest is merged into every test: a JSON Lines tests"
                    " file has no config to hold it"
                )
            tally.memo["merged"] = True
            if row.extension(self.name) is not None:
                tally.drop(
                    "metadata.case.extensions.promptfoo",
                    "the test is written with the config's defaultTest merged into it (a JSON"
                    " Lines tests file has no config), so it no longer reads as it came in",
                    row,
                )
        defaults = context.suite.defaults.get("assert") if context.suite else None
        config_form = context.form in ("yaml", "json") and context.suite.config is not None
        if record is not None and defaults and config_form and row.extension(self.name) is None:
            if not tally.memo.get("defaulted"):
                tally.notes.append(
                    "rows authored in Blueprint are also graded by the config's defaultTest"
                    " assertions, which promptfoo adds to every test"
                )
            tally.memo["defaulted"] = True
        return record

    def _assertions(self, row: ExportRow, context: WriteContext) -> list[dict[str, Any]]:
        """The test's assertions: Blueprint's scorer's, the judge's (judging.py), or stock."""
        if context.options.graders == "blueprint" and scored(row):
            return [dict(BLUEPRINT_ASSERTION)]
        return assertions_of(row, context, assertions_for)

    def weakened(self, row: ExportRow, context: WriteContext) -> list[tuple[str, str]] | None:
        rules = load_mapping(self.name).weakened_rules(row.data, row.oracle_type, row.evaluator)
        found = [(rule.field, rule.reason) for rule in rules]
        return judge_weakened(row) if wired(row, context) else found + nested_json_schema(row)

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        if context.options.graders == "blueprint" and (scored(row) or wired(row, context)):
            return None
        if row.oracle_type == "expected-final-state":
            return FINAL_STATE
        unasserted = not row.human_only and not asserted(row)
        if unasserted and self._checks_still_meant(row, context) is None:
            return NO_ASSERTION
        return None

    def _checks_still_meant(self, row: ExportRow, context: WriteContext) -> list[Any] | None:
        """The test's own assertions, as it was read, when reading them again gives the row's
        oracle type, evaluator, expected answer and criteria as the row has them now (an edit
        elsewhere, such as the description, changed nothing they grade); else None."""
        entries = (row.extension(self.name) or {}).get("native")
        entry = entries.get("assert") if isinstance(entries, dict) else None
        checks = entry.get("value") if isinstance(entry, dict) else None
        if not isinstance(checks, list) or not checks:
            return None
        suite = context.suite or Suite()
        defaults = suite.defaults.get("assert")
        variables = input_from_vars(row.input, authored=False)
        if isinstance(row.input, dict) and set(row.input) == {"prompt", "vars"}:
            variables = row.input["vars"]
        record = (row.extension(self.name) or {}).get("record")
        inference = infer(
            [*(defaults if isinstance(defaults, list) else []), *checks],
            variables if isinstance(variables, dict) else {"input": variables},
            record,
            suite,
        )
        case = row.case
        said = (
            inference.oracle == row.oracle_type
            and inference.evaluator == row.evaluator
            and same(inference.expected, row.data.get("expected", ABSENT))
            and all(
                same(inference.case.get(key, ABSENT), case.get(key, ABSENT))
                for key in ("evaluationCriteria", "unacceptableBehavior", "checks")
            )
        )
        return checks if said else None

    def payload_value(self, payload: dict[str, Any]) -> Any:
        # promptfoo would load file:// strings in metadata too; JSON text keeps them inert.
        # Compact bookkeeping is JSON text too, so it takes one line of the test
        return jsonvalues.dumps_text(payload) if risky(payload) or kept_form(payload) else payload

    def as_read_back(self, record: dict[str, Any], context: WriteContext) -> dict[str, Any]:
        # only YAML writes a date unquoted: in JSON it is text, and reads back as text
        if context.form == "yaml" or not date_paths(record):
            return record
        undated: dict[str, Any] = jsonvalues.loads(jsonvalues.dumps(record))
        return undated

    def framing(self, path: Path, context: WriteContext) -> Framing:
        suite = suite_of_header(context.header)
        if context.form == "yaml":
            if suite.config is None:
                note = f"# promptfoo test cases; use them with: tests: file://{path.name}\n"
                return Framing(opening=note.encode("utf-8"), empty=b"[]\n")
            head = _config_head(context.header, suite)
            opening = (dump_yaml(head) if head else b"") + b"tests:"
            return Framing(opening=opening, first=b"\n", empty=b" []\n")
        if context.form == "json":
            if suite.config is None:
                return super().framing(path, context)
            start = jsonvalues.dumps(_config_head(context.header, suite))[:-1]
            opening = (start + b', "tests": [') if start != b"{" else b'{"tests": ['
            return Framing(
                opening=opening,
                first=b"\n  ",
                between=b",\n  ",
                closing=b"\n]}\n",
                empty=b"]}\n",
            )
        return super().framing(path, context)

    def document_files(
        self, records: list[dict[str, Any]], context: WriteContext
    ) -> tuple[bytes, dict[Path, bytes], list[str]]:
        """A config read from YAML, written back: its ``tests: file://...`` references kept
        where the files they name hold its tests, or, with ``--force``, where those files can
        be edited to hold them; else the config with its tests (:meth:`document_bytes`).
        Written in another folder than it was read from, its file names are rewritten to
        name the same files from there (:meth:`_moved_files`)."""
        text = native.kept_source(context.header, "promptfoo")
        suite = context.suite or Suite()
        if text is None or suite.config is None or context.path is None:
            return self.document_bytes(records, context), {}, []
        origin = read_from(context.header, context.path)
        if origin is not None:
            return self._moved_files(text, records, context, origin)
        pairs = _pairs(self, records)
        head = _config_head(context.header, suite)
        kept = references_kept(text, head, pairs, context.path)
        if isinstance(kept, str):
            return kept.encode("utf-8"), {}, []
        written = references_written(text, head, pairs, context.path)
        if isinstance(written, Unkept):
            notes = [_inline(written)] if names_test_files(text) else []
            return self.document_bytes(records, context), {}, notes
        others = {path: value for path, value in written.items() if path != context.path}
        names = ", ".join(sorted(os.path.relpath(path, context.path.parent) for path in others))
        notes = []
        if others and not context.options.force:
            notes.append(
                f"tests were edited in files the config names ({names}): without --force they"
                " are written into the config, its file:// references replaced; with --force"
                " those files are written back and the references kept"
            )
            return self.document_bytes(records, context), {}, notes
        if others:
            notes.append(
                f"tests edited in the files the config names are written back to them: {names}"
            )
        companions = {path: value.encode("utf-8") for path, value in others.items()}
        return written[context.path].encode("utf-8"), companions, notes

    def _moved_files(
        self, text: str, records: list[dict[str, Any]], context: WriteContext, origin: Path
    ) -> tuple[bytes, dict[Path, bytes], list[str]]:
        """A config written in another folder than ``origin``, where it was read: its
        ``tests: file://...`` references kept where the files beside ``origin`` hold its
        tests (else its tests inline, the rest of its text kept), and every relative file
        name it holds rewritten to name the same file from the new folder. The files beside
        ``origin`` are never written: the config read there still names them."""
        assert context.path is not None
        suite = context.suite or Suite()
        pairs = _pairs(self, records)
        head = _config_head(context.header, suite)
        notes = []
        kept = references_kept(text, head, pairs, origin, elsewhere=True)
        if isinstance(kept, str):
            config = kept
        else:
            if names_test_files(text):
                notes.append(_inline(kept))
            config = self.document_bytes(records, context).decode("utf-8")
        here = context.path.parent
        there = _shown_folder(origin.parent)
        rebased = moved(config, origin.parent, here)
        if rebased is None:
            notes.append(
                f"the config is written in {_shown_folder(here)}, away from {there} where it was"
                " read, and the file names it holds could not be rewritten in place to name the"
                " same files from there: promptfoo reads them from the config's folder"
            )
            return config.encode("utf-8"), {}, notes
        config, renamed = rebased
        if renamed:
            shown = ", ".join(f"{old} as {new}" for old, new in renamed[:4])
            more = f" and {len(renamed) - 4} more" if len(renamed) > 4 else ""
            notes.append(
                f"the config is written in {_shown_folder(here)}, away from {there} where it was"
                f" read: the file names it holds are rewritten to name the same files from"
                f" there ({shown}{more})"
            )
        return config.encode("utf-8"), {}, notes

    def whole_document(self, context: WriteContext) -> bool:
        return (
            context.form == "yaml" and native.kept_source(context.header, "promptfoo") is not None
        )

    def document_bytes(self, records: list[dict[str, Any]], context: WriteContext) -> bytes:
        """The YAML file the set was read from, edited to hold these tests (and the config
        as the set has it): what was not edited keeps its text, comments included."""
        text = native.kept_source(context.header, "promptfoo")
        suite = context.suite or Suite()
        head = _config_head(context.header, suite) if suite.config is not None else None
        if text is not None:
            from blueprint.formats import yamlkeep  # ruamel.yaml only for a kept file

            pairs = _pairs(self, records)
            edited = yamlkeep.rewrite(
                text, "tests" if head is not None else None, pairs, head, as_read
            )
            if edited is None and head is not None:
                # its tests are in another file, or a flow list: they are written anew,
                # the rest of the config keeps its text
                edited = yamlkeep.with_list(text, "tests", pairs, head, as_read)
            if edited is not None:
                return edited.encode("utf-8")
        # the file's shape does not allow editing it (a YAML file that is one test, a
        # config that is a flow mapping): it is written anew
        framing = self.framing(context.path or Path("tests.yaml"), context)
        parts = [framing.opening]
        for number, record in enumerate(records):
            parts += [framing.first if number == 0 else framing.between, dump_yaml([record])]
        parts.append(framing.closing if records else framing.empty)
        return b"".join(parts)

    def encode(self, record: dict[str, Any], context: WriteContext) -> bytes:
        if context.form == "yaml":
            # one single-item list per test: the concatenation is the whole list
            return dump_yaml([record])
        return jsonvalues.dumps(record)

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        if context.form in ("yaml", "json") and suite_of_header(header).config is not None:
            return {"description", "extensions.promptfoo"} & _present(header)
        if context.form == "yaml" and native.kept_source(header, "promptfoo") is not None:
            return {"extensions.promptfoo"} & _present(header)  # the file's text, kept
        return set()

    def sniff_named(self, path: Path, head: bytes) -> Fit:
        """Whether a file named as promptfoo is one. JSON and JSON Lines tests are told by
        their keys, as detection tells them; YAML and CSV are not refused when named: promptfoo
        reads any YAML mapping of vars as a test, and every plain CSV column as a var. A
        named JSON array of tests may carry keys promptfoo added since (detection asks for
        known keys only)."""
        suffix = path.suffix.lower()
        if suffix == ".json":
            outline = json_head(head)
            if outline.kind == "array" and set(outline.keys) & {"vars", "assert"}:
                return Fit.yes()
        if suffix in (".json", ".jsonl"):
            return self.sniff(path, head)
        return Fit.yes()

    def sniff(self, path: Path, head: bytes) -> Fit:
        suffix = path.suffix.lower()
        test_keys = {"vars", "assert", "description", "options", "threshold", "providerOutput"}
        config_keys = {"tests", "prompts", "providers", "defaultTest", "scenarios"}
        if suffix == ".csv":
            columns = csv_header(head)
            if any(column.startswith("__") for column in columns):
                return Fit.yes()
            return Fit.no(
                "promptfoo CSV tests have __expected, __description or __metadata columns"
            )
        if suffix == ".jsonl":
            first = first_line_object(head)
            if isinstance(first, dict) and set(first) & {"vars", "assert"}:
                return Fit.yes()
            return Fit.no("a promptfoo test has vars or assert")
        if suffix == ".json":
            outline = json_head(head)
            keys = set(outline.keys)
            if outline.kind == "object" and keys & config_keys:
                return Fit.yes()
            if (
                outline.kind == "array"
                and keys & {"vars", "assert"}
                and keys
                <= test_keys
                | {
                    "metadata",
                    "provider",
                    "providers",
                    "prompts",
                    "assertScoringFunction",
                }
            ):
                return Fit.yes()
            return Fit.no("a promptfoo config has tests, prompts or providers; a test has vars")
        if _YAML_KEYS.search(text_of(head)):
            return Fit.yes()
        return Fit.no("promptfoo YAML has tests, prompts, providers, vars or assert keys")


#: a key only promptfoo's YAML has, anywhere in a block or flow mapping
_YAML_KEYS: Final = re.compile(
    r"(?:^|[\s{,\-])[\"']?(vars|assert|tests|prompts|providers|defaultTest|scenarios|providerOutput)"
    r"[\"']?\s*:(?:\s|$)",
    re.MULTILINE,
)


def _placed(
    rows: Iterator[SourceRow | UnreadableRow], origins: dict[int, Path]
) -> Iterator[SourceRow | UnreadableRow]:
    """The rows, each from a file the config includes named with that file, whose line
    it has."""
    for row in rows:
        origin = origins.get(row.index)
        yield row if origin is None else dataclasses.replace(row, file=origin)


#: the assertion a test graded by Blueprint's scorer carries (blueprint.integrations.promptfoo)
BLUEPRINT_ASSERTION: Final = {
    "type": "python",
    "value": (
        "from blueprint.integrations.promptfoo import get_assert\n"
        "return get_assert(output, context)\n"
    ),
}


def _pairs(
    codec: PromptfooCodec, records: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each test as it reads without Blueprint's compact key, and as written."""
    return [
        (codec._as_written(record) if _compact(record) else record, record) for record in records
    ]


def _compact(record: dict[str, Any]) -> bool:
    payload = payload_of(record.get("metadata"))
    return payload is not None and kept_form(payload)


def _present(header: dict[str, Any]) -> set[str]:
    present = {key for key in header if key != "extensions"}
    extensions = header.get("extensions")
    if isinstance(extensions, dict) and "promptfoo" in extensions:
        present.add("extensions.promptfoo")
    return present


def _config_head(header: dict[str, Any], suite: Suite) -> dict[str, Any]:
    head: dict[str, Any] = {}
    if "description" in header:
        head["description"] = header["description"]
    config = suite.config or {}
    head.update(
        {key: value for key, value in config.items() if key not in ("tests", "description")}
    )
    return head


def _inline(unkept: Unkept) -> str:
    return (
        "the config's tests: file://... references are replaced by its tests, written inline"
        f" (the rest of the config kept as it was): {unkept.reason}"
    )


def _shown_folder(folder: Path) -> str:
    """A folder as a note names it: from the working folder where it lies in it."""
    try:
        shown = os.path.relpath(folder)
    except ValueError:  # another drive
        return str(folder)
    if shown == ".":
        return "the working folder"
    return str(folder) if shown.startswith("..") else shown


def _description(row: ExportRow) -> str:
    note = " (starter example, not validated gold)" if row.starter else ""
    review = " [needs human review]" if row.human_only else ""
    behaviour = row.case["expectedBehavior"].strip().replace("\n", " ")
    if len(behaviour) > 100:
        behaviour = behaviour[:99] + "\N{HORIZONTAL ELLIPSIS}"
    return f"[{row.id}]{review}{note} {behaviour}".rstrip()
