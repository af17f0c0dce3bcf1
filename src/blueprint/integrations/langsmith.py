"""A LangSmith evaluator that grades a run as its example's row says.

Pass it to ``evaluate()`` with a dataset made of Blueprint's LangSmith export::

    from blueprint.integrations.langsmith import oracle_evaluator

    evaluate(target, data="refunds", evaluators=[oracle_evaluator])

The target's outputs give the recorded result: ``output`` (where LangSmith puts a target's
return value that is not a dict), ``toolCalls`` (or ``tool_calls``), ``finalState`` and
``judge``; outputs with none of these are the output. The example's ``metadata.blueprint``
(written by the export) says what the row is. A row with no verdict that counts (it needs a
judge or a person, the set forbids grading it, or it is a starter example) gets no score, and
the comment says why.
"""

from __future__ import annotations

from typing import Any

from blueprint.grading import GradingOptions
from blueprint.grading.records import grade_record_row, recorded_from, row_from_record

#: the feedback key LangSmith shows the verdicts under
KEY = "blueprint_oracle"


def example_record(example: Any) -> dict[str, Any]:
    """An example (a langsmith Example, or a dict of its fields) as the export wrote it."""
    fields = example if isinstance(example, dict) else vars(example)
    record: dict[str, Any] = {"inputs": fields.get("inputs") or {}}
    for name in ("outputs", "metadata", "split"):
        if fields.get(name) is not None:
            record[name] = fields[name]
    return record


def grade_example(
    outputs: Any, example: Any, options: GradingOptions | None = None
) -> dict[str, Any]:
    """The feedback for one run: ``key``, ``score`` (None for no number), ``value`` (the
    verdict) and ``comment`` (the rule)."""
    row = row_from_record("langsmith", example_record(example))
    verdict = grade_record_row(row, recorded_from(row["id"], outputs), options)
    return {
        "key": KEY,
        "score": verdict.counted_score,
        "value": verdict.verdict,
        "comment": verdict.explained(),
    }


def oracle_evaluator(outputs: dict[str, Any], example: Any) -> dict[str, Any]:
    """An evaluator for LangSmith's ``evaluate()``: it names ``outputs`` and ``example``,
    which LangSmith passes by name."""
    return grade_example(outputs, example)
