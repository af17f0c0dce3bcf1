"""Recorded results: what the system under test produced for each row, read from a file.

JSON Lines (one object a line) or CSV (a column a field; ``toolCalls``, ``finalState`` and
``judge`` cells hold JSON, ``output`` is text), or a JSON array of the same objects:

    {"id": ROW_ID, "output": ANY, "toolCalls": [{"name": ..., "arguments": ...}],
     "finalState": {...}, "judge": {"pass": BOOL, "score": NUM}}

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
from blueprint.grading.records import recorded_output
from blueprint.grading.semantics import Recorded
from blueprint.io import jsonvalues, limits

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
    if path.suffix.lower() == ".eval":
        raise ParseError(
            path,
            "an Inspect .eval log is a compressed archive Blueprint does not open; convert it"
            " with: inspect log convert LOG.eval --to json --output-dir DIR",
        )
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
        if isinstance(document, dict) and _promptfoo_results(document) is not None:
            yield from ((None, item) for item in _from_promptfoo(path, document))
            return
        if isinstance(document, dict) and isinstance(document.get("samples"), list):
            yield from ((None, item) for item in _from_inspect(path, document["samples"]))
            return
        if not isinstance(document, list):
            raise ParseError(
                path,
                "a JSON results file is an array of results ({id, output, toolCalls,"
                " finalState, judge}), promptfoo's results file (promptfoo eval -o"
                " results.json) or an Inspect log in JSON (--log-format json)",
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
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ParseError(path, "no such file") from None
    except OSError as error:
        raise ParseError(path, f"cannot read: {error.strerror or error}") from None
    if limits.exceeded("max_file_bytes", size):
        raise ParseError(
            path,
            f"the file has {size} bytes, more than the limit of"
            f" {limits.current().max_file_bytes} ({limits.hint('max_file_bytes')})",
        )
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
    if not reader.fieldnames or "id" not in reader.fieldnames:
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
    if calls is not None and not isinstance(calls, list):
        raise refuse(f"toolCalls: a list of calls, not {jsonvalues.json_type(calls)}")
    state = item.get("finalState")
    if state is not None and not isinstance(state, dict):
        raise refuse(f"finalState: an object, not {jsonvalues.json_type(state)}")
    judge = item.get("judge")
    if judge is not None and not isinstance(judge, dict):
        raise refuse(f"judge: an object ({{pass, score}}), not {jsonvalues.json_type(judge)}")
    return Recorded(
        id=row_id,
        output=item.get("output"),
        has_output="output" in item,
        tool_calls=calls,
        final_state=state,
        judge=judge,
        line=line,
    )


# --- the runners' own result files ------------------------------------------------------------


def _promptfoo_results(document: dict[str, Any]) -> list[Any] | None:
    """The entries of promptfoo's results file (``promptfoo eval -o results.json``)."""
    results = document.get("results")
    if isinstance(results, dict):
        results = results.get("results")
    if isinstance(results, list) and all(
        isinstance(entry, dict) and "testCase" in entry for entry in results
    ):
        return results
    return None


def _from_promptfoo(path: Path, document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """One result a test: its row's id from the test's metadata (the id Blueprint's export
    wrote, else ``test-N`` by position, as Blueprint names a promptfoo test with none), its
    output, and tool calls where the output is a list of them."""
    for entry in _promptfoo_results(document) or []:
        test = entry.get("testCase") if isinstance(entry.get("testCase"), dict) else {}
        row_id = _promptfoo_id(test.get("metadata"))
        if row_id is None and isinstance(entry.get("testIdx"), int):
            row_id = f"test-{entry['testIdx'] + 1}"
        response = entry.get("response")
        if not isinstance(response, dict) or "output" not in response:
            # an error before any output (a provider that failed): no result for the row
            continue
        recorded = recorded_output(row_id or "", response["output"])
        item: dict[str, Any] = {"id": row_id, "output": recorded.output}
        if recorded.tool_calls is not None:
            item["toolCalls"] = recorded.tool_calls
        judge = _promptfoo_judge(entry.get("gradingResult"))
        if judge is not None:
            item["judge"] = judge
        yield item


#: promptfoo's assertions whose verdict a model gives: a judge's verdict, for rubric rows
MODEL_GRADED: Final = frozenset(
    {"llm-rubric", "g-eval", "model-graded-closedqa", "factuality", "model-graded-factuality"}
)


def _promptfoo_judge(grading: Any) -> dict[str, Any] | None:
    """The judge's verdict in a promptfoo result: every model-graded assertion's, together
    (it passes when each passes; its score is their mean); None when no model graded."""
    components = grading.get("componentResults") if isinstance(grading, dict) else None
    verdicts = [
        component
        for component in components or []
        if isinstance(component, dict)
        and isinstance(component.get("assertion"), dict)
        and component["assertion"].get("type") in MODEL_GRADED
        and isinstance(component.get("pass"), bool)
    ]
    if not verdicts:
        return None
    judge: dict[str, Any] = {"pass": all(component["pass"] for component in verdicts)}
    scores = [
        component["score"]
        for component in verdicts
        if isinstance(component.get("score"), int | float)
        and not isinstance(component.get("score"), bool)
    ]
    if len(scores) == len(verdicts):
        judge["score"] = sum(scores) / len(scores)
    return judge


def _promptfoo_id(metadata: Any) -> str | None:
    if not isinstance(metadata, dict):
        return None
    payload = metadata.get("blueprint")
    if isinstance(payload, str):
        try:
            payload = jsonvalues.loads(payload)
        except jsonvalues.JSONError:
            payload = None
    for found in (payload.get("id") if isinstance(payload, dict) else None, metadata.get("id")):
        if isinstance(found, str) and found:
            return found
    return None


def _from_inspect(path: Path, samples: list[Any]) -> Iterator[dict[str, Any]]:
    """One result a sample of an Inspect log (JSON): its id, the completion, and the tool
    calls of its assistant messages."""
    for sample in samples:
        if not isinstance(sample, dict):
            raise ParseError(path, "an Inspect log's samples are objects")
        output = sample.get("output")
        completion = output.get("completion") if isinstance(output, dict) else None
        calls = []
        for message in sample.get("messages") or []:
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    calls.append({"name": call.get("function"), "arguments": call.get("arguments")})
        item: dict[str, Any] = {"id": str(sample.get("id")), "toolCalls": calls}
        if completion is not None:
            item["output"] = completion
        yield item
