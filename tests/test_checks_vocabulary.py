"""The check vocabulary: what each check decides, the regex dialect, the normalisations, and
the rows that declare checks, thresholds and comparisons as data."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.core.checks import check_problem, levenshtein, normalized
from blueprint.core.model import CHECK_TYPES
from blueprint.core.regex import compile_regex, regex_problem
from blueprint.grading import GradingOptions, Recorded, grade_row
from blueprint.grading.checks import run_check
from blueprint.validation.validate import validate_document
from check_table import CASES


@pytest.mark.parametrize(("check", "output", "passed"), CASES)
def test_each_check_decides(check: dict[str, Any], output: Any, passed: bool) -> None:
    result = run_check(check, output)
    assert result.passed is passed, result.reason
    assert check["type"] in result.reason or "check" in result.reason


def test_every_check_type_has_a_case() -> None:
    def types(check: dict[str, Any]) -> set[str]:
        found = {check["type"]}
        for part in check.get("checks", []) + ([check["check"]] if "check" in check else []):
            found |= types(part)
        return found

    covered = set().union(*(types(check) for check, _, _ in CASES))
    assert covered == set(CHECK_TYPES)


@pytest.mark.parametrize(
    "pattern",
    ["(?i)x", "(?P<n>x)", "(?<n>x)", "a++", "(?>a)", "\\1", "\\A", "a{,2}", "[a-z", "\\", "[\\D]"],
)
def test_patterns_outside_the_dialect_are_refused(pattern: str) -> None:
    assert regex_problem(pattern) is not None
    assert check_problem({"type": "regex", "pattern": pattern}) is not None


@pytest.mark.parametrize("pattern", ["^a+$", "\\++", "x}+", "[\\d\\s-]", "(?:a|b)(?=c)", "[^]"])
def test_patterns_both_dialects_read_alike_compile(pattern: str) -> None:
    assert regex_problem(pattern) is None
    compile_regex(pattern)


def test_problems_found_before_any_run() -> None:
    assert check_problem({"type": "json-schema", "schema": {"type": "nope"}}) is not None
    assert check_problem({"type": "length", "min": 5, "max": 2}) is not None
    weights = {"type": "weighted", "checks": [{"type": "is-json"}], "weights": [1, 2]}
    assert check_problem({**weights, "threshold": 1}) is not None
    nested = {
        "type": "not",
        "check": {"type": "all", "checks": [{"type": "regex", "pattern": "(?i)"}]},
    }
    assert check_problem(nested) is not None
    assert check_problem({"type": "contains", "value": "x"}) is None


def test_normalisations_apply_in_a_fixed_order() -> None:
    text = "  Caf\u0065\u0301\u2003 \n BAR  "
    assert normalized(text, ["lowercase", "trim", "collapse-whitespace", "nfc"]) == "caf\u00e9 bar"
    assert normalized(text, ["nfc", "collapse-whitespace", "trim", "lowercase"]) == "caf\u00e9 bar"


@given(st.text(max_size=12), st.text(max_size=12), st.integers(0, 6))
def test_the_banded_distance_agrees_with_the_full_one(left: str, right: str, limit: int) -> None:
    full = list(range(len(right) + 1))
    for row, char in enumerate(left, start=1):
        current = [row]
        for column, other in enumerate(right, start=1):
            current.append(
                min(full[column] + 1, current[-1] + 1, full[column - 1] + (char != other))
            )
        full = current
    assert levenshtein(left, right, limit) == min(full[-1], limit + 1)


# --- rows that declare rules as data ---------------------------------------------------------


def _row(oracle: str, expected: Any = None, **case: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": "r",
        "input": "q",
        "metadata": {
            "case": {
                "caseId": "r",
                "oracleType": oracle,
                "expectedBehavior": "b",
                "provenance": "expert-authored",
                **case,
            }
        },
    }
    if expected is not None:
        row["expected"] = expected
    return row


def _grade(row: dict[str, Any], output: Any = None, judge: Any = None) -> Any:
    return grade_row(
        row, Recorded(id="r", output=output, has_output=output is not None, judge=judge)
    )


def test_an_acceptable_set_by_a_check_is_graded_by_code() -> None:
    row = _row(
        "acceptable-set",
        {"satisfies": {"type": "contains", "value": "grub", "normalize": ["lowercase"]}},
        evaluator="exact-or-programmatic",
    )
    assert _grade(row, "Use GRUB").verdict == "pass"
    failed = _grade(row, "Use LILO")
    assert failed.verdict == "fail" and "contains 'grub'" in failed.reason


def test_a_reference_compared_after_lowercasing() -> None:
    row = _row("reference-answer", "Paris", normalize=["lowercase", "trim"])
    assert _grade(row, " PARIS\n").verdict == "pass"
    assert _grade(_row("reference-answer", "Paris"), " PARIS\n").verdict == "fail"


def test_a_numeric_reference_within_its_tolerance() -> None:
    row = _row("reference-answer", 120, tolerance=0.5)
    assert _grade(row, "120.4").verdict == "pass"
    assert _grade(row, 121).verdict == "fail"


def test_checks_gate_a_judged_row() -> None:
    gate = [{"type": "not", "check": {"type": "contains", "value": "As an AI"}}]
    row = _row("rubric", evaluator="llm-judge", evaluationCriteria=["kind"], checks=gate)
    assert _grade(row, "Sure.", {"pass": True}).verdict == "pass"
    blocked = _grade(row, "As an AI, sure.", {"pass": True})
    assert blocked.verdict == "fail" and "check 1 of 1" in blocked.reason
    # no judge yet, and the gate fails: the row fails without one
    assert _grade(row, "As an AI, sure.").verdict == "fail"
    assert _grade(row, "Sure.").verdict == "needs-judge"


def test_a_judges_score_against_the_rows_threshold() -> None:
    row = _row("rubric", evaluator="llm-judge", evaluationCriteria=["kind"], passThreshold=0.8)
    assert _grade(row, "x", {"score": 0.7}).verdict == "fail"
    assert _grade(row, "x", {"score": 0.7, "pass": True}).verdict == "fail"
    assert _grade(row, "x", {"score": 0.85}).verdict == "pass"
    # as promptfoo's llm-rubric threshold: a judge's fail is a fail, a bare pass scores 1
    assert _grade(row, "x", {"score": 0.9, "pass": False}).verdict == "fail"
    assert _grade(row, "x", {"pass": True}).verdict == "pass"
    assert _grade(row, "x", {"pass": False}).verdict == "fail"
    default = _row("rubric", evaluator="llm-judge", evaluationCriteria=["kind"])
    assert _grade(default, "x", {"score": 0.7}).verdict == "pass"


def test_human_rows_get_no_number_whatever_their_checks() -> None:
    row = _row("expected-behavior-only", checks=[{"type": "contains", "value": "x"}])
    assert _grade(row, "y").verdict == "needs-human"


def _codes(row: dict[str, Any]) -> list[str]:
    report = validate_document(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "s", "rows": [row]}
    )
    return [issue.code for issue in report.issues]


def test_validate_refuses_a_check_that_cannot_run() -> None:
    row = _row("acceptable-set", {"satisfies": {"type": "regex", "pattern": "(?i)grub"}})
    assert "check-unusable" in _codes(row)
    gate = _row("reference-answer", "x", checks=[{"type": "length", "min": 3, "max": 1}])
    assert "check-unusable" in _codes(gate)


def test_validate_names_rules_that_never_apply() -> None:
    assert "rule-not-applied" in _codes(_row("reference-answer", "x", passThreshold=0.5))
    assert "rule-not-applied" in _codes(_row("reference-answer", "x", tolerance=1))
    calls = {"calls": [{"name": "f", "arguments": {}}]}
    assert "rule-not-applied" in _codes(_row("expected-tool-calls", calls, normalize=["trim"]))
    assert "rule-not-applied" not in _codes(_row("reference-answer", "x", normalize=["trim"]))


def test_validate_names_pass_logic_no_field_declares() -> None:
    graded = {"graded": [{"value": "a", "grade": 1}, {"value": "b", "grade": 0.7}]}
    stated = _row("acceptable-set", graded, passLogic="grade of the member; pass at 0.7")
    assert "pass-logic-unstated" in _codes(stated)
    declared = copy.deepcopy(stated)
    declared["metadata"]["case"]["passThreshold"] = 0.7
    assert "pass-logic-unstated" not in _codes(declared)
    lower = _row("reference-answer", "Paris", passLogic="exact match after lowercasing")
    assert "pass-logic-unstated" in _codes(lower)
    lower["metadata"]["case"]["normalize"] = ["lowercase"]
    assert "pass-logic-unstated" not in _codes(lower)
    assert "pass-logic-unstated" not in _codes(
        _row("reference-answer", "Paris", passLogic="the reply equals the reference exactly")
    )


@pytest.mark.parametrize("normalize", [5, "lowercase", [{"a": 1}], [["lowercase"]], True])
def test_a_normalize_that_is_no_list_is_a_schema_finding_beside_pass_logic(
    normalize: Any,
) -> None:
    # passLogic that names a comparison reads the declared normalisations: a malformed
    # normalize is the schema's finding, and the row's other findings still come
    row = _row("reference-answer", "Paris", passLogic="case-insensitive match", normalize=normalize)
    codes = _codes(row)
    assert "schema" in codes
    assert "pass-logic-unstated" in codes


def test_pass_logic_claims_are_read_the_same_however_often_a_text_repeats() -> None:
    # a text's claims are searched once and remembered: the rows after the first get the
    # same findings, and a row whose declared fields differ gets its own
    rows = [
        _row("reference-answer", "Paris", passLogic="exact match after lowercasing")
        for _ in range(3)
    ]
    rows[1]["metadata"]["case"]["normalize"] = ["lowercase"]
    for position, row in enumerate(rows):
        row["id"] = row["metadata"]["case"]["caseId"] = f"r{position}"
    report = validate_document(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "s", "rows": rows}
    )
    assert [i.row_index for i in report.issues if i.code == "pass-logic-unstated"] == [0, 2]


def test_long_pass_logic_and_long_keys_are_read_each_time_not_remembered() -> None:
    # a long passLogic text is searched on its own (the memo keeps short ones), and a
    # metadata object with a long key is looked at key by key: the findings are the same
    long_logic = "x " * 800 + "case-insensitive match"
    rows = [_row("reference-answer", "Paris", passLogic=long_logic) for _ in range(2)]
    for position, row in enumerate(rows):
        row["id"] = row["metadata"]["case"]["caseId"] = f"r{position}"
        row["metadata"]["k" * 500] = 1
    rows[1]["metadata"]["Priority"] = "high"
    report = validate_document(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "s", "rows": rows}
    )
    found = [(issue.code, issue.row_index) for issue in report.issues]
    assert found.count(("pass-logic-unstated", 0)) == found.count(("pass-logic-unstated", 1)) == 1
    assert [at for code, at in found if code == "omitted-field"] == [1]


def test_the_bundled_example_passes_at_its_declared_threshold() -> None:
    from grading_table import graded

    assert graded("cs-eligibility-partial-damage", {"output": "full refund"}).verdict == "pass"


def test_options_do_not_override_a_declared_threshold() -> None:
    graded = {"graded": [{"value": "a", "grade": 0.6}]}
    row = _row("acceptable-set", graded, passThreshold=0.5)
    result = Recorded(id="r", output="a", has_output=True)
    assert grade_row(row, result, GradingOptions(pass_grade=1.0)).verdict == "pass"


def test_a_judged_rows_threshold_goes_on_promptfoos_llm_rubric(tmp_path: Any) -> None:
    from pathlib import Path

    from blueprint.convert import ConvertOptions, convert
    from blueprint.formats.promptfoo import read_yaml

    judged = _row("rubric", evaluator="llm-judge", evaluationCriteria=["kind"], passThreshold=0.8)
    source = Path(tmp_path) / "set.json"
    source.write_text(
        json.dumps({"schemaVersion": "blueprint.eval-set/v1", "name": "s", "rows": [judged]})
    )
    result = convert(
        source, Path(tmp_path) / "tests.yaml", ConvertOptions(target_format="promptfoo")
    )
    (test,) = read_yaml(Path(tmp_path) / "tests.yaml")
    assert [(a["type"], a.get("threshold")) for a in test["assert"]] == [("llm-rubric", 0.8)]
    assert "metadata.case.passThreshold" not in [loss.field for loss in result.export.lossy]


@pytest.mark.parametrize(
    ("field", "row"),
    [
        (
            "expected.satisfies",
            _row(
                "acceptable-set",
                {"satisfies": {"type": "all", "checks": [{"type": "json-schema", "schema": {}}]}},
            ),
        ),
        (
            "metadata.case.checks",
            _row(
                "reference-answer",
                "a",
                checks=[{"type": "not", "check": {"type": "json-schema", "schema": {}}}],
            ),
        ),
    ],
)
def test_a_nested_json_schema_is_reported_on_the_field_that_holds_it(
    tmp_path: Any, field: str, row: dict[str, Any]
) -> None:
    from pathlib import Path

    from blueprint.convert import ConvertOptions, convert

    source = Path(tmp_path) / "set.json"
    source.write_text(
        json.dumps({"schemaVersion": "blueprint.eval-set/v1", "name": "s", "rows": [row]})
    )
    result = convert(
        source, Path(tmp_path) / "tests.yaml", ConvertOptions(target_format="promptfoo")
    )
    fields = {loss.field for loss in result.export.lossy if "json-schema" in loss.reason}
    assert fields == {field}
