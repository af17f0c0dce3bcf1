"""What a runner's own judge is given by Blueprint's scorer, the same in every runner.

A scorer grades a row first without a judge. Only a row whose verdict then waits on a judge
(``needs-judge``: an llm-judge or rubric row the result holds no verdict for) is handed to the
runner's judge, with the prompt :func:`blueprint.core.judgeprompt.judge_prompt` renders and
the answer after it. A row the set bars the judge from (a tool-call or final-state row), a
person's row and an invalid row never reach it. The judge's verdict is then graded by the
row's own rules (:func:`blueprint.grading.grade_row`), so a threshold or a check gate decides
as ``blueprint grade`` would.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Final

from blueprint.core.judgeprompt import JudgePrompt, as_text, judge_prompt
from blueprint.grading import GradingOptions, Recorded, RowVerdict
from blueprint.grading.records import grade_record_row

#: the judge's two answers, and the score each gives (a pass is 1, a fail 0)
CHOICES: Final = {"pass": 1.0, "fail": 0.0}


def first_verdict(
    row: dict[str, Any], recorded: Recorded, options: GradingOptions | None = None
) -> tuple[RowVerdict, JudgePrompt | None]:
    """Blueprint's verdict before any judge, and the judge prompt when that verdict waits on
    a judge the result does not already hold (None otherwise)."""
    verdict = grade_record_row(row, recorded, options)
    if verdict.verdict != "needs-judge" or isinstance(recorded.judge, dict):
        return verdict, None
    return verdict, judge_prompt(row)


def judged_verdict(
    row: dict[str, Any],
    recorded: Recorded,
    judge: dict[str, Any],
    options: GradingOptions | None = None,
) -> RowVerdict:
    """The row's verdict with the judge's verdict recorded (``Recorded.judge``)."""
    return grade_record_row(row, dataclasses.replace(recorded, judge=judge), options)


def answer_text(recorded: Recorded) -> str:
    """The answer a judge reads: the output as text, else the tool calls or the final state
    as JSON (empty when nothing was recorded)."""
    if recorded.has_output and recorded.output is not None:
        return as_text(recorded.output)
    for part in (recorded.tool_calls, recorded.final_state):
        if part is not None:
            return json.dumps(part, ensure_ascii=False, sort_keys=True)
    return ""


def answer_block(placeholder: str) -> str:
    """The part of the prompt after the row's instructions: where the runner puts the answer
    (``placeholder`` is its own template variable)."""
    return f"\nThe answer to grade:\n<answer>\n{placeholder}\n</answer>\n"


def format_escaped(text: str) -> str:
    """Text for a template that ``str.format`` fills: its braces doubled, so a brace in the
    row's criteria or reference is never read as a variable."""
    return text.replace("{", "{{").replace("}", "}}")


def verdict_of(
    passed: bool | None,
    score: float | None,
    reason: str | None,
    model: str | None,
    template: str,
) -> dict[str, Any]:
    """A judge's verdict as a recorded result holds it (``Recorded.judge``), its empty parts
    left out."""
    found: dict[str, Any] = {
        "pass": passed,
        "score": score,
        "reason": reason or None,
        "model": model or None,
        "template": template,
    }
    return {key: value for key, value in found.items() if value is not None}


def identity_note(judge: dict[str, Any] | None) -> str:
    """The judge's identity in words, for a comment (empty when it names none)."""
    if not judge:
        return ""
    parts = [f"{key} {judge[key]}" for key in ("model", "template") if judge.get(key)]
    return f" (judge: {', '.join(parts)})" if parts else ""


def model_name(model: Any, judge: Any) -> str | None:
    """The judge's model as the runner names it: the model given, else the judge object's
    ``model_name`` or ``model``, else its class."""
    if isinstance(model, str) and model:
        return model
    for attribute in ("model_name", "model", "model_id"):
        value = getattr(judge, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(judge).__name__ if judge is not None else None
