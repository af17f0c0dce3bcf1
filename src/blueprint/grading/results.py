"""Recorded results: what the system under test produced for each row, read from a file.

JSON Lines (one object a line) or CSV (a column a field; ``toolCalls``, ``finalState`` and
``judge`` cells hold JSON, ``output`` is text), or a JSON array of the same objects:

    {"id": ROW_ID, "output": ANY, "toolCalls": [{"name": ..., "arguments": ...}],
     "finalState": {...}, "judge": {"pass": BOOL, "score": NUM, "reason": TEXT,
                                    "model": TEXT, "template": TEXT}}

The judge's ``model`` and ``template`` name the judge that gave the verdict (see
:mod:`blueprint.core.judgeprompt`). Each runner's own results file is read as well
(:mod:`blueprint.grading.runners`).

Only ``id`` is required; other keys (latency, cost, ...) are let be. A file whose ids repeat
is refused, naming both lines.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats import refuse_special_file
from blueprint.formats._io import require_within_size
from blueprint.grading.runners import runner_archive, runner_csv, runner_document
from blueprint.grading.semantics import Recorded
from blueprint.io import jsonvalues

#: the keys of a recorded result that grading reads
FIELDS: Final = ("id", "output", "toolCalls", "finalState", "judge")
_JSON_CELLS: Final = ("toolCalls", "finalState", "judge")


def read_results(path: Path) -> dict[str, Recorded]:
    """Every recorded result of a file, by row id (ParseError naming the line and field of
    anything unusable)."""
    found: dict[str, Recorded] = {}
    for line, item in _items(path):
        recorded = _recorded(path, line, item)
        earlier = found.get(recorded.id)
        if earlier is not None:
            where = f" (first on line {earlier.line})" if earlier.line else ""
            raise ParseError(path, f"id {recorded.id!r} has more than one result{where}", line=line)
        found[recorded.id] = recorded
    return found


def _items(path: Path) -> Iterator[tuple[int | None, Any]]:
    archived = runner_archive(path)
    if archived is not None:
        yield from ((None, item) for item in archived)
        return
    text = _text(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        yield from _csv_items(path, text)
        return
    stripped = text.lstrip()
    if suffix == ".json" or stripped.startswith("["):
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
    loads = jsonvalues.reader()  # the limits read once, not a line at a time
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, loads(line)
        except jsonvalues.JSONError as error:
            raise ParseError(path, error.reason, line=number, column=error.column) from None


def _text(path: Path) -> str:
    """The whole results file as text. A pipe, a device or a socket is refused before it is
    opened (a FIFO waits for a writer forever, /dev/zero never ends), and so is a file over
    ``max_file_bytes``, as every other reader refuses them."""
    refuse_special_file(path)
    if not path.exists():
        raise ParseError(path, "no such file")
    require_within_size(path)
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ParseError(path, "no such file") from None
    except IsADirectoryError:
        raise ParseError(path, "it is a folder, not a results file") from None
    except UnicodeDecodeError as error:
        raise ParseError(path, f"not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise ParseError(path, error.strerror or str(error)) from None


def _csv_items(path: Path, text: str) -> Iterator[tuple[int | None, Any]]:
    loads = jsonvalues.reader()
    reader = csv.DictReader(io.StringIO(text, newline=""))
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
