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
for pass, 0 for fail, or the grade), its answer the verdict and its explanation the rule; a
row with no verdict that counts (it needs a judge or a person, the set forbids grading it,
or it is a starter example) gets no score at all.
"""

from __future__ import annotations

from typing import Any, Final

from blueprint.grading import GradingOptions, Recorded
from blueprint.grading.records import grade_record_row, row_from_record

try:
    from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
    from inspect_ai.solver import TaskState
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "blueprint.integrations.inspect needs Inspect AI: pip install inspect-ai"
    ) from error


#: the key of a sample's store that holds the recorded final state
FINAL_STATE: Final = "finalState"


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


@scorer(metrics=[mean()])
def oracle_scorer(options: GradingOptions | None = None) -> Scorer:
    """Blueprint's verdict for each sample: None (no score) for a row that needs a judge or
    a person."""

    async def score(state: TaskState, target: Target) -> Score | None:
        row = row_from_record("inspect", sample_record(state, target))
        verdict = grade_record_row(row, recorded_result(row["id"], state), options)
        if verdict.counted_score is None:
            return None
        return Score(
            value=verdict.counted_score,
            answer=verdict.verdict,
            explanation=verdict.explained(),
            metadata={"verdict": verdict.verdict},
        )

    return score
