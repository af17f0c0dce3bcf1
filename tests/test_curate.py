"""Curation edits: rows removed and renamed, families managed, imports accepted, gold promoted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from blueprint.authoring.curate import (
    FamilyDefinition,
    FamilyEdit,
    PromoteRequest,
    accept_derived,
    add_family,
    edit_family,
    promote,
    remove_family,
    remove_rows,
    rename_row,
    utc_stamp,
)
from blueprint.authoring.editing import EditOptions, EditRefused
from blueprint.core.errors import UsageError
from blueprint.validation.validate import validate_file
from conftest import row
from curation_sets import (
    SUFFIXES,
    curation_set,
    header,
    header_of,
    imported_row,
    rows_of,
    snapshot,
    write_set,
)

WHEN = datetime(2025, 3, 1, 9, 30, tzinfo=timezone(timedelta(hours=1)))


def codes(path: Path) -> set[str]:
    return {issue.code for issue in validate_file(path).issues}


# --- rm --------------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_rm_removes_the_rows_and_names_families_left_empty(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    outcome = remove_rows(path, ["c", "d", "c"])
    assert outcome.removed == ["c", "d"]
    assert outcome.emptied_families == ["tone"]
    assert list(rows_of(path)) == ["a", "b", "e"]
    assert "tone" in {f["id"] for f in (header_of(path) or {})["caseFamilies"]}


@pytest.mark.parametrize(
    "rows",
    [
        [row("a"), row("a")],  # which one?
        [row("b")],  # no a
    ],
)
def test_rm_refuses_unknown_and_repeated_ids(tmp_path: Path, rows: list) -> None:
    path = write_set(tmp_path / "s.json", rows)
    before = snapshot(tmp_path)
    with pytest.raises(EditRefused):
        remove_rows(path, ["a"])
    assert snapshot(tmp_path) == before
    with pytest.raises(UsageError):
        remove_rows(path, [])


# --- rename ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_rename_changes_id_and_case_id_together(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    outcome = rename_row(path, "b", "b2")
    assert outcome.case_id_was is None
    rows = rows_of(path)
    assert list(rows) == ["a", "b2", "c", "d", "e"]
    assert rows["b2"]["metadata"]["case"]["caseId"] == "b2"
    assert validate_file(path).valid


def test_rename_mends_a_case_id_that_differed(tmp_path: Path) -> None:
    stray = row("a")
    stray["metadata"]["case"]["caseId"] = "old-a"
    path = write_set(tmp_path / "s.jsonl", [stray])
    assert "case-id-mismatch" in codes(path)
    outcome = rename_row(path, "a", "a1")
    assert outcome.case_id_was == "old-a"
    assert "case-id-mismatch" not in codes(path)


@pytest.mark.parametrize(("old", "new"), [("b", "a"), ("zz", "y"), ("a", "a"), ("a", "")])
def test_rename_refusals(tmp_path: Path, old: str, new: str) -> None:
    path = curation_set(tmp_path, ".json")
    before = snapshot(tmp_path)
    with pytest.raises(EditRefused):
        rename_row(path, old, new)
    assert snapshot(tmp_path) == before


# --- family ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_family_add_defines_an_empty_family(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    definition = FamilyDefinition(
        "escalation",
        "expected-behavior-only",
        "human-expert",
        "blocker",
        "Escalation",
        "When to hand off",
        ("missed-escalation",),
    )
    outcome = add_family(path, definition)
    assert outcome.rows == [] and outcome.conditions == ()
    written = (header_of(path) or {})["caseFamilies"][-1]
    assert written == {
        "id": "escalation",
        "title": "Escalation",
        "description": "When to hand off",
        "oracleType": "expected-behavior-only",
        "evaluator": "human-expert",
        "severity": "blocker",
        "linkedConcerns": ["missed-escalation"],
    }
    assert list(written) == list(definition.to_json())


def test_family_add_gives_an_llm_judge_its_conditions(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    outcome = add_family(path, FamilyDefinition("judged", "rubric", "llm-judge"))
    assert len(outcome.conditions) == 2


@pytest.mark.parametrize(
    ("definition", "error"),
    [
        (FamilyDefinition("lookup", "rubric"), EditRefused),  # exists
        (FamilyDefinition("Not Kebab", "rubric"), EditRefused),
        (FamilyDefinition("x", "rubric", "exact-or-programmatic"), EditRefused),  # barred
        (FamilyDefinition("x", "reference-answer", "pairwise-preference"), EditRefused),
        (FamilyDefinition("x", "golden"), UsageError),
        (FamilyDefinition("x", "rubric", severity="huge"), UsageError),
    ],
)
def test_family_add_refusals(
    tmp_path: Path, definition: FamilyDefinition, error: type[Exception]
) -> None:
    path = curation_set(tmp_path, ".csv")
    before = snapshot(tmp_path)
    with pytest.raises(error):
        add_family(path, definition)
    assert snapshot(tmp_path) == before


def test_the_first_family_makes_rows_naming_others_unknown_and_says_so(tmp_path: Path) -> None:
    path = write_set(
        tmp_path / "s.json",
        [row("a", caseFamily="lookup")],
        {"schemaVersion": "blueprint.eval-set/v1", "name": "s"},
    )
    outcome = add_family(path, FamilyDefinition("other", "rubric"))
    assert outcome.undefined == ["lookup"]
    assert "unknown-case-family" in codes(path)


def test_family_edit_changes_fields_and_keeps_their_order(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".jsonl")
    edit = FamilyEdit(
        "lookup",
        description="Answers quoted from the policy",
        linked_concerns=("policy-drift",),
        unset=frozenset({"title", "severity"}),
    )
    outcome = edit_family(path, edit)
    assert outcome.previous is not None and outcome.previous["title"] == "Lookup"
    family = (header_of(path) or {})["caseFamilies"][0]
    assert family == {
        "id": "lookup",
        "description": "Answers quoted from the policy",
        "oracleType": "reference-answer",
        "evaluator": "exact-or-programmatic",
        "linkedConcerns": ["policy-drift"],
    }
    assert list(family) == ["id", "description", "oracleType", "evaluator", "linkedConcerns"]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_family_edit_narrows_the_family_and_its_rows_together(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    outcome = edit_family(path, FamilyEdit("lookup", oracle_type="acceptable-set"))
    assert outcome.oracle is not None
    assert sorted(outcome.oracle.rows_changed) == ["a", "b"]
    rows = rows_of(path)
    assert rows["a"]["expected"] == {"acceptable": ["yes"]}
    assert {rows[i]["metadata"]["case"]["oracleType"] for i in "ab"} == {"acceptable-set"}
    assert "evaluator" not in rows["b"]["metadata"]["case"]  # b still inherits it
    assert (header_of(path) or {})["caseFamilies"][0]["oracleType"] == "acceptable-set"
    assert not {"case-family-mismatch", "expected-shape"} & codes(path)
    # an evaluator the oracle type bars is cleared from the family and its rows, with why
    outcome = edit_family(path, FamilyEdit("lookup", oracle_type="rubric", drop_expected=True))
    assert outcome.oracle is not None and outcome.oracle.cleared is not None
    assert "evaluator" not in (header_of(path) or {})["caseFamilies"][0]
    assert validate_file(path).valid


def test_family_edit_regrades_an_empty_family(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    edit_family(path, FamilyEdit("spare", oracle_type="rubric", evaluator="llm-judge"))
    spare = (header_of(path) or {})["caseFamilies"][2]
    assert spare == {"id": "spare", "oracleType": "rubric", "evaluator": "llm-judge"}


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (FamilyEdit("tone", evaluator="exact-or-programmatic"), EditRefused),  # barred
        (FamilyEdit("lookup", oracle_type="rubric"), EditRefused),  # expected would be lost
        (FamilyEdit("nowhere", title="x"), EditRefused),
        (FamilyEdit("lookup"), UsageError),  # nothing to change
        (FamilyEdit("lookup", title="x", unset=frozenset({"title"})), UsageError),
        (FamilyEdit("lookup", unset=frozenset({"oracleType"})), UsageError),
        (FamilyEdit("lookup", severity="huge"), UsageError),
    ],
)
def test_family_edit_refusals(tmp_path: Path, edit: FamilyEdit, error: type[Exception]) -> None:
    path = curation_set(tmp_path, ".csv")
    before = snapshot(tmp_path)
    with pytest.raises(error):
        edit_family(path, edit)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_family_rm_refuses_while_rows_belong_and_then_drops_or_detaches(
    tmp_path: Path, suffix: str
) -> None:
    path = curation_set(tmp_path, suffix)
    before = snapshot(tmp_path)
    with pytest.raises(EditRefused) as refused:
        remove_family(path, "lookup")
    assert "--rows" in str(refused.value)
    assert snapshot(tmp_path) == before

    outcome = remove_family(path, "lookup", "detach")
    assert outcome.rows == ["a", "b"] and outcome.took_evaluator == ["b"]
    rows = rows_of(path)
    assert all("caseFamily" not in rows[i]["metadata"]["case"] for i in "ab")
    assert rows["b"]["metadata"]["case"]["evaluator"] == "exact-or-programmatic"
    assert [f["id"] for f in (header_of(path) or {})["caseFamilies"]] == ["tone", "spare"]
    assert validate_file(path).valid

    outcome = remove_family(path, "tone", "drop")
    assert outcome.rows == ["c"]
    assert list(rows_of(path)) == ["a", "b", "d", "e"]
    remove_family(path, "spare")  # no rows: nothing to say about them
    assert (header_of(path) or {})["caseFamilies"] == []
    assert validate_file(path).valid


def test_family_commands_need_a_list_of_families(tmp_path: Path) -> None:
    path = write_set(tmp_path / "s.json", [row("a")], header(caseFamilies={"not": "a list"}))
    before = snapshot(tmp_path)
    with pytest.raises(EditRefused):
        add_family(path, FamilyDefinition("x", "rubric"))
    assert snapshot(tmp_path) == before


# --- accept ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_accept_clears_derived_values_and_keeps_the_origin(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    assert "derived-value" in codes(path)
    outcome = accept_derived(path, ["e"], ["oracleType"])
    assert outcome.accepted == {
        "e": {"metadata.case.oracleType": "inferred from the shape of expected"}
    }
    record = rows_of(path)["e"]["metadata"]["case"]["extensions"]["blueprint-import"]
    assert list(record["derived"]) == ["metadata.case.expectedBehavior"]
    outcome = accept_derived(path, None)
    assert list(outcome.accepted) == ["e"]
    record = rows_of(path)["e"]["metadata"]["case"]["extensions"]["blueprint-import"]
    assert record == {"format": "braintrust"}
    assert "derived-value" not in codes(path)


def test_accept_with_nothing_to_accept_writes_nothing(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    before = snapshot(tmp_path)
    outcome = accept_derived(path, ["a", "d"])
    assert outcome.nothing == ["a", "d"] and outcome.written is None
    outcome = accept_derived(path, ["e"], ["expected"])
    assert outcome.unmatched_fields == ["expected"]
    assert "metadata.case.oracleType" in outcome.derived_fields
    assert snapshot(tmp_path) == before
    with pytest.raises(EditRefused):
        accept_derived(path, ["zz"])
    with pytest.raises(UsageError):
        accept_derived(path, [])


def test_accept_matches_a_full_path_or_its_tail(tmp_path: Path) -> None:
    path = write_set(tmp_path / "s.json", [imported_row("e"), imported_row("f")])
    outcome = accept_derived(path, None, ["case.expectedBehavior"])
    assert {row: list(values) for row, values in outcome.accepted.items()} == {
        "e": ["metadata.case.expectedBehavior"],
        "f": ["metadata.case.expectedBehavior"],
    }
    outcome = accept_derived(path, ["f"], ["metadata.case.oracleType"])
    assert list(outcome.accepted) == ["f"]


# --- promote ---------------------------------------------------------------------------------


def test_utc_stamp() -> None:
    assert utc_stamp(WHEN) == "2025-03-01T08:30:00Z"
    assert utc_stamp(datetime(2025, 1, 2, 3, 4, 5, 999, tzinfo=UTC)) == "2025-01-02T03:04:05Z"
    with pytest.raises(UsageError):
        utc_stamp(datetime(2025, 1, 1))  # no time zone


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_promote_records_who_reviewed_and_when(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    assert "starter-example" in codes(path)
    request = PromoteRequest(("d",), "expert-authored", " A. Reviewer ", reviewed_at=WHEN)
    outcome = promote(path, request)
    assert outcome.promoted == {"d": "starter-example"}
    case = rows_of(path)["d"]["metadata"]["case"]
    assert case["provenance"] == "expert-authored"
    assert case["extensions"]["blueprint-review"] == {
        "reviewer": "A. Reviewer",
        "reviewedAt": "2025-03-01T08:30:00Z",
        "previousProvenance": "starter-example",
        "provenance": "expert-authored",
    }
    assert "starter-example" not in codes(path)
    assert validate_file(path).valid


def test_a_csv_promotion_that_adds_a_column_says_so_and_later_ones_touch_their_rows(
    tmp_path: Path,
) -> None:
    path = write_set(
        tmp_path / "plain.csv",
        [row(name, provenance="starter-example") for name in ("a", "b", "c")],
    )
    first = promote(path, PromoteRequest(("a",), "expert-authored", "R", reviewed_at=WHEN))
    assert first.written is not None
    added = [issue for issue in first.written.findings if issue.code == "csv-column-added"]
    assert len(added) == 1 and "case.extensions" in added[0].message
    before = path.read_text(encoding="utf-8").splitlines()
    second = promote(path, PromoteRequest(("b",), "expert-authored", "R", reviewed_at=WHEN))
    assert second.written is not None
    assert [issue.code for issue in second.written.findings] == []
    after = path.read_text(encoding="utf-8").splitlines()
    changed = [
        number for number, (old, new) in enumerate(zip(before, after, strict=True)) if old != new
    ]
    assert changed == [2]  # the header is line 0, then rows a, b, c


def test_promote_an_import_with_its_derived_values(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    before = snapshot(tmp_path)
    request = PromoteRequest(("e",), "observed-incident", "Ana", reviewed_at=WHEN)
    with pytest.raises(EditRefused) as refused:
        promote(path, request)
    assert "blueprint accept" in str(refused.value)
    assert snapshot(tmp_path) == before
    outcome = promote(
        path, PromoteRequest(("e",), "observed-incident", "Ana", True, reviewed_at=WHEN)
    )
    assert list(outcome.accepted["e"]) == [
        "metadata.case.oracleType",
        "metadata.case.expectedBehavior",
    ]
    extensions = rows_of(path)["e"]["metadata"]["case"]["extensions"]
    assert extensions["blueprint-import"] == {"format": "braintrust"}
    assert extensions["blueprint-review"]["acceptedDerived"] == outcome.accepted["e"]
    assert not {"derived-value"} & codes(path)


def test_an_earlier_review_is_kept(tmp_path: Path) -> None:
    data = row("a", provenance="starter-example")
    earlier = {"reviewer": "Bo", "reviewedAt": "2024-01-01T00:00:00Z"}
    data["metadata"]["case"]["extensions"] = {"blueprint-review": earlier}
    path = write_set(tmp_path / "s.json", [data])
    promote(path, PromoteRequest(("a",), "expert-authored", "Ana", reviewed_at=WHEN))
    review = rows_of(path)["a"]["metadata"]["case"]["extensions"]["blueprint-review"]
    assert review["reviewer"] == "Ana" and review["earlier"] == [earlier]


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        (PromoteRequest(("d",), "starter-example", "Ana"), EditRefused),
        (PromoteRequest(("d",), "overlay-starter-needs-expert-validation", "Ana"), EditRefused),
        (PromoteRequest(("d",), "imported", "Ana"), EditRefused),
        (PromoteRequest(("a",), "expert-authored", "Ana"), EditRefused),  # already gold
        (PromoteRequest(("d", "zz"), "expert-authored", "Ana"), EditRefused),
        (PromoteRequest(("d",), "expert-authored", "  "), UsageError),
        (PromoteRequest(("d",), "gold", "Ana"), UsageError),
        (PromoteRequest((), "expert-authored", "Ana"), UsageError),
    ],
)
def test_promote_refusals(tmp_path: Path, request_: PromoteRequest, error: type[Exception]) -> None:
    path = curation_set(tmp_path, ".jsonl")
    before = snapshot(tmp_path)
    with pytest.raises(error):
        promote(path, request_)
    assert snapshot(tmp_path) == before


# --- dry runs --------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_dry_run_reports_the_diff_and_writes_nothing(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    before = snapshot(tmp_path)
    outcome = remove_family(path, "lookup", "drop", EditOptions(dry_run=True))
    assert snapshot(tmp_path) == before
    written = outcome.written
    assert written is not None and written.dry_run and written.diff is not None
    assert written.diff.removed == ["a", "b"]
    # families are matched by id, so only the removed one shows
    assert [change.path for change in written.diff.header] == ["$.caseFamilies['lookup']"]
    assert written.rows == 3
