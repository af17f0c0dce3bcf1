"""apollia-os eval suites: one TOML document with a name and tasks carrying typed assertions.

A suite is ``name`` and ``tasks``; a task is ``id``, ``prompt``, ``runs`` (default 3),
``agent`` and ``assertions``; an assertion is one of ``exit_code`` {equals}, ``file_exists``
{path}, ``regex`` {on = stdout | result, pattern} and ``llm_judge`` {rubric}. apollia-os
refuses any other key, so this codec reads strictly (with the file, line and key of every
problem) and writes nothing else: a task has no free-form place, and what it cannot say is
declared lost field by field.

What makes the whole file unreadable (ParseError, as apollia-os would refuse to load it):
TOML syntax, a suite-level problem (an unknown key beside name and tasks, no name, a name
that is not text, tasks that are not an array). What makes one task unreadable (the others
are still read, and validation lists every bad task at once): anything wrong inside that
task or its assertions.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, ClassVar, Final

import tomlkit

from blueprint.core.errors import ParseError
from blueprint.formats import native, tomlkeep
from blueprint.formats._io import read_text
from blueprint.formats.apollia_checks import (
    answer_of,
    any_of_pattern,
    as_text,
    exact_pattern,
    regex_check,
    result_patterns,
)
from blueprint.formats.base import SetSource, UnreadableRow
from blueprint.formats.mapping import VendorMapping, load_mapping
from blueprint.formats.native import ABSENT, NativeShape
from blueprint.formats.sniffing import Fit, text_of
from blueprint.formats.tomltext import key_value
from blueprint.formats.vendor import (
    STARTER_NOTE,
    ExportRow,
    ExportTally,
    Framing,
    InvalidRowForExport,
    Records,
    Values,
    VendorCodec,
    WriteContext,
    imported_row,
    starter_note,
)
from blueprint.io import tomlload
from blueprint.io.toml_positions import KeyPath, Positions

SUITE_KEYS: Final = ("name", "tasks")
TASK_KEYS: Final = ("id", "prompt", "runs", "agent", "assertions")
#: each assertion type with the fields it takes (and requires), and nothing else
ASSERTION_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "exit_code": ("equals",),
    "file_exists": ("path",),
    "regex": ("on", "pattern"),
    "llm_judge": ("rubric",),
}
CHANNELS: Final = ("stdout", "result")
U32_MAX: Final = 2**32 - 1
#: the exit codes a process reports (a 32-bit signed integer)
EXIT_CODES: Final = range(-(2**31), 2**31)

#: the record check an exit_code assertion is read into, and written from
EXIT_QUERY: Final = "exit_code"
EXIT_DESCRIPTION: Final = "the run's exit code"

BEHAVIOUR_PLACEHOLDER: Final = "(imported from apollia-os without a behaviour description)"
JUDGE_WARNING: Final = (
    "apollia-os eval run builds its runner without a judge, so it fails every llm_judge"
    ' assertion today ("llm judge not evaluated: this runner has no judge router"), whatever'
    " backend is configured"
)

_TASKS_TABLE: Final = re.compile(r"^[ \t]*\[\[[ \t]*tasks[ \t]*\]\]", re.MULTILINE)
_TOP_KEY: Final = re.compile(r"^[ \t]*(name|tasks)[ \t]*=", re.MULTILINE)
_HEADER: Final = re.compile(r"^[ \t]*\[", re.MULTILINE)
_TOML_WHERE: Final = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


# --- reading: the schema, checked strictly ----------------------------------------------------


def toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, datetime):
        return "a date-time"
    if isinstance(value, date):
        return "a date"
    if isinstance(value, time):
        return "a time"
    return type(value).__name__


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Problem:
    """What is wrong with a task, and the key (path inside the task) it is about."""

    where: KeyPath
    message: str


def _listing(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(names)


def assertion_problem(assertion: Any, number: int) -> Problem | None:
    """Why apollia-os would refuse an assertion (``number`` counts from 1), or None."""
    at: KeyPath = ("assertions", number - 1)
    what = f"assertion {number}"
    if not isinstance(assertion, dict):
        return Problem(at, f"{what} is {toml_type(assertion)}, not a table")
    kind = assertion.get("type")
    if kind is None:
        return Problem(at, f"{what} has no type (one of {_listing(list(ASSERTION_FIELDS))})")
    if not isinstance(kind, str):
        return Problem((*at, "type"), f"{what}: type is {toml_type(kind)}, not a string")
    if kind not in ASSERTION_FIELDS:
        return Problem(
            (*at, "type"),
            f"{what}: unknown assertion type {kind!r}; apollia-os knows"
            f" {_listing(list(ASSERTION_FIELDS))}",
        )
    fields = ASSERTION_FIELDS[kind]
    for key in assertion:
        if key != "type" and key not in fields:
            return Problem(
                (*at, key),
                f"{what}: unknown key {key!r} for a {kind} assertion, which takes"
                f" {_listing(fields)} and nothing else",
            )
    for key in fields:
        if key not in assertion:
            return Problem(at, f"{what}: a {kind} assertion needs {key}")
    for key in fields:
        value = assertion[key]
        if key == "equals":
            if not _is_int(value):
                return Problem((*at, key), f"{what}: equals is {toml_type(value)}, not an integer")
            if value not in EXIT_CODES:
                return Problem(
                    (*at, key),
                    f"{what}: equals is {value}: apollia-os reads an exit code as a 32-bit"
                    " signed integer",
                )
        elif not isinstance(value, str):
            return Problem((*at, key), f"{what}: {key} is {toml_type(value)}, not a string")
    if kind == "regex" and assertion["on"] not in CHANNELS:
        return Problem(
            (*at, "on"),
            f"{what}: on is {assertion['on']!r}; a regex matches on stdout or result",
        )
    return None


def task_problem(task: Any) -> Problem | None:
    """Why apollia-os would refuse a task, or None."""
    if not isinstance(task, dict):
        return Problem((), f"a task is a table, not {toml_type(task)}")
    for key in task:
        if key not in TASK_KEYS:
            return Problem(
                (key,),
                f"unknown key {key!r}; a task takes {_listing(TASK_KEYS)} and nothing else",
            )
    for key in ("id", "prompt"):
        if key not in task:
            return Problem((), f"the task has no {key} (required)")
    for key in ("id", "prompt", "agent"):
        if key in task and not isinstance(task[key], str):
            return Problem((key,), f"{key} is {toml_type(task[key])}, not a string")
    if "runs" in task:
        runs = task["runs"]
        if not _is_int(runs):
            return Problem(("runs",), f"runs is {toml_type(runs)}, not an integer")
        if not 0 <= runs <= U32_MAX:
            return Problem(
                ("runs",), f"runs is {runs}: apollia-os reads a u32, from 0 to {U32_MAX}"
            )
    if "assertions" in task:
        assertions = task["assertions"]
        if not isinstance(assertions, list):
            return Problem(
                ("assertions",), f"assertions is {toml_type(assertions)}, not an array of tables"
            )
        for number, assertion in enumerate(assertions, start=1):
            problem = assertion_problem(assertion, number)
            if problem is not None:
                return problem
    return None


def _task_label(task: Any, number: int) -> str:
    task_id = task.get("id") if isinstance(task, dict) else None
    return f"task {number}" + (f" ({task_id!r})" if isinstance(task_id, str) else "")


def _decode_error(path: Path, error: tomllib.TOMLDecodeError) -> ParseError:
    message = str(error)
    where = _TOML_WHERE.search(message)
    if where is None:
        return ParseError(path, f"not valid TOML: {message}")
    return ParseError(
        path,
        f"not valid TOML: {message[: where.start()]}",
        line=int(where.group(1)),
        column=int(where.group(2)),
    )


def read_suite(path: Path) -> tuple[dict[str, Any], list[tuple[int | None, Any] | UnreadableRow]]:
    """The suite's set-level fields and its tasks (a bad task as an UnreadableRow)."""
    text = read_text(path)
    try:
        document = tomlload.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise _decode_error(path, error) from None
    except tomlload.TomlError as error:  # nested deeper than max_depth
        raise ParseError(path, error.reason, line=error.line, column=error.column) from None
    except ValueError as error:  # an integer longer than Python converts (4,300 digits)
        raise ParseError(
            path, f"not valid TOML here: a number too long to read ({error})"
        ) from None
    positions = Positions(text)

    def refuse(where: KeyPath, message: str) -> ParseError:
        line, column = positions.of(where)
        return ParseError(path, message, line=line, column=column)

    for key in document:
        if key not in SUITE_KEYS:
            raise refuse(
                (key,),
                f"unknown key {key!r} in the suite; apollia-os reads name and tasks, and"
                " refuses the file for any other key",
            )
    if "name" not in document:
        raise ParseError(path, "the suite has no name (required by apollia-os)", line=1)
    if not isinstance(document["name"], str):
        raise refuse(("name",), f"name is {toml_type(document['name'])}, not a string")
    tasks = document.get("tasks", [])
    if not isinstance(tasks, list):
        raise refuse(("tasks",), f"tasks is {toml_type(tasks)}, not an array of tables")
    records: list[tuple[int | None, Any] | UnreadableRow] = []
    for index, task in enumerate(tasks):
        problem = task_problem(task)
        if problem is None:
            records.append((positions.line(("tasks", index)), task))
            continue
        line, column = positions.of(("tasks", index, *problem.where))
        reason = f"{_task_label(task, index + 1)}: {problem.message}"
        records.append(UnreadableRow(index, line, column, reason))
    return {"name": document["name"]}, records


# --- import: what the assertions say ---------------------------------------------------------


@dataclass
class Reading:
    """What a task's assertions say, in canonical terms."""

    oracle_type: str
    expected: Any = ABSENT
    criteria: list[str] | None = None
    derived: dict[str, str] = field(default_factory=dict)
    #: regex assertions on the result beside the one that gives the oracle: the row's gate
    checks: list[dict[str, Any]] = field(default_factory=list)


def _described(assertion: dict[str, Any]) -> str:
    kind = str(assertion.get("type"))
    return f"regex on {assertion.get('on')}" if kind == "regex" else kind


def read_assertions(assertions: list[Any]) -> Reading:
    """The oracle type and expected value a task's assertions give, every choice flagged.

    An anchored literal regex on result is a reference answer (an anchored alternation, an
    acceptable set); exit_code and file_exists are final-state checks; llm_judge rubrics are
    a rubric's criteria; any other regex on result whose pattern reads the same in
    Blueprint's dialect is a regex check: an acceptable set defined by it (by all of them)
    when the task has nothing else, else a check every output must also pass. Where a task
    mixes them, the first of these that it has decides, and the other assertions are kept
    as written (in case.extensions.apollia).
    """
    answers: list[tuple[int, tuple[str, Any]]] = []
    patterns: list[tuple[int, dict[str, Any]]] = []
    checks: list[tuple[int, dict[str, Any]]] = []
    rubrics: list[tuple[int, str]] = []
    for index, assertion in enumerate(assertions):
        if not isinstance(assertion, dict):
            continue
        kind = assertion.get("type")
        if kind == "regex" and assertion.get("on") == "result":
            answer = answer_of(str(assertion.get("pattern")))
            regex = regex_check(assertion.get("pattern"))
            if answer is not None and not answers:
                answers.append((index, answer))
            elif regex is not None:
                patterns.append((index, regex))
        elif kind == "file_exists" and isinstance(assertion.get("path"), str):
            if assertion["path"]:
                checks.append((index, {"kind": "file_exists", "path": assertion["path"]}))
        elif kind == "exit_code" and _is_int(assertion.get("equals")):
            check = {
                "kind": "record",
                "description": EXIT_DESCRIPTION,
                "query": EXIT_QUERY,
                "equals": assertion["equals"],
            }
            checks.append((index, check))
        elif kind == "llm_judge" and isinstance(assertion.get("rubric"), str):
            rubrics.append((index, assertion["rubric"]))
    used: set[int]
    gate = bool(answers or checks or rubrics)
    if answers:
        index, (oracle_type, value) = answers[0]
        used = {index}
        reading = Reading(oracle_type)
        if oracle_type == "reference-answer":
            reading.expected = value
            reading.derived["expected"] = "the text an anchored regex on result matches"
            how = "a regex on result that matches one exact text"
        else:
            reading.expected = {"acceptable": value}
            reading.derived["expected"] = "the alternatives of an anchored regex on result"
            how = "a regex on result that matches one of several exact texts"
    elif checks:
        used = {index for index, _ in checks}
        reading = Reading("expected-final-state", expected={"checks": [c for _, c in checks]})
        reading.derived["expected"] = (
            "the exit_code and file_exists assertions as checks (exit_code as a record check"
            f" with query {EXIT_QUERY})"
        )
        how = "exit_code and file_exists assertions"
    elif rubrics:
        used = {index for index, _ in rubrics}
        reading = Reading("rubric", criteria=[text for _, text in rubrics])
        reading.derived["metadata.case.evaluationCriteria"] = "the llm_judge rubrics"
        reading.derived["metadata.case.evaluator"] = "the task is graded by llm_judge"
        how = "llm_judge assertions only"
    elif patterns:
        used = {index for index, _ in patterns}
        found = [check for _, check in patterns]
        satisfies = found[0] if len(found) == 1 else {"type": "all", "checks": found}
        reading = Reading("acceptable-set", expected={"satisfies": satisfies})
        reading.derived["expected"] = f"{_PATTERNS_READ}, which every result must match"
        how = "regex assertions on result"
    else:
        used = set()
        reading = Reading("expected-behavior-only")
        how = "no assertion that gives an expected answer" if assertions else "no assertions"
    if gate and patterns:
        used |= {index for index, _ in patterns}
        reading.checks = [check for _, check in patterns]
        reading.derived["metadata.case.checks"] = f"{_PATTERNS_READ}, the other assertions"
    others = [_described(a) for i, a in enumerate(assertions) if i not in used]
    if others:
        how += (
            f"; {len(others)} other assertion(s) ({', '.join(others)}) are kept as written"
            " in case.extensions.apollia (a regex on stdout, or on result in Rust's syntax"
            " where Blueprint's dialect reads it otherwise, is not a check Blueprint runs)"
        )
    reading.derived["metadata.case.oracleType"] = f"inferred from the task's assertions: {how}"
    return reading


#: how a regex assertion on the result is read as a check
_PATTERNS_READ: Final = (
    "the regex assertions on result as regex checks (each pattern means the same in Rust's"
    " syntax and in Blueprint's)"
)


# --- export: the assertions a row gives ------------------------------------------------------


def _exit_code(check: dict[str, Any]) -> int | None:
    equals = check.get("equals")
    is_exit = check.get("kind") == "record" and check.get("query") == EXIT_QUERY
    if is_exit and isinstance(equals, int) and _is_int(equals) and equals in EXIT_CODES:
        return equals
    return None


def assertions_for(row: ExportRow) -> list[dict[str, Any]]:
    """The assertions a row is written with ([] when it has none apollia-os can check): its
    oracle's, then a regex on result for each check of its gate that has one."""
    written = _oracle_assertions(row)
    if row.human_only:
        return written  # a person's row is never scored by its checks
    for check in row.case.get("checks") or []:
        written += [_on_result(pattern) for pattern in result_patterns(check)[0]]
    return written


def _on_result(pattern: str) -> dict[str, Any]:
    return {"type": "regex", "on": "result", "pattern": pattern}


def _oracle_assertions(row: ExportRow) -> list[dict[str, Any]]:
    oracle_type = row.oracle_type
    expected = row.expected
    if oracle_type == "reference-answer":
        return [{"type": "regex", "on": "result", "pattern": exact_pattern(as_text(expected))}]
    if oracle_type == "acceptable-set":
        if "satisfies" in expected:
            return [_on_result(pattern) for pattern in result_patterns(expected["satisfies"])[0]]
        if "acceptable" in expected:
            members = list(expected["acceptable"])
        else:  # graded: any member that earns a grade passes (a check lists none)
            members = [item["value"] for item in expected.get("graded", []) if item["grade"] > 0]
        if not members:
            return []
        pattern = any_of_pattern([as_text(member) for member in members])
        return [{"type": "regex", "on": "result", "pattern": pattern}]
    if oracle_type == "expected-final-state":
        written: list[dict[str, Any]] = []
        for check in expected["checks"]:
            if check.get("kind") == "file_exists":
                written.append({"type": "file_exists", "path": check["path"]})
            elif (code := _exit_code(check)) is not None:
                written.append({"type": "exit_code", "equals": code})
        return written
    if oracle_type in ("rubric", "expected-behavior-only"):
        criteria = row.case.get("evaluationCriteria") or []
        if oracle_type == "rubric" and criteria:
            return [{"type": "llm_judge", "rubric": text} for text in criteria]
        return [{"type": "llm_judge", "rubric": row.case["expectedBehavior"]}]
    return []  # expected tool calls: no assertion sees them


_SHAPE: Final = NativeShape(
    mapped={
        "id": ("id",),
        "prompt": ("input",),
        "assertions": ("expected", "case.oracleType", "case.evaluationCriteria", "case.checks"),
    },
    grading=("assertions",),
)


def _to_toml(value: Any) -> Any:
    """A value as written: text with line breaks on several lines, for people to read (not
    with a carriage return, which a TOML reader may turn into a plain line break there)."""
    if isinstance(value, str) and "\n" in value and "\r" not in value:
        return tomlkit.string(value, multiline=True)
    return value


class ApolliaCodec(VendorCodec):
    name: ClassVar[str] = "apollia"
    title: ClassVar[str] = "apollia-os eval suite (TOML)"
    read_extensions: ClassVar[tuple[str, ...]] = (".toml",)
    write_forms: ClassVar[dict[str, str]] = {".toml": "toml"}
    what: ClassVar[str] = "an apollia-os task"
    shape: ClassVar[NativeShape] = _SHAPE
    metadata_key: ClassVar[str | None] = None

    # --- reading -----------------------------------------------------------------------------

    def records(self, path: Path) -> Records:
        return read_suite(path)[1]

    def open(self, path: Path) -> SetSource:
        header, records = read_suite(path)
        text = native.text_to_keep(path, (".toml",))
        if text is not None:
            # the file as its author wrote it, so writing the set back edits it in place
            source = {"file": path.name, "text": text}
            header = {**header, "extensions": {self.name: {"source": source}}}
        return self.source(path, header, self.rows(records))

    def values_of(self, record: dict[str, Any], native_mode: bool, suite: Any) -> Values:
        reading = read_assertions(_assertion_list(record))
        return Values(input=record.get("prompt", ABSENT), expected=reading.expected)

    def native_row(self, record: dict[str, Any], position: int, suite: Any) -> dict[str, Any]:
        reading = read_assertions(_assertion_list(record))
        derived = dict(reading.derived)
        row_id = record.get("id")
        if not isinstance(row_id, str) or not row_id:
            row_id = f"task-{position + 1}"
            derived["id"] = "the task's id is empty; numbered by its position in the suite"
        derived["metadata.case.expectedBehavior"] = (
            "an apollia-os task carries no behaviour description"
        )
        case: dict[str, Any] = {}
        if reading.criteria is not None:
            case["evaluationCriteria"] = reading.criteria
            case["evaluator"] = "llm-judge"
        if reading.checks:
            case["checks"] = reading.checks
        return imported_row(
            row_id=row_id,
            input_value=record.get("prompt"),
            expected=reading.expected,
            oracle_type=reading.oracle_type,
            expected_behavior=BEHAVIOUR_PLACEHOLDER,
            format_name=self.name,
            derived=dict(sorted(derived.items())),
            case=case,
        )

    # --- writing -----------------------------------------------------------------------------

    def skip(self, row: ExportRow, context: WriteContext) -> str | None:
        options = context.options
        if row.human_only and not options.include_human_review:
            return None  # left out for human review, by the shared rule
        if row.oracle_type == "expected-tool-calls":
            return "tool-calls"
        if row.oracle_type == "rubric" and not (options.llm_judge or row.human_only):
            return "llm-judge"
        if not assertions_for(row):
            return "no-assertion"
        return None

    def weakened(self, row: ExportRow, context: WriteContext) -> list[tuple[str, str]] | None:
        mapping = load_mapping(self.name)
        applied = self.applied_by_vendor(row)
        rules = [
            (rule.field, rule.reason)
            for rule in mapping.weakened_rules(row.data, row.oracle_type, row.evaluator)
            if rule.field not in applied
        ]
        judged_behaviour = row.oracle_type == "expected-behavior-only" or (
            row.oracle_type == "rubric" and not row.case.get("evaluationCriteria")
        )
        if judged_behaviour:
            rule = ("metadata.case.expectedBehavior", _judge_reason(mapping))
            if rule not in rules:
                rules.append(rule)
        return rules

    def applied_by_vendor(self, row: ExportRow) -> set[str]:
        # a check written as regex assertions on the result is applied by apollia-os itself
        written = {
            "metadata.case.checks": all(
                result_patterns(check)[1] for check in row.case.get("checks") or []
            ),
            "expected.satisfies": isinstance(row.expected, dict)
            and result_patterns(row.expected.get("satisfies"))[1],
        }
        return {field for field, applied in written.items() if applied}

    def _task(self, row: ExportRow) -> dict[str, Any]:
        task: dict[str, Any] = {"id": row.id, "prompt": as_text(row.input)}
        assertions = assertions_for(row)
        if assertions:
            task["assertions"] = assertions
        return task

    def blueprint_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return self._task(row)

    def native_record(self, row: ExportRow, context: WriteContext) -> dict[str, Any]:
        return self._task(row)

    def record_for(
        self, row: ExportRow, context: WriteContext, tally: ExportTally
    ) -> dict[str, Any] | None:
        record = super().record_for(row, context, tally)
        if record is None:
            return None
        if any(
            isinstance(item, dict) and item.get("type") == "llm_judge"
            for item in _assertion_list(record)
        ):
            judged: list[str] = tally.memo.setdefault("judged", [])
            if not judged:
                tally.memo["judge-note"] = len(tally.notes)
                tally.notes.append("")
            judged.append(row.id)
            more = f" and {len(judged) - 5} more" if len(judged) > 5 else ""
            tally.notes[tally.memo["judge-note"]] = (
                f"{len(judged)} task(s) written with llm_judge assertions"
                f" ({', '.join(judged[:5])}{more}): {JUDGE_WARNING}; until it has one, grade"
                " these with exit_code, file_exists and regex assertions"
            )
        if row.starter:
            context.remember_starter(record)
            how = f'an apollia-os task has no field for it: each has the comment "# {STARTER_NOTE}"'
            tally.note_rows("starters", row, lambda rows: starter_note(rows, how))
        return record

    def set_fields_written(self, header: dict[str, Any], context: WriteContext) -> set[str]:
        return (
            {"name", "extensions.apollia"}
            if native.kept_source(header, "apollia") is not None
            else {"name"}
        )

    # one suite, a task at a time: the name, then each [[tasks]] table as in the whole document
    # (a blank line before each); a suite kept from an import is written whole, edited in place

    def whole_document(self, context: WriteContext) -> bool:
        return native.kept_source(context.header, "apollia") is not None

    def framing(self, path: Path, context: WriteContext) -> Framing:
        name = context.header.get("name")
        # without a name nothing is written (the first task or the end refuses the export)
        return Framing(
            opening=tomlkit.dumps(_suite(name, [])).encode("utf-8")
            if isinstance(name, str)
            else b"",
            first=b"\n",
            between=b"\n",
        )

    def encode(self, record: dict[str, Any], context: WriteContext) -> bytes:
        text = task_text(record) or task_text_by_tomlkit(record)
        if context.is_starter(record):  # the comment under the header, as _tasks puts it
            text = text.replace("[[tasks]]\n", f"[[tasks]]\n# {STARTER_NOTE}\n", 1)
        return text.encode("utf-8")

    def observe(self, record: dict[str, Any], index: int, context: WriteContext) -> None:
        if index == 0:
            _suite_name(context)
        _refuse_unreadable_task(record, index + 1)

    def stream_notes(self, path: Path, written: int, context: WriteContext) -> list[str]:
        _suite_name(context)
        return []

    def document_bytes(self, records: list[dict[str, Any]], context: WriteContext) -> bytes:
        name = _suite_name(context)
        for number, record in enumerate(records, start=1):
            _refuse_unreadable_task(record, number)
        text = native.kept_source(context.header, "apollia")
        if text is not None:
            edited = _rewritten(text, records, name)
            if edited is not None:
                return edited.encode("utf-8")
        starters = [context.is_starter(record) for record in records]
        return tomlkit.dumps(_suite(name, records, starters)).encode("utf-8")

    def sniff(self, path: Path, head: bytes) -> Fit:
        text = text_of(head)
        header = _HEADER.search(text)
        top = text[: header.start()] if header else text
        if _TASKS_TABLE.search(text) or _TOP_KEY.search(top):
            return Fit.yes()
        return Fit.no("an apollia-os suite has a top-level name and [[tasks]] tables")


def _suite_name(context: WriteContext) -> str:
    name = context.header.get("name")
    if not isinstance(name, str):
        raise InvalidRowForExport("an apollia-os suite needs a name, and the set has none")
    return name


def _refuse_unreadable_task(record: dict[str, Any], number: int) -> None:
    problem = task_problem(record)
    if problem is not None:
        raise InvalidRowForExport(
            f"{_task_label(record, number)}: {problem.message}, which apollia-os"
            " refuses; its case.extensions.apollia was edited into something the"
            " suite cannot hold"
        )


def _rewritten(text: str, records: list[dict[str, Any]], name: str) -> str | None:
    """A kept suite's text with its tasks replaced by ``records`` (None: not in place)."""
    return tomlkeep.rewrite(text, "tasks", records, {"name": name}, _table, _to_toml)


def _suite(name: Any, records: list[dict[str, Any]], starters: list[bool] | None = None) -> Any:
    suite = tomlkit.document()
    suite.add("name", _to_toml(name))
    if records:
        suite.add("tasks", _tasks(records, starters))
    return suite


def _tasks(records: list[dict[str, Any]], starters: list[bool] | None = None) -> Any:
    tasks = tomlkit.aot()
    for record, starter in zip(records, starters or [False] * len(records), strict=True):
        tasks.append(_table({_STARTER_KEY: None, **record} if starter else record))
    return tasks


def task_text_by_tomlkit(record: dict[str, Any]) -> str:
    """One ``[[tasks]]`` table as tomlkit writes it, as the whole suite would hold it."""
    tasks = tomlkit.document()
    tasks.add("tasks", _tasks([record]))
    return tomlkit.dumps(tasks)


def task_text(record: dict[str, Any]) -> str | None:
    """:func:`task_text_by_tomlkit` written directly, some ten times faster, for the tasks
    Blueprint writes: text, whole numbers and booleans under bare keys, and assertions of
    those last (a test holds the two to the same text). None for any other task, which tomlkit
    writes (it moves what follows a table of assertions above it, and lays out the rest)."""
    keys = list(record)
    assertions = record.get("assertions", ())
    if "assertions" in record:
        # after at least one other key, which puts a blank line above the first assertion
        if keys[-1] != "assertions" or len(keys) < 2 or type(assertions) is not list:
            return None
        if not assertions:
            return None  # written as an empty array
        keys.pop()
    lines = ["[[tasks]]"]
    for key in keys:
        line = key_value(key, record[key])
        if line is None:
            return None
        lines.append(line)
    for assertion in assertions:
        if type(assertion) is not dict or not assertion:  # after an empty one, no blank line
            return None
        lines.append("\n  [[tasks.assertions]]")
        for key, value in assertion.items():
            line = key_value(key, value)
            if line is None:
                return None
            lines.append("  " + line)
    lines.append("")
    return "\n".join(lines)


def _assertion_list(record: dict[str, Any]) -> list[Any]:
    assertions = record.get("assertions")
    return assertions if isinstance(assertions, list) else []


#: stands, first in a record given to _table, for the comment that marks a starter's task
_STARTER_KEY: Final = object()


def _table(record: dict[Any, Any]) -> Any:
    table = tomlkit.table()
    for key, value in record.items():
        if key is _STARTER_KEY:
            table.add(tomlkit.comment(STARTER_NOTE))
        elif key == "assertions" and value:
            assertions = tomlkit.aot()
            for assertion in value:
                item = tomlkit.table()
                for name, part in assertion.items():
                    item.add(name, _to_toml(part))
                item.indent(2)  # laid out as apollia-os documents its suites
                assertions.append(item)
            table.add(key, assertions)
        else:
            table.add(key, _to_toml(value))
    return table


def _judge_reason(mapping: VendorMapping) -> str:
    for rule in mapping.grading.weakened:
        if rule.field == "metadata.case.evaluationCriteria":
            return rule.reason
    return JUDGE_WARNING
