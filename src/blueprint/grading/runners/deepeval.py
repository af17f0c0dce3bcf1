"""DeepEval's test-run file: one result a test case.

DeepEval 4 saves each ``evaluate()`` run as ``test_run_<YYYYMMDD_HHMMSS>.json`` in the
results folder (``DisplayConfig(results_folder=...)`` or ``DEEPEVAL_RESULTS_FOLDER``),
overwrites ``.deepeval/.latest_run_full.json`` with the same, and ``deepeval test run``
keeps its last run under ``testRunData`` in ``.deepeval/.latest_test_run.json``. Each is read:
``testCases`` holds every test case with its ``metricsData``.

A test case is its row by the id Blueprint's export wrote (``metadata.blueprint.id``, the
golden's ``additional_metadata``), else by its name. Its output is ``actualOutput``, its
tool calls ``toolsCalled``, and its final state ``metadata.finalState`` (where Blueprint's
metric reads it). The judge's verdict is Blueprint's metric's where it was used
(``Blueprint oracle``: its ``verboseLogs`` hold the verdict and the judge as JSON, with the
model and template), else that of every model-graded metric of the test case together
(GEval, or any metric that names its ``evaluationModel``; it passes when each passes, its
score is their mean).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from blueprint.io import jsonvalues

#: Blueprint's metric's name in DeepEval's results
METRIC: Final = "Blueprint oracle"
#: where ``deepeval test run`` keeps its last run in ``.deepeval/.latest_test_run.json``
RUN_DATA: Final = "testRunData"
_JUDGE_KEYS: Final = ("pass", "score", "reason", "model", "template")


def items(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The results of a DeepEval test-run file, or None for another document."""
    if isinstance(document, dict) and isinstance(document.get(RUN_DATA), dict):
        document = document[RUN_DATA]
    if not (
        isinstance(document, dict)
        and isinstance(document.get("testCases"), list)
        and "metricsScores" in document
    ):
        return None
    return _items(document["testCases"])


def _items(cases: list[Any]) -> Iterator[dict[str, Any]]:
    for number, case in enumerate(cases):
        if not isinstance(case, dict):
            continue
        given = case.get("metadata")
        metadata: dict[str, Any] = given if isinstance(given, dict) else {}
        item: dict[str, Any] = {"id": _row_id(metadata, case.get("name"), number)}
        if case.get("actualOutput") is not None:
            item["output"] = case["actualOutput"]
        calls = case.get("toolsCalled")
        if isinstance(calls, list):
            item["toolCalls"] = [_call(call) for call in calls]
        state = metadata.get("finalState")
        if isinstance(state, dict):
            item["finalState"] = state
        judge = _judge(case.get("metricsData"))
        if judge is not None:
            item["judge"] = judge
        yield item


def _row_id(metadata: dict[str, Any], name: Any, number: int) -> Any:
    """The row's id: the one Blueprint's export wrote, else the test case's name."""
    payload = metadata.get("blueprint")
    found = payload.get("id") if isinstance(payload, dict) else None
    if isinstance(found, str) and found:
        return found
    return name if isinstance(name, str) and name else f"test_case_{number}"


def _call(call: Any) -> Any:
    """A DeepEval ToolCall (``{name, inputParameters, output, ...}``) as a recorded call."""
    if not isinstance(call, dict):
        return call
    arguments = call.get("inputParameters", call.get("input_parameters"))
    return {"name": call.get("name"), "arguments": arguments if arguments is not None else {}}


def _judge(metrics: Any) -> dict[str, Any] | None:
    """Blueprint's metric's judge where Blueprint's metric was used, else the model-graded
    metrics' verdict together."""
    if not isinstance(metrics, list):
        return None
    metrics = [metric for metric in metrics if isinstance(metric, dict)]
    for metric in metrics:
        if metric.get("name") == METRIC:
            # Blueprint's metric judged the row, or the row needs no judge
            logged = _logged(metric.get("verboseLogs"))
            given = logged.get("judge") if logged is not None else None
            if not isinstance(given, dict):
                return None
            return {key: given[key] for key in _JUDGE_KEYS if given.get(key) is not None}
    graded = [
        metric
        for metric in metrics
        if metric.get("name") != METRIC
        and _model_graded(metric)
        and metric.get("error") is None
        and isinstance(metric.get("success"), bool)
    ]
    if not graded:
        return None
    judge: dict[str, Any] = {"pass": all(metric["success"] for metric in graded)}
    scores = [metric.get("score") for metric in graded]
    if all(_share(score) for score in scores):
        judge["score"] = sum(scores) / len(scores)
    reasons = [metric["reason"] for metric in graded if isinstance(metric.get("reason"), str)]
    if reasons:
        judge["reason"] = "\n\n".join(reasons)
    models = [metric["evaluationModel"] for metric in graded if metric.get("evaluationModel")]
    if models:
        judge["model"] = ", ".join(dict.fromkeys(map(str, models)))
    return judge


def _model_graded(metric: dict[str, Any]) -> bool:
    name = metric.get("name")
    return bool(metric.get("evaluationModel")) or (
        isinstance(name, str) and name.endswith("[GEval]")
    )


def _logged(text: Any) -> dict[str, Any] | None:
    """Blueprint's metric's verbose logs: its verdict and judge, as JSON."""
    if not isinstance(text, str):
        return None
    try:
        value = jsonvalues.loads(text)
    except jsonvalues.JSONError:
        return None
    return value if isinstance(value, dict) else None


def _share(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
