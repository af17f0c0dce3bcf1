"""Small readings the runners' results readers share: the row id Blueprint's export wrote in a
record's metadata, a cell that may hold JSON, and a recorded result as an item."""

from __future__ import annotations

import ast
from typing import Any

from blueprint.grading.semantics import Recorded
from blueprint.io import jsonvalues

#: cells longer than this are never read as a Python literal (a CSV written by pandas holds a
#: list or a dict as its repr, which JSON does not read)
_LITERAL_LIMIT = 100_000


def blueprint_id(metadata: Any) -> str | None:
    """The row id in a record's metadata: ``metadata.blueprint.id`` (the metadata or its
    ``blueprint`` part may be JSON text, as a CSV cell holds it), else None."""
    metadata = json_value(metadata) if isinstance(metadata, str) else metadata
    if not isinstance(metadata, dict):
        return None
    payload = metadata.get("blueprint")
    payload = json_value(payload) if isinstance(payload, str) else payload
    found = payload.get("id") if isinstance(payload, dict) else None
    return found if isinstance(found, str) and found else None


def json_value(text: str) -> Any:
    """JSON text read as its value; text that is not JSON stays text."""
    try:
        return jsonvalues.loads(text)
    except jsonvalues.JSONError:
        return text


def cell_value(text: str) -> Any:
    """A CSV cell that may hold a structured value: JSON, else a Python literal of a list or a
    dict (how pandas writes one), else the text itself."""
    value = json_value(text)
    if value is not text or text.lstrip()[:1] not in ("[", "{") or len(text) > _LITERAL_LIMIT:
        return value
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def scalar_cell(text: str) -> Any:
    """A CSV cell that holds a score: a number or true/false where it reads as one (``True``
    as pandas writes a boolean), else the text."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return float(text)
    except ValueError:
        return text


def item_of(recorded: Recorded, judge: dict[str, Any] | None) -> dict[str, Any]:
    """A recorded result as a results item (``{id, output, toolCalls, finalState, judge}``),
    the parts it does not hold left out."""
    item: dict[str, Any] = {"id": recorded.id}
    if recorded.has_output:
        item["output"] = recorded.output
    if recorded.tool_calls is not None:
        item["toolCalls"] = recorded.tool_calls
    if recorded.final_state is not None:
        item["finalState"] = recorded.final_state
    if judge is not None:
        item["judge"] = judge
    elif recorded.judge is not None:
        item["judge"] = recorded.judge
    return item


def number(value: Any) -> float | None:
    """A score in [0, 1] (a boolean as 1 or 0), else None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float) and 0 <= value <= 1:
        return float(value)
    return None
