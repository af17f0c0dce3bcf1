"""The reference grading semantics: one recorded result, one verdict, the rule named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.grading import (
    GradingOptions,
    Recorded,
    calls_of,
    grade_row,
    json_equal,
    output_equals,
)
from grading_table import REFUND, ROWS, TABLE, graded
from strategies import json_values


def verdict(row_id: str, options: GradingOptions | None = None, **result: Any) -> Any:
    return graded(row_id, result, options)


# --- the table every runner's scorer must agree with ----------------------------------------


@pytest.mark.parametrize(("row_id", "result", "expected"), TABLE)
def test_the_verdict_table(row_id: str, result: dict[str, Any], expected: str) -> None:
    found = verdict(row_id, **result)
    assert found.verdict == expected, found.reason
    assert (found.score is None) == (expected not in ("pass", "fail"))


def test_a_failure_names_the_rule_it_breaks() -> None:
    forbidden = verdict(
        "cs-refund-issue-valid", toolCalls=[*REFUND, {"name": "issue_store_credit"}]
    )
    assert forbidden.score == 0 and "forbidden call issue_store_credit" in forbidden.reason
    reversed_calls = verdict("cs-refund-issue-valid", toolCalls=list(reversed(REFUND)))
    assert "not in the expected order" in reversed_calls.reason
    missing = verdict(
        "cs-refund-issue-valid",
        toolCalls=[REFUND[0], {"name": "issue_refund", "arguments": {"order_id": "A-2201"}}],
    )
    assert "issue_refund was called, but not with arguments" in missing.reason
    assert missing.score == 0.5
    graded = verdict("cs-eligibility-partial-damage", output="full refund")
    assert graded.score == 0.7 and "passing at 0.7" in graded.reason


def _without_threshold(row_id: str) -> dict[str, Any]:
    row = json.loads(json.dumps(ROWS[row_id]))
    del row["metadata"]["case"]["passThreshold"]
    return row


def test_a_graded_set_without_a_threshold_passes_at_1_unless_told_otherwise() -> None:
    row = _without_threshold("cs-eligibility-partial-damage")
    result = Recorded(id=row["id"], output="full refund", has_output=True)
    strict = grade_row(row, result)
    assert strict.verdict == "fail" and "below the pass grade 1" in strict.reason
    assert grade_row(row, result, GradingOptions(pass_grade=0.7)).verdict == "pass"


def test_the_rows_own_threshold_wins_over_the_default() -> None:
    # the row says 0.7: a stricter command-line default does not override the set's data
    options = GradingOptions(pass_grade=1.0)
    assert verdict("cs-eligibility-partial-damage", options, output="full refund").verdict == "pass"


def test_exact_argument_matching_refuses_extra_arguments() -> None:
    extra = [REFUND[0], {**REFUND[1], "arguments": {**REFUND[1]["arguments"], "note": "x"}}]
    assert verdict("cs-refund-issue-valid", toolCalls=extra).verdict == "pass"
    exact = GradingOptions(arguments="exact")
    assert verdict("cs-refund-issue-valid", exact, toolCalls=extra).verdict == "fail"


def test_any_order_matches_each_expected_call_once() -> None:
    row = json.loads(json.dumps(ROWS["cs-refund-issue-valid"]))
    row["expected"]["order"] = "any"
    twice = {"name": "get_order", "arguments": {"order_id": "A-2201"}}
    row["expected"]["calls"] = [twice, twice]

    def graded(calls: list[Any]) -> str:
        return grade_row(row, Recorded(id=row["id"], tool_calls=calls)).verdict

    assert graded([twice]) == "fail"  # one call cannot stand for two
    assert graded([twice, {"name": "other"}, twice]) == "pass"


def test_openai_tool_calls_with_json_text_arguments_are_read() -> None:
    calls = calls_of(
        [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}, {"name": "g"}]
    )
    assert not isinstance(calls, str)
    assert [(call.name, call.arguments) for call in calls] == [("f", {"a": 1}), ("g", {})]
    assert calls_of([{"arguments": {}}]) == "call 1 has no name: a call is {name, arguments}"
    broken = calls_of([{"name": "f", "arguments": "{not json"}])
    assert not isinstance(broken, str) and broken[0].arguments == "{not json"


def test_no_result_and_no_output_are_not_run() -> None:
    row = ROWS["cs-refund-window-quote"]
    assert grade_row(row, None).verdict == "not-run"
    assert verdict("cs-refund-window-quote").verdict == "not-run"
    assert verdict("cs-refund-issue-valid", output="done").verdict == "not-run"


def test_judged_rows_need_a_judge() -> None:
    row = json.loads(json.dumps(ROWS["cs-tone-angry-repeat-contact"]))
    row["metadata"]["case"]["evaluator"] = "llm-judge"
    recorded = Recorded(id=row["id"], output="Sorry.", has_output=True)
    assert grade_row(row, recorded).verdict == "needs-judge"
    judged = Recorded(id=row["id"], output="Sorry.", has_output=True, judge={"pass": False})
    assert (grade_row(row, judged).verdict, grade_row(row, judged).score) == ("fail", 0.0)
    scored = Recorded(id=row["id"], judge={"score": 0.8})
    assert (grade_row(row, scored).verdict, grade_row(row, scored).score) == ("pass", 0.8)


def test_an_evaluator_the_oracle_type_bars_gets_no_verdict_from_any_source() -> None:
    row = json.loads(json.dumps(ROWS["cs-refund-issue-valid"]))
    row["metadata"]["case"]["evaluator"] = "llm-judge"
    recorded = Recorded(
        id=row["id"], tool_calls=[{"name": "issue_store_credit"}], judge={"pass": True}
    )
    found = grade_row(row, recorded)
    assert (found.verdict, found.score, found.counted_score) == ("invalid", None, None)
    # inherited from the family, the evaluator is barred all the same
    del row["metadata"]["case"]["evaluator"]
    assert grade_row(row, recorded, family_evaluator="llm-judge").verdict == "invalid"
    assert grade_row(row, recorded, family_evaluator="trajectory-or-state-check").verdict == "fail"
    behaviour = json.loads(json.dumps(ROWS["cs-escalate-chargeback-threat"]))
    behaviour["metadata"]["case"]["evaluator"] = "llm-judge"
    assert grade_row(behaviour, Recorded(id="x", judge={"pass": True})).verdict == "invalid"


def test_an_oracle_type_or_evaluator_blueprint_does_not_know_is_invalid() -> None:
    row = json.loads(json.dumps(ROWS["cs-refund-window-quote"]))
    row["metadata"]["case"]["oracleType"] = "vibes"
    assert grade_row(row, Recorded(id="x", output="x", has_output=True)).verdict == "invalid"
    row["metadata"]["case"]["oracleType"] = "reference-answer"
    row["metadata"]["case"]["evaluator"] = "../../evil"
    assert grade_row(row, Recorded(id="x", output="x", has_output=True)).verdict == "invalid"


def test_a_starter_row_is_graded_as_an_example_and_counted_nowhere() -> None:
    row = json.loads(json.dumps(ROWS["cs-refund-window-quote"]))
    row["metadata"]["case"]["provenance"] = "overlay-starter-needs-expert-validation"
    found = grade_row(row, Recorded(id=row["id"], output=row["expected"], has_output=True))
    assert (found.verdict, found.score, found.starter) == ("pass", 1.0, True)
    assert (found.scored, found.counted_score) == (False, None)
    assert found.explained().startswith("[starter example")


def test_a_trajectory_with_no_call_is_graded() -> None:
    from conftest import row as make_row

    forbidden_only = make_row(
        "f", "expected-tool-calls", expected={"calls": [], "forbidden": [{"name": "delete"}]}
    )
    assert grade_row(forbidden_only, Recorded(id="f", tool_calls=[])).verdict == "pass"
    assert (
        grade_row(forbidden_only, Recorded(id="f", tool_calls=[{"name": "delete"}])).verdict
        == "fail"
    )
    assert verdict("cs-refund-issue-valid", toolCalls=[]).verdict == "fail"


def test_a_providers_empty_list_is_a_trajectory_with_no_call() -> None:
    from blueprint.grading.records import recorded_output

    for output in ("[]", [], " [ ] "):
        recorded = recorded_output("x", output)
        assert recorded.tool_calls == [] and recorded.has_output, output
    assert recorded_output("x", "[1, 2]").tool_calls is None


# --- final state ------------------------------------------------------------------------------

LEDGER = {
    "records": {
        "SELECT status FROM orders WHERE id = 'A-3310'": "refunded",
        "SELECT count(*) FROM refunds WHERE order_id = 'A-3310'": 1,
    },
    "commands": [{"run": "pytest tests/test_no_store_credit.py -q", "exitCode": 0}],
}


def test_final_state_checks_against_the_recorded_state() -> None:
    assert verdict("cs-refund-ledger-entry", finalState=LEDGER).verdict == "pass"
    two = json.loads(json.dumps(LEDGER))
    two["records"]["SELECT count(*) FROM refunds WHERE order_id = 'A-3310'"] = 2
    found = verdict("cs-refund-ledger-entry", finalState=two)
    assert found.verdict == "fail" and "check 2 of 3" in found.reason
    unrecorded = {"records": LEDGER["records"]}
    found = verdict("cs-refund-ledger-entry", finalState=unrecorded)
    assert found.verdict == "not-run" and "--allow-commands" in found.reason


def test_a_final_state_score_does_not_depend_on_the_order_of_the_checks() -> None:
    checks = ROWS["cs-refund-ledger-entry"]["expected"]["checks"]
    state = {"records": LEDGER["records"], "commands": {checks[2]["run"]: 1}}
    scores = set()
    for order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        found = grade_row(
            _state_row(*[checks[i] for i in order]), Recorded(id="s", final_state=state)
        )
        assert found.verdict == "fail"
        scores.add(found.score)
    assert scores == {2 / 3}


def test_a_record_check_fails_on_a_record_that_is_not_there() -> None:
    there = {"kind": "record", "description": "the order is refunded"}
    row = _state_row(there)

    def graded(state: dict[str, Any] | None) -> str:
        return grade_row(row, Recorded(id="s", final_state=state)).verdict

    assert graded({"records": {"the order is refunded": "yes"}}) == "pass"
    assert graded({"records": {}}) == "fail"  # records were recorded, this one is not there
    assert graded({"records": [{"description": "another", "value": 1}]}) == "fail"
    assert graded({"records": {"the order is refunded": None}}) == "fail"
    assert graded({"records": {"the order is refunded": False}}) == "fail"
    assert graded({"files": []}) == "not-run"  # no records at all: nothing decides it
    assert graded(None) == "not-run"


def test_recorded_paths_compare_after_normalisation() -> None:
    row = _state_row({"kind": "file_exists", "path": "./out/report.txt"})
    for files in (["out/report.txt"], ["./out//report.txt"], {"out/./report.txt": True}):
        found = grade_row(row, Recorded(id="s", final_state={"files": files}))
        assert found.verdict == "pass", files
    absent = grade_row(row, Recorded(id="s", final_state={"files": {"out/report.txt": False}}))
    assert absent.verdict == "fail"


def _state_row(*checks: dict[str, Any]) -> dict[str, Any]:
    case = {"caseId": "s", "oracleType": "expected-final-state", "expectedBehavior": "x"}
    return {"id": "s", "expected": {"checks": list(checks)}, "metadata": {"case": case}}


def test_files_are_looked_for_in_the_workdir_and_only_there(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.txt").write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to("/etc")
    options = GradingOptions(workdir=tmp_path)
    recorded = Recorded(id="s")

    def graded(path: str) -> str:
        check = {"kind": "file_exists", "path": path}
        return grade_row(_state_row(check), recorded, options).verdict

    assert graded("out/report.txt") == "pass"
    assert graded("out/missing.txt") == "fail"
    assert graded("../outside.txt") == "fail"
    assert graded("link/passwd") == "fail"  # a link out of the folder is outside it
    assert grade_row(_state_row({"kind": "file_exists", "path": "a"}), recorded).verdict == (
        "not-run"
    )


def test_commands_run_only_when_allowed_and_within_the_timeout(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    row = _state_row({"kind": "command", "run": f"touch {marker}", "exitCode": 0})
    recorded = Recorded(id="s")
    assert grade_row(row, recorded).verdict == "not-run"
    assert not marker.exists()  # a dataset's code never runs unasked
    allowed = GradingOptions(allow_commands=True, workdir=tmp_path)
    assert grade_row(row, recorded, allowed).verdict == "pass" and marker.exists()
    failing = _state_row({"kind": "command", "run": "exit 3", "exitCode": 0})
    assert grade_row(failing, recorded, allowed).verdict == "fail"
    slow = _state_row({"kind": "command", "run": "sleep 5", "exitCode": 0})
    quick = GradingOptions(allow_commands=True, command_timeout=0.2)
    found = grade_row(slow, recorded, quick)
    assert found.verdict == "fail" and "ran past" in found.reason


# --- equality ---------------------------------------------------------------------------------


@given(value=json_values)
def test_a_json_value_equals_itself_written_any_way(value: Any) -> None:
    assert json_equal(value, json.loads(json.dumps(value)))
    if not isinstance(value, str):
        assert output_equals(value, json.dumps(value, indent=2, sort_keys=True))


@given(left=json_values, right=json_values)
def test_json_equality_is_symmetric(left: Any, right: Any) -> None:
    assert json_equal(left, right) == json_equal(right, left)


@given(st.dictionaries(st.text(max_size=5), st.integers(), min_size=2, max_size=6))
def test_key_order_does_not_matter(value: dict[str, int]) -> None:
    flipped = dict(reversed(list(value.items())))
    assert json_equal(value, flipped) and output_equals(value, json.dumps(flipped))


def test_types_stay_apart() -> None:
    assert not json_equal(True, 1) and not json_equal("1", 1) and not json_equal(None, 0)
    assert json_equal(1, 1.0)
    assert not output_equals("42", 42) and output_equals(42, "42")
    assert not output_equals({"a": 1}, "{a: 1}")


# --- what the runners' scorers give --------------------------------------------------------------


def test_a_scorer_gives_no_verdict_for_a_row_the_validator_finds_an_error_in() -> None:
    from blueprint.grading.records import grade_record_row, row_error_codes

    row = json.loads(json.dumps(ROWS["cs-refund-issue-valid"]))
    assert row_error_codes(row) == []
    recorded = Recorded(id=row["id"], tool_calls=REFUND)
    assert grade_record_row(row, recorded).verdict == "pass"
    del row["expected"]["calls"][0]["arguments"]  # an expected-shape error
    found = grade_record_row(row, recorded)
    assert (found.verdict, found.score) == ("invalid", None)
    assert "expected-shape" in found.reason


def test_scorers_count_no_starter_example_and_no_barred_row(tmp_path: Path) -> None:
    from blueprint.convert import ConvertOptions, convert
    from blueprint.integrations.langsmith import grade_example
    from blueprint.integrations.promptfoo import get_assert
    from conftest import EXAMPLES

    examples = tmp_path / "examples.jsonl"
    options = ConvertOptions(target_format="langsmith", graders="blueprint")
    convert(EXAMPLES / "support-refunds.json", examples, options)
    records = {
        record["metadata"]["blueprint"]["id"]: record
        for record in map(json.loads, examples.read_text("utf-8").splitlines())
    }
    quote = records["cs-refund-window-quote"]
    answer = ROWS["cs-refund-window-quote"]["expected"]
    assert grade_example({"output": answer}, quote)["score"] == 1.0
    quote["metadata"]["blueprint"]["case"]["provenance"] = "starter-example"
    feedback = grade_example({"output": answer}, quote)
    assert (feedback["value"], feedback["score"]) == ("pass", None)
    assert feedback["comment"].startswith("[starter example")
    calls = records["cs-refund-issue-valid"]
    calls["metadata"]["blueprint"]["case"]["evaluator"] = "llm-judge"
    feedback = grade_example({"toolCalls": REFUND, "judge": {"pass": True}}, calls)
    assert (feedback["value"], feedback["score"]) == ("invalid", None)
    tests = tmp_path / "tests.yaml"
    convert(
        EXAMPLES / "support-refunds.json",
        tests,
        ConvertOptions(target_format="promptfoo", graders="blueprint"),
    )
    from blueprint.formats.promptfoo import read_yaml

    test = next(t for t in read_yaml(tests) if t["metadata"]["id"] == "cs-refund-issue-valid")
    assert get_assert(json.dumps(REFUND), {"test": test})["pass"] is True
    assert get_assert("[]", {"test": test})["pass"] is False  # no call made: graded, a fail
