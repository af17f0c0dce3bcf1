"""The builder: sets scaffolded from packs, and in-place edits of oracle types and rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprint.authoring.builder import AddRequest, EditRefused, OracleRequest, add_row, set_oracle
from blueprint.authoring.packs import (
    PackError,
    build_set,
    load_overlay,
    load_pack,
    load_pack_file,
)
from blueprint.core.errors import UsageError
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.validation.validate import validate_file
from conftest import document, row, write_json

FAMILIES = [
    {"id": "lookup", "oracleType": "reference-answer", "evaluator": "exact-or-programmatic"},
    {"id": "tone", "oracleType": "rubric", "evaluator": "rubric-human"},
]


def small_set(tmp_path: Path, suffix: str = ".json") -> Path:
    rows = [
        row("a", caseFamily="lookup", evaluator="exact-or-programmatic"),
        row("b", caseFamily="lookup", evaluator="exact-or-programmatic"),
        row("c", "rubric", caseFamily="tone", evaluator="rubric-human", evaluationCriteria=["x"]),
        row("d"),
    ]
    doc = document(*rows, caseFamilies=FAMILIES)
    path = tmp_path / f"set{suffix}"
    header = {k: v for k, v in doc.items() if k != "rows"}
    REGISTRY[suffix.lstrip(".")].write(header, iter(doc["rows"]), path, WriteOptions())
    return path


def rows_of(path: Path) -> dict[str, dict]:
    codec = REGISTRY[path.suffix.lstrip(".")]
    return {item.data["id"]: item.data for item in codec.open(path).rows}


def test_build_set_fills_family_fields() -> None:
    pack = load_pack("customer-support")
    built = build_set(pack, name="my-set")
    assert built["name"] == "my-set" and built["taskFamily"] == "customer-support"
    assert all("rows" not in family for family in built["caseFamilies"])
    first = built["rows"][0]["metadata"]["case"]
    assert first["caseId"] == built["rows"][0]["id"]
    assert first["provenance"] == "starter-example"
    assert first["caseFamily"] == pack.case_families[0].id
    assert first["evaluator"] == pack.case_families[0].evaluator
    assert list(first)[:4] == ["caseId", "oracleType", "expectedBehavior", "provenance"]


def test_overlay_rows_are_marked_for_expert_validation() -> None:
    built = build_set(load_pack("customer-support"), [load_overlay("finance")])
    overlay_rows = [r for r in built["rows"] if r["id"].startswith("fin-")]
    assert overlay_rows
    for data in overlay_rows:
        case = data["metadata"]["case"]
        assert case["provenance"] == "overlay-starter-needs-expert-validation"
        assert case["reviewerExpertise"]


def test_unknown_pack_lists_the_known_ones() -> None:
    with pytest.raises(UsageError) as caught:
        load_pack("no-such-pack")
    assert "customer-support" in str(caught.value)


def test_pack_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(
        "schemaVersion: blueprint.pack/v1\nid: broken\ntitle: t\ndescription: d\n"
        "case-families:\n  - id: fam\n    title: t\n    description: d\n"
        "    oracleType: golden\n    evaluator: human-expert\n    severity: major\n    rows: []\n",
        encoding="utf-8",
    )
    with pytest.raises(PackError) as caught:
        load_pack_file(path)
    assert "broken.yaml:9:" in str(caught.value)
    path.write_text("id: [unclosed\n", encoding="utf-8")
    with pytest.raises(PackError) as caught:
        load_pack_file(path)
    assert "broken.yaml:2:" in str(caught.value) or "broken.yaml:1:" in str(caught.value)


def test_pack_file_name_must_match_its_id(tmp_path: Path) -> None:
    source = load_pack("customer-support")
    path = tmp_path / "renamed.yaml"
    path.write_bytes(
        (Path(__file__).parent.parent / "packs" / "customer-support.yaml").read_bytes()
    )
    with pytest.raises(PackError):
        load_pack_file(path)
    assert source.id == "customer-support"


# --- oracle ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".csv", ".jsonl"])
def test_barred_evaluator_is_refused_and_the_file_untouched(tmp_path: Path, suffix: str) -> None:
    path = small_set(tmp_path, suffix)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(EditRefused) as caught:
        set_oracle(path, OracleRequest("d", "rubric", "exact-or-programmatic", drop_expected=True))
    assert "string comparison cannot read a criterion" in str(caught.value)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_family_row_cannot_change_alone(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    before = path.read_bytes()
    with pytest.raises(EditRefused):
        set_oracle(path, OracleRequest("a", "acceptable-set"))
    assert path.read_bytes() == before


def test_leave_family(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    outcome = set_oracle(path, OracleRequest("a", "acceptable-set", scope="leave-family"))
    assert outcome.left_family == "lookup"
    changed = rows_of(path)["a"]
    assert "caseFamily" not in changed["metadata"]["case"]
    assert changed["expected"] == {"acceptable": ["yes"]}
    assert validate_file(path).valid


def test_whole_family_changes_together(tmp_path: Path) -> None:
    path = small_set(tmp_path, ".csv")
    outcome = set_oracle(path, OracleRequest("a", "acceptable-set", scope="family"))
    assert outcome.rows_changed == ["a", "b"]
    rows = rows_of(path)
    assert {rows[i]["metadata"]["case"]["oracleType"] for i in "ab"} == {"acceptable-set"}
    header = REGISTRY["csv"].open(path).header
    assert header["caseFamilies"][0]["oracleType"] == "acceptable-set"
    assert validate_file(path).valid


def test_barred_current_evaluator_is_cleared_with_its_reason(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    outcome = set_oracle(path, OracleRequest("d", "expected-behavior-only", drop_expected=True))
    assert outcome.cleared is None  # d names no evaluator
    outcome = set_oracle(path, OracleRequest("d", "reference-answer", "exact-or-programmatic"))
    outcome = set_oracle(path, OracleRequest("d", "rubric", drop_expected=True))
    assert outcome.cleared is not None
    assert outcome.cleared[0] == "exact-or-programmatic"
    assert "criterion" in outcome.cleared[1]
    assert "evaluator" not in rows_of(path)["d"]["metadata"]["case"]
    assert outcome.admissible == ("rubric-human", "llm-judge", "human-expert")


def test_llm_judge_comes_with_its_conditions(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    outcome = set_oracle(path, OracleRequest("d", "reference-answer", "llm-judge"))
    assert len(outcome.conditions) == 2


def test_expected_is_never_dropped_silently(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    before = path.read_bytes()
    with pytest.raises(EditRefused):
        set_oracle(path, OracleRequest("d", "expected-behavior-only"))
    assert path.read_bytes() == before
    outcome = set_oracle(path, OracleRequest("d", "expected-behavior-only", drop_expected=True))
    assert "removed expected" in outcome.expected_notes["d"]
    assert "expected" not in rows_of(path)["d"]


def test_unwrap_single_acceptable_member(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    set_oracle(path, OracleRequest("d", "acceptable-set"))
    set_oracle(path, OracleRequest("d", "reference-answer"))
    assert rows_of(path)["d"]["expected"] == "yes"


def test_shape_hint_when_expected_no_longer_fits(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    outcome = set_oracle(path, OracleRequest("d", "expected-tool-calls"))
    assert "calls" in outcome.expected_notes["d"]


def test_missing_and_duplicate_rows(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    with pytest.raises(EditRefused):
        set_oracle(path, OracleRequest("zz", "rubric"))
    dup = write_json(tmp_path / "dup.json", document(row("a"), row("a")))
    with pytest.raises(EditRefused):
        set_oracle(dup, OracleRequest("a", "acceptable-set"))


# --- add -------------------------------------------------------------------------------------


def test_add_inherits_the_family_and_lands_after_it(tmp_path: Path) -> None:
    path = small_set(tmp_path, ".jsonl")
    outcome = add_row(
        path,
        AddRequest("lookup", "e", "what is 2+2?", "answers with the sum", "expert-authored", "4"),
    )
    assert outcome.position == 2
    rows = list(rows_of(path))
    assert rows == ["a", "b", "e", "c", "d"]
    case = rows_of(path)["e"]["metadata"]["case"]
    assert case["oracleType"] == "reference-answer"
    assert case["evaluator"] == "exact-or-programmatic"
    assert case["caseFamily"] == "lookup" and case["provenance"] == "expert-authored"
    assert validate_file(path).valid


@pytest.mark.parametrize(
    "request_",
    [
        AddRequest("lookup", "a", "dup id", "b", "expert-authored", "x"),
        AddRequest("nowhere", "e", "q", "b", "expert-authored", "x"),
        AddRequest("lookup", "e", "q", "b", "expert-authored"),  # reference-answer needs expected
        AddRequest("tone", "e", "q", "b", "expert-authored", "verbatim"),  # rubric has none
        AddRequest("lookup", "e", "q", "b", "gold"),  # not a provenance
    ],
)
def test_add_refusals_leave_the_file_untouched(tmp_path: Path, request_: AddRequest) -> None:
    path = small_set(tmp_path)
    before = path.read_bytes()
    with pytest.raises(EditRefused):
        add_row(path, request_)
    assert path.read_bytes() == before


def test_family_rows_without_unique_ids_are_refused(tmp_path: Path) -> None:
    rows = [
        row("a", caseFamily="lookup", evaluator="exact-or-programmatic"),
        row("d", caseFamily="lookup", evaluator="exact-or-programmatic", expected="two"),
        row("d", caseFamily="lookup", evaluator="exact-or-programmatic", expected="three"),
    ]
    path = write_json(tmp_path / "dup.json", document(*rows, caseFamilies=FAMILIES))
    before = path.read_bytes()
    with pytest.raises(EditRefused):
        set_oracle(path, OracleRequest("a", "acceptable-set", scope="family"))
    rows[2]["id"] = 7
    path = write_json(tmp_path / "int.json", document(*rows, caseFamilies=FAMILIES))
    with pytest.raises(EditRefused):
        set_oracle(path, OracleRequest("a", "acceptable-set", scope="family"))
    assert (tmp_path / "dup.json").read_bytes() == before


def test_family_change_lists_rows_whose_evaluator_changes(tmp_path: Path) -> None:
    rows = [
        row("a", caseFamily="lookup", evaluator="exact-or-programmatic"),
        row("b", caseFamily="lookup", evaluator="human-expert", reviewerExpertise="x"),
    ]
    path = write_json(tmp_path / "s.json", document(*rows, caseFamilies=FAMILIES))
    outcome = set_oracle(path, OracleRequest("a", "acceptable-set", scope="family"))
    assert outcome.evaluator_changes == {"b": ("human-expert", "exact-or-programmatic")}


def test_reference_answer_from_a_set_says_to_check_expected(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    set_oracle(path, OracleRequest("d", "acceptable-set"))
    rows = rows_of(path)
    rows["d"]["expected"] = {"acceptable": ["x", "y"]}
    write_json(path, document(*rows.values(), caseFamilies=FAMILIES))
    outcome = set_oracle(path, OracleRequest("d", "reference-answer"))
    assert "check" in outcome.expected_notes["d"]


def test_add_refuses_rows_that_could_not_be_read_back(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    before = path.read_bytes()
    deep: object = 1
    for _ in range(200):
        deep = [deep]
    with pytest.raises(EditRefused):
        add_row(path, AddRequest("lookup", "e", deep, "b", "expert-authored", "x"))
    with pytest.raises(EditRefused):
        add_row(path, AddRequest("lookup", "e", "q", "   ", "expert-authored", "x"))
    assert path.read_bytes() == before


def test_edits_through_a_symlink_change_the_target(tmp_path: Path) -> None:
    path = small_set(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(path)
    set_oracle(link, OracleRequest("d", "acceptable-set"))
    assert link.is_symlink()
    assert rows_of(path)["d"]["expected"] == {"acceptable": ["yes"]}


def test_an_edit_keeps_the_csv_column_order(tmp_path: Path) -> None:
    path = small_set(tmp_path, ".csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    names = lines[0].split(",")
    # a spreadsheet user moved the provenance column to the front
    order = [names.index("case.provenance")] + [
        i for i in range(len(names)) if names[i] != "case.provenance"
    ]
    import csv
    import io

    records = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    shuffled = io.StringIO()
    csv.writer(shuffled, lineterminator="\r\n").writerows([[r[i] for i in order] for r in records])
    path.write_text(shuffled.getvalue(), encoding="utf-8")
    before = REGISTRY["csv"].open(path).columns
    assert before is not None and before[0] == "case.provenance"
    set_oracle(path, OracleRequest("d", "acceptable-set"))
    assert REGISTRY["csv"].open(path).columns == before
    add_row(
        path,
        AddRequest("lookup", "e", "q", "b", "expert-authored", "x", case={"actor": "customer"}),
    )
    after = REGISTRY["csv"].open(path).columns or ()
    assert [name for name in after if name != "case.actor"] == list(before)
    assert after.index("case.actor") == after.index("case.provenance") + 1  # its neighbour


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_an_edit_of_a_file_without_its_set_file_makes_none(tmp_path: Path, suffix: str) -> None:
    path = small_set(tmp_path, suffix)
    (tmp_path / f"set{suffix}.set.json").unlink()
    outcome = set_oracle(path, OracleRequest("d", "acceptable-set"))
    assert outcome.written is not None and outcome.written.created == ()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    assert rows_of(path)["d"]["expected"] == {"acceptable": ["yes"]}


# --- add outside any family, and with every field ----------------------------------------------


def test_add_outside_any_family_needs_an_oracle_type_and_lands_at_the_end(
    tmp_path: Path,
) -> None:
    path = small_set(tmp_path, ".jsonl")
    before = path.read_bytes()
    with pytest.raises(UsageError):
        add_row(path, AddRequest(None, "e", "q", "b", "expert-authored", "x"))
    assert path.read_bytes() == before
    outcome = add_row(
        path,
        AddRequest(
            None, "e", "q", "b", "expert-authored", oracle_type="rubric", evaluator="llm-judge"
        ),
    )
    assert outcome.position == 4 and list(rows_of(path)) == ["a", "b", "c", "d", "e"]
    case = rows_of(path)["e"]["metadata"]["case"]
    assert case["oracleType"] == "rubric" and case["evaluator"] == "llm-judge"
    assert "caseFamily" not in case
    assert any("judge" in warning for warning in outcome.warnings)  # its conditions


@pytest.mark.parametrize(
    "request_",
    [
        AddRequest(None, "e", "q", "b", "expert-authored", oracle_type="rubric",
                   evaluator="exact-or-programmatic"),  # barred
        AddRequest("lookup", "e", "q", "b", "expert-authored", "x", oracle_type="rubric"),
        AddRequest("lookup", "e", "q", "b", "expert-authored", "x", evaluator="human-expert"),
        AddRequest(None, "e", "q", "b", "expert-authored", "x", oracle_type="reference-answer",
                   case={"extensions": {"team": "not an object"}}),
    ],
)  # fmt: skip
def test_add_refuses_grading_that_does_not_fit(tmp_path: Path, request_: AddRequest) -> None:
    path = small_set(tmp_path)
    before = path.read_bytes()
    with pytest.raises(EditRefused):
        add_row(path, request_)
    assert path.read_bytes() == before


def test_add_to_a_family_without_an_evaluator_agrees_with_its_rows(tmp_path: Path) -> None:
    families = [{"id": "open", "oracleType": "reference-answer"}]
    rows = [row("a", caseFamily="open", evaluator="exact-or-programmatic")]
    path = write_json(tmp_path / "s.json", document(*rows, caseFamilies=families))
    with pytest.raises(EditRefused):
        add_row(
            path, AddRequest("open", "b", "q", "b", "expert-authored", "x", evaluator="llm-judge")
        )
    add_row(
        path,
        AddRequest(
            "open", "b", "q", "b", "expert-authored", "x", evaluator="exact-or-programmatic"
        ),
    )
    assert validate_file(path).valid


def test_add_dry_run_writes_nothing(tmp_path: Path) -> None:
    from blueprint.authoring.editing import EditOptions

    path = small_set(tmp_path, ".csv")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    outcome = add_row(
        path,
        AddRequest("lookup", "e", "q", "b", "expert-authored", "x"),
        EditOptions(dry_run=True),
    )
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert outcome.written is not None and outcome.written.diff is not None
    assert outcome.written.diff.added == ["e"]
