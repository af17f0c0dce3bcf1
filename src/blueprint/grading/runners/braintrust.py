"""A Braintrust experiment's results: one result a row (a trace's root span).

An experiment's events, as Braintrust's SDK fetches them (``init(..., open=True).fetch()``),
its API returns them (``/v1/experiment/{id}/fetch``: ``{"events": [...]}``) or its UI
exports them, in JSON or CSV (a column a field, objects as JSON): each event has ``id``,
``input``, ``output``, ``expected``, ``scores``, ``metadata`` and, where spans are kept,
``span_id``, ``root_span_id``, ``span_parents`` and ``span_attributes``. A row is a root span
(no parents); the scores of its scorer spans count as its own.

A row's id is its ``metadata.blueprint.id`` (Blueprint's export writes it; the metadata of
Blueprint's ``blueprint_oracle`` score names it too). The judge's verdict is the
``blueprint_judge`` score's metadata (pass, score, reason, model, template) where the scorer
spans are in the file, else the ``blueprint_judge`` score alone (1 a pass, 0 a fail); where
Blueprint's judge was not used, an autoevals LLM scorer's score (Factuality, ClosedQA, ...)
is the verdict, with its rationale as the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.grading.records import recorded_from
from blueprint.grading.runners._fields import blueprint_id, item_of, json_value, number

#: the scores Blueprint's scorer gives (blueprint.integrations.braintrust)
NAME: Final = "blueprint_oracle"
JUDGE_NAME: Final = "blueprint_judge"
#: autoevals' LLM-graded scorers, whose score is read as the judge's where Blueprint's judge
#: was not used
OWN_JUDGES: Final = (
    "Factuality",
    "ClosedQA",
    "Battle",
    "Humor",
    "Possible",
    "Security",
    "Sql",
    "Summary",
    "Translation",
)
#: the fields only a Braintrust event has: a file whose records hold them is Braintrust's
_SPAN_FIELDS: Final = ("span_id", "root_span_id", "span_parents", "span_attributes", "_xact_id")
#: the columns of a CSV export whose cells hold JSON
_JSON_COLUMNS: Final = (
    "input",
    "expected",
    "scores",
    "metadata",
    "span_attributes",
    "span_parents",
    "metrics",
)


def items(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The results of a Braintrust experiment's events in JSON, or None for another
    document."""
    if isinstance(document, dict) and isinstance(document.get("events"), list):
        document = document["events"]
    if not _events(document):
        return None
    numbered = [(None, f"event {number + 1}", event) for number, event in enumerate(document)]
    return (item for _, item in _items(path, numbered))


def csv_items(
    path: Path, header: list[str], records: Iterable[tuple[int, dict[str, str]]]
) -> Iterator[tuple[int | None, dict[str, Any]]] | None:
    """The results of a Braintrust experiment exported as CSV, known by its ``scores``,
    ``metadata`` and ``output`` columns; None for another CSV."""
    if not {"scores", "metadata", "output"} <= set(header):
        return None
    return _items(path, [(line, f"line {line}", _csv_event(record)) for line, record in records])


def _events(document: Any) -> bool:
    return (
        isinstance(document, list)
        and bool(document)
        and all(
            isinstance(event, dict)
            and (
                any(key in event for key in _SPAN_FIELDS)
                or ("scores" in event and "input" in event)
            )
            for event in document
        )
    )


def _csv_event(record: dict[str, str]) -> dict[str, Any]:
    """A CSV export's line as an event: objects read as JSON, the output as JSON where it
    reads as JSON, else as the text it is."""
    event: dict[str, Any] = {}
    for key, cell in record.items():
        if not isinstance(key, str) or cell in (None, ""):
            continue
        event[key] = json_value(cell) if key in _JSON_COLUMNS or key == "output" else cell
    return event


def _items(
    path: Path, events: Sequence[tuple[int | None, str, Any]]
) -> Iterator[tuple[int | None, dict[str, Any]]]:
    spans = [event for _, _, event in events if isinstance(event, dict)]
    children = _scorer_spans(spans)
    for line, where, event in events:
        if not isinstance(event, dict):
            raise ParseError(path, f"{where}: an event is an object", line=line)
        if not _root(event):
            continue
        scorers = children.get(str(event.get("root_span_id") or event.get("span_id")), [])
        row_id = blueprint_id(event.get("metadata")) or _scored_id(scorers)
        if row_id is None:
            raise ParseError(
                path,
                f"{where}: no Blueprint row is named (the record's metadata.blueprint.id)",
                line=line,
            )
        if "output" not in event:
            # the task failed before any output: no result for the row
            continue
        recorded = recorded_from(row_id, event["output"])
        yield line, item_of(recorded, _judge(event, scorers))


def _root(event: dict[str, Any]) -> bool:
    """A trace's root span: no parents (an export of rows has no span fields at all)."""
    if event.get("is_root") is not None:
        return bool(event["is_root"])
    return not event.get("span_parents")


def _scorer_spans(spans: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The scorer spans of each trace, by its root span's id."""
    found: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        attributes = span.get("span_attributes")
        kind = attributes.get("type") if isinstance(attributes, dict) else None
        if kind == "score" and not _root(span):
            found.setdefault(str(span.get("root_span_id")), []).append(span)
    return found


def _metadata_of(scorers: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    """The metadata a scorer span gave the score ``name``: the span's metadata when it gave
    that score alone, its ``name`` part when it gave several."""
    for span in scorers:
        scores = span.get("scores")
        metadata = span.get("metadata")
        if not isinstance(scores, dict) or name not in scores or not isinstance(metadata, dict):
            continue
        part = metadata.get(name) if len(scores) > 1 else metadata
        if isinstance(part, dict):
            return part
    return None


def _scored_id(scorers: list[dict[str, Any]]) -> str | None:
    found = (_metadata_of(scorers, NAME) or {}).get("id")
    return found if isinstance(found, str) and found else None


def _scores(event: dict[str, Any], scorers: list[dict[str, Any]]) -> dict[str, Any]:
    scores: dict[str, Any] = {}
    for span in [*scorers, event]:
        if isinstance(span.get("scores"), dict):
            scores.update(
                {key: value for key, value in span["scores"].items() if value is not None}
            )
    return scores


def _judge(event: dict[str, Any], scorers: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Blueprint's judge (its score's metadata, else the score alone), else an autoevals LLM
    scorer's score."""
    ours = _metadata_of(scorers, JUDGE_NAME)
    if ours is None:
        ours = (_metadata_of(scorers, NAME) or {}).get("judge")
    if isinstance(ours, dict) and ("pass" in ours or "score" in ours):
        return ours
    scores = _scores(event, scorers)
    score = number(scores.get(JUDGE_NAME))
    if score is not None:
        return {"pass": score == 1.0, "score": score}
    for name in OWN_JUDGES:
        score = number(scores.get(name))
        if score is None:
            continue
        judge: dict[str, Any] = {"score": score}
        rationale = (_metadata_of(scorers, name) or {}).get("rationale")
        if isinstance(rationale, str):
            judge["reason"] = rationale
        return judge
    return None
