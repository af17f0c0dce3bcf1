"""promptfoo's results file (``promptfoo eval -o results.json``): one result a test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from blueprint.grading.records import recorded_output
from blueprint.io import jsonvalues


def items(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The results of promptfoo's results file, or None for another document."""
    if not isinstance(document, dict):
        return None
    entries = _entries(document)
    if entries is None:
        return None
    return _items(entries)


def _entries(document: dict[str, Any]) -> list[Any] | None:
    results = document.get("results")
    if isinstance(results, dict):
        results = results.get("results")
    if isinstance(results, list) and all(
        isinstance(entry, dict) and "testCase" in entry for entry in results
    ):
        return results
    return None


def _items(entries: list[Any]) -> Iterator[dict[str, Any]]:
    """One result a test: its row's id from the test's metadata (the id Blueprint's export
    wrote, else ``test-N`` by position, as Blueprint names a promptfoo test with none), its
    output, and tool calls where the output is a list of them."""
    for entry in entries:
        test = entry.get("testCase") if isinstance(entry.get("testCase"), dict) else {}
        row_id = _row_id(test.get("metadata"))
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
        judge = _judge(entry.get("gradingResult"))
        if judge is not None:
            item["judge"] = judge
        yield item


#: promptfoo's assertions whose verdict a model gives: a judge's verdict, for rubric rows
MODEL_GRADED: Final = frozenset(
    {"llm-rubric", "g-eval", "model-graded-closedqa", "factuality", "model-graded-factuality"}
)


def _judge(grading: Any) -> dict[str, Any] | None:
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


def _row_id(metadata: Any) -> str | None:
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
