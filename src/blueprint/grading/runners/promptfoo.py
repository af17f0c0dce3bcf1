"""promptfoo's results file (``promptfoo eval -o results.json``): one result a test.

A judged test's verdict is its model-graded assertion's, from ``gradingResult.componentResults``:
the ``llm-rubric`` Blueprint's export configured from the shared judge template (its
``config.judgeTemplate`` names the template, :mod:`blueprint.formats.promptfoo.judging`), else
every model-graded assertion of the test together. The judge's model is promptfoo's grading
provider as the file records it: the assertion's ``provider``, else the test's
``options.provider`` (where promptfoo writes the ``defaultTest``'s), else the config's
``defaultTest.options.provider``; a provider named by its id (``openai:gpt-4.1``,
``file://judge.py``) reads as that id. ``promptfoo eval --grader`` writes the provider it
loaded without its id: it reads as its model name (``modelName``) or its script
(``file://judge.py``), else names no model; so does promptfoo's default grader, which
judges when no grading provider is configured.

A run with ``--repeat N`` (the file's ``runtimeOptions.repeat``, the config's
``evaluateOptions.repeat``, or a test's ``options.repeat``) gives each test N results, one a
repeat. promptfoo records no repeat index in a result; it numbers a test's repeats one after
the other (``testIdx``), so a row's results, in ``testIdx`` order, are its repeats 1 to N:
each is a trial (:mod:`blueprint.grading.trials`). A row with results from several prompts
or providers, or with more results than repeats (two tests for one row), is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats.promptfoo.judging import TEMPLATE_KEY
from blueprint.grading.records import recorded_output
from blueprint.io import jsonvalues


def items(path: Path, document: Any) -> Iterator[dict[str, Any]] | None:
    """The results of promptfoo's results file, or None for another document."""
    if not isinstance(document, dict):
        return None
    entries = _entries(document)
    if entries is None:
        return None
    config = document.get("config")
    default = _dig(config, "defaultTest", "options", "provider")
    repeat = max(
        _repeat(_dig(document, "runtimeOptions", "repeat")),
        _repeat(_dig(config, "evaluateOptions", "repeat")),
    )
    repeats = [
        _repeat(_dig(entry.get("testCase"), "options", "repeat"), repeat) for entry in entries
    ]
    trials = _trials(path, entries, repeats) if max(repeats, default=1) > 1 else None
    return _items(entries, default, repeats, trials)


def _repeat(value: Any, default: int = 1) -> int:
    """A repeat count as promptfoo reads one: a whole number from 1, else the default."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return default


def _trials(path: Path, entries: list[Any], repeats: list[int]) -> list[int]:
    """Each result's repeat (from 1) in a run with repeats: its place among its row's
    results in ``testIdx`` order. A row run by several prompts or providers, or with more
    results than its test's repeats, is refused."""
    if len(set(repeats)) > 1 and any(
        _row_id(_dig(entry, "testCase", "metadata")) is None for entry in entries
    ):
        raise ParseError(
            path,
            "tests repeated different numbers of times, and some name no row (metadata.id):"
            " which results are one test's repeats is not known",
        )
    rows: dict[str, list[int]] = {}
    for number, entry in enumerate(entries):
        rows.setdefault(_entry_id(entry, repeats[number]) or "", []).append(number)
    found = [1] * len(entries)
    for row_id, numbers in rows.items():
        runs = {(entries[n].get("promptIdx"), _model(entries[n].get("provider"))) for n in numbers}
        if len(runs) > 1:
            raise ParseError(
                path,
                f"row {row_id!r} has results from {len(runs)} prompts or providers; grade them"
                " one provider at a time (promptfoo eval --filter-providers)",
            )
        allowed = max(repeats[n] for n in numbers)
        if len(numbers) > allowed:
            raise ParseError(
                path,
                f"row {row_id!r} has {len(numbers)} results, more than its {allowed} repeats"
                " (two tests name the row)",
            )
        ordered = sorted(numbers, key=lambda n: (_test_index(entries[n], n), n))
        for trial, number in enumerate(ordered, start=1):
            found[number] = trial
    return found


def _test_index(entry: dict[str, Any], position: int) -> int:
    found = entry.get("testIdx")
    return found if isinstance(found, int) and not isinstance(found, bool) else position


def _entry_id(entry: dict[str, Any], repeat: int) -> str | None:
    """An entry's row: the id Blueprint's export wrote in the test's metadata, else ``test-N``
    by the test's position (each test's repeats numbered one after the other)."""
    row_id = _row_id(_dig(entry, "testCase", "metadata"))
    if row_id is None and isinstance(entry.get("testIdx"), int):
        row_id = f"test-{entry['testIdx'] // repeat + 1}"
    return row_id


def _entries(document: dict[str, Any]) -> list[Any] | None:
    results = document.get("results")
    if isinstance(results, dict):
        results = results.get("results")
    if isinstance(results, list) and all(
        isinstance(entry, dict) and "testCase" in entry for entry in results
    ):
        return results
    return None


def _items(
    entries: list[Any], default_grader: Any, repeats: list[int], trials: list[int] | None
) -> Iterator[dict[str, Any]]:
    """One result a test (a test and repeat, with its trial, in a run with repeats): its
    row's id from the test's metadata (the id Blueprint's export wrote, else ``test-N`` by
    position, as Blueprint names a promptfoo test with none), its output, tool calls where
    the output is a list of them, the final state where it is an object with ``finalState``,
    and the judge's verdict."""
    for number, entry in enumerate(entries):
        test = entry.get("testCase") if isinstance(entry.get("testCase"), dict) else {}
        row_id = _entry_id(entry, repeats[number])
        response = entry.get("response")
        if not isinstance(response, dict) or "output" not in response:
            # an error before any output (a provider that failed): no result for the row (in
            # that repeat)
            continue
        recorded = recorded_output(row_id or "", response["output"])
        item: dict[str, Any] = {"id": row_id, "output": recorded.output}
        if trials is not None:
            item["trial"] = trials[number]
        if recorded.tool_calls is not None:
            item["toolCalls"] = recorded.tool_calls
        if recorded.final_state is not None:
            # an output that is an object with finalState, as the promptfoo scorer reads one
            item["finalState"] = recorded.final_state
        grader = _dig(test, "options", "provider")
        judge = _judge(entry.get("gradingResult"), default_grader if grader is None else grader)
        if judge is not None:
            item["judge"] = judge
        yield item


#: promptfoo's assertions whose verdict a model gives: a judge's verdict, for rubric rows
MODEL_GRADED: Final = frozenset(
    {"llm-rubric", "g-eval", "model-graded-closedqa", "factuality", "model-graded-factuality"}
)


def _judge(grading: Any, grader: Any) -> dict[str, Any] | None:
    """The judge's verdict in a promptfoo result (None when no model graded the test): the
    marked llm-rubric's, else every model-graded assertion's together (it passes when each
    passes; its score is their mean), with its reason, model and template. An assertion
    whose grader failed (promptfoo's ``metadata.graderError``: no answer, or one it could
    not read) gave no verdict."""
    components = grading.get("componentResults") if isinstance(grading, dict) else None
    graded = [
        component
        for component in components or []
        if isinstance(component, dict) and isinstance(component.get("assertion"), dict)
    ]
    marked = [component for component in graded if _template(component) is not None]
    verdicts = [
        component
        for component in marked
        or [item for item in graded if item["assertion"].get("type") in MODEL_GRADED]
        if isinstance(component.get("pass"), bool) and not _grader_error(component)
    ]
    if not verdicts:
        return None
    judge: dict[str, Any] = {"pass": all(component["pass"] for component in verdicts)}
    scores = [float(item["score"]) for item in verdicts if _share(item.get("score"))]
    if len(scores) == len(verdicts):
        # a judge's score on another scale than 0 to 1 is left out: its pass decides
        judge["score"] = sum(scores) / len(scores)
    reasons = [component.get("reason") for component in verdicts]
    said = [reason.strip() for reason in reasons if isinstance(reason, str) and reason.strip()]
    if said:
        judge["reason"] = "; ".join(dict.fromkeys(said))
    models = {_model(component["assertion"].get("provider") or grader) for component in verdicts}
    if len(models) == 1 and None not in models:
        judge["model"] = models.pop()
    templates = {_template(component) for component in verdicts}
    if len(templates) == 1 and None not in templates:
        judge["template"] = templates.pop()
    return judge


def _template(component: dict[str, Any]) -> str | None:
    """The judge template a Blueprint llm-rubric names in its config."""
    assertion = component["assertion"]
    found = _dig(assertion, "config", TEMPLATE_KEY)
    if assertion.get("type") != "llm-rubric" or not isinstance(found, str) or not found:
        return None
    return found


def _grader_error(component: dict[str, Any]) -> bool:
    return _dig(component, "metadata", "graderError") is True


def _model(provider: Any) -> str | None:
    """The judge model a grading provider names: a provider id, an object's ``id``, the
    text provider of a map by type, or the model name or script of a provider promptfoo
    loaded (``--grader``)."""
    if isinstance(provider, str):
        return provider.strip() or None
    if not isinstance(provider, dict):
        return None
    for key in ("id", "modelName"):
        if isinstance(provider.get(key), str) and provider[key].strip():
            return str(provider[key]).strip()
    if "text" in provider:
        return _model(provider["text"])
    script = provider.get("scriptPath")
    if isinstance(script, str) and script.strip():
        return f"file://{script.strip()}"
    return None


def _share(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _row_id(metadata: Any) -> str | None:
    if not isinstance(metadata, dict):
        return None
    payload = metadata.get("blueprint")
    if isinstance(payload, str):
        try:
            payload = jsonvalues.loads(payload)
        except jsonvalues.JSONError:
            payload = None
    for found in (payload.get("id") if isinstance(payload, dict) else None, metadata.get("id")):
        if isinstance(found, str) and found:
            return found
    return None
