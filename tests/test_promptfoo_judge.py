"""A judged row in promptfoo: the llm-rubric written from the shared judge template, what the
export reports of it, and the judge's verdict read back from promptfoo's results file (no
promptfoo needed; tests/conformance/test_judge_promptfoo.py runs it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from blueprint.convert import ConvertOptions, convert
from blueprint.core.judgeprompt import judge_prompt, template_id
from blueprint.formats.base import WriteOptions
from blueprint.formats.promptfoo import read_yaml
from blueprint.formats.promptfoo.codec import PromptfooCodec
from blueprint.formats.promptfoo.judging import TEMPLATE_KEY, rubric_assertion, wired
from blueprint.formats.promptfoo.templating import unliteral
from blueprint.formats.vendor import ExportRow, WriteContext
from blueprint.formats.vendor import codec as vendor_codec
from blueprint.grading import grade_set
from blueprint.grading.runners.promptfoo import items
from blueprint.integrations.promptfoo import ASSERTION
from conftest import FIXTURES, document, row, write_json

JUDGED_SET = FIXTURES / "judged" / "judged-set.json"
RESULTS = FIXTURES / "results" / "promptfoo-blueprint-judge" / "results.json"
JUDGED = (
    "judged-reference",
    "judged-acceptable",
    "judged-graded",
    "judged-rubric",
    "judged-by-family",
)
#: the generic weakening the vendor export reported for a judged row graded through
#: Blueprint (removed once each runner wires its judge); absent once it is gone
GENERIC = getattr(vendor_codec, "JUDGED", None)


def _set() -> dict[str, Any]:
    return json.loads(JUDGED_SET.read_text(encoding="utf-8"))


def _families() -> dict[str, str]:
    return {family["id"]: family["evaluator"] for family in _set()["caseFamilies"]}


def _prompt_text(data: dict[str, Any], family: str | None = None) -> str:
    prompt = judge_prompt(data, family)
    assert prompt is not None
    return prompt.text


def _export_row(data: dict[str, Any]) -> ExportRow:
    family = _families().get(data["metadata"]["case"].get("caseFamily", ""))
    return ExportRow.of(data, family)


def _context(**options: Any) -> WriteContext:
    return WriteContext({}, WriteOptions(**options), "yaml")


def _export(
    tmp_path: Path, source: Path = JUDGED_SET, **options: Any
) -> tuple[Any, dict[str, dict[str, Any]]]:
    target = tmp_path / "tests.yaml"
    result = convert(source, target, ConvertOptions(target_format="promptfoo", **options))
    return result, {test["metadata"]["id"]: test for test in read_yaml(target)}


# --- the export ------------------------------------------------------------------------------


def test_each_judged_row_gets_an_llm_rubric_of_the_shared_template(tmp_path: Path) -> None:
    _, tests = _export(tmp_path, graders="blueprint")
    rows = {data["id"]: data for data in _set()["rows"]}
    assert sorted(tests) == sorted(rows)
    for row_id in JUDGED:
        data = rows[row_id]
        prompt = judge_prompt(data, _families().get(data["metadata"]["case"].get("caseFamily")))
        assert prompt is not None
        (rubric,) = tests[row_id]["assert"]
        assert rubric["type"] == "llm-rubric"
        assert unliteral(rubric["value"]) == prompt.text
        assert rubric["config"] == {
            TEMPLATE_KEY: template_id(data["metadata"]["case"]["oracleType"])
        }
        # the row's passThreshold is promptfoo's threshold; no other row has one
        assert rubric.get("threshold") == data["metadata"]["case"].get("passThreshold")
    assert tests["judged-graded"]["assert"][0]["threshold"] == 0.5
    # the rows no judge grades keep Blueprint's scorer
    assert tests["tool-calls"]["assert"] == [ASSERTION]
    assert tests["exact-reference"]["assert"] == [ASSERTION]


def test_the_reference_and_the_acceptable_set_are_in_the_rubric(tmp_path: Path) -> None:
    _, tests = _export(tmp_path, graders="blueprint")
    reference = unliteral(tests["judged-reference"]["assert"][0]["value"])
    assert "You have 30 days from delivery to return an item." in reference
    assert "quotes the 30-day window" in reference
    acceptable = unliteral(tests["judged-acceptable"]["assert"][0]["value"])
    assert "30 days from delivery" in acceptable and "a month from delivery" in acceptable
    graded = unliteral(tests["judged-graded"]["assert"][0]["value"])
    assert 'grade="0.5">about a month' in graded
    rubric = unliteral(tests["judged-rubric"]["assert"][0]["value"])
    for said in ("acknowledges the delay", "names a date for the refund", "blames the customer"):
        assert said in rubric


def test_a_judged_rows_gate_follows_its_rubric(tmp_path: Path) -> None:
    gate = [
        {"type": "not", "check": {"type": "contains", "value": "As an AI"}},
        {"type": "json-schema", "schema": {"type": "object"}},
    ]
    judged = row("tone", "rubric", evaluator="llm-judge", evaluationCriteria=["kind"], checks=gate)
    source = write_json(tmp_path / "set.json", document(judged))
    _, tests = _export(tmp_path, source, graders="blueprint")
    kinds = [assertion["type"] for assertion in tests["tone"]["assert"]]
    assert kinds == ["llm-rubric", "is-json", "javascript"]


def test_a_rubric_row_with_no_evaluator_is_judged_through_blueprint(tmp_path: Path) -> None:
    plain = row("tone", "rubric", evaluationCriteria=["kind"])
    source = write_json(tmp_path / "set.json", document(plain, row("answer", expected="42")))
    _, tests = _export(tmp_path, source, graders="blueprint")
    assert tests["tone"]["assert"][0]["config"] == {TEMPLATE_KEY: template_id("rubric")}
    # the stock export has no judge for it, as before
    stock, stock_tests = _export(tmp_path, source, force=True)
    assert "tone" not in stock_tests
    assert [item.row_ids for item in stock.export.lossy if item.field == "*"] == [("tone",)]


def test_wired_only_for_judged_rows_graded_through_blueprint() -> None:
    rows = {data["id"]: _export_row(data) for data in _set()["rows"]}
    through = _context(graders="blueprint")
    assert {row_id for row_id, item in rows.items() if wired(item, through)} == set(JUDGED)
    assert not any(wired(item, _context()) for item in rows.values())
    with pytest.raises(ValueError):
        rubric_assertion(rows["tool-calls"])


def test_template_text_stays_literal_through_promptfoos_rendering(tmp_path: Path) -> None:
    tricky = row(
        "tricky",
        "rubric",
        evaluator="llm-judge",
        evaluationCriteria=["names {{ customer }} and {% raw %}", "file://x stays text"],
    )
    assertion = rubric_assertion(ExportRow.of(tricky))
    assert "{{ customer }}" not in assertion["value"]  # Nunjucks would render it
    assert unliteral(assertion["value"]) == _prompt_text(tricky)


def test_the_stock_export_writes_its_llm_rubric_from_the_shared_template(tmp_path: Path) -> None:
    _, tests = _export(tmp_path)
    # a judged reference answer keeps promptfoo's factuality, its value the reference
    assert tests["judged-reference"]["assert"] == [
        {"type": "factuality", "value": "You have 30 days from delivery to return an item."}
    ]
    rows = {data["id"]: data for data in _set()["rows"]}
    for row_id in ("judged-acceptable", "judged-graded", "judged-rubric", "judged-by-family"):
        (rubric,) = tests[row_id]["assert"]
        data = rows[row_id]
        family = _families().get(data["metadata"]["case"].get("caseFamily"))
        assert unliteral(rubric["value"]) == _prompt_text(data, family)
        assert rubric["config"][TEMPLATE_KEY] == template_id(data["metadata"]["case"]["oracleType"])


def test_clean_writes_no_template_key(tmp_path: Path) -> None:
    _, tests = _export(tmp_path, clean=True, graders="blueprint")
    for row_id in JUDGED:
        assert "config" not in tests[row_id]["assert"][0]
        assert tests[row_id]["assert"][0]["type"] == "llm-rubric"
    _, stock = _export(tmp_path, clean=True, force=True)
    assert all("config" not in test["assert"][0] for test in stock.values())


# --- what the export reports -----------------------------------------------------------------


def _weakened(result: Any) -> list[tuple[str, tuple[str, ...]]]:
    return [
        (item.field, tuple(item.row_ids))
        for item in result.export.lossy
        if item.kind == "weakened" and item.reason != GENERIC
    ]


def test_promptfoo_reports_nothing_weakened_for_a_judged_row_it_wires(tmp_path: Path) -> None:
    codec = PromptfooCodec()
    through = _context(graders="blueprint")
    for data in _set()["rows"]:
        item = _export_row(data)
        if wired(item, through):
            assert codec.weakened(item, through) == []
    # the stock export's factuality leaves the reference row's criteria out, and says so
    reference = _export_row(_set()["rows"][0])
    assert codec.weakened(reference, _context())
    result, _ = _export(tmp_path, graders="blueprint")
    assert _weakened(result) == []
    stock, _ = _export(tmp_path, force=True)
    assert _weakened(stock) == [("metadata.case.evaluationCriteria", ("judged-reference",))]


def test_a_gates_nested_json_schema_is_still_reported() -> None:
    gate = [{"type": "not", "check": {"type": "json-schema", "schema": {"type": "object"}}}]
    judged = row("tone", "rubric", evaluator="llm-judge", evaluationCriteria=["kind"], checks=gate)
    found = PromptfooCodec().weakened(ExportRow.of(judged), _context(graders="blueprint"))
    assert [field for field, _ in found] == ["metadata.case.checks"]


# --- reading promptfoo's results -------------------------------------------------------------


def _items(document: Any) -> dict[str, dict[str, Any]]:
    found = items(RESULTS, document)
    assert found is not None
    return {item["id"]: item for item in found}


def test_the_results_file_gives_each_judged_row_its_judge() -> None:
    found = _items(json.loads(RESULTS.read_text(encoding="utf-8")))
    assert found["judged-rubric"]["judge"] == {
        "pass": True,
        "score": 0.9,
        "reason": "stub: passes Sorry for the wait; your refund lands on 3 May. GOOD",
        "model": "file://judge.py",
        "template": "rubric@fa189450a992",
    }
    # promptfoo applied the row's threshold to the judge's pass: its score is the judge's
    assert found["judged-graded"]["judge"] == {
        "pass": False,
        "score": 0.4,
        "reason": "stub: passes about a month MEH",
        "model": "file://judge.py",
        "template": "acceptable-set@48916d751a67",
    }
    # the assertion's own provider is the judge, not the defaultTest's
    assert found["judged-reference"]["judge"]["model"] == "file://strict_judge.py"
    assert found["judged-reference"]["judge"]["template"] == "reference-answer@616f0be1cc8b"
    # a grader that gave nothing promptfoo could read gave no verdict
    assert "judge" not in found["judged-acceptable"]
    assert found["judged-acceptable"]["output"] == "30 days from delivery ERR"


def test_grade_names_the_judge_and_applies_the_rows_rules(tmp_path: Path) -> None:
    rows = [data for data in _set()["rows"] if data["id"] in JUDGED]
    source = write_json(tmp_path / "set.json", {**_set(), "rows": rows})
    graded = {verdict.id: verdict for verdict in grade_set(source, RESULTS).rows}
    assert {row_id: (v.verdict, v.score) for row_id, v in graded.items()} == {
        "judged-reference": ("fail", 0.1),
        "judged-acceptable": ("needs-judge", None),
        "judged-graded": ("fail", 0.4),
        "judged-rubric": ("pass", 0.9),
        "judged-by-family": ("not-run", None),
    }
    assert graded["judged-rubric"].judge == {
        "model": "file://judge.py",
        "template": "rubric@fa189450a992",
    }
    assert graded["judged-reference"].judge == {
        "model": "file://strict_judge.py",
        "template": "reference-answer@616f0be1cc8b",
    }


def _result(components: list[dict[str, Any]], options: Any = None) -> dict[str, Any]:
    test: dict[str, Any] = {"metadata": {"id": "r"}, "vars": {}}
    if options is not None:
        test["options"] = options
    return {
        "testCase": test,
        "testIdx": 0,
        "response": {"output": "out"},
        "gradingResult": {"pass": True, "score": 1, "componentResults": components},
    }


def _component(kind: str = "llm-rubric", **fields: Any) -> dict[str, Any]:
    """A componentResult: the assertion (with ``assertion``'s keys), pass, score, reason."""
    assertion = {"type": kind, "value": "kind", **fields.pop("assertion", {})}
    return {"assertion": assertion, "pass": True, "score": 1, "reason": "ok", **fields}


def _judge(*results: dict[str, Any], config: Any = None) -> dict[str, Any] | None:
    document: dict[str, Any] = {"results": {"version": 3, "results": list(results)}}
    if config is not None:
        document["config"] = config
    return _items(document)["r"].get("judge")


MARK = {"config": {TEMPLATE_KEY: "rubric@000000000000"}}


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai:gpt-4.1-mini", "openai:gpt-4.1-mini"),
        (
            {"id": "anthropic:messages:claude", "config": {"temperature": 0}},
            "anthropic:messages:claude",
        ),
        ({"text": {"id": "ollama:chat:llama3"}, "embedding": "x"}, "ollama:chat:llama3"),
        # promptfoo eval --grader writes the provider it loaded, without its id
        ({"modelName": "gpt-4o-mini", "config": {}, "label": ""}, "gpt-4o-mini"),
        ({"scriptPath": "judge.py", "functionName": None}, "file://judge.py"),
        ({"config": {}}, None),
    ],
)
def test_the_judge_model_is_the_grading_provider(provider: Any, model: str | None) -> None:
    judge = _judge(_result([_component(assertion=MARK)], {"provider": provider}))
    assert judge is not None and judge.get("model") == model
    # the config's defaultTest names it where the test does not
    config = {"defaultTest": {"options": {"provider": provider}}}
    defaulted = _judge(_result([_component(assertion=MARK)]), config=config)
    assert defaulted is not None and defaulted.get("model") == model


def test_blueprints_judge_is_told_from_other_model_graded_assertions() -> None:
    ours = _component(assertion=MARK, score=0.8, reason="ours")
    other = {**_component("g-eval"), "pass": False, "score": 0.1, "reason": "theirs"}
    checked = {**_component("contains"), "pass": False, "score": 0}
    judge = _judge(_result([checked, other, ours]))
    assert judge == {
        "pass": True,
        "score": 0.8,
        "reason": "ours",
        "template": "rubric@000000000000",
    }
    # with no marked rubric, every model-graded assertion together, and no template
    together = _judge(_result([checked, other, _component(score=0.6, reason="fine")]))
    assert together == {"pass": False, "score": pytest.approx(0.35), "reason": "theirs; fine"}


def test_no_verdict_from_a_grader_that_failed_or_from_no_judge() -> None:
    failed = {**_component(assertion=MARK), "pass": False, "score": 0}
    failed["metadata"] = {"graderError": True}
    assert _judge(_result([failed])) is None
    assert _judge(_result([_component("equals")])) is None
    assert _judge(_result([])) is None


def test_a_score_on_another_scale_is_left_to_the_judges_pass() -> None:
    judge = _judge(_result([_component(assertion=MARK, score=7)]))
    assert judge is not None and "score" not in judge and judge["pass"] is True


def test_a_results_file_from_another_tool_is_not_promptfoos() -> None:
    assert items(RESULTS, [{"id": "r", "output": "x"}]) is None
    assert items(RESULTS, {"results": [{"id": "r"}]}) is None
