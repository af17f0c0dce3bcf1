"""A judged row as promptfoo's own judge: an ``llm-rubric`` assertion whose rubric is the
row's part of the shared judge prompt (:mod:`blueprint.core.judgeprompt`).

The rubric is ``judge_prompt(row).text``: the expected behaviour, the question, the criteria,
the unacceptable behaviours, the reference or the acceptable set, and the pass logic.
promptfoo's grading prompt adds the output, and promptfoo's grading provider is the judge
model (``defaultTest.options.provider``, an assertion's ``provider``, or ``promptfoo eval
--grader``): Blueprint names no model. The row's passThreshold is the assertion's
``threshold``, which promptfoo applies as ``blueprint grade`` does (the judge must pass the
output and its score reach the threshold).

The template's identity, ``<oracle-type>@<digest>``, travels in the assertion's ``config``
under :data:`TEMPLATE_KEY`: promptfoo writes each assertion into its results file with its
verdict (``gradingResult.componentResults[].assertion``), so ``blueprint grade`` names the
template that judged each row (:mod:`blueprint.grading.runners.promptfoo`). ``--clean``
writes no such key.

With ``--graders blueprint`` every judged row (:func:`~blueprint.core.judgeprompt.judged`:
llm-judge on a reference-answer, acceptable-set or rubric row, or a rubric row with no
evaluator) gets this assertion, then its gate of checks as promptfoo assertions; the stock
export keeps promptfoo's factuality for a judged reference answer and writes this
``llm-rubric`` for a judged acceptable set or rubric. The other rows of a ``--graders
blueprint`` export get Blueprint's python assertion (:func:`scored`), or none when a person
grades them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from blueprint.core.judgeprompt import judge_prompt, judged
from blueprint.formats.promptfoo.checks import check_assertions, nested_json_schema
from blueprint.formats.promptfoo.templating import literal
from blueprint.formats.vendor import ExportRow, WriteContext

#: the key of an llm-rubric assertion's ``config`` that names the judge template
TEMPLATE_KEY: Final = "judgeTemplate"


def scored(row: ExportRow) -> bool:
    """Whether Blueprint's scorer gives the row a verdict in promptfoo (no judge, no person
    grades it): with ``--graders blueprint`` its test gets Blueprint's python assertion."""
    return (
        not row.human_only
        and row.evaluator != "llm-judge"
        and row.oracle_type not in ("rubric", "expected-behavior-only")
    )


def wired(row: ExportRow, context: WriteContext) -> bool:
    """Whether the export gives the row promptfoo's judge configured from the shared
    template in place of its stock assertions: a judged row, graded through Blueprint."""
    return context.options.graders == "blueprint" and judged(row.data, row.family_evaluator)


def rubric_assertion(row: ExportRow) -> dict[str, Any]:
    """The row's ``llm-rubric``: the judge prompt's text (kept literal through promptfoo's
    Nunjucks rendering), the row's passThreshold as its threshold, and the template's
    identity in its config. The row must be one a judge grades."""
    prompt = judge_prompt(row.data, row.family_evaluator)
    if prompt is None:
        raise ValueError(f"{row.id}: no judge grades a {row.oracle_type} row graded so")
    assertion: dict[str, Any] = {"type": "llm-rubric", "value": literal(prompt.text)}
    threshold = row.case.get("passThreshold")
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        assertion["threshold"] = threshold
    assertion["config"] = {TEMPLATE_KEY: prompt.template}
    return assertion


def assertions_of(
    row: ExportRow,
    context: WriteContext,
    stock: Callable[[ExportRow], list[dict[str, Any]]],
) -> list[dict[str, Any]]:
    """A test's assertions where promptfoo grades it: for a judged row graded through
    Blueprint, its ``llm-rubric`` then its gate of checks; else ``stock`` (the row's oracle
    as promptfoo's own assertions). ``--clean`` drops the template's key from the config."""
    if wired(row, context):
        assertions = [rubric_assertion(row), *check_assertions(row.case.get("checks"))]
    else:
        assertions = stock(row)
    return [_unmarked(item) for item in assertions] if context.options.clean else assertions


def judge_weakened(row: ExportRow) -> list[tuple[str, str]]:
    """What promptfoo leaves unenforced of a judged row it grades with the shared template:
    only a json-schema check nested in its gate, which no promptfoo assertion runs (the
    criteria, the unacceptable behaviours, the reference or set, the pass logic and the
    threshold are all in the judge's rubric or on its assertion)."""
    return [entry for entry in nested_json_schema(row) if entry[0] == "metadata.case.checks"]


def _unmarked(assertion: dict[str, Any]) -> dict[str, Any]:
    config = assertion.get("config")
    if assertion.get("type") != "llm-rubric" or not isinstance(config, dict):
        return assertion
    rest = {key: value for key, value in config.items() if key != TEMPLATE_KEY}
    unmarked = {key: value for key, value in assertion.items() if key != "config"}
    return {**unmarked, "config": rest} if rest else unmarked
