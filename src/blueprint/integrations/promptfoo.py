"""A promptfoo python assertion that grades an output as its test's row says.

``convert --to promptfoo --graders blueprint`` gives every test Blueprint can grade this
assertion::

    assert:
      - type: python
        value: |
          from blueprint.integrations.promptfoo import get_assert
          return get_assert(output, context)

promptfoo runs it with the Python it finds (``PROMPTFOO_PYTHON`` names one that has
Blueprint installed). The test's ``metadata.blueprint`` (written by the export) says what
the row is; the output is the recorded result: text, a JSON value, or tool calls (a list of
``{name, arguments}`` or OpenAI tool calls, as JSON text or a value, or an object with
``tool_calls``).

A row an LLM judge grades gets promptfoo's own judge instead: an ``llm-rubric`` written from
the shared judge template (:mod:`blueprint.formats.promptfoo.judging`), run by the grading
provider the promptfoo config names. This assertion has no judge's verdict to read, so it
gives such a row none; ``blueprint grade SET results.json`` reads the judge's verdict, its
model and its template from promptfoo's results file (:mod:`blueprint.grading.runners.promptfoo`)
and applies the row's rules to it.
"""

from __future__ import annotations

from typing import Any, Final

from blueprint.formats.promptfoo.codec import BLUEPRINT_ASSERTION
from blueprint.grading import GradingOptions
from blueprint.grading.records import grade_record_row, recorded_output, row_from_record

#: the assertion the export writes
ASSERTION: Final = BLUEPRINT_ASSERTION


def get_assert(
    output: Any, context: dict[str, Any], options: GradingOptions | None = None
) -> dict[str, Any]:
    """promptfoo's python assertion: ``{pass, score, reason}`` from Blueprint's verdict. A row
    with no verdict that counts (it needs a judge or a person, the set forbids grading it, or
    it is a starter example) is an error, never a score."""
    test = context.get("test") if isinstance(context, dict) else None
    if not isinstance(test, dict):
        raise ValueError("promptfoo gave no test in the assertion's context")
    row = row_from_record("promptfoo", test)
    verdict = grade_record_row(row, recorded_output(row["id"], output), options)
    if verdict.counted_score is None:
        raise ValueError(f"{row['id']}: {verdict.explained()}")
    return {
        "pass": verdict.verdict == "pass",
        "score": verdict.counted_score,
        "reason": verdict.explained(),
    }
