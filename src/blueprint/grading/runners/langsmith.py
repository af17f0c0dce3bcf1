"""A LangSmith experiment's results: one result a run, with the feedback on it.

The shapes LangSmith's SDK and API give an experiment in, as JSON:

- the rows ``evaluate()`` returns, each ``{run, example, evaluation_results}`` (the run's
  ``outputs``, the example's ``metadata``, the evaluators' feedback);
- runs as ``Client.list_runs`` gives them (``reference_example_id``, ``outputs``), with their
  feedback (``Client.list_feedback``) as each run's ``feedback`` list or beside the runs
  (``{"runs": [...], "feedback": [...]}``, joined by ``run_id``);
- an experiment as ``/datasets/upload-experiment`` takes it (``results`` of ``row_id``,
  ``actual_outputs``, ``evaluation_scores``, ``run_metadata``);
- the flat rows of ``ExperimentResults.to_pandas()`` (``outputs.*``, ``feedback.*``,
  ``example_id``), as JSON records or as CSV (``to_csv``).

A run's row is the example's ``metadata.blueprint.id`` (Blueprint's export writes it), else
the ``blueprint_row`` feedback Blueprint's evaluator (``make_oracle_evaluator``) gives every
run: runs and flat rows carry no example metadata. The judge's verdict is the
``blueprint_judge`` feedback (JSON: pass, score, reason, model, template); where Blueprint's
judge was not used, an openevals LLM-as-judge feedback (key ``score``, its default, or
``correctness``) is the verdict, with its comment as the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeGuard

from blueprint.core.errors import ParseError
from blueprint.grading.records import recorded_from
from blueprint.grading.runners._fields import (
    blueprint_id,
    cell_value,
    item_of,
    json_value,
    number,
    scalar_cell,
)

#: the feedback Blueprint's evaluator gives (blueprint.integrations.langsmith)
ROW_KEY: Final = "blueprint_row"
JUDGE_KEY: Final = "blueprint_judge"
#: openevals' LLM-as-judge feedback keys, read as the judge's verdict where Blueprint's is
#: not there: ``score`` (create_llm_as_judge's default) and ``correctness``
OWN_JUDGE_KEYS: Final = ("score", "correctness")


@dataclass
class _Run:
    """One run of the experiment as a file gives it."""

    #: where it is in the file, for messages
    where: str
    outputs: Any
    feedback: list[dict[str, Any]] = field(default_factory=list)
    #: metadata that may name the row (the example's, the run's)
    metadata: list[Any] = field(default_factory=list)
    line: int | None = None


def items(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The results of a LangSmith experiment in JSON, or None for another document."""
    runs = _runs(document)
    if runs is None:
        return None
    return (item for _, item in _items(path, runs))


def csv_items(
    path: Path, header: list[str], records: Iterable[tuple[int, dict[str, str]]]
) -> Iterator[tuple[int | None, dict[str, Any]]] | None:
    """The results of an experiment's flat rows in CSV (``to_pandas().to_csv()``, or
    ``Client.get_test_results``), known by their ``outputs.*`` and ``feedback.*`` columns;
    None for another CSV."""
    if not _flat_keys(header):
        return None
    if f"feedback.{ROW_KEY}" not in header:
        raise ParseError(
            path,
            f"a LangSmith experiment's CSV names each run's row in its feedback.{ROW_KEY}"
            " column, which this file does not have: grade the experiment with Blueprint's"
            " make_oracle_evaluator and write ExperimentResults.to_pandas() (get_test_results"
            " keeps numeric feedback only)",
            line=1,
        )
    return _items(path, (_flat_run(record, f"line {line}", line) for line, record in records))


def _flat_keys(keys: Iterable[str]) -> bool:
    keys = list(keys)
    return any(key.startswith("outputs.") for key in keys) and any(
        key.startswith("feedback.") or key == "example_id" for key in keys
    )


def _runs(document: Any) -> list[_Run] | None:
    if isinstance(document, dict):
        results = document.get("results")
        if _listed(results, lambda entry: "row_id" in entry or "actual_outputs" in entry):
            return [_uploaded(entry, number) for number, entry in enumerate(results)]
        runs = document.get("runs")
        if _listed(runs, lambda entry: "outputs" in entry or "reference_example_id" in entry):
            return _joined(runs, document.get("feedback"))
        return None
    if not isinstance(document, list) or not document:
        return None
    if _listed(document, lambda entry: isinstance(entry.get("run"), dict) and "example" in entry):
        return [_row(entry, number) for number, entry in enumerate(document)]
    if _listed(document, lambda entry: "reference_example_id" in entry):
        return _joined(document, None)
    if _listed(document, lambda entry: _flat_keys(entry)):
        return [_flat_run(entry, f"record {number + 1}") for number, entry in enumerate(document)]
    return None


def _listed(entries: Any, shaped: Any) -> TypeGuard[list[dict[str, Any]]]:
    return (
        isinstance(entries, list)
        and bool(entries)
        and all(isinstance(entry, dict) and shaped(entry) for entry in entries)
    )


def _feedback(found: Any) -> list[dict[str, Any]]:
    """Feedback entries: a list of them, or ``{"results": [...]}`` as evaluate() keeps them."""
    if isinstance(found, dict):
        found = found.get("results")
    return [entry for entry in found if isinstance(entry, dict)] if isinstance(found, list) else []


def _row(entry: dict[str, Any], number: int) -> _Run:
    """A row of ``evaluate()``: ``{run, example, evaluation_results}``."""
    run, example = entry["run"], entry.get("example")
    return _Run(
        where=f"record {number + 1}",
        outputs=run.get("outputs"),
        feedback=_feedback(entry.get("evaluation_results")),
        metadata=[
            example.get("metadata") if isinstance(example, dict) else None,
            *_run_metadata(run),
        ],
    )


def _run_metadata(run: dict[str, Any]) -> list[Any]:
    extra = run.get("extra")
    return [run.get("metadata"), extra.get("metadata") if isinstance(extra, dict) else None]


def _joined(runs: list[Any], feedback: Any) -> list[_Run]:
    """Runs (``list_runs``), each with the feedback given on it: its own ``feedback`` list,
    or the entries of a feedback list (``list_feedback``) whose ``run_id`` is its id."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    for entry in _feedback(feedback):
        by_run.setdefault(str(entry.get("run_id")), []).append(entry)
    return [
        _Run(
            where=f"run {number + 1}",
            outputs=run.get("outputs"),
            feedback=_feedback(run.get("feedback")) + by_run.get(str(run.get("id")), []),
            metadata=_run_metadata(run),
        )
        for number, run in enumerate(runs)
    ]


def _uploaded(entry: dict[str, Any], number: int) -> _Run:
    """A row of an uploaded experiment: ``{row_id, actual_outputs, evaluation_scores}``."""
    return _Run(
        where=f"results[{number}]",
        outputs=entry.get("actual_outputs"),
        feedback=_feedback(entry.get("evaluation_scores")),
        metadata=[entry.get("run_metadata")],
    )


def _flat_run(entry: dict[str, Any], where: str, line: int | None = None) -> _Run:
    """A flat row (``to_pandas``): ``outputs.<key>`` and ``feedback.<key>`` columns. In CSV
    every cell is text: ``outputs.output`` stays text, other outputs are read as JSON (or as
    the Python literal pandas writes a list or dict as), feedback as a number or JSON."""
    text = line is not None
    outputs: dict[str, Any] = {}
    feedback: list[dict[str, Any]] = []
    for key, value in entry.items():
        if not isinstance(key, str) or value is None or (text and value == ""):
            continue
        if key.startswith("outputs."):
            name = key.removeprefix("outputs.")
            outputs[name] = cell_value(value) if text and name != "output" else value
        elif key.startswith("feedback."):
            found = scalar_cell(value) if text and isinstance(value, str) else value
            feedback.append({"key": key.removeprefix("feedback."), "value": found})
    metadata = entry.get("metadata")
    return _Run(where, outputs or None, feedback, [metadata], line)


def _items(path: Path, runs: Iterable[_Run]) -> Iterator[tuple[int | None, dict[str, Any]]]:
    for run in runs:
        row_id = _row_id(run)
        if row_id is None:
            raise ParseError(
                path,
                f"{run.where}: no Blueprint row is named (the example's metadata.blueprint.id,"
                f" or the {ROW_KEY} feedback make_oracle_evaluator gives)",
                line=run.line,
            )
        if run.outputs is None:
            # the run failed before any output: no result for the row
            continue
        recorded = recorded_from(row_id, run.outputs)
        yield run.line, item_of(recorded, _judge(path, run))


def _row_id(run: _Run) -> str | None:
    for metadata in run.metadata:
        found = blueprint_id(metadata)
        if found is not None:
            return found
    for entry in run.feedback:
        value = entry.get("value")
        if entry.get("key") == ROW_KEY and isinstance(value, str) and value:
            return value
    return None


def _judge(path: Path, run: _Run) -> dict[str, Any] | None:
    """Blueprint's judge feedback (JSON), else an openevals LLM-as-judge feedback."""
    by_key = {entry["key"]: entry for entry in run.feedback if isinstance(entry.get("key"), str)}
    ours = by_key.get(JUDGE_KEY)
    if ours is not None:
        value = ours.get("value")
        value = json_value(value) if isinstance(value, str) else value
        if not isinstance(value, dict):
            raise ParseError(
                path, f"{run.where}: the {JUDGE_KEY} feedback is not a JSON object", line=run.line
            )
        return value
    for key in OWN_JUDGE_KEYS:
        entry = by_key.get(key)
        if entry is None:
            continue
        score = entry.get("score", entry.get("value"))
        judge: dict[str, Any] = (
            {"pass": score} if isinstance(score, bool) else {"score": number(score)}
        )
        if judge.get("score", True) is None:
            continue
        if isinstance(entry.get("comment"), str):
            judge["reason"] = entry["comment"]
        return judge
    return None
