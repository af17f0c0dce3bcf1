"""Merging two sets: rows and families joined, every conflict reported, nothing overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blueprint.authoring.editing import EditRefused
from blueprint.authoring.merge import MergeOptions, MergeRefused, merge_sets
from blueprint.core.errors import OutputExistsError, UsageError
from blueprint.validation.validate import validate_file
from conftest import row
from curation_sets import (
    FAMILIES,
    SUFFIXES,
    curation_rows,
    curation_set,
    header,
    header_of,
    rows_of,
    snapshot,
    write_set,
)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_rows_of_b_follow_a_and_identical_rows_are_written_once(
    tmp_path: Path, suffix: str
) -> None:
    a = curation_set(tmp_path, suffix, "a")
    extra = {"id": "extra", "oracleType": "rubric", "evaluator": "llm-judge"}
    b = write_set(
        tmp_path / f"b{suffix}",
        [
            curation_rows()[2],
            row("y", "rubric", caseFamily="extra", evaluationCriteria=["x"]),
            row("z"),
        ],
        header(name="b", description="from b", caseFamilies=[FAMILIES[1], extra]),
    )
    out = tmp_path / f"m{suffix}"
    outcome = merge_sets(a, b, out)
    assert list(rows_of(out)) == ["a", "b", "c", "d", "e", "y", "z"]
    assert outcome.identical == ["c"] and outcome.conflicts == []
    assert (outcome.from_a, outcome.from_b, outcome.rows) == (5, 2, 7)
    assert outcome.families_from_b == ["extra"]
    merged = header_of(out) or {}
    assert [f["id"] for f in merged["caseFamilies"]] == ["lookup", "tone", "spare", "extra"]
    assert merged["name"] == "curation"  # A's, and the difference is reported
    assert merged["description"] == "from b"  # only B had one
    choices = {(c.field, c.taken) for c in outcome.set_fields}
    assert choices == {("name", "a"), ("description", "b")}
    assert validate_file(out).valid


def test_conflicting_rows_are_refused_and_listed(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".json", "a")
    b = write_set(tmp_path / "b.json", [row("d", expected="no"), row("e"), row("z")])
    out = tmp_path / "m.json"
    before = snapshot(tmp_path)
    with pytest.raises(MergeRefused) as refused:
        merge_sets(a, b, out)
    assert snapshot(tmp_path) == before
    conflicts = {c.id: c.paths for c in refused.value.outcome.conflicts}
    assert set(conflicts) == {"d", "e"}
    assert "$.expected" in conflicts["d"]
    assert refused.value.exit_code == 1


@pytest.mark.parametrize(
    ("options", "ids", "d_expected"),
    [
        (MergeOptions(keep="a"), ["a", "b", "c", "d", "e", "z"], "yes"),
        (MergeOptions(keep="b"), ["a", "b", "c", "d", "e", "z"], "no"),
        (MergeOptions(suffix="-b"), ["a", "b", "c", "d", "e", "d-b", "z"], "yes"),
    ],
)
def test_conflicts_resolved_as_asked(
    tmp_path: Path, options: MergeOptions, ids: list[str], d_expected: str
) -> None:
    a = curation_set(tmp_path, ".jsonl", "a")
    b = write_set(tmp_path / "b.jsonl", [row("d", expected="no"), row("z")])
    out = tmp_path / "m.jsonl"
    outcome = merge_sets(a, b, out, options)
    rows = rows_of(out)
    assert list(rows) == ids
    assert rows["d"]["expected"] == d_expected
    assert list(outcome.resolved) == ["d"]
    if options.suffix:
        assert outcome.renamed == {"d": "d-b"}
        assert rows["d-b"]["metadata"]["case"]["caseId"] == "d-b"
        assert rows["d-b"]["expected"] == "no"


def test_a_suffix_that_collides_is_refused(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".json", "a")
    b = write_set(tmp_path / "b.json", [row("d", expected="no"), row("d-b")])
    with pytest.raises(EditRefused):
        merge_sets(a, b, tmp_path / "m.json", MergeOptions(suffix="-b"))
    assert not (tmp_path / "m.json").exists()


def test_a_family_defined_differently_is_never_resolved_silently(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".csv", "a")
    tone = {**FAMILIES[1], "evaluator": "llm-judge"}
    b = write_set(tmp_path / "b.csv", [row("z")], header(caseFamilies=[tone]))
    before = snapshot(tmp_path)
    for options in (MergeOptions(), MergeOptions(keep="a"), MergeOptions(suffix="-b")):
        with pytest.raises(MergeRefused) as refused:
            merge_sets(a, b, tmp_path / "m.csv", options)
        (conflict,) = refused.value.outcome.family_conflicts
        assert (conflict.id, conflict.fields) == ("tone", ("evaluator",))
    assert snapshot(tmp_path) == before


def test_ids_repeated_within_a_side_and_shared_are_refused(tmp_path: Path) -> None:
    a = write_set(tmp_path / "a.json", [row("x"), row("x", expected="other")])
    b = write_set(tmp_path / "b.json", [row("x")])
    with pytest.raises(EditRefused):
        merge_sets(a, b, tmp_path / "m.json")
    c = write_set(tmp_path / "c.json", [row("y")])
    outcome = merge_sets(a, c, tmp_path / "m.json")
    assert any("repeats" in note for note in outcome.notes)


def test_the_output_needs_force_and_a_canonical_format(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".json", "a")
    b = write_set(tmp_path / "b.json", [row("z")])
    out = tmp_path / "m.csv"
    merge_sets(a, b, out)
    before = snapshot(tmp_path)
    with pytest.raises(OutputExistsError):
        merge_sets(a, b, out)
    with pytest.raises(OutputExistsError):
        merge_sets(a, b, out, MergeOptions(dry_run=True))
    assert snapshot(tmp_path) == before
    merge_sets(a, b, out, MergeOptions(force=True))
    with pytest.raises(EditRefused):
        merge_sets(a, b, tmp_path / "tests.yaml")
    with pytest.raises(UsageError):
        merge_sets(a, b, tmp_path / "n.json", MergeOptions(keep="a", suffix="-b"))
    with pytest.raises(UsageError):
        merge_sets(a, b, tmp_path / "n.json", MergeOptions(name=" "))


def test_merging_into_a_itself_with_force(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".csv", "a")
    b = write_set(tmp_path / "b.csv", [row("z")])
    merge_sets(a, b, a, MergeOptions(force=True))
    assert list(rows_of(a)) == ["a", "b", "c", "d", "e", "z"]


def test_sets_without_set_level_fields(tmp_path: Path) -> None:
    a = write_set(tmp_path / "a.csv", [row("a")])
    (tmp_path / "a.csv.set.json").unlink()
    b = write_set(tmp_path / "b.jsonl", [row("b")])
    (tmp_path / "b.jsonl.set.json").unlink()
    # neither has any: a CSV output keeps it so, a JSON one is named after its file
    merge_sets(a, b, tmp_path / "m.csv")
    assert not (tmp_path / "m.csv.set.json").exists()
    outcome = merge_sets(a, b, tmp_path / "m.json")
    assert (header_of(tmp_path / "m.json") or {})["name"] == "m"
    assert any("named 'm'" in note for note in outcome.notes)
    # one has them: they are the merged set's
    c = write_set(tmp_path / "c.json", [row("c")], header(name="c"))
    outcome = merge_sets(a, c, tmp_path / "n.jsonl", MergeOptions(name="joined"))
    merged = header_of(tmp_path / "n.jsonl") or {}
    assert merged["name"] == "joined" and len(merged["caseFamilies"]) == 3


def test_a_csv_output_keeps_a_csv_inputs_column_order(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".csv", "a")
    b = write_set(tmp_path / "b.json", [row("z", actor="admin")])
    out = tmp_path / "m.csv"
    merge_sets(a, b, out)
    from blueprint.formats import REGISTRY

    columns = REGISTRY["csv"].open(out).columns or ()
    assert columns[:2] == ("metadata.source", "case.provenance")
    assert "case.actor" in columns


def test_a_dry_run_shows_the_merged_set_against_a(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".json", "a")
    b = write_set(tmp_path / "b.json", [row("z")])
    before = snapshot(tmp_path)
    outcome = merge_sets(a, b, tmp_path / "m.json", MergeOptions(dry_run=True))
    assert snapshot(tmp_path) == before
    assert outcome.export is None and outcome.diff is not None
    assert outcome.diff.added == ["z"] and outcome.rows == 6


def test_set_level_extensions_merge_by_namespace(tmp_path: Path) -> None:
    a = write_set(
        tmp_path / "a.json", [row("a")], header(extensions={"promptfoo": {"prompts": ["p"]}})
    )
    b = write_set(
        tmp_path / "b.json",
        [row("b")],
        header(extensions={"promptfoo": {"prompts": ["q"]}, "team": {"owner": "x"}}),
    )
    outcome = merge_sets(a, b, tmp_path / "m.json")
    merged = header_of(tmp_path / "m.json") or {}
    assert merged["extensions"] == {"promptfoo": {"prompts": ["p"]}, "team": {"owner": "x"}}
    assert {(c.field, c.taken) for c in outcome.set_fields} == {
        ("extensions.promptfoo", "a"),
        ("extensions.team", "b"),
    }


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(sides=st.lists(st.sampled_from(["a", "b", "both"]), min_size=1, max_size=8))
def test_merged_ids_are_a_then_what_only_b_has(tmp_path: Path, sides: list[str]) -> None:
    """However rows are spread over the two sets, the merge holds each id once: A's in
    A's order, then B's own in B's order."""
    ids = [f"r{i}" for i in range(len(sides))]
    in_a = [i for i, side in zip(ids, sides, strict=True) if side != "b"]
    in_b = [i for i, side in zip(ids, sides, strict=True) if side != "a"][::-1]
    a = write_set(tmp_path / "a.jsonl", [row(i) for i in in_a])
    b = write_set(tmp_path / "b.jsonl", [row(i) for i in in_b])
    out = tmp_path / "m.jsonl"
    outcome = merge_sets(a, b, out, MergeOptions(force=True))
    assert list(rows_of(out)) == in_a + [i for i in in_b if i not in in_a]
    assert sorted(outcome.identical) == sorted(set(in_a) & set(in_b))


def test_keep_settles_families_described_differently_but_graded_the_same(tmp_path: Path) -> None:
    a = curation_set(tmp_path, ".json", "a")
    lookup = {**FAMILIES[0], "title": "Look-ups", "severity": "blocker"}
    b = write_set(tmp_path / "b.json", [row("z")], header(caseFamilies=[lookup]))
    with pytest.raises(MergeRefused) as refused:
        merge_sets(a, b, tmp_path / "m.json")
    assert "--keep" in str(refused.value)
    (conflict,) = refused.value.outcome.family_conflicts
    assert conflict.fields == ("title", "severity") and not conflict.grading
    outcome = merge_sets(a, b, tmp_path / "m.json", MergeOptions(keep="b"))
    assert outcome.families_resolved == {"lookup": "kept b"}
    merged = (header_of(tmp_path / "m.json") or {})["caseFamilies"]
    assert merged[0] == lookup and len(merged) == 3
    outcome = merge_sets(a, b, tmp_path / "m.json", MergeOptions(keep="a", force=True))
    assert (header_of(tmp_path / "m.json") or {})["caseFamilies"][0] == FAMILIES[0]
