"""A judged row in Braintrust: Blueprint's scorer (``make_oracle_scorer``) hands it to an
autoevals ``LLMClassifier`` whose prompt is the row's judge prompt, and the experiment's
events Braintrust's own ``Eval`` logs read back with ``blueprint grade``.

The judge is a stand-in OpenAI client (judge_stub): the prompts it was shown are checked for
each row's criteria and its reference or acceptable answers; the tool-call and exact rows
never reach it; its verdicts come back through the logged events (scorer spans included) and
through the rows ``Eval`` returns, with the judge named where the file keeps the scorer's
metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor
from judge_stub import (
    EXPECTED,
    JUDGED,
    MODEL,
    OUTPUTS,
    ROWS,
    SET,
    StubJudge,
    assert_prompts,
    write_json,
)

from blueprint.convert import ConvertOptions, convert
from blueprint.core.judgeprompt import template_id
from blueprint.grading import grade_set

pytestmark = pytest.mark.conformance


def records(tmp_path: Path, source: Path = SET) -> list[dict[str, Any]]:
    target = tmp_path / "records.jsonl"
    convert(source, target, ConvertOptions(target_format="braintrust", graders="blueprint"))
    return [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]


def data(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {key: item[key] for key in ("input", "expected", "metadata") if key in item}
        for item in items
    ]


def task(input: Any, hooks: Any) -> Any:
    return OUTPUTS[hooks.metadata["blueprint"]["id"]]


def logged_events(scorer: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Braintrust's ``Eval`` over the records, its experiment's events kept by the SDK's
    in-memory logger (what it would send)."""
    braintrust = vendor("braintrust")
    framework = vendor("braintrust.framework")
    logger = vendor("braintrust.logger")
    helpers = vendor("braintrust.test_helpers")
    util = vendor("braintrust.util")
    saved = logger._state._global_bg_logger, framework.init_experiment
    with logger._internal_with_memory_background_logger() as memory:
        logger._state._global_bg_logger = util.LazyValue(lambda: memory, use_mutex=False)
        helpers.simulate_login()
        try:
            experiment = helpers.init_test_exp("judged", "blueprint")
            experiment.summarize = lambda **_: None
            framework.init_experiment = lambda **_: experiment
            braintrust.Eval("blueprint", data=data(items), task=task, scores=[scorer])
            events: list[dict[str, Any]] = memory.pop()
        finally:
            helpers.simulate_logout()
            logger._state._global_bg_logger, framework.init_experiment = saved
    return events


def test_the_judge_sees_each_judged_row_and_its_verdicts_come_back(tmp_path: Path) -> None:
    vendor("autoevals")
    from blueprint.integrations.braintrust import JUDGE_NAME, NAME, make_oracle_scorer

    stub = StubJudge()
    events = logged_events(make_oracle_scorer(model=MODEL, client=stub.client()), records(tmp_path))
    assert_prompts(stub.prompts)

    # the scorer span of each row: Blueprint's score, and the judge's with its identity
    scored = {}
    for event in events:
        metadata = event.get("metadata") or {}
        if (event.get("span_attributes") or {}).get("type") == "score":
            own = metadata.get(NAME, metadata)
            scored[own["id"]] = (event["scores"], metadata)
    assert {row_id: scores[NAME] for row_id, (scores, _) in scored.items()} == {
        row_id: None if verdict == "not-run" else 1.0 if verdict == "pass" else 0.0
        for row_id, verdict in EXPECTED.items()
    }
    for row_id in JUDGED:
        scores, metadata = scored[row_id]
        oracle = ROWS[row_id]["metadata"]["case"]["oracleType"]
        judge = metadata[JUDGE_NAME]
        assert (judge["model"], judge["template"]) == (MODEL, template_id(oracle))
        assert metadata[NAME]["judge"] == judge
        assert scores[JUDGE_NAME] == (1.0 if EXPECTED[row_id] == "pass" else 0.0)
    assert JUDGE_NAME not in scored["tool-calls"][0]

    # and back through blueprint grade: the events as the fetch API gives them
    path = write_json(tmp_path / "events.json", {"events": events})
    graded = {row.id: row for row in grade_set(SET, path).rows}
    assert {row_id: row.verdict for row_id, row in graded.items()} == EXPECTED
    for row_id in JUDGED:
        oracle = ROWS[row_id]["metadata"]["case"]["oracleType"]
        assert graded[row_id].judge == {"model": MODEL, "template": template_id(oracle)}


def test_the_rows_eval_returns_give_the_judges_scores(tmp_path: Path) -> None:
    """``Eval`` run locally (nothing sent) returns each row with its scores: written as an
    export of rows, they give the judge's verdict without its name."""
    braintrust = vendor("braintrust")
    vendor("autoevals")
    from blueprint.integrations.braintrust import JUDGE_NAME, make_oracle_scorer

    stub = StubJudge()
    outcome = braintrust.Eval(
        "blueprint-judged",
        data=data(records(tmp_path)),
        task=task,
        scores=[make_oracle_scorer(model=MODEL, client=stub.client())],
        no_send_logs=True,
    )
    assert_prompts(stub.prompts)
    rows = [
        {
            "id": str(number),
            "input": result.input,
            "output": result.output,
            "expected": result.expected,
            "metadata": result.metadata,
            "scores": result.scores,
        }
        for number, result in enumerate(outcome.results)
    ]
    assert sorted(row["scores"].get(JUDGE_NAME) for row in rows if JUDGE_NAME in row["scores"]) == [
        0.0,
        1.0,
        1.0,
        1.0,
        1.0,
    ]
    graded = {row.id: row for row in grade_set(SET, write_json(tmp_path / "rows.json", rows)).rows}
    assert {row_id: row.verdict for row_id, row in graded.items()} == EXPECTED
    assert all(graded[row_id].judge is None for row_id in JUDGED)


def test_mustache_in_a_row_reaches_the_judge_as_written(tmp_path: Path) -> None:
    vendor("autoevals")
    from blueprint.integrations.braintrust import make_oracle_scorer

    document = json.loads(SET.read_text(encoding="utf-8"))
    rubric = next(row for row in document["rows"] if row["id"] == "judged-rubric")
    rubric["metadata"]["case"]["evaluationCriteria"].append("never prints {{output}} or {{#x}}")
    source = tmp_path / "set.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    stub = StubJudge()
    scorer = make_oracle_scorer(model=MODEL, client=stub.client())
    [record] = [
        r for r in records(tmp_path, source) if r["metadata"]["blueprint"]["id"] == "judged-rubric"
    ]
    scorer(input=record["input"], output="x", expected=None, metadata=record["metadata"])
    [prompt] = stub.prompts
    assert "never prints {{output}} or {{#x}}" in prompt


def test_rows_the_judge_may_not_grade_never_reach_it(tmp_path: Path) -> None:
    vendor("autoevals")
    from blueprint.integrations.braintrust import NAME, make_oracle_scorer

    by_id = {r["metadata"]["blueprint"]["id"]: r for r in records(tmp_path)}
    barred = by_id["tool-calls"]
    barred["metadata"]["blueprint"]["case"]["evaluator"] = "llm-judge"
    stub = StubJudge()
    scorer = make_oracle_scorer(model=MODEL, client=stub.client())
    [score] = scorer(
        input=barred["input"],
        output=OUTPUTS["tool-calls"],
        expected=barred.get("expected"),
        metadata=barred["metadata"],
    )
    assert (score.name, score.score, score.metadata["verdict"]) == (NAME, None, "invalid")
    exact = by_id["exact-reference"]
    [score] = scorer(
        input=exact["input"],
        output="30 days",
        expected=exact["expected"],
        metadata=exact["metadata"],
    )
    assert score.score == 1.0
    assert stub.prompts == []
