"""A Braintrust scorer that grades an output as its record's row says.

Add it to an ``Eval`` over records of Blueprint's Braintrust export::

    from blueprint.integrations.braintrust import oracle_scorer

    Eval("refunds", data=records, task=answer, scores=[oracle_scorer])

The task's output gives the recorded result: ``output``, ``toolCalls`` (or ``tool_calls``),
``finalState`` and ``judge`` where it is an object with them, else it is the output. The
record's ``metadata.blueprint`` (written by the export) says what the row is. A row with no
verdict that counts (it needs a judge or a person, the set forbids grading it, or it is a
starter example) gets a score of None, which Braintrust leaves out of its averages.
"""

from __future__ import annotations

from typing import Any

from blueprint.grading import GradingOptions
from blueprint.grading.records import grade_record_row, recorded_from, row_from_record

try:
    from autoevals import Score
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "blueprint.integrations.braintrust needs autoevals: pip install autoevals"
    ) from error

#: the name Braintrust shows the scores under
NAME = "blueprint_oracle"


def grade_record(
    input: Any,
    output: Any,
    expected: Any = None,
    metadata: dict[str, Any] | None = None,
    options: GradingOptions | None = None,
) -> Score:
    """The score of one output against the record (input, expected, metadata) it answers."""
    record: dict[str, Any] = {"input": input}
    if expected is not None:
        record["expected"] = expected
    if metadata is not None:
        record["metadata"] = metadata
    row = row_from_record("braintrust", record)
    verdict = grade_record_row(row, recorded_from(row["id"], output), options)
    return Score(
        name=NAME,
        score=verdict.counted_score,
        metadata={
            "verdict": verdict.verdict,
            "reason": verdict.reason,
            "starterExample": verdict.starter,
        },
    )


def oracle_scorer(
    input: Any,
    output: Any,
    expected: Any = None,
    metadata: dict[str, Any] | None = None,
    **_: Any,
) -> Score:
    """A scorer for ``Eval(scores=[...])``: Braintrust passes input, output, expected and
    metadata by name."""
    return grade_record(input, output, expected, metadata)
