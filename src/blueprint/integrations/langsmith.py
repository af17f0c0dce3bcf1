"""A LangSmith evaluator that grades a run as its example's row says.

Pass it to ``evaluate()`` with a dataset made of Blueprint's LangSmith export::

    from blueprint.integrations.langsmith import make_oracle_evaluator, oracle_evaluator

    evaluate(target, data="refunds", evaluators=[oracle_evaluator])
    # judged rows graded by openevals' LLM-as-judge, with the model of your choice
    evaluate(target, data="refunds", evaluators=[make_oracle_evaluator(model="openai:...")])

The target's outputs give the recorded result: ``output`` (where LangSmith puts a target's
return value that is not a dict), ``toolCalls`` (or ``tool_calls``), ``finalState`` and
``judge``; outputs with none of these are the output. The example's ``metadata.blueprint``
(written by the export) says what the row is. A row with no verdict that counts (it needs a
judge or a person, the set forbids grading it, or it is a starter example) gets no score, and
the comment says why.

:func:`make_oracle_evaluator` also judges: a row whose verdict waits on a judge (an llm-judge
or rubric row) is graded by openevals' ``create_llm_as_judge`` with the row's judge prompt
(:func:`blueprint.core.judgeprompt.judge_prompt`: its criteria, its reference or acceptable
set) and the run's output, and the row's rules then decide on the judge's verdict. Its
feedback names the row and the judge, so that an experiment's results read back with
``blueprint grade`` (:mod:`blueprint.grading.runners.langsmith`):

- ``blueprint_oracle``: Blueprint's verdict (``value``), its score and the rule (``comment``,
  with the judge's model and template);
- ``blueprint_row``: the row's id (``value``);
- ``blueprint_judge``: the judge's verdict as JSON text (``value``: pass, score, reason,
  model, template), for a row a judge graded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from blueprint.core.judgeprompt import JudgePrompt
from blueprint.grading import GradingOptions, Recorded, RowVerdict
from blueprint.grading.records import grade_record_row, recorded_from, row_from_record
from blueprint.integrations._judging import (
    CHOICES,
    answer_block,
    answer_text,
    first_verdict,
    identity_note,
    judged_verdict,
    model_name,
    verdict_of,
)

#: the feedback key LangSmith shows the verdicts under
KEY: Final = "blueprint_oracle"
#: the feedback key whose value is the row's id
ROW_KEY: Final = "blueprint_row"
#: the feedback key whose value is the judge's verdict (JSON text)
JUDGE_KEY: Final = "blueprint_judge"
#: the prompt variable the row's judge prompt goes in
INSTRUCTIONS: Final = "blueprint_instructions"


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
    return _oracle_feedback(verdict, None)


def oracle_evaluator(outputs: dict[str, Any], example: Any) -> dict[str, Any]:
    """An evaluator for LangSmith's ``evaluate()``: it names ``outputs`` and ``example``,
    which LangSmith passes by name."""
    return grade_example(outputs, example)


def make_oracle_evaluator(
    *,
    judge: Any = None,
    model: str | None = None,
    options: GradingOptions | None = None,
) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """An evaluator for ``evaluate()`` that gives the three feedbacks above.

    ``judge`` and ``model`` are openevals' own: a LangChain chat model, or an OpenAI client
    with the model's name, or a model string alone (``"openai:gpt-4o-mini"``) that openevals
    starts. With neither, no judge is called and a judged row gets no score, as with
    :func:`oracle_evaluator`."""
    run_judge = _openevals_judge(judge, model) if judge is not None or model else None

    def blueprint_oracle(outputs: dict[str, Any], example: Any) -> dict[str, Any]:
        row = row_from_record("langsmith", example_record(example))
        recorded = recorded_from(row["id"], outputs)
        verdict, prompt = first_verdict(row, recorded, options)
        verdict_judge = recorded.judge if isinstance(recorded.judge, dict) else None
        if prompt is not None and run_judge is not None:
            verdict_judge = run_judge(prompt, recorded)
            verdict = judged_verdict(row, recorded, verdict_judge, options)
        results = [
            _oracle_feedback(verdict, verdict_judge),
            {"key": ROW_KEY, "value": verdict.id},
        ]
        if verdict_judge is not None:
            results.append(
                {
                    "key": JUDGE_KEY,
                    "value": json.dumps(verdict_judge, ensure_ascii=False, sort_keys=True),
                    "comment": verdict_judge.get("reason"),
                }
            )
        return {"results": results}

    return blueprint_oracle


def _oracle_feedback(verdict: RowVerdict, judge: dict[str, Any] | None) -> dict[str, Any]:
    feedback: dict[str, Any] = {
        "key": KEY,
        "score": verdict.counted_score,
        "value": verdict.verdict,
        "comment": verdict.explained() + identity_note(verdict.judge or judge),
    }
    if judge is not None:
        feedback["evaluator_info"] = {"blueprint": {"id": verdict.id, "judge": judge}}
    return feedback


def _openevals_judge(
    judge: Any, model: str | None
) -> Callable[[JudgePrompt, Recorded], dict[str, Any]]:
    """openevals' LLM-as-judge, made once (openevals starts a model named by string on its
    first call and keeps it): a function of a row's judge prompt and a recorded result that
    gives the judge's verdict as a recorded result holds it.

    openevals fills its prompt with ``str.format``; the row's instructions go in as a
    variable of their own, so a brace in the row's criteria or reference is never read as
    one, and the reference goes in as ``reference_outputs`` too."""
    try:
        from openevals.llm import create_llm_as_judge
    except ImportError as error:  # pragma: no cover - the extra is missing
        raise ImportError(
            "make_oracle_evaluator's judge runs openevals: pip install openevals"
        ) from error
    evaluator = create_llm_as_judge(
        prompt="{" + INSTRUCTIONS + "}" + answer_block("{outputs}"),
        feedback_key=JUDGE_KEY,
        judge=judge,
        model=model,
    )
    name = model_name(model, judge)

    def run(prompt: JudgePrompt, recorded: Recorded) -> dict[str, Any]:
        found = evaluator(
            outputs=answer_text(recorded),
            reference_outputs=prompt.reference,
            **{INSTRUCTIONS: prompt.text},
        )
        found = found[0] if isinstance(found, list) else found
        score = found.get("score") if isinstance(found, dict) else None
        reason = found.get("comment") if isinstance(found, dict) else None
        return verdict_of(
            score if isinstance(score, bool) else None,
            number(score),
            reason if isinstance(reason, str) else None,
            name,
            prompt.template,
        )

    return run


def number(score: Any) -> float | None:
    """A judge's score in [0, 1]: a boolean as 1 or 0."""
    if isinstance(score, bool):
        return CHOICES["pass" if score else "fail"]
    if isinstance(score, int | float) and 0 <= score <= 1:
        return float(score)
    return None
