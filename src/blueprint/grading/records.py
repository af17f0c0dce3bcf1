"""A vendor record back to the row it was exported from, for a runner's scorer.

A scorer inside promptfoo, DeepEval, LangSmith or Braintrust sees one record (a test, a
golden, an example) with the metadata Blueprint's export wrote. The format's own codec reads
it back, exactly as importing the file would, so the scorer grades the row the set holds.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any, Final

from blueprint.core.issues import ERROR_CODES, ValidationReport
from blueprint.formats import REGISTRY, Codec
from blueprint.formats.base import SourceRow, UnreadableRow
from blueprint.grading.semantics import GradingOptions, Recorded, RowVerdict, grade_row
from blueprint.io import jsonvalues
from blueprint.validation.stream import StreamValidator, ValidationOptions


class RecordError(ValueError):
    """A record a runner handed over is not one Blueprint can read as a row."""


@cache
def _codec(name: str) -> Codec:
    return REGISTRY[name]


def row_from_record(format_name: str, record: dict[str, Any]) -> dict[str, Any]:
    """The canonical row a vendor record reads as (RecordError when it does not read)."""
    codec = _codec(format_name)
    rows = getattr(codec, "rows", None)
    if rows is None:
        raise RecordError(f"{format_name} has no records to read one at a time")
    for item in rows([(None, record)]):
        if isinstance(item, UnreadableRow):
            raise RecordError(f"the {format_name} record does not read as a row: {item.reason}")
        row: dict[str, Any] = item.data
        return row
    raise RecordError(f"the {format_name} record gives no row")


def row_error_codes(row: dict[str, Any]) -> list[str]:
    """The codes of the validator's errors in one row read alone (no set around it)."""
    validator = StreamValidator(
        ValidationReport(source="<record>", format="record"),
        ValidationOptions(select=ERROR_CODES, row_ids=False),
    )
    validator.check_header(None)
    found = validator.check_row(SourceRow(0, None, row), "record")
    return list(dict.fromkeys(issue.code for issue in found if issue.severity == "error"))


def grade_record_row(
    row: dict[str, Any], recorded: Recorded, options: GradingOptions | None = None
) -> RowVerdict:
    """A runner's verdict for the row a record reads as: :func:`grade_row`, and ``invalid``
    for a row the validator finds an error in, as ``blueprint grade`` gives it."""
    verdict = grade_row(row, recorded, options)
    codes = [] if verdict.verdict == "invalid" else row_error_codes(row)
    if not codes:
        return verdict
    return dataclasses.replace(
        verdict,
        verdict="invalid",
        score=None,
        reason=f"the row is not valid ({', '.join(codes)}; run blueprint validate);"
        " no verdict is given",
    )


#: where a runner's output object may hold each part of a recorded result
_PARTS: Final = {
    "output": ("output",),
    "tool_calls": ("toolCalls", "tool_calls"),
    "final_state": ("finalState", "final_state"),
    "judge": ("judge",),
}


def recorded_from(row_id: str, produced: Any) -> Recorded:
    """A runner's output as a recorded result. An object with any of ``output``,
    ``toolCalls`` (or ``tool_calls``), ``finalState`` (or ``final_state``) and ``judge``
    gives those; any other value is the output itself."""
    if isinstance(produced, dict) and any(
        name in produced for names in _PARTS.values() for name in names
    ):
        found = {
            part: next((produced[name] for name in names if name in produced), None)
            for part, names in _PARTS.items()
        }
        calls, state, judge = found["tool_calls"], found["final_state"], found["judge"]
        return Recorded(
            id=row_id,
            output=found["output"],
            has_output="output" in produced,
            tool_calls=calls if isinstance(calls, list) else None,
            final_state=state if isinstance(state, dict) else None,
            judge=judge if isinstance(judge, dict) else None,
        )
    return Recorded(id=row_id, output=produced, has_output=produced is not None)


def recorded_output(row_id: str, output: Any) -> Recorded:
    """A provider's output as a recorded result: tool calls where it is a list of calls (or
    JSON text of one, or an object with ``tool_calls``), else the output itself. An empty
    list is a trajectory with no call, and stays the output too: a row that reads an output
    reads ``[]``, and one that reads tool calls reads none made."""
    value = output
    if isinstance(output, str) and output.lstrip()[:1] in ("[", "{"):
        try:
            value = jsonvalues.loads(output)
        except jsonvalues.JSONError:
            value = output
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return Recorded(id=row_id, output=output, has_output=True, tool_calls=value["tool_calls"])
    if isinstance(value, list) and all(_call_like(item) for item in value):
        return Recorded(id=row_id, output=output, has_output=True, tool_calls=value)
    if isinstance(value, dict) and ("toolCalls" in value or "finalState" in value):
        return recorded_from(row_id, value)
    return Recorded(id=row_id, output=output, has_output=True)


def _call_like(item: Any) -> bool:
    return isinstance(item, dict) and (
        isinstance(item.get("name"), str) or isinstance(item.get("function"), dict)
    )
