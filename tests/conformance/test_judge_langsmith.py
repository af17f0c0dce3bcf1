"""A judged row in LangSmith: Blueprint's evaluator (``make_oracle_evaluator``) hands it to
openevals' ``create_llm_as_judge`` with the row's judge prompt, and the experiment LangSmith's
own ``evaluate()`` returns reads back with ``blueprint grade``.

The judge is a stand-in OpenAI client (judge_stub): the prompts it was shown are checked for
each row's criteria and its reference or acceptable answers; the tool-call and exact rows
never reach it; its verdicts come back through the experiment's rows and its CSV, with the
judge named."""

from __future__ import annotations

import datetime
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from conformance_tools import quiet_vendors, vendor
from judge_stub import EXPECTED, JUDGED, MODEL, OUTPUTS, ROWS, SET, StubJudge, assert_prompts

from blueprint.convert import ConvertOptions, convert
from blueprint.core.judgeprompt import template_id
from blueprint.grading import grade_set

pytestmark = pytest.mark.conformance
NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def examples(tmp_path: Path, source: Path = SET) -> list[Any]:
    """The set's LangSmith export, as LangSmith's own Example objects."""
    schemas = vendor("langsmith.schemas")
    target = tmp_path / "examples.jsonl"
    convert(source, target, ConvertOptions(target_format="langsmith", graders="blueprint"))
    return [
        schemas.Example(
            id=uuid.UUID(record["id"]),
            dataset_id=uuid.UUID(int=0),
            inputs=record["inputs"],
            outputs=record.get("outputs"),
            metadata=record.get("metadata"),
            created_at=NOW,
        )
        for record in map(json.loads, target.read_text(encoding="utf-8").splitlines())
    ]


def run_experiment(items: list[Any], evaluator: Any) -> Any:
    """LangSmith's ``evaluate()`` over the examples, offline (nothing uploaded), the target
    answering each row with its output."""
    langsmith = vendor("langsmith")
    evaluation = vendor("langsmith.evaluation")
    answers = {
        json.dumps(example.inputs, sort_keys=True): OUTPUTS[example.metadata["blueprint"]["id"]]
        for example in items
    }
    return evaluation.evaluate(
        lambda inputs: answers[json.dumps(inputs, sort_keys=True)],
        data=items,
        evaluators=[evaluator],
        upload_results=False,
        client=langsmith.Client(api_key="offline", api_url="http://127.0.0.1:9"),
        max_concurrency=0,
    )


def rows_json(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows ``evaluate()`` returned, as JSON (the SDK's own dumps of each object)."""
    return [
        {
            "run": row["run"].model_dump(mode="json", include={"id", "outputs", "error"}),
            "example": row["example"].model_dump(mode="json", include={"id", "metadata"}),
            "evaluation_results": {
                "results": [
                    found.model_dump(mode="json") for found in row["evaluation_results"]["results"]
                ]
            },
        }
        for row in results
    ]


def test_the_judge_sees_each_judged_row_and_its_verdicts_come_back(tmp_path: Path) -> None:
    vendor("openevals.llm")
    from blueprint.integrations.langsmith import JUDGE_KEY, KEY, make_oracle_evaluator

    stub = StubJudge()
    experiment = run_experiment(
        examples(tmp_path), make_oracle_evaluator(judge=stub.client(), model=MODEL)
    )
    results = list(experiment)
    assert_prompts(stub.prompts)

    # the feedback LangSmith keeps: Blueprint's verdict, and the judge named
    feedback = {
        row["example"].metadata["blueprint"]["id"]: {
            found.key: found for found in row["evaluation_results"]["results"]
        }
        for row in results
    }
    assert {row_id: found[KEY].value for row_id, found in feedback.items()} == EXPECTED
    for row_id in JUDGED:
        judge = json.loads(feedback[row_id][JUDGE_KEY].value)
        oracle = ROWS[row_id]["metadata"]["case"]["oracleType"]
        assert (judge["model"], judge["template"]) == (MODEL, template_id(oracle))
        assert judge["pass"] is (EXPECTED[row_id] == "pass")
        assert MODEL in feedback[row_id][KEY].comment
    assert JUDGE_KEY not in feedback["tool-calls"] and JUDGE_KEY not in feedback["exact-reference"]

    # and back through blueprint grade: the rows as JSON, and the SDK's own CSV
    json_path = tmp_path / "experiment.json"
    json_path.write_text(json.dumps(rows_json(results)), encoding="utf-8")
    csv_path = tmp_path / "experiment.csv"
    experiment.to_pandas().to_csv(csv_path, index=False)
    for path in (json_path, csv_path):
        graded = {row.id: row for row in grade_set(SET, path).rows}
        assert {row_id: row.verdict for row_id, row in graded.items()} == EXPECTED, path
        for row_id in JUDGED:
            oracle = ROWS[row_id]["metadata"]["case"]["oracleType"]
            assert graded[row_id].judge == {"model": MODEL, "template": template_id(oracle)}


def test_braces_in_a_row_reach_the_judge_as_written(tmp_path: Path) -> None:
    """openevals fills its prompt with ``str.format``: the row's braces are escaped."""
    vendor("openevals.llm")
    from blueprint.integrations.langsmith import make_oracle_evaluator

    document = json.loads(SET.read_text(encoding="utf-8"))
    rubric = next(row for row in document["rows"] if row["id"] == "judged-rubric")
    rubric["metadata"]["case"]["evaluationCriteria"].append("never prints {outputs} or {{x}}")
    source = tmp_path / "set.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    stub = StubJudge()
    items = [e for e in examples(tmp_path, source) if e.metadata["blueprint"]["id"] in JUDGED]
    run_experiment(items, make_oracle_evaluator(judge=stub.client(), model=MODEL))
    assert sum("never prints {outputs} or {{x}}" in prompt for prompt in stub.prompts) == 1


def test_rows_the_judge_may_not_grade_never_reach_it(tmp_path: Path) -> None:
    """A tool-call row whose evaluator is llm-judge (a bar the set would not allow) is
    invalid, and a judged row whose target already recorded a verdict keeps that verdict."""
    vendor("openevals.llm")
    from blueprint.integrations.langsmith import KEY, make_oracle_evaluator

    by_id = {e.metadata["blueprint"]["id"]: e for e in examples(tmp_path)}
    barred = by_id["tool-calls"]
    barred.metadata["blueprint"]["case"]["evaluator"] = "llm-judge"
    stub = StubJudge()
    evaluator = make_oracle_evaluator(judge=stub.client(), model=MODEL)
    found = evaluator({"toolCalls": OUTPUTS["tool-calls"]["toolCalls"]}, barred)
    assert found["results"][0]["key"] == KEY
    assert (found["results"][0]["value"], found["results"][0]["score"]) == ("invalid", None)
    recorded = {"output": "anything", "judge": {"pass": False, "model": "earlier"}}
    found = evaluator(recorded, by_id["judged-reference"])
    assert (found["results"][0]["value"], found["results"][0]["score"]) == ("fail", 0.0)
    assert stub.prompts == []


def test_without_a_judge_a_judged_row_waits_for_one(tmp_path: Path) -> None:
    from blueprint.integrations.langsmith import KEY, ROW_KEY, make_oracle_evaluator

    by_id = {e.metadata["blueprint"]["id"]: e for e in examples(tmp_path)}
    found = make_oracle_evaluator()({"output": "x"}, by_id["judged-rubric"])["results"]
    assert [(entry["key"], entry.get("value")) for entry in found] == [
        (KEY, "needs-judge"),
        (ROW_KEY, "judged-rubric"),
    ]
