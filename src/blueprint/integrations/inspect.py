"""An Inspect AI scorer that grades a sample's output as its row says.

Use it as the task's scorer over a dataset of Blueprint's Inspect export::

    from inspect_ai import Task
    from inspect_ai.dataset import json_dataset
    from blueprint.integrations.inspect import oracle_scorer

    Task(dataset=json_dataset("samples.jsonl"), solver=..., scorer=oracle_scorer())

It reads the output (``state.output.completion``), the tool calls of the assistant
messages in ``state.messages``, and the world after the run from the sample's store under
``finalState`` (a solver that runs the task sets it: ``state.store.set("finalState",
{"records": ..., "files": ..., "commands": ...})``); the sample's ``metadata.blueprint``
(written by the export) says what the row is. The score's value is the verdict's score (1
for pass, 0 for fail, or the grade), its answer the verdict and its explanation the rule.

A row an LLM judge grades (llm-judge on a reference-answer, acceptable-set or rubric row) is
graded by Inspect's own ``model_graded_qa``: its instructions are the row's judge prompt
(:func:`blueprint.core.judgeprompt.judge_prompt`: the criteria, the unacceptable behaviours,
the reference or acceptable set, the pass logic) and its criterion the reference (or the
sample's target), with the grader ``judge_model`` names, else Inspect's own: the model bound
to the ``grader`` role, else the model evaluated. Its grade is the judge's verdict (``C``
passes, ``I`` fails, ``P``, offered only where the row gives partial credit, is a score of
0.5), and the row's own rules (its passThreshold, its checks) decide the row from it. The
score's metadata carries the verdict and the judge, so the log names them::

    {"verdict": "pass", "judge": {"pass": true, "score": 1.0, "reason": "...",
                                  "model": "openai/gpt-4o", "template": "rubric@..."}}

A row whose evaluator the oracle type bars (a tool-call or final-state row) never reaches
the judge. A row with no verdict that counts (it needs a person, the set forbids grading it,
it is a starter example) gets no score at all; a judged row whose grader gave no grade
gets an unscored score that says why.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from blueprint.core.judgeprompt import JudgePrompt, judge_prompt
from blueprint.grading import GradingOptions, Recorded, RowVerdict
from blueprint.grading.records import grade_record_row, row_from_record

try:
    from inspect_ai.model import Model, get_model, model_roles
    from inspect_ai.scorer import Score, Scorer, Target, mean, model_graded_qa, scorer
    from inspect_ai.solver import TaskState
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "blueprint.integrations.inspect needs Inspect AI: pip install inspect-ai"
    ) from error


#: the key of a sample's store that holds the recorded final state
FINAL_STATE: Final = "finalState"
#: the model role Inspect's model-graded scorers grade with
GRADER_ROLE: Final = "grader"
#: each grade of model_graded_qa as a judge's verdict (P only where the row offers it)
GRADES: Final[dict[str, dict[str, Any]]] = {
    "C": {"pass": True, "score": 1.0},
    "I": {"pass": False, "score": 0.0},
    "P": {"score": 0.5},
}

JudgeModel = str | Model | list[str | Model] | None


def sample_record(state: TaskState, target: Target) -> dict[str, Any]:
    """The sample a task state runs, as Blueprint's Inspect reader takes it."""
    given = state.input
    record: dict[str, Any] = {
        "input": given
        if isinstance(given, str)
        else [{"role": message.role, "content": message.text} for message in given]
    }
    if state.sample_id is not None:
        record["id"] = state.sample_id
    targets = list(target.target)
    if targets:
        record["target"] = targets[0] if len(targets) == 1 else targets
    if state.metadata:
        record["metadata"] = state.metadata
    return record


def recorded_result(row_id: str, state: TaskState) -> Recorded:
    """The sample's output and the tool calls its assistant messages made."""
    calls = [
        {"name": call.function, "arguments": call.arguments}
        for message in state.messages
        if message.role == "assistant"
        for call in (getattr(message, "tool_calls", None) or [])
    ]
    completion = state.output.completion if state.output is not None else None
    final_state = state.store.get(FINAL_STATE)
    return Recorded(
        id=row_id,
        output=completion,
        has_output=completion is not None,
        tool_calls=calls,
        final_state=final_state if isinstance(final_state, dict) else None,
    )


def judge_instructions(prompt: JudgePrompt, partial: bool) -> str:
    """model_graded_qa's instructions for a judged row: the row's judge prompt, then the
    grades on offer and how to give one."""
    letters = "CPI" if partial else "CI"
    offered = (
        '"C" if the submission meets them, "P" if it meets them in part, or "I" if it does not'
        if partial
        else '"C" if the submission meets them, or "I" if it does not'
    )
    return (
        f"{prompt.text}\n"
        "Grade the submission by the instructions above, against the criterion given with"
        f" the data. Choose ONE grade: {offered}.\n\n"
        "First, write out in a step by step manner your reasoning about the instructions to be"
        " sure that your conclusion is correct. Avoid simply stating the correct answers at"
        " the outset. Then, end with your answer formatted as 'GRADE: $LETTER' (without"
        f" quotes) where LETTER is one of {letters}.\n"
    )


def partial_credit(row: dict[str, Any]) -> bool:
    """Whether a row gives partial credit, so its judge may grade P: a graded acceptable set
    with a grade between 0 and 1, or a passThreshold below 1."""
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    threshold = case.get("passThreshold") if isinstance(case, dict) else None
    if _share(threshold) and threshold not in (0, 1):
        return True
    expected = row.get("expected")
    graded = expected.get("graded") if isinstance(expected, dict) else None
    return isinstance(graded, list) and any(
        isinstance(member, dict) and _share(member.get("grade")) and member["grade"] not in (0, 1)
        for member in graded
    )


def _share(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _grader(judge_model: JudgeModel) -> Model | list[str | Model]:
    """The judge: the model named, else the model bound to the grader role (a panel where a
    list is bound), else the model evaluated."""
    if isinstance(judge_model, list):
        return [get_model(model) for model in judge_model]
    if judge_model is not None:
        return get_model(judge_model)
    bound = model_roles().get(GRADER_ROLE)
    if isinstance(bound, list):
        return list[str | Model](bound)
    return get_model(role=GRADER_ROLE)


def _model_name(grader: Model | list[str | Model]) -> str:
    return ", ".join(map(str, grader)) if isinstance(grader, list) else str(grader)


async def run_judge(
    row: dict[str, Any],
    prompt: JudgePrompt,
    state: TaskState,
    target: Target,
    judge_model: JudgeModel = None,
) -> tuple[dict[str, Any], Any]:
    """The judge's verdict on the sample (``{pass, score, reason, model, template}``, pass
    and score left out when the grader gave no grade the row offers) and model_graded_qa's
    grading record (its prompt and the grader's reply)."""
    grader = _grader(judge_model)
    partial = partial_credit(row)
    graded = model_graded_qa(
        instructions=judge_instructions(prompt, partial),
        partial_credit=partial,
        model=grader,
    )
    criterion = Target(prompt.reference) if prompt.reference else target
    score = await graded(state, criterion)
    value = score.value if score is not None else None
    grade = GRADES.get(value) if isinstance(value, str) else None
    if value == "P" and not partial:
        grade = None
    judge: dict[str, Any] = dict(grade or {})
    explanation = score.explanation if score is not None else None
    if grade is None:
        explanation = f"the grader gave no grade this row offers ({value!r}): {explanation or ''}"
    if explanation:
        judge["reason"] = explanation
    judge["model"] = _model_name(grader)
    judge["template"] = prompt.template
    grading = score.metadata.get("grading") if score is not None and score.metadata else None
    return judge, grading


def _needs_judge(verdict: RowVerdict) -> bool:
    return verdict.verdict == "needs-judge" and not verdict.starter


@scorer(metrics=[mean()])
def oracle_scorer(judge_model: JudgeModel = None, options: GradingOptions | None = None) -> Scorer:
    """Blueprint's verdict for each sample, a judged row's from the judge (``judge_model``,
    else Inspect's grader role, else the model evaluated); None (no score) for a row that
    needs a person."""

    async def score(state: TaskState, target: Target) -> Score | None:
        row = row_from_record("inspect", sample_record(state, target))
        recorded = recorded_result(row["id"], state)
        verdict = grade_record_row(row, recorded, options)
        judge: dict[str, Any] | None = None
        grading = None
        prompt = judge_prompt(row) if _needs_judge(verdict) and recorded.has_output else None
        if prompt is not None:
            judge, grading = await run_judge(row, prompt, state, target, judge_model)
            recorded = dataclasses.replace(recorded, judge=judge)
            verdict = grade_record_row(row, recorded, options)
        metadata: dict[str, Any] = {"verdict": verdict.verdict}
        if judge is not None:
            metadata["judge"] = judge
        if grading is not None:
            metadata["grading"] = grading
        if verdict.counted_score is None:
            if judge is None:
                return None
            return Score.unscored(
                answer=verdict.verdict, explanation=verdict.explained(), metadata=metadata
            )
        return Score(
            value=verdict.counted_score,
            answer=verdict.verdict,
            explanation=verdict.explained(),
            metadata=metadata,
        )

    return score
