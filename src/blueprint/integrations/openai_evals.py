"""An OpenAI Evals eval class that grades each sample as its row says.

The registry names it by module path, over samples of Blueprint's OpenAI Evals export::

    support-refunds:
      id: support-refunds.dev.v0
    support-refunds.dev.v0:
      class: blueprint.integrations.openai_evals:OracleEval
      args:
        samples_jsonl: support-refunds/samples.jsonl

It runs where the ``evals`` package is installed, with Blueprint installed there too. Each
sample's completion is graded by :func:`blueprint.grading.grade_row` against the row the
sample's ``metadata.blueprint`` holds: a scored row is recorded as a match (correct when
it passes) with its score and reason, and a row with no verdict that counts (it needs a
judge or a person, the set forbids grading it, or it is a starter example) as a
``blueprint_verdict`` event only, so the accuracy counts scored rows alone.
"""

from __future__ import annotations

from typing import Any

from blueprint.grading import GradingOptions, RowVerdict
from blueprint.grading.records import grade_record_row, recorded_output, row_from_record

try:
    import evals
    import evals.metrics
    import evals.record
except ImportError as error:  # pragma: no cover - the package is missing
    raise ImportError(
        "blueprint.integrations.openai_evals runs inside OpenAI Evals: pip install evals"
    ) from error


def record_verdict(
    sample: dict[str, Any], sampled: str, options: GradingOptions | None = None
) -> RowVerdict:
    """Grade one completion against its sample's row, and record the verdict."""
    row = row_from_record("openai-evals", sample)
    verdict = grade_record_row(row, recorded_output(row["id"], sampled), options)
    details = {
        "id": verdict.id,
        "verdict": verdict.verdict,
        "reason": verdict.reason,
        "starterExample": verdict.starter,
    }
    if verdict.counted_score is None:
        evals.record.record_event("blueprint_verdict", details)
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

    def __init__(
        self,
        completion_fns: list[Any],
        samples_jsonl: str,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(completion_fns, *args, **kwargs)
        self.samples_jsonl = samples_jsonl

    def eval_sample(self, sample: Any, *_: Any) -> RowVerdict:
        result = self.completion_fn(prompt=sample["input"], temperature=0.0)
        return record_verdict(sample, result.get_completions()[0])

    def run(self, recorder: Any) -> dict[str, Any]:
        self.eval_all_samples(recorder, self.get_samples())
        events = recorder.get_events("match")
        return {"accuracy": evals.metrics.get_accuracy(events), "scored": len(events)}
