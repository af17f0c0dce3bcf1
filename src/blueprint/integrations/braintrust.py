"""A Braintrust scorer that grades an output as its record's row says.

Add it to an ``Eval`` over records of Blueprint's Braintrust export::

    from blueprint.integrations.braintrust import make_oracle_scorer, oracle_scorer

    Eval("refunds", data=records, task=answer, scores=[oracle_scorer])
    # judged rows graded by autoevals' LLMClassifier, with the client and model you choose
    Eval("refunds", data=records, task=answer, scores=[make_oracle_scorer(model="gpt-4o")])

The task's output gives the recorded result: ``output``, ``toolCalls`` (or ``tool_calls``),
``finalState`` and ``judge`` where it is an object with them, else it is the output. The
record's ``metadata.blueprint`` (written by the export) says what the row is. A row with no
verdict that counts (it needs a judge or a person, the set forbids grading it, or it is a
starter example) gets a score of None, which Braintrust leaves out of its averages.

:func:`make_oracle_scorer` also judges: a row whose verdict waits on a judge (an llm-judge or
rubric row) is graded by an autoevals ``LLMClassifier`` whose prompt is the row's judge prompt
(:func:`blueprint.core.judgeprompt.judge_prompt`: its criteria, its reference or acceptable
set) with the output after it, choosing ``pass`` (1) or ``fail`` (0); the row's rules then
decide on the judge's verdict. It gives two scores: ``blueprint_oracle`` (Blueprint's score;
its metadata holds the row's id, the verdict, the rule and the judge's verdict with its model
and template) and ``blueprint_judge`` (the judge's own score, for a row a judge graded; its
metadata is the judge's verdict), so an experiment's results read back with ``blueprint
grade`` (:mod:`blueprint.grading.runners.braintrust`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from blueprint.grading import GradingOptions, Recorded, RowVerdict
from blueprint.grading.records import grade_record_row, recorded_from, row_from_record
from blueprint.integrations._judging import (
    CHOICES,
    answer_block,
    answer_text,
    first_verdict,
    judged_verdict,
    verdict_of,
)

try:
    from autoevals import Score
    from autoevals.llm import LLMClassifier
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "blueprint.integrations.braintrust needs autoevals: pip install autoevals"
    ) from error

#: the name Braintrust shows the scores under
NAME: Final = "blueprint_oracle"
#: the name of the judge's own score
JUDGE_NAME: Final = "blueprint_judge"
#: the render variable the row's judge prompt goes in: a value is inserted as it is, so a
#: brace in the row's criteria or reference is never read as a mustache tag
INSTRUCTIONS: Final = "blueprint_instructions"
#: the classifier's prompt: the row's instructions, then the output
PROMPT: Final = "{{{" + INSTRUCTIONS + "}}}" + answer_block("{{{output}}}")


def _record(input: Any, expected: Any, metadata: dict[str, Any] | None) -> dict[str, Any]:
    record: dict[str, Any] = {"input": input}
    if expected is not None:
        record["expected"] = expected
    if metadata is not None:
        record["metadata"] = metadata
    return record


def grade_record(
    input: Any,
    output: Any,
    expected: Any = None,
    metadata: dict[str, Any] | None = None,
    options: GradingOptions | None = None,
) -> Score:
    """The score of one output against the record (input, expected, metadata) it answers."""
    row = row_from_record("braintrust", _record(input, expected, metadata))
    verdict = grade_record_row(row, recorded_from(row["id"], output), options)
    return _oracle_score(verdict, None)


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


def make_oracle_scorer(
    model: str | None = None,
    client: Any = None,
    *,
    use_cot: bool = True,
    options: GradingOptions | None = None,
) -> Callable[..., list[Score]]:
    """A scorer for ``Eval(scores=[...])`` that judges a judged row with autoevals'
    ``LLMClassifier``. ``model`` and ``client`` are autoevals' own: without them the
    classifier takes autoevals' default model and the client set by ``autoevals.init``."""
    classifier = LLMClassifier(
        name=JUDGE_NAME,
        prompt_template=PROMPT,
        choice_scores=dict(CHOICES),
        model=model,
        use_cot=use_cot,
        client=client,
    )

    def blueprint_oracle(
        input: Any,
        output: Any,
        expected: Any = None,
        metadata: dict[str, Any] | None = None,
        **_: Any,
    ) -> list[Score]:
        row = row_from_record("braintrust", _record(input, expected, metadata))
        recorded = recorded_from(row["id"], output)
        verdict, prompt = first_verdict(row, recorded, options)
        judge = recorded.judge if isinstance(recorded.judge, dict) else None
        if prompt is not None:
            judge = _judge(classifier, prompt, recorded)
            verdict = judged_verdict(row, recorded, judge, options)
        scores = [_oracle_score(verdict, judge)]
        if judge is not None:
            scores.append(Score(name=JUDGE_NAME, score=_judge_score(judge), metadata=judge))
        return scores

    return blueprint_oracle


def _oracle_score(verdict: RowVerdict, judge: dict[str, Any] | None) -> Score:
    metadata: dict[str, Any] = {
        "id": verdict.id,
        "verdict": verdict.verdict,
        "reason": verdict.reason,
        "starterExample": verdict.starter,
    }
    if judge is not None or verdict.judge:
        metadata["judge"] = judge if judge is not None else verdict.judge
    return Score(name=NAME, score=verdict.counted_score, metadata=metadata)


def _judge_score(judge: dict[str, Any]) -> float | None:
    score = judge.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1:
        return float(score)
    passed = judge.get("pass")
    return CHOICES["pass" if passed else "fail"] if isinstance(passed, bool) else None


def _judge(classifier: Any, prompt: Any, recorded: Recorded) -> dict[str, Any]:
    """The classifier's verdict on one answer: its choice, score and rationale, with the
    model and the template that name the judge."""
    found = classifier.eval(
        output=answer_text(recorded),
        expected=prompt.reference,
        **{INSTRUCTIONS: prompt.text},
    )
    metadata = found.metadata if isinstance(found.metadata, dict) else {}
    choice = metadata.get("choice")
    reason = metadata.get("rationale")
    return verdict_of(
        choice == "pass" if choice in CHOICES else None,
        found.score,
        reason if isinstance(reason, str) else None,
        classifier.model,
        prompt.template,
    )
