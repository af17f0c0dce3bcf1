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
"""

from __future__ import annotations

from typing import Any, Final

from blueprint.grading import GradingOptions, Recorded, RowVerdict
from blueprint.grading.records import grade_record_row, row_from_record

try:
    from deepeval.metrics import BaseMetric
    from deepeval.test_case import LLMTestCase
except ImportError as error:  # pragma: no cover - the extra is missing
    raise ImportError(
        "blueprint.integrations.deepeval needs DeepEval: pip install deepeval"
    ) from error


#: the key of a test case's additional_metadata that holds the recorded final state
FINAL_STATE: Final = "finalState"


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


class OracleMetric(BaseMetric):  # type: ignore[misc]
    """Blueprint's verdict for an LLMTestCase: ``score`` in [0, 1], ``success`` the verdict,
    ``reason`` the rule. A row with no verdict that counts has no score, ``success`` False
    and ``error`` saying why, so DeepEval never counts it as passed."""

    def __init__(self, options: GradingOptions | None = None) -> None:
        self.options = options or GradingOptions()
        self.threshold = 1.0
        self.async_mode = False
        self.verdict: RowVerdict | None = None

    # None for a row no automated grader may score, where DeepEval's metrics give a number
    def measure(  # type: ignore[override]
        self, test_case: LLMTestCase, *args: Any, **kwargs: Any
    ) -> float | None:
        self.error = None
        row = row_from_record("deepeval", golden_record(test_case))
        self.verdict = grade_record_row(row, recorded_result(row["id"], test_case), self.options)
        self.score = self.verdict.counted_score
        self.reason = self.verdict.explained()
        self.success = self.score is not None and self.verdict.verdict == "pass"
        if self.score is None:
            self.error = f"no verdict that counts: {self.reason}"
        return self.score

    async def a_measure(  # type: ignore[override]
        self, test_case: LLMTestCase, *args: Any, **kwargs: Any
    ) -> float | None:
        return self.measure(test_case)

    def is_successful(self) -> bool | None:
        return self.success

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return "Blueprint oracle"
