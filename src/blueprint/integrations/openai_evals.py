"""An OpenAI Evals eval class that grades each sample as its row says.

The registry names it by module path, over samples of Blueprint's OpenAI Evals export::

    support-refunds:
      id: support-refunds.dev.v0
    support-refunds.dev.v0:
      class: blueprint.integrations.openai_evals:OracleEval
      args:
        samples_jsonl: support-refunds/samples.jsonl
        judge_completion_fn: gpt-4o      # optional: the judge of judged rows

It runs where the ``evals`` package is installed, with Blueprint installed there too. Each
sample's completion is graded by :func:`blueprint.grading.grade_row` against the row the
sample's ``metadata.blueprint`` holds: a scored row is recorded as a match (correct when
it passes) with its score and reason, and a row with no verdict that counts (it needs a
judge or a person, the set forbids grading it, or it is a starter example) as a
``blueprint_verdict`` event only, so the accuracy counts scored rows alone.

A row whose verdict waits on a judge (an llm-judge or rubric row) is graded with evals' own
model-graded classification (``classify`` of ``evals.elsuite.modelgraded``, as
``ModelBasedClassify`` runs it): the prompt is the row's judge prompt
(:func:`blueprint.core.judgeprompt.judge_prompt`) with the completion after it, and the judge
answers ``pass`` or ``fail`` after its reasoning (``cot_classify``). The judge is the
completion function ``judge_completion_fn`` names (a model or a registry id), else the last
of the run's completion functions when there are several (``oaieval model,judge``, as
ModelBasedClassify takes it), else the eval's own. Its verdict (``pass``, ``score``,
``reason``, ``model``, ``template``) goes in the event's ``judge``, with the sampled
completion as ``picked``, so the record log reads back with ``blueprint grade``
(:mod:`blueprint.grading.runners.openai_evals`).
"""

from __future__ import annotations

from typing import Any, Final

from blueprint.grading import GradingOptions, Recorded, RowVerdict
from blueprint.grading.records import recorded_output, row_from_record
from blueprint.integrations._judging import (
    CHOICES,
    answer_block,
    answer_text,
    first_verdict,
    format_escaped,
    judged_verdict,
    model_name,
    verdict_of,
)

try:
    import evals
    import evals.metrics
    import evals.record
    from evals.elsuite.modelgraded.base import ModelGradedSpec
    from evals.elsuite.modelgraded.classify_utils import INVALID_STR, classify
except ImportError as error:  # pragma: no cover - the package is missing
    raise ImportError(
        "blueprint.integrations.openai_evals runs inside OpenAI Evals: pip install evals"
    ) from error

#: how the judge answers: its reasoning first, then the choice on a line of its own
EVAL_TYPE: Final = "cot_classify"
#: the tokens the judge may spend on its reasoning and choice
JUDGE_MAX_TOKENS: Final = 1024


def judge_spec(text: str) -> Any:
    """The model-graded spec of a row's judge prompt: the prompt with the completion after
    it, choosing ``pass`` (1) or ``fail`` (0)."""
    return ModelGradedSpec(
        prompt=format_escaped(text) + answer_block("{completion}"),
        choice_strings=list(CHOICES),
        choice_scores=dict(CHOICES),
        input_outputs={"input": "completion"},
        eval_type=EVAL_TYPE,
    )


def judge_completion(
    prompt: Any, recorded: Recorded, judge: Any, name: str | None
) -> dict[str, Any]:
    """The judge's verdict on one completion, through evals' ``classify``."""
    choice, info = classify(
        mg=judge_spec(prompt.text),
        completion_fn=judge,
        completion_kwargs={"max_tokens": JUDGE_MAX_TOKENS},
        format_kwargs={"completion": answer_text(recorded)},
        eval_type=EVAL_TYPE,
    )
    sampled = info.get("sampled") or [None]
    # an answer with no choice in it is no verdict (evals would count it as the lowest score)
    invalid = choice == INVALID_STR
    return verdict_of(
        None if invalid else choice == "pass",
        None if invalid else info.get("score"),
        sampled[0] if isinstance(sampled[0], str) else None,
        name,
        prompt.template,
    )


def record_verdict(
    sample: dict[str, Any],
    sampled: str,
    options: GradingOptions | None = None,
    *,
    judge: Any = None,
    judge_name: str | None = None,
) -> RowVerdict:
    """Grade one completion against its sample's row (with the judge, a completion
    function, for a row that waits on one), and record the verdict."""
    row = row_from_record("openai-evals", sample)
    recorded = recorded_output(row["id"], sampled)
    verdict, prompt = first_verdict(row, recorded, options)
    found = recorded.judge if isinstance(recorded.judge, dict) else None
    if prompt is not None and judge is not None:
        found = judge_completion(prompt, recorded, judge, judge_name or model_name(None, judge))
        verdict = judged_verdict(row, recorded, found, options)
    details: dict[str, Any] = {
        "id": verdict.id,
        "verdict": verdict.verdict,
        "reason": verdict.reason,
        "starterExample": verdict.starter,
    }
    if found is not None:
        details["judge"] = found
    if verdict.counted_score is None:
        evals.record.record_event("blueprint_verdict", {**details, "picked": sampled})
    else:
        evals.record.record_match(
            verdict.verdict == "pass",
            expected=sample.get("ideal"),
            picked=sampled,
            score=verdict.score,
            **details,
        )
    return verdict


class OracleEval(evals.Eval):  # type: ignore[misc]
    """Blueprint's verdict for each sample's completion (``evals.Eval``)."""

    completion_fns: list[Any]

    def __init__(
        self,
        completion_fns: list[Any],
        samples_jsonl: str,
        *args: Any,
        judge_completion_fn: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(completion_fns, *args, **kwargs)
        self.samples_jsonl = samples_jsonl
        if judge_completion_fn:
            self.judge_fn = self.registry.make_completion_fn(judge_completion_fn)
            self.judge_name: str | None = judge_completion_fn
        else:
            # several completion functions: the last is the judge, as ModelBasedClassify has it
            self.judge_fn = self.completion_fns[-1]
            self.judge_name = None
            if len(self.completion_fns) > 1:
                self.completion_fns = self.completion_fns[:-1]

    def eval_sample(self, sample: Any, *_: Any) -> RowVerdict:
        result = self.completion_fn(prompt=sample["input"], temperature=0.0)
        return record_verdict(
            sample,
            result.get_completions()[0],
            judge=self.judge_fn,
            judge_name=self.judge_name,
        )

    def run(self, recorder: Any) -> dict[str, Any]:
        self.eval_all_samples(recorder, self.get_samples())
        events = recorder.get_events("match")
        return {"accuracy": evals.metrics.get_accuracy(events), "scored": len(events)}
