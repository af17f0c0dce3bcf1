"""A DeepEval metric that grades a test case as its row's oracle type says.

Build the test case from an exported golden (its ``additional_metadata`` copied over) and
add :class:`OracleMetric` to the metrics::

    from blueprint.integrations.deepeval import OracleMetric

    test_case = LLMTestCase(
        input=golden.input,
        actual_output=answer,
        tools_called=calls,
        expected_output=golden.expected_output,
        expected_tools=golden.expected_tools,
        additional_metadata=golden.additional_metadata,
    )
    evaluate([test_case], [OracleMetric()])

A forbidden call, calls out of order, a missing argument, the third member of an acceptable
set: each gets the verdict ``blueprint grade`` gives. An LLMTestCase has no place for the
world after a run, so a final-state row reads it from ``additional_metadata["finalState"]``
(``{"records": ..., "files": ..., "commands": ...}``, as in a results file)::

    additional_metadata={**golden.additional_metadata, "finalState": state}

A row with no verdict that counts (it needs a judge or a person, the set forbids grading it,
its result lacks what its oracle reads, or it is a starter example) gets no score and is
never a success: DeepEval counts a test case whose metrics give no verdict as passed, so the
metric reports an error (``error`` and ``reason`` say why) and ``success`` is False.

A row an LLM judge grades (llm-judge on a reference-answer, acceptable-set or rubric row) is
graded by DeepEval's own GEval, with the judge you name (``OracleMetric(judge="gpt-4.1")`` or
any ``DeepEvalBaseLLM``; by default DeepEval's own model configuration): its criteria are the
row's judge prompt (:func:`blueprint.core.judgeprompt.judge_prompt`: the criteria, the
unacceptable behaviours, the reference or acceptable set, the pass logic), and it reads the
input, the actual output and, where the row has a reference, the expected output (the
acceptable answers, one a line, for an acceptable set). GEval's score, success and reason
are the judge's verdict, and the row's own rules (its passThreshold, its checks) decide the
row from it. A row whose evaluator its oracle type bars never reaches GEval.

The judge is named where DeepEval keeps a metric's result (its test-run file, see
:mod:`blueprint.grading.runners.deepeval`): ``evaluationModel`` is the judge's model, and
``verboseLogs`` holds, as JSON, the verdict and the judge (``{"verdict": "pass", "judge":
{"pass", "score", "reason", "model", "template"}}``); ``reason`` says both in words.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Final

from blueprint.core.judgeprompt import JudgePrompt, judge_prompt
from blueprint.grading import GradingOptions, Recorded, RowVerdict
from blueprint.grading.records import grade_record_row, row_from_record

try:
    from deepeval.metrics import BaseMetric, GEval
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, SingleTurnParams
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "blueprint.integrations.deepeval needs DeepEval: pip install deepeval"
    ) from error


#: the key of a test case's additional_metadata that holds the recorded final state
FINAL_STATE: Final = "finalState"
#: the metric's name in DeepEval's results
NAME: Final = "Blueprint oracle"
#: the name of the GEval that judges a row (DeepEval adds " [GEval]")
JUDGE_NAME: Final = "Blueprint judge"


def _metadata(test_case: LLMTestCase) -> dict[str, Any] | None:
    # DeepEval 4 keeps a test case's additional_metadata as its metadata
    metadata = getattr(test_case, "metadata", None)
    if metadata is None:
        metadata = getattr(test_case, "additional_metadata", None)
    return metadata if isinstance(metadata, dict) else None


def golden_record(test_case: LLMTestCase) -> dict[str, Any]:
    """The golden a test case was built from, as Blueprint's DeepEval reader takes it."""
    record: dict[str, Any] = {"input": test_case.input}
    if test_case.expected_output is not None:
        record["expected_output"] = test_case.expected_output
    if test_case.expected_tools:
        record["expected_tools"] = [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            for tool in test_case.expected_tools
        ]
    name = getattr(test_case, "name", None)
    if name:
        record["name"] = name
    metadata = {key: value for key, value in (_metadata(test_case) or {}).items()}
    metadata.pop(FINAL_STATE, None)  # what the run left, not part of the golden
    if metadata:
        record["additional_metadata"] = metadata
    return record


def recorded_result(row_id: str, test_case: LLMTestCase) -> Recorded:
    """What the system under test did, as ``blueprint grade`` reads a result."""
    calls = None
    if test_case.tools_called is not None:
        calls = [
            {"name": tool.name, "arguments": tool.input_parameters or {}}
            for tool in test_case.tools_called
        ]
    state = (_metadata(test_case) or {}).get(FINAL_STATE)
    return Recorded(
        id=row_id,
        output=test_case.actual_output,
        has_output=test_case.actual_output is not None,
        tool_calls=calls,
        final_state=state if isinstance(state, dict) else None,
    )


def judge_test_case(test_case: LLMTestCase, prompt: JudgePrompt) -> LLMTestCase:
    """The test case as the judge reads it: its expected output is the row's reference where
    the test case has none (an acceptable set's answers, one a line)."""
    if test_case.expected_output is None and prompt.reference is not None:
        return test_case.model_copy(update={"expected_output": prompt.reference})
    return test_case


def judge_metric(
    row: dict[str, Any],
    prompt: JudgePrompt,
    test_case: LLMTestCase,
    judge: str | DeepEvalBaseLLM | None = None,
    options: GradingOptions | None = None,
    *,
    async_mode: bool = False,
) -> GEval:
    """The GEval that judges a row: the row's judge prompt as its criteria, the input, the
    actual output and (where there is one) the expected output as its parameters, and the
    row's passThreshold (else the options' judge pass score) as its threshold."""
    params = [SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT]
    if test_case.expected_output is not None:
        params.append(SingleTurnParams.EXPECTED_OUTPUT)
    metadata = row.get("metadata")
    case = metadata.get("case") if isinstance(metadata, dict) else None
    threshold = case.get("passThreshold") if isinstance(case, dict) else None
    if not (isinstance(threshold, int | float) and not isinstance(threshold, bool)):
        threshold = (options or GradingOptions()).judge_pass_score
    return GEval(
        name=JUDGE_NAME,
        criteria=prompt.text,
        evaluation_params=params,
        model=judge,
        threshold=float(threshold),
        async_mode=async_mode,
        verbose_mode=False,
    )


def judge_verdict(metric: GEval, prompt: JudgePrompt) -> dict[str, Any]:
    """GEval's result as a judge's verdict (``{pass, score, reason, model, template}``)."""
    verdict: dict[str, Any] = {}
    if isinstance(metric.success, bool):
        verdict["pass"] = metric.success
    score = metric.score
    if isinstance(score, int | float) and not isinstance(score, bool):
        verdict["score"] = min(1.0, max(0.0, float(score)))
    if isinstance(metric.reason, str) and metric.reason:
        verdict["reason"] = metric.reason
    if metric.evaluation_model:
        verdict["model"] = str(metric.evaluation_model)
    verdict["template"] = prompt.template
    return verdict


class OracleMetric(BaseMetric):  # type: ignore[misc]
    """Blueprint's verdict for an LLMTestCase: ``score`` in [0, 1], ``success`` the verdict,
    ``reason`` the rule. A row with no verdict that counts has no score, ``success`` False
    and ``error`` saying why, so DeepEval never counts it as passed. A judged row is graded
    by GEval with ``judge`` (a model name or a ``DeepEvalBaseLLM``; None for DeepEval's
    own model configuration)."""

    def __init__(
        self,
        options: GradingOptions | None = None,
        judge: str | DeepEvalBaseLLM | None = None,
    ) -> None:
        self.options = options or GradingOptions()
        self.judge = judge
        self.threshold = 1.0
        self.async_mode = False
        self.verdict: RowVerdict | None = None
        #: the judge's verdict on a judged row, as ``blueprint grade`` reads it
        self.judged: dict[str, Any] | None = None

    # None for a row no automated grader may score, where DeepEval's metrics give a number
    def measure(  # type: ignore[override]
        self, test_case: LLMTestCase, *args: Any, **kwargs: Any
    ) -> float | None:
        row, recorded, verdict = self._start(test_case)
        prompt = self._prompt(row, recorded, verdict)
        if prompt is not None:
            case = judge_test_case(test_case, prompt)
            try:
                metric = judge_metric(row, prompt, case, self.judge, self.options)
                metric.measure(case, _show_indicator=False)
            except Exception as error:
                self._failed(error)
                raise
            verdict = self._judged(row, recorded, metric, prompt)
        return self._finish(verdict)

    async def a_measure(  # type: ignore[override]
        self, test_case: LLMTestCase, *args: Any, **kwargs: Any
    ) -> float | None:
        row, recorded, verdict = self._start(test_case)
        prompt = self._prompt(row, recorded, verdict)
        if prompt is not None:
            case = judge_test_case(test_case, prompt)
            try:
                metric = judge_metric(row, prompt, case, self.judge, self.options, async_mode=True)
                await metric.a_measure(case, _show_indicator=False)
            except Exception as error:
                self._failed(error)
                raise
            verdict = self._judged(row, recorded, metric, prompt)
        return self._finish(verdict)

    def _start(self, test_case: LLMTestCase) -> tuple[dict[str, Any], Recorded, RowVerdict]:
        self.error = None
        self.judged = None
        self.evaluation_model = None
        self.verbose_logs = None
        row = row_from_record("deepeval", golden_record(test_case))
        recorded = recorded_result(row["id"], test_case)
        return row, recorded, grade_record_row(row, recorded, self.options)

    @staticmethod
    def _prompt(row: dict[str, Any], recorded: Recorded, verdict: RowVerdict) -> JudgePrompt | None:
        """The judge prompt of a row that waits for a judge's verdict only (a barred, invalid
        or starter row, or one with no output, never reaches the judge)."""
        if verdict.verdict != "needs-judge" or verdict.starter or recorded.output is None:
            return None
        return judge_prompt(row)

    def _failed(self, error: Exception) -> None:
        """The judge could not give a verdict (no model configured, an answer GEval cannot
        read): the metric reports the error, and the exception goes on to DeepEval."""
        self.error = f"the judge failed: {error}"
        self.success = False
        self.score = None

    def _judged(
        self, row: dict[str, Any], recorded: Recorded, metric: GEval, prompt: JudgePrompt
    ) -> RowVerdict:
        self.judged = judge_verdict(metric, prompt)
        self.evaluation_model = metric.evaluation_model
        self.evaluation_cost = metric.evaluation_cost
        judged = dataclasses.replace(recorded, judge=self.judged)
        return grade_record_row(row, judged, self.options)

    def _finish(self, verdict: RowVerdict) -> float | None:
        self.verdict = verdict
        self.score = verdict.counted_score
        self.reason = verdict.explained()
        if self.judged is not None:
            model = self.judged.get("model", "a model")
            self.reason += f" (judge {model}, template {self.judged['template']})"
        self.success = self.score is not None and verdict.verdict == "pass"
        if self.score is None:
            self.error = f"no verdict that counts: {self.reason}"
        logged: dict[str, Any] = {"verdict": verdict.verdict}
        if self.judged is not None:
            logged["judge"] = self.judged
        self.verbose_logs = json.dumps(logged, ensure_ascii=False, sort_keys=True)
        return self.score

    def is_successful(self) -> bool | None:
        return self.success

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return NAME
