"""The validator: one test per issue code, asserting (code, row, path) and never wording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint.core.errors import UsageError
from blueprint.core.issues import CODES
from blueprint.validation.validate import ValidationOptions, validate_document, validate_file
from conftest import document, row, write_json
from strategies import OPTIONAL_CASE, TRICKY_REPLACEMENTS, eval_sets, mutated


def found(doc: dict, *codes: str) -> list[tuple]:
    report = validate_document(doc)
    return [t for t in report.flatten(("code", "row_index", "path")) if not codes or t[0] in codes]


def test_clean_set_has_no_issues() -> None:
    report = validate_document(document(row("a"), row("b", "rubric", evaluationCriteria=["x"])))
    assert report.issues == []
    assert report.valid
    assert report.rows == 2


def test_schema_issue_for_string_one_versus_number() -> None:
    bad = row("a")
    bad["metadata"]["case"]["caseId"] = 1
    assert ("schema", 0, "$.rows[0].metadata.case.caseId") in found(document(bad))


def test_schema_issue_for_unknown_key_names_the_key() -> None:
    bad = row("a")
    bad["metadata"]["case"]["oracle_type"] = "rubric"
    assert found(document(bad), "schema") == [("schema", 0, "$.rows[0].metadata.case.oracle_type")]


def test_schema_issue_for_missing_required_field() -> None:
    bad = row("a")
    del bad["metadata"]["case"]["provenance"]
    assert found(document(bad), "schema") == [("schema", 0, "$.rows[0].metadata.case.provenance")]


def test_schema_issues_on_set_level_fields() -> None:
    doc = document(row("a"), name="", version=3)
    assert found(doc, "schema") == [("schema", None, "$.name"), ("schema", None, "$.version")]


def test_case_id_mismatch() -> None:
    bad = row("a")
    bad["metadata"]["case"]["caseId"] = "b"
    assert found(document(bad)) == [("case-id-mismatch", 0, "$.rows[0].metadata.case.caseId")]


def test_duplicate_id_reported_on_each_repeat() -> None:
    assert found(document(row("a"), row("b"), row("a"), row("a")), "duplicate-id") == [
        ("duplicate-id", 2, "$.rows[2].id"),
        ("duplicate-id", 3, "$.rows[3].id"),
    ]


def test_inadmissible_evaluator_gives_the_spec_reason() -> None:
    doc = document(row("a", "rubric", evaluator="exact-or-programmatic", evaluationCriteria=["x"]))
    report = validate_document(doc)
    assert report.flatten(("code", "row_index", "path")) == [
        ("inadmissible-evaluator", 0, "$.rows[0].metadata.case.evaluator")
    ]
    assert "string comparison cannot read a criterion" in report.issues[0].message


def test_inadmissible_evaluator_on_a_case_family() -> None:
    family = {"id": "fam", "oracleType": "expected-tool-calls", "evaluator": "llm-judge"}
    assert found(document(caseFamilies=[family])) == [
        ("inadmissible-evaluator", None, "$.caseFamilies[0].evaluator")
    ]


def test_conditional_evaluator_is_a_warning() -> None:
    report = validate_document(document(row("a", evaluator="llm-judge")))
    assert report.flatten(("code", "severity", "path")) == [
        ("conditional-evaluator", "warning", "$.rows[0].metadata.case.evaluator")
    ]
    assert report.valid


@pytest.mark.parametrize(
    ("oracle_type", "expected", "path"),
    [
        ("acceptable-set", "Paris", "$.rows[0].expected"),
        ("acceptable-set", {"acceptable": []}, "$.rows[0].expected.acceptable"),
        (
            "acceptable-set",
            {"graded": [{"value": 1, "grade": 2}]},
            "$.rows[0].expected.graded[0].grade",
        ),
        ("rubric", "a verbatim answer", "$.rows[0].expected"),
        ("expected-behavior-only", None, "$.rows[0].expected"),
        (
            "expected-tool-calls",
            {"calls": [{"name": "f"}]},
            "$.rows[0].expected.calls[0].arguments",
        ),
        (
            "expected-final-state",
            {"checks": [{"kind": "ping"}]},
            "$.rows[0].expected.checks[0].kind",
        ),
        (
            "expected-final-state",
            {"checks": [{"kind": "command", "run": "make"}]},
            "$.rows[0].expected.checks[0].exitCode",
        ),
    ],
)
def test_expected_shape(oracle_type: str, expected: object, path: str) -> None:
    data = row("a", oracle_type, evaluationCriteria=["c"])
    data["expected"] = expected
    data["metadata"]["case"]["reviewerExpertise"] = "x"
    assert ("expected-shape", 0, path) in found(document(data))


def test_expected_required_for_reference_answer() -> None:
    data = row("a")
    del data["expected"]
    assert found(document(data)) == [("expected-shape", 0, "$.rows[0].expected")]


@pytest.mark.parametrize(
    ("place", "path"),
    [
        (lambda r: r, "$.rows[0].difficulty"),
        (lambda r: r["metadata"], "$.rows[0].metadata.weight"),
        (lambda r: r["metadata"]["case"], "$.rows[0].metadata.case.priority"),
    ],
)
def test_omitted_field_wherever_it_appears(place, path: str) -> None:
    data = row("a")
    name = path.rsplit(".", 1)[1]
    place(data)[name] = 3
    report = validate_document(document(data))
    assert report.flatten(("code", "path")) == [("omitted-field", path)]
    assert "deliberately" in report.issues[0].message


@pytest.mark.parametrize(
    ("place", "key", "path"),
    [
        (lambda r: r["metadata"], "Priority", "$.rows[0].metadata.Priority"),
        (lambda r: r["metadata"]["case"], "DIFFICULTY", "$.rows[0].metadata.case.DIFFICULTY"),
        (lambda r: r["metadata"], "Score", "$.rows[0].metadata.Score"),
        (lambda r: r, "Weight", "$.rows[0].Weight"),
        (lambda r: r["metadata"], "task_priority", None),
        (lambda r: r["metadata"], "difficulty_", "$.rows[0].metadata.difficulty_"),
        (lambda r: r["metadata"], "WEIGHT ", "$.rows[0].metadata['WEIGHT ']"),
        (lambda r: r["metadata"], "scores", None),
    ],
)
def test_omitted_field_in_any_letter_case_or_spelling(place, key: str, path: str | None) -> None:
    data = row("a")
    place(data)[key] = 1
    report = validate_document(document(data))
    if path is None:
        assert report.issues == []
        return
    assert report.flatten(("code", "path")) == [("omitted-field", path)]  # and no schema finding
    assert repr(key) in report.issues[0].message


def test_omitted_field_in_a_case_family() -> None:
    family = {"id": "fam", "oracleType": "rubric", "score": 1}
    assert found(document(caseFamilies=[family])) == [
        ("omitted-field", None, "$.caseFamilies[0].score")
    ]


@pytest.mark.parametrize(
    "provenance", ["starter-example", "overlay-starter-needs-expert-validation"]
)
def test_starter_example(provenance: str) -> None:
    report = validate_document(document(row("a", provenance=provenance)))
    assert report.flatten(("code", "severity", "path")) == [
        ("starter-example", "warning", "$.rows[0].metadata.case.provenance")
    ]


def test_case_family_mismatch_and_unknown_family() -> None:
    family = {
        "id": "lookup",
        "oracleType": "reference-answer",
        "evaluator": "exact-or-programmatic",
    }
    doc = document(
        row("a", caseFamily="lookup"),
        row("b", caseFamily="lookup", evaluator="human-expert", reviewerExpertise="x"),
        row("c", "acceptable-set", expected={"acceptable": [1]}, caseFamily="lookup"),
        row("d", caseFamily="nowhere"),
        caseFamilies=[family],
    )
    assert found(doc) == [
        ("inherited-evaluator", 0, "$.rows[0].metadata.case.evaluator"),
        ("case-family-mismatch", 1, "$.rows[1].metadata.case.evaluator"),
        ("case-family-mismatch", 2, "$.rows[2].metadata.case.oracleType"),
        ("inherited-evaluator", 2, "$.rows[2].metadata.case.evaluator"),
        ("unknown-case-family", 3, "$.rows[3].metadata.case.caseFamily"),
    ]


def test_undeclared_case_family_is_flagged_once_and_its_rows_must_agree() -> None:
    doc = document(
        row("a", caseFamily="anything", evaluator="exact-or-programmatic"),
        row("b", caseFamily="anything"),
        row("c", caseFamily="anything", evaluator="human-expert", reviewerExpertise="x"),
        row("d", "acceptable-set", expected={"acceptable": [1]}, caseFamily="anything"),
    )
    assert found(doc) == [
        ("undeclared-case-family", 0, "$.rows[0].metadata.case.caseFamily"),
        ("case-family-mismatch", 2, "$.rows[2].metadata.case.evaluator"),
        ("case-family-mismatch", 3, "$.rows[3].metadata.case.oracleType"),
    ]
    assert "row 0" in validate_document(doc).issues[1].message


def test_rows_of_a_family_without_an_evaluator_must_name_the_same_one() -> None:
    family = {"id": "lookup", "oracleType": "reference-answer"}
    doc = document(
        row("a", caseFamily="lookup"),
        row("b", caseFamily="lookup", evaluator="exact-or-programmatic"),
        row("c", caseFamily="lookup", evaluator="exact-or-programmatic"),
        row("d", caseFamily="lookup", evaluator="rubric-human"),
        caseFamilies=[family],
    )
    assert found(doc) == [("case-family-mismatch", 3, "$.rows[3].metadata.case.evaluator")]


def test_without_set_level_fields_families_are_compared_but_not_declared(tmp_path) -> None:
    from blueprint.validation.validate import validate_file

    path = tmp_path / "s.jsonl"
    rows = [
        row("a", caseFamily="f", evaluator="exact-or-programmatic"),
        row("b", caseFamily="f", evaluator="rubric-human"),
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = validate_file(path)
    assert report.flatten(("code", "row_index")) == [
        ("missing-set-file", None),
        ("case-family-mismatch", 1),
    ]


def test_family_level_human_expert_needs_reviewer_expertise() -> None:
    family = {"id": "judged", "oracleType": "rubric", "evaluator": "human-expert"}
    doc = document(
        row("a", "rubric", caseFamily="judged", evaluationCriteria=["x"]),
        row(
            "b",
            "rubric",
            caseFamily="judged",
            evaluator="human-expert",
            reviewerExpertise="pharmacist",
            evaluationCriteria=["x"],
        ),
        caseFamilies=[family],
    )
    assert found(doc) == [
        ("inherited-evaluator", 0, "$.rows[0].metadata.case.evaluator"),
        ("missing-reviewer-expertise", 0, "$.rows[0].metadata.case.reviewerExpertise"),
    ]


def test_duplicate_case_family() -> None:
    family = {"id": "lookup", "oracleType": "reference-answer"}
    assert found(document(caseFamilies=[family, family])) == [
        ("duplicate-case-family", None, "$.caseFamilies[1].id")
    ]


def test_missing_reviewer_expertise() -> None:
    doc = document(
        row("a", evaluator="human-expert"),
        row("b", "expected-behavior-only"),
        row("c", evaluator="human-expert", reviewerExpertise="tax lawyer"),
    )
    assert found(doc) == [
        ("missing-reviewer-expertise", 0, "$.rows[0].metadata.case.reviewerExpertise"),
        ("missing-reviewer-expertise", 1, "$.rows[1].metadata.case.reviewerExpertise"),
    ]


def test_rubric_without_criteria_is_info() -> None:
    report = validate_document(
        document(row("a", "rubric"), row("b", "rubric", evaluationCriteria=[]))
    )
    assert report.flatten(("code", "severity", "row_index")) == [
        ("rubric-without-criteria", "info", 0),
        ("rubric-without-criteria", "info", 1),
    ]
    assert report.valid


def test_grading_rules_declared_as_data() -> None:
    unusable = row(
        "a", "acceptable-set", expected={"satisfies": {"type": "regex", "pattern": "(?i)x"}}
    )
    unapplied = row("b", passThreshold=0.5)
    unstated = row("c", expected="Paris", passLogic="exact match after lowercasing")
    declared = row(
        "d", expected="Paris", passLogic="exact match after lowercasing", normalize=["lowercase"]
    )
    doc = document(unusable, unapplied, unstated, declared)
    codes = ("check-unusable", "rule-not-applied", "pass-logic-unstated")
    assert found(doc, *codes) == [
        ("check-unusable", 0, "$.rows[0].expected.satisfies"),
        ("rule-not-applied", 1, "$.rows[1].metadata.case.passThreshold"),
        ("pass-logic-unstated", 2, "$.rows[2].metadata.case.passLogic"),
    ]
    assert not validate_document(document(unusable)).valid
    assert validate_document(document(unapplied, unstated)).valid  # warnings only


def test_parse_issue_for_an_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text('{"name": "x",\n "rows": [}', encoding="utf-8")
    report = validate_file(path)
    assert report.flatten(("code", "line")) == [("parse", 2)]
    assert report.unreadable and not report.valid


def test_missing_set_file_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"id": "a"}\n', encoding="utf-8")
    report = validate_file(path, options=ValidationOptions(select=frozenset({"missing-set-file"})))
    assert report.flatten(("code", "severity")) == [("missing-set-file", "warning")]


def _with_input(row_id: str, value: object, split: str | None = None) -> dict:
    data = row(row_id)
    data["input"] = value
    if split is not None:
        data["metadata"]["split"] = split
    return data


def test_duplicate_input_after_normalisation_is_a_warning_on_each_repeat() -> None:
    doc = document(
        _with_input("a", "How do I return a kettle?"),
        _with_input("b", "how do i  RETURN a kettle"),
        _with_input("c", "How do I return a blender?"),
        _with_input("d", "How do I return a kettle!"),
    )
    assert found(doc) == [
        ("duplicate-input", 1, "$.rows[1].input"),
        ("duplicate-input", 3, "$.rows[3].input"),
    ]
    assert validate_document(doc).valid


def test_duplicate_input_compares_objects_and_chats_by_content() -> None:
    chat = [{"role": "user", "content": "Where is my refund?"}]
    doc = document(
        _with_input("a", {"question": "Refund?", "order": "A-1"}),
        _with_input("b", {"order": "a 1", "question": "refund"}),
        _with_input("c", chat),
        _with_input("d", [{"content": "where is my refund", "role": "user"}]),
        _with_input("e", [{"role": "assistant", "content": "Where is my refund?"}]),
        _with_input("f", ""),
        _with_input("g", ""),
    )
    assert found(doc) == [  # two empty inputs are no input, not the same one
        ("duplicate-input", 1, "$.rows[1].input"),
        ("duplicate-input", 3, "$.rows[3].input"),
        ("missing-input", 5, "$.rows[5].input"),
        ("missing-input", 6, "$.rows[6].input"),
    ]


@pytest.mark.parametrize("value", [None, "", []])
def test_a_row_without_an_input_is_an_error(value: object) -> None:
    report = validate_document(document(_with_input("a", value)))
    assert report.flatten(("code", "severity", "path")) == [
        ("missing-input", "error", "$.rows[0].input")
    ]
    assert not report.valid


@pytest.mark.parametrize(
    "value", [" ", 0, False, [{"role": "user", "content": ""}], {"question": None}, {}]
)
def test_a_blank_text_one_empty_message_or_no_named_inputs_are_still_an_input(
    value: object,
) -> None:
    assert found(document(_with_input("a", value)), "missing-input") == []


def test_an_empty_conversation_to_simulate_from_a_scenario_is_an_input() -> None:
    simulated = _with_input("a", [])
    simulated["metadata"]["case"]["scenario"] = "A customer changes the order twice"
    assert found(document(simulated), "missing-input") == []
    simulated["metadata"]["case"]["scenario"] = " "
    assert found(document(simulated), "missing-input") == [("missing-input", 0, "$.rows[0].input")]


def test_a_row_without_the_input_key_is_one_schema_finding() -> None:
    data = row("a")
    del data["input"]
    assert found(document(data)) == [("schema", 0, "$.rows[0].input")]


def test_duplicate_input_across_splits_is_an_error() -> None:
    doc = document(
        _with_input("a", "What is the refund window?"),
        _with_input("b", "what is the refund window", split="dev"),
        _with_input("c", "What is the refund window?", split="test"),
        _with_input("d", "What is the refund window?", split="dev"),
    )
    report = validate_document(doc)
    assert report.flatten(("code", "row_index", "severity")) == [
        ("duplicate-input", 1, "warning"),
        ("duplicate-input-across-splits", 2, "error"),
        ("duplicate-input", 3, "warning"),
    ]
    assert not report.valid
    ignored = ValidationOptions(ignore=frozenset({"duplicate-input-across-splits"}))
    assert validate_document(doc, options=ignored).valid


@settings(max_examples=150)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a?", "A", "b", "c!"]), st.sampled_from([None, "dev", "test"])),
        max_size=12,
    )
)
def test_across_splits_alone_finds_what_every_code_finds(drawn: list[tuple[str, Any]]) -> None:
    """A conversion checks errors only, and then reads the inputs of rows with a split alone:
    the cross-split findings are those of a full validation, naming the same rows."""
    doc = document(
        *(_with_input(f"r{n}", text, split=split) for n, (text, split) in enumerate(drawn))
    )
    wanted = "duplicate-input-across-splits"
    alone = validate_document(doc, options=ValidationOptions(select=frozenset({wanted})))
    every = validate_document(doc)
    assert [issue.to_json() for issue in alone.issues] == [
        issue.to_json() for issue in every.issues if issue.code == wanted
    ]


def test_near_duplicate_input_is_not_the_validators(tmp_path: Path) -> None:
    # "near-duplicate-input" comes from blueprint dedupe (an index of every input), never
    # from the validator's single pass
    doc = document(
        _with_input("a", "how many days do I have to return a kettle bought online"),
        _with_input("b", "how many days do I have to return the kettle bought online"),
    )
    assert found(doc) == []


def test_judge_validation_codes_come_after_the_pass(tmp_path: Path) -> None:
    # the judge-validation step (tests/test_judging.py) rewrites the conditional-evaluator
    # findings of a family a report covers: "judge-validated" when it passes, else
    # "judge-report-stale", "judge-report-insufficient", "judge-report-failed" or
    # "judge-report-unreadable" beside the warnings, which stay
    judged = row("j", "rubric", evaluator="llm-judge", evaluationCriteria=["polite"])
    path = tmp_path / "set.json"
    path.write_text(json.dumps(document(judged, judgeValidation="none.json")))
    assert validate_file(path).flatten(("path", "code")) == [
        ("$.rows[0].metadata.case.evaluator", "conditional-evaluator"),
        ("$.judgeValidation", "judge-report-unreadable"),
    ]


def test_spreadsheet_formula_is_not_the_validators() -> None:
    # "spreadsheet-formula" is found when a CSV is written (tests/test_spreadsheet_formulas.py):
    # a formula-like text is harmless data until a spreadsheet opens a file holding it
    doc = document(_with_input("a", "=1+1"))
    assert "spreadsheet-formula" not in [code for code, *_ in found(doc)]


def test_csv_column_added_is_the_editors() -> None:
    # "csv-column-added" is found when an edit rewrites a CSV set with a column it lacked
    # (tests/test_curate.py): the set itself is as valid as before
    doc = document(row("a", provenance="starter-example"))
    assert "csv-column-added" not in [code for code, *_ in found(doc)]


def test_unversioned_behavior_change_is_the_diffs() -> None:
    # "unversioned-behavior-change" compares two sets: blueprint diff finds it
    # (tests/test_review.py); one set alone has no earlier version to compare with
    doc = document(row("a", version="1"))
    assert "unversioned-behavior-change" not in [code for code, *_ in found(doc)]


def test_every_code_has_a_test_here() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    untested = [code for code in CODES if f'"{code}"' not in source]
    assert untested == []


def test_one_row_keeps_every_finding() -> None:
    bad = row("a", "rubric", evaluator="exact-or-programmatic", difficulty=2)
    bad["metadata"]["case"]["caseId"] = "b"
    bad["expected"] = "verbatim"
    codes = {t[0] for t in found(document(bad))}
    assert codes == {
        "case-id-mismatch",
        "inadmissible-evaluator",
        "expected-shape",
        "omitted-field",
        "rubric-without-criteria",
    }


def test_select_and_ignore() -> None:
    bad = row("a", "rubric", evaluator="exact-or-programmatic")
    doc = document(bad)
    only = validate_document(
        doc, options=ValidationOptions(select=frozenset({"rubric-without-criteria"}))
    )
    assert [i.code for i in only.issues] == ["rubric-without-criteria"]
    without = validate_document(
        doc, options=ValidationOptions(ignore=frozenset({"rubric-without-criteria"}))
    )
    assert [i.code for i in without.issues] == ["inadmissible-evaluator"]
    with pytest.raises(UsageError):
        ValidationOptions(select=frozenset({"no-such-code"}))


def test_non_object_rows_are_reported_not_crashed() -> None:
    report = validate_document(document(42, "text", None, [1]))  # type: ignore[arg-type]
    assert report.flatten(("code", "row_index", "path")) == [
        ("schema", 0, "$.rows[0]"),
        ("schema", 1, "$.rows[1]"),
        ("schema", 2, "$.rows[2]"),
        ("schema", 3, "$.rows[3]"),
    ]


def test_json_rows_get_line_numbers(tmp_path: Path) -> None:
    bad = row("b")
    bad["metadata"]["case"]["caseId"] = "x"
    path = write_json(tmp_path / "set.json", document(row("a"), bad))
    report = validate_file(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    (issue,) = report.issues
    assert lines[issue.line - 1].strip() == "{"
    assert '"id": "b"' in lines[issue.line]


def test_one_finding_for_a_value_outside_a_const_or_enum() -> None:
    doc = document(row("a"))
    doc["schemaVersion"] = 1
    doc["rows"][0]["metadata"]["case"]["oracleType"] = 5
    assert found(doc, "schema") == [
        ("schema", None, "$.schemaVersion"),
        ("schema", 0, "$.rows[0].metadata.case.oracleType"),
    ]


def test_derived_values_from_an_import_are_reported() -> None:
    data = row("a", provenance="imported")
    data["metadata"]["case"]["extensions"] = {
        "blueprint-import": {
            "format": "promptfoo",
            "derived": {"metadata.case.oracleType": "inferred from the equals assertion"},
        }
    }
    report = validate_document(document(data))
    assert report.flatten(("code", "severity", "path")) == [
        ("derived-value", "warning", "$.rows[0].metadata.case.oracleType")
    ]


def test_a_vendor_file_that_breaks_its_vendors_rules(tmp_path: Path) -> None:
    omk = {
        "schemaVersion": "omk.eval-sample-set/v2",
        "samples": [{"sample_id": "a", "prompt": "p", "colour": "red"}],
    }
    report = validate_file(write_json(tmp_path / "eval-samples.json", omk))
    assert [(i.code, i.path, i.line) for i in report.issues if i.severity == "error"] == [
        ("vendor-format", "$.samples[0].colour", 4)
    ]
    assert not report.valid


@pytest.mark.parametrize(
    ("field", "written", "meant"),
    [
        ("oracleType", "Reference-Answer", "reference-answer"),
        ("evaluator", "Exact-Or-Programmatic", "exact-or-programmatic"),
        ("provenance", " expert-authored ", "expert-authored"),
        ("provenance", "EXPERT-AUTHORED\t", "expert-authored"),
        ("reversibility", "r1", "R1"),
        ("blastRadius", " B2", "B2"),
    ],
)
def test_an_enum_value_off_by_case_or_spaces_is_refused_with_a_suggestion(
    field: str, written: str, meant: str
) -> None:
    bad = row("a")
    bad["metadata"]["case"][field] = written
    report = validate_document(document(bad))
    schema = [issue for issue in report.issues if issue.code == "schema"]
    assert [(i.row_index, i.path) for i in schema] == [(0, f"$.rows[0].metadata.case.{field}")]
    assert repr(meant) in schema[0].message
    assert not report.valid  # a hint, not a coercion


def test_a_case_family_severity_off_by_case_gets_a_suggestion() -> None:
    family = {"id": "fam", "oracleType": "rubric", "severity": "Major"}
    report = validate_document(document(caseFamilies=[family]))
    assert report.flatten(("code", "row_index", "path")) == [
        ("schema", None, "$.caseFamilies[0].severity")
    ]
    assert "'major'" in report.issues[0].message


@pytest.mark.parametrize("written", ["golden", "reference answer", "referenceanswer", 3])
def test_an_enum_value_that_is_not_near_a_member_gets_no_suggestion(written: object) -> None:
    bad = row("a")
    bad["metadata"]["case"]["oracleType"] = written
    schema = [i for i in validate_document(document(bad)).issues if i.code == "schema"]
    assert [i.path for i in schema] == ["$.rows[0].metadata.case.oracleType"]
    assert "'reference-answer'" not in schema[0].message


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_the_suggestion_is_made_in_every_format(tmp_path: Path, suffix: str) -> None:
    from blueprint.convert import ConvertOptions, convert

    bad = row("a", evaluator="LLM-Judge")
    source = write_json(tmp_path / "source.json", document(bad))
    target = tmp_path / f"set{suffix}"
    convert(source, target, ConvertOptions(allow_invalid=True))
    report = validate_file(target)
    schema = [i for i in report.issues if i.code == "schema"]
    assert [i.path for i in schema] == ["$.rows[0].metadata.case.evaluator"]
    assert "'llm-judge'" in schema[0].message


def test_empty_csv_rows_are_skipped_with_one_info_finding(tmp_path: Path) -> None:
    from blueprint.convert import convert

    target = tmp_path / "set.csv"
    convert(write_json(tmp_path / "s.json", document(row("a"), row("b"))), target)
    width = target.read_text(encoding="utf-8").splitlines()[0].count(",")
    with target.open("a", encoding="utf-8", newline="") as handle:
        handle.write(("," * width + "\r\n") * 3)
    report = validate_file(target)
    assert report.flatten(("code", "severity", "row_index", "line")) == [
        ("empty-row", "info", None, 4)
    ]
    assert report.rows == 2 and report.valid


@pytest.mark.parametrize(
    ("oracle_type", "expected"),
    [
        ("acceptable-set", "{\u201cacceptable\u201d: [\u201cyes\u201d]}"),
        ("expected-tool-calls", "{\u2018calls\u2019: []}"),
        ("expected-final-state", " [\u201cchecks\u201d]"),
    ],
)
def test_json_typed_with_typographic_quotes_gets_a_hint(oracle_type: str, expected: str) -> None:
    from blueprint.validation.schemadescribe import typographic_quotes_hint

    report = validate_document(document(row("a", oracle_type, expected=expected)))
    assert report.flatten(("code", "path")) == [("expected-shape", "$.rows[0].expected")]
    hint = typographic_quotes_hint(expected)
    assert hint and report.issues[0].message.endswith(hint)


@pytest.mark.parametrize("text", ['{"calls": []}', "\u201cquoted\u201d prose", "{plain}"])
def test_only_json_like_text_with_typographic_quotes_gets_the_hint(text: str) -> None:
    from blueprint.validation.schemadescribe import typographic_quotes_hint

    assert typographic_quotes_hint(text) == ""


def test_a_csv_cell_typed_with_typographic_quotes_gets_the_hint(tmp_path: Path) -> None:
    from blueprint.convert import ConvertOptions, convert
    from blueprint.validation.schemadescribe import typographic_quotes_hint

    cell = "{\u201cx\u201d: {}}"
    bad = row("a", extensions=cell)
    target = tmp_path / "set.csv"
    source = write_json(tmp_path / "s.json", document(bad))
    convert(source, target, ConvertOptions(allow_invalid=True))
    report = validate_file(target)
    assert report.flatten(("code", "path", "line")) == [
        ("schema", "$.rows[0].metadata.case.extensions", 2)
    ]
    assert report.issues[0].message.endswith(typographic_quotes_hint(cell))
    assert cell in target.read_text(encoding="utf-8")  # written bare, as a person would type it


def test_without_row_ids_the_report_keeps_none(tmp_path: Path) -> None:
    doc = document(row("a"), row("a"))
    kept = validate_document(doc)
    flat = validate_document(doc, options=ValidationOptions(row_ids=False))
    assert kept.row_ids == ["a", "a"]
    assert flat.row_ids == []
    positions = ("code", "row_index", "line")
    assert flat.flatten(positions) == kept.flatten(positions)


def test_duplicates_name_the_first_rows_line_past_blank_lines(tmp_path: Path) -> None:
    lines = [json.dumps(row(name)) for name in ("a", "b")]
    copy = row("a")
    copy["input"] = "question for b"
    text = "\n\n".join(lines) + "\n\n\n" + json.dumps(copy) + "\n"
    path = tmp_path / "set.jsonl"
    path.write_text(text, encoding="utf-8")
    issues = validate_file(path).issues
    found = {(i.code, i.line): i.message for i in issues if i.code.startswith("duplicate")}
    assert set(found) == {("duplicate-id", 6), ("duplicate-input", 6)}
    assert "line 1" in found["duplicate-id", 6]
    assert "line 3" in found["duplicate-input", 6]


def test_a_duplicate_input_names_the_first_rows_id(tmp_path: Path) -> None:
    first, repeat, across = row("refund-1"), row("refund-2"), row("refund-3")
    for data, split in ((first, "dev"), (repeat, "dev"), (across, "test")):
        data["metadata"]["split"] = split
        data["input"] = first["input"]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (first, repeat, across)), "utf-8")
    found = {i.code: i.message for i in validate_file(path).issues}
    assert "row 0, 'refund-1' (line 1)" in found["duplicate-input"]
    assert "row 0, 'refund-1' (line 1)" in found["duplicate-input-across-splits"]


def test_validation_leaves_the_garbage_collector_as_it_found_it() -> None:
    import gc

    before = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    validate_document(document(row("a"), row("b")))
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


def test_ids_are_kept_only_for_the_findings_that_name_an_earlier_row() -> None:
    from blueprint.core.issues import ValidationReport
    from blueprint.formats import SourceRow
    from blueprint.validation.stream import StreamValidator

    for options, kept in (
        (ValidationOptions(), 2),
        (ValidationOptions(ignore=frozenset({"duplicate-input"})), 2),
        (ValidationOptions(select=frozenset({"schema", "duplicate-id"})), 0),
    ):
        validator = StreamValidator(ValidationReport(source="<memory>", format="json"), options)
        validator.check_header(document())
        for index, data in enumerate([row("a"), row("b")]):
            validator.check_row(SourceRow(index, index + 1, data), "json")
        assert len(validator.state.ids) == kept
        assert len(validator.state.lines) == 2


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_value_in_any_field_gives_findings_never_an_error(data: st.DataObject) -> None:
    # every rule reads raw rows: whatever value a field holds, the report says what is
    # wrong with it, and no rule raises
    mutations = data.draw(st.integers(min_value=1, max_value=4))
    document = data.draw(eval_sets(max_rows=3))
    for _ in range(mutations):
        document = data.draw(mutated(document))
    if not isinstance(document, dict):
        return
    report = validate_document(document)
    assert {issue.code for issue in report.issues} <= set(CODES)


_CASE_FIELDS = ["caseId", "oracleType", "expectedBehavior", "provenance", *OPTIONAL_CASE]
_CLAIMS = ["pass at 0.7", "case-insensitive, trimmed", "within 5 (tolerance)", "NFC"]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_value_in_any_case_field_gives_findings_never_an_error(
    data: st.DataObject,
) -> None:
    # the same, a few case fields of one row at a time: the rules read fields together
    # (passLogic with normalize, checks and tolerance), so one field's odd value meets the
    # others' ordinary ones
    document = data.draw(eval_sets(max_rows=2))
    if not document["rows"]:
        return
    case = document["rows"][0]["metadata"]["case"]
    if data.draw(st.booleans()):  # passLogic that the rules read with the other fields
        case["passLogic"] = data.draw(st.sampled_from(_CLAIMS))
    for name in data.draw(st.lists(st.sampled_from(_CASE_FIELDS), min_size=1, max_size=3)):
        case[name] = data.draw(TRICKY_REPLACEMENTS)
    report = validate_document(document)
    assert {issue.code for issue in report.issues} <= set(CODES)
