"""Recorded results: what the system under test produced for each row, read from a file.

JSON Lines (one object a line) or CSV (a column a field; ``toolCalls``, ``finalState`` and
``judge`` cells hold JSON, ``output`` is text), or a JSON array of the same objects:

    {"id": ROW_ID, "output": ANY, "toolCalls": [{"name": ..., "arguments": ...}],
     "finalState": {...}, "judge": {"pass": BOOL, "score": NUM, "reason": TEXT,
                                    "model": TEXT, "template": TEXT}}

The judge's ``model`` and ``template`` name the judge that gave the verdict (see
:mod:`blueprint.core.judgeprompt`). Each runner's own results file is read as well
(:mod:`blueprint.grading.runners`).

Only ``id`` is required; other keys (latency, cost, ...) are let be. ``trial`` names the trial
(one run over the set) a result belongs to, a whole number from 1 or a name: a file may hold
several trials of a row, one result a row and trial (:mod:`blueprint.grading.trials`). A
file's results all name their trial, or none do; a row with two results in one trial, or two
results and no trial named, is refused, naming both lines. Runners that repeat name the
trial themselves: an Inspect sample's epoch, promptfoo's repeat (``--repeat``).

JSON Lines and CSV are read a line at a time, never whole.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats import refuse_special_file
from blueprint.formats._io import BOM, require_within_size
from blueprint.grading.runners import runner_archive, runner_csv, runner_document
from blueprint.grading.semantics import Recorded
from blueprint.io import jsonvalues

#: the keys of a recorded result that grading reads
FIELDS: Final = ("id", "output", "toolCalls", "finalState", "judge", "trial")
_JSON_CELLS: Final = ("toolCalls", "finalState", "judge")
#: the key of a result that names its trial
TRIAL: Final = "trial"
#: bytes looked at, at a time, for the first character of a file that may be a JSON array
_PEEK: Final = 1 << 16


def read_results(path: Path) -> dict[str, Recorded]:
    """Every recorded result of a file, by row id (ParseError naming the line and field of
    anything unusable). The file holds one trial: results of several (``trial``, an
    Inspect log's epochs, promptfoo's repeats) are refused here; ``blueprint grade`` reads
    them (:func:`read_trials`)."""
    found: dict[str, Recorded] = {}
    first: tuple[str | None, int | None] | None = None
    for trial, recorded in read_trials(path):
        line = recorded.line
        if first is None:
            first = (trial, line)
        elif trial != first[0]:
            where = f" (line {first[1]})" if first[1] else ""
            raise ParseError(
                path,
                f"trial: results of more than one trial ({first[0]}{where} and {trial}); one"
                " result a row is read here (blueprint grade reads several trials)",
                line=line,
            )
        earlier = found.get(recorded.id)
        if earlier is not None:
            raise ParseError(path, repeated(recorded.id, None, earlier.line), line=line)
        found[recorded.id] = recorded
    return found


def repeated(row_id: str, trial: str | None, earlier: int | None) -> str:
    """Why a second result for a row (in one trial) is refused, naming the first's line."""
    where = f" (first on line {earlier})" if earlier else ""
    if trial is None:
        return f"id {row_id!r} has more than one result{where}"
    return f"id {row_id!r} has more than one result in trial {trial}{where}"


def read_trials(path: Path) -> Iterator[tuple[str | None, Recorded]]:
    """Every recorded result of a file, one at a time in the file's order, with the trial it
    names (its ``trial`` as text; None when the file's results name none). ParseError names
    the line and field of anything unusable, a result that names no trial in a file whose
    results do (or the reverse) included. Results are not checked against each other: two
    for one row and trial are the caller's to refuse (:func:`repeated`)."""
    named: tuple[bool, int | None] | None = None
    for line, item in _items(path):
        recorded = _recorded(path, line, item)
        trial = _trial(path, line, item)
        if named is None:
            named = (trial is not None, line)
        elif named[0] != (trial is not None):
            where = f" (line {named[1]})" if named[1] else ""
            first = "the first result" + where
            raise ParseError(
                path,
                f"trial: this result names no trial, and {first} names one"
                if trial is None
                else f"trial: this result names a trial, and {first} names none",
                line=line,
            )
        yield trial, recorded


def _trial(path: Path, line: int | None, item: dict[str, Any]) -> str | None:
    """The trial a result names, as text (``2`` and ``"2"`` are one trial)."""
    value = item.get(TRIAL)
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    shown = jsonvalues.dumps_text(value) if isinstance(value, int | float) else None
    raise ParseError(
        path,
        f"trial: a whole number from 1 or a name (text), not"
        f" {shown or jsonvalues.json_type(value)}",
        line=line,
    )


def _items(path: Path) -> Iterator[tuple[int | None, Any]]:
    archived = runner_archive(path)
    if archived is not None:
        yield from ((None, item) for item in archived)
        return
    suffix = path.suffix.lower()
    if suffix == ".csv":
        yield from _csv_items(path)
        return
    if suffix == ".json" or _first_character(path) == b"[":
        text = _text(path)
        try:
            document = jsonvalues.loads(text)
        except jsonvalues.JSONError as error:
            raise ParseError(path, error.reason, line=error.line, column=error.column) from None
        found = runner_document(path, document)
        if found is not None:
            yield from ((None, item) for item in found)
            return
        if not isinstance(document, list):
            raise ParseError(
                path,
                "a JSON results file is an array of results ({id, output, toolCalls,"
                " finalState, judge}) or a runner's own results: promptfoo's results file,"
                " an Inspect log, a DeepEval test run, a LangSmith experiment's rows or runs,"
                " Braintrust experiment events (docs/grading.md)",
            )
        yield from ((None, item) for item in document)
        return
    yield from _json_lines(path)


def require_readable(path: Path) -> None:
    """Refuse, before anything is read, a results file that is not one: missing, a folder, a
    pipe, a device or a socket (a FIFO waits for a writer forever, /dev/zero never ends), or
    a file over ``max_file_bytes``, as every other reader refuses them."""
    refuse_special_file(path)
    if not path.exists():
        raise ParseError(path, "no such file")
    if path.is_dir():
        raise ParseError(path, "it is a folder, not a results file")
    require_within_size(path)


def _open(path: Path, mode: str = "rb", **text: Any) -> IO[Any]:
    require_readable(path)
    try:
        return path.open(mode, **text)
    except FileNotFoundError:
        raise ParseError(path, "no such file") from None
    except IsADirectoryError:
        raise ParseError(path, "it is a folder, not a results file") from None
    except OSError as error:
        raise ParseError(path, error.strerror or str(error)) from None


def _text(path: Path) -> str:
    """The whole results file as text: a JSON document is read whole."""
    with _open(path) as handle:
        try:
            data = handle.read()
        except OSError as error:
            raise ParseError(path, error.strerror or str(error)) from None
    try:
        return str(data.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise ParseError(path, f"not UTF-8 text ({error.reason})") from None


def _first_character(path: Path) -> bytes:
    """The file's first byte that is not white space (after a BOM); empty for none."""
    with _open(path) as handle:
        start = True
        while chunk := handle.read(_PEEK):
            if start:
                chunk, start = chunk.removeprefix(BOM), False
            stripped = chunk.lstrip()
            if stripped:
                return bytes(stripped[:1])
    return b""


def _json_lines(path: Path) -> Iterator[tuple[int | None, Any]]:
    """(line, value) for each non-blank line, read a line at a time. A line ends at a line
    feed, a carriage return or both."""
    loads = jsonvalues.reader()  # the limits read once, not a line at a time
    number = 0
    with _open(path) as handle:
        for raw in handle:
            if number == 0:
                raw = raw.removeprefix(BOM)
            for line in raw.splitlines() or [b""]:
                number += 1
                if not line.strip():
                    continue
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as error:
                    reason = f"not UTF-8 text ({error.reason})"
                    raise ParseError(path, reason, line=number) from None
                try:
                    value = loads(line)
                except jsonvalues.JSONError as error:
                    raise ParseError(path, error.reason, line=number, column=error.column) from None
                yield number, value


def _csv_items(path: Path) -> Iterator[tuple[int | None, Any]]:
    with _open(path, "r", encoding="utf-8-sig", newline="") as handle:
        try:
            yield from _csv_records(path, handle)
        except UnicodeDecodeError as error:
            raise ParseError(path, f"not UTF-8 text ({error.reason})") from None


def _csv_records(path: Path, handle: IO[str]) -> Iterator[tuple[int | None, Any]]:
    loads = jsonvalues.reader()
    reader = csv.DictReader(handle)
    header = list(reader.fieldnames or [])
    claimed = runner_csv(path, header, ((reader.line_num, record) for record in reader))
    if claimed is not None:
        yield from claimed
        return
    if "id" not in header:
        raise ParseError(path, "a CSV results file has an id column", line=1)
    for record in reader:
        line = reader.line_num
        item: dict[str, Any] = {"id": record.get("id")}
        if record.get("output") not in (None, ""):
            item["output"] = record["output"]
        if record.get(TRIAL) not in (None, ""):
            item[TRIAL] = record[TRIAL]
        for name in _JSON_CELLS:
            cell = record.get(name)
            if cell in (None, ""):
                continue
            try:
                item[name] = loads(cell)
            except jsonvalues.JSONError as error:
                raise ParseError(
                    path, f"{name}: not JSON ({error.reason})", line=line, column=None
                ) from None
        yield line, item


def _recorded(path: Path, line: int | None, item: Any) -> Recorded:
    def refuse(message: str) -> ParseError:
        return ParseError(path, message, line=line)

    if not isinstance(item, dict):
        raise refuse(f"a result is an object, not {jsonvalues.json_type(item)}")
    row_id = item.get("id")
    if not isinstance(row_id, str) or not row_id:
        raise refuse("id: a result names the row it is for, as a non-empty string")
    calls = item.get("toolCalls")
    state = item.get("finalState")
    judge = item.get("judge")
    problem = _type_problem(calls, state, judge)
    if problem is not None:
        raise refuse(problem)
    return Recorded(
        id=row_id,
        output=item.get("output"),
        has_output="output" in item,
        tool_calls=calls,
        final_state=state,
        judge=judge,
        line=line,
    )


def _json_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_problem(calls: Any, state: Any, judge: Any) -> str | None:
    """What is of the wrong type in a result's graded fields, named by field (None: nothing).
    A value of the wrong type is never read as another: ``"false"`` is not false, and ``"0"``
    is not an exit code."""
    type_of = jsonvalues.json_type
    if calls is not None:
        if not isinstance(calls, list):
            return f"toolCalls: a list of calls, not {type_of(calls)}"
        for number, call in enumerate(calls, start=1):
            if not isinstance(call, dict):
                return f"toolCalls[{number - 1}]: a call is an object, not {type_of(call)}"
    if state is not None:
        if not isinstance(state, dict):
            return f"finalState: an object, not {type_of(state)}"
        problem = _state_problem(state)
        if problem is not None:
            return f"finalState.{problem}"
    if judge is not None:
        if not isinstance(judge, dict):
            return f"judge: an object ({{pass, score}}), not {type_of(judge)}"
        verdict, score = judge.get("pass"), judge.get("score")
        if verdict is not None and not isinstance(verdict, bool):
            return f"judge.pass: true or false, not {type_of(verdict)}"
        if score is not None and not (_json_number(score) and 0 <= score <= 1):
            shown = jsonvalues.dumps_text(score) if _json_number(score) else type_of(score)
            return f"judge.score: a number from 0 to 1, not {shown}"
        for name in ("reason", "model", "template"):
            value = judge.get(name)
            if value is not None and not isinstance(value, str):
                return f"judge.{name}: text, not {type_of(value)}"
    return None


def _state_problem(state: dict[str, Any]) -> str | None:
    type_of = jsonvalues.json_type
    files = state.get("files")
    if files is not None:
        if isinstance(files, list):
            for number, path in enumerate(files):
                if not isinstance(path, str):
                    return f"files[{number}]: a path (text), not {type_of(path)}"
        elif not isinstance(files, dict):
            return f"files: a list of paths or an object of paths, not {type_of(files)}"
    commands = state.get("commands")
    if isinstance(commands, dict):
        for run, code in commands.items():
            if not (isinstance(code, int) and not isinstance(code, bool)):
                return f"commands[{run!r}]: an exit code (a whole number), not {type_of(code)}"
    elif isinstance(commands, list):
        for number, entry in enumerate(commands):
            if not isinstance(entry, dict) or not isinstance(entry.get("run"), str):
                return f"commands[{number}]: an object {{run, exitCode}} with run as text"
            code = entry.get("exitCode")
            if not (isinstance(code, int) and not isinstance(code, bool)):
                return f"commands[{number}].exitCode: a whole number, not {type_of(code)}"
    elif commands is not None:
        return f"commands: an object or a list, not {type_of(commands)}"
    records = state.get("records")
    if isinstance(records, list):
        for number, entry in enumerate(records):
            if not isinstance(entry, dict):
                return f"records[{number}]: an object {{query or description, value}}"
    elif records is not None and not isinstance(records, dict):
        return f"records: an object or a list, not {type_of(records)}"
    return None
