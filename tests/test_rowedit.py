"""blueprint edit and the row-edit library call: changes by path, versions, conflicts, and
pointing a set at a judge report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.authoring.editing import EditRefused
from blueprint.authoring.rowedit import (
    REMOVED,
    EditConflict,
    FieldChange,
    apply_changes,
    edit_row,
    field_path,
    point_at_judge_report,
    row_version,
)
from blueprint.cli import app
from blueprint.core.errors import UsageError
from curation_sets import SUFFIXES, curation_set, header_of, rows_of, snapshot

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def by_id(path: Path) -> dict[str, dict]:
    return rows_of(path)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_edit_changes_only_the_named_fields_in_every_format(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    before = by_id(path)
    result = run(
        "edit",
        path,
        "a",
        "--text",
        "metadata.case.scenario=A parcel | late",
        "--set",
        'expected={"refund": 20}',
        "--unset",
        "metadata.source",
        "--report",
        "json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["changed"]) == {"metadata.case.scenario", "expected", "metadata.source"}
    after = by_id(path)
    assert after["a"]["metadata"]["case"]["scenario"] == "A parcel | late"
    assert after["a"]["expected"] == {"refund": 20}
    assert "source" not in after["a"]["metadata"]
    assert {key: value for key, value in after.items() if key != "a"} == {
        key: value for key, value in before.items() if key != "a"
    }
    assert report["versionAfter"] == row_version(after["a"])


def test_edit_keeps_the_csv_column_order(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".csv")
    columns = path.read_text(encoding="utf-8").splitlines()[0]
    assert run("edit", path, "b", "--text", "input=new question").exit_code == 0
    assert path.read_text(encoding="utf-8").splitlines()[0] == columns


def test_an_edit_from_an_older_version_is_a_conflict_and_writes_nothing(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    old = row_version(by_id(path)["a"])
    edit_row(path, "a", [FieldChange(("input",), "first")], expected_version=old)
    untouched = snapshot(path.parent)
    with pytest.raises(EditConflict) as raised:
        edit_row(path, "a", [FieldChange(("input",), "second")], expected_version=old)
    assert raised.value.current is not None and raised.value.current["input"] == "first"
    assert raised.value.version == row_version(by_id(path)["a"])
    assert snapshot(path.parent) == untouched
    result = run("edit", path, "a", "--text", "input=third", "--expect", old)
    assert result.exit_code == 1
    assert snapshot(path.parent) == untouched


def test_a_removed_row_is_a_conflict_for_an_edit_that_expected_it(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".jsonl")
    version = row_version(by_id(path)["d"])
    assert run("rm", path, "d").exit_code == 0
    with pytest.raises(EditConflict) as raised:
        edit_row(path, "d", [FieldChange(("input",), "x")], expected_version=version)
    assert raised.value.current is None


def test_an_edit_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    untouched = snapshot(path.parent)
    outcome = edit_row(path, "a", [FieldChange(("input",), by_id(path)["a"]["input"])])
    assert outcome.changed == [] and outcome.written is None
    assert snapshot(path.parent) == untouched


@pytest.mark.parametrize(
    "arguments",
    [
        ["--set", 'id="z"'],
        ["--set", "input=not json"],
        ["--text", "metadata..case=x"],
        ["--text", "score=1"],
        ["--text", "input"],
        ["--text", "input=a", "--unset", "input"],
        [],
    ],
)
def test_edit_usage_errors_exit_2_and_write_nothing(tmp_path: Path, arguments: list[str]) -> None:
    path = curation_set(tmp_path, ".json")
    untouched = snapshot(path.parent)
    result = run("edit", path, "a", *arguments)
    assert result.exit_code == 2, result.output
    assert snapshot(path.parent) == untouched


def test_refusals_exit_1_and_write_nothing(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    untouched = snapshot(path.parent)
    assert run("edit", path, "nobody", "--text", "input=x").exit_code == 1
    # input is a string: nothing can be set inside it
    assert run("edit", path, "a", "--set", "input.part=1").exit_code == 1
    assert snapshot(path.parent) == untouched


def test_apply_changes_puts_new_case_fields_in_schema_order() -> None:
    row = {"id": "a", "input": "q", "metadata": {"case": {"caseId": "a", "provenance": "x"}}}
    edited = apply_changes(
        row,
        [
            FieldChange(("metadata", "case", "oracleType"), "rubric"),
            FieldChange(("metadata", "split"), "dev"),
            FieldChange(("expected",), REMOVED),
        ],
    )
    # the fields there keep their order; a new one goes before the first the schema puts after it
    assert list(edited["metadata"]["case"]) == ["caseId", "oracleType", "provenance"]
    shuffled = {"id": "a", "metadata": {"case": {"provenance": "x", "caseId": "a"}}}
    placed = apply_changes(shuffled, [FieldChange(("metadata", "case", "scenario"), "s")])
    assert list(placed["metadata"]["case"]) == ["provenance", "caseId", "scenario"]
    assert edited["metadata"]["split"] == "dev"
    assert row["metadata"]["case"] == {"caseId": "a", "provenance": "x"}  # a copy was edited
    with pytest.raises(EditRefused):
        apply_changes(row, [FieldChange(("input", "part"), 1)])


def test_field_paths() -> None:
    assert field_path("metadata.case.severity") == ("metadata", "case", "severity")
    for wrong in ("", "id", "rows.0", "metadata.", "weight"):
        with pytest.raises(UsageError):
            field_path(wrong)


def test_pointing_a_set_and_a_family_at_a_report(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".csv")
    (tmp_path / "reports").mkdir()
    report = tmp_path / "reports" / "judge.json"
    first = point_at_judge_report(path, report)
    assert first.reference == "reports/judge.json" and first.written is not None
    assert header_of(path)["judgeValidation"] == "reports/judge.json"
    again = point_at_judge_report(path, report)
    assert again.already and again.written is None
    point_at_judge_report(path, tmp_path / "other.json")
    assert header_of(path)["judgeValidation"] == ["reports/judge.json", "other.json"]
    point_at_judge_report(path, report, family="tone")
    families = {family["id"]: family for family in header_of(path)["caseFamilies"]}
    assert families["tone"]["judgeValidation"] == "reports/judge.json"
    with pytest.raises(EditRefused):
        point_at_judge_report(path, report, family="no-such-family")


def test_judge_report_point_writes_the_report_and_names_it(tmp_path: Path) -> None:
    from conftest import EXAMPLES

    set_path = tmp_path / "judged.json"
    set_path.write_bytes((EXAMPLES / "support-judged.json").read_bytes())
    labels = EXAMPLES / "support-judged-labels.csv"
    report = tmp_path / "judge.json"
    refused = run("judge-report", labels, "--set", set_path, "--point")
    assert refused.exit_code == 2  # --point needs a JSON report to name
    result = run("judge-report", labels, "--set", set_path, "-o", report, "--point")
    assert result.exit_code == 1  # one family fails; the set names the report all the same
    assert report.exists()
    assert header_of(set_path)["judgeValidation"] == ["support-judged.judge.json", "judge.json"]
    validated = run("validate", set_path, "--report", "json")
    codes = {issue["code"] for issue in json.loads(validated.stdout)["issues"]}
    assert "judge-report-failed" in codes


def test_promote_and_accept_refuse_a_row_changed_since_the_page(tmp_path: Path) -> None:
    from blueprint.authoring.curate import PromoteRequest, accept_derived, promote

    path = curation_set(tmp_path, ".json")
    seen = {"d": row_version(by_id(path)["d"]), "e": row_version(by_id(path)["e"])}
    assert run("edit", path, "d", "--text", "input=changed").exit_code == 0
    assert run("edit", path, "e", "--text", "input=changed").exit_code == 0
    untouched = snapshot(path.parent)
    with pytest.raises(EditConflict):
        promote(path, PromoteRequest(("d",), "expert-authored", "ann", versions=seen))
    with pytest.raises(EditConflict):
        accept_derived(path, ["e"], versions={"e": seen["e"]})
    with pytest.raises(EditConflict):
        accept_derived(path, ["e"], versions={"gone": "x"})
    assert snapshot(path.parent) == untouched
    fresh = {"d": row_version(by_id(path)["d"])}
    promote(path, PromoteRequest(("d",), "expert-authored", "ann", versions=fresh))
    assert by_id(path)["d"]["metadata"]["case"]["provenance"] == "expert-authored"
