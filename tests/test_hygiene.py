"""Finding exact and near-duplicate inputs within and across sets, and writing a set without
its exact repeats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.authoring.builder import EditRefused
from blueprint.authoring.hygiene import (
    DuplicateIndex,
    DuplicateOptions,
    find_duplicates,
    remove_duplicates,
)
from blueprint.authoring.signatures import NUM_PERM, RECALL_AT_THRESHOLD, lsh_bands
from blueprint.core.errors import OutputExistsError, ParseError, UnknownFormatError, UsageError
from blueprint.formats import resolve_codec
from blueprint.validation.inputtext import comparable_text, jaccard, shingles
from conftest import document, row, write_json

KETTLE = "How many days do I have to return a kettle bought online from your shop?"
KETTLE_AGAIN = "how many days do i have to return a kettle bought online from your shop"
KETTLE_NEAR = "How many days do I have to return a kettle I bought online from your shop?"
BLENDER = "Can I get my money back for a blender that arrived broken last week?"


def case_row(row_id: str, value: Any, split: str | None = None) -> dict[str, Any]:
    data = row(row_id)
    data["input"] = value
    if split is not None:
        data["metadata"]["split"] = split
    return data


def write_set(path: Path, *rows: dict[str, Any]) -> Path:
    return write_json(path, document(*rows))


def similarity(first: str, second: str) -> float:
    def words(text: str) -> list[str]:
        normalised = comparable_text(text, near=True)
        return normalised.split() if normalised else []

    return jaccard(set(shingles(words(first))), shingles(words(second)))


def test_exact_duplicates_within_a_set(tmp_path: Path) -> None:
    path = write_set(
        tmp_path / "s.json",
        case_row("a", KETTLE),
        case_row("b", BLENDER),
        case_row("c", KETTLE_AGAIN),
        case_row("d", KETTLE.upper()),
    )
    report = find_duplicates([path], near=False)
    assert [[r.id for r in group.rows] for group in report.exact] == [["a", "c", "d"]]
    assert report.near == [] and report.threshold is None
    group = report.exact[0]
    assert not group.across_sets and not group.across_splits
    # a JSON reader works lines out only when asked; the report asks for the rows it names
    source = resolve_codec(path, None, reading=True).open(path)
    assert [r.line for r in group.rows] == [source.line_of(i) for i in (0, 2, 3)]
    assert all(r.line for r in group.rows)
    assert report.counts()["exactRows"] == 2
    assert report.found


def test_no_duplicates(tmp_path: Path) -> None:
    path = write_set(tmp_path / "s.json", case_row("a", KETTLE), case_row("b", BLENDER))
    report = find_duplicates([path])
    assert not report.found
    assert report.to_json()["duplicates"] is False
    assert report.sets[0].rows == 2 and report.sets[0].compared == 2


def test_near_duplicates_are_confirmed_by_their_jaccard(tmp_path: Path) -> None:
    path = write_set(
        tmp_path / "s.json",
        case_row("a", KETTLE),
        case_row("b", BLENDER),
        case_row("c", KETTLE_NEAR),
    )
    report = find_duplicates([path])
    assert report.exact == []
    [group] = report.near
    assert group.first.id == "a"
    [match] = group.matches
    assert match.row.id == "c"
    assert match.similarity == pytest.approx(similarity(KETTLE, KETTLE_NEAR))
    assert match.similarity >= 0.8
    # above the pair's similarity, the same two inputs are no longer near-duplicates
    assert find_duplicates([path], threshold=0.95).near == []


def test_short_inputs_are_compared_exactly_only(tmp_path: Path) -> None:
    path = write_set(
        tmp_path / "s.json",
        case_row("a", "refund order twelve"),
        case_row("b", "refund order thirteen"),
        case_row("c", "Refund order twelve!"),
    )
    report = find_duplicates([path], threshold=0.1)
    assert [[r.id for r in group.rows] for group in report.exact] == [["a", "c"]]
    assert report.near == []


def test_across_sets_and_splits(tmp_path: Path) -> None:
    dev = write_set(
        tmp_path / "dev.json", case_row("d1", KETTLE, "dev"), case_row("d2", BLENDER, "dev")
    )
    test = write_set(
        tmp_path / "test.json",
        case_row("t1", KETTLE_AGAIN, "test"),
        case_row("t2", BLENDER.replace("last week", "last week, twice"), "test"),
    )
    report = find_duplicates([dev, test])
    [exact] = report.exact
    assert [(r.set, r.id, r.split) for r in exact.rows] == [
        (str(dev), "d1", "dev"),
        (str(test), "t1", "test"),
    ]
    assert exact.across_sets and exact.across_splits and exact.splits == ["dev", "test"]
    [near] = report.near
    assert (near.first.id, near.matches[0].row.id) == ("d2", "t2")
    assert near.across_splits
    assert report.counts() == {
        "exactGroups": 1,
        "exactRows": 1,
        "nearGroups": 1,
        "nearRows": 1,
        "acrossSets": 2,
        "acrossSplits": 2,
    }
    assert [s.splits for s in report.sets] == [{"dev": 2}, {"test": 2}]


def test_issues_for_a_set_name_the_row_repeated(tmp_path: Path) -> None:
    dev = write_set(tmp_path / "dev.json", case_row("d1", KETTLE, "dev"))
    test = write_set(
        tmp_path / "test.json",
        case_row("t1", KETTLE_AGAIN, "test"),
        case_row("t2", KETTLE_NEAR, "test"),
        case_row("t3", BLENDER),
        case_row("t4", BLENDER),
    )
    report = find_duplicates([dev, test])
    assert report.issues_for(dev) == []
    found = report.issues_for(test)
    assert [(i.code, i.row_id, i.path, i.severity) for i in found] == [
        ("duplicate-input-across-splits", "t1", "$.rows[0].input", "error"),
        ("near-duplicate-input", "t2", "$.rows[1].input", "warning"),
        ("duplicate-input", "t4", "$.rows[3].input", "warning"),
    ]
    assert str(dev) in found[0].message


def test_report_json_shape(tmp_path: Path) -> None:
    path = write_set(tmp_path / "s.json", case_row("a", KETTLE), case_row("b", KETTLE_AGAIN))
    data = json.loads(json.dumps(find_duplicates([path]).to_json()))
    assert set(data) == {"duplicates", "threshold", "sets", "counts", "exact", "near"}
    second = data["exact"][0]["rows"][1]
    assert set(second) == {"set", "index", "id", "line", "split"}
    assert (second["set"], second["index"], second["id"], second["split"]) == (
        str(path),
        1,
        "b",
        None,
    )


def test_rows_without_input_are_not_compared(tmp_path: Path) -> None:
    empty = case_row("a", "")
    missing = case_row("b", "x")
    del missing["input"]
    path = write_set(tmp_path / "s.json", empty, missing, case_row("c", ""))
    report = find_duplicates([path])
    assert not report.found
    assert report.sets[0].compared == 0


def test_bad_input_is_refused_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "input": "x"}\n{not json\n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"broken\.jsonl"):
        find_duplicates([broken])
    good = write_set(tmp_path / "s.json", case_row("a", KETTLE))
    with pytest.raises(UsageError, match="given twice"):
        find_duplicates([good, tmp_path / "." / "s.json"])
    with pytest.raises(UsageError):
        DuplicateOptions(threshold=0)
    with pytest.raises(UsageError):
        DuplicateOptions(threshold=1.5)


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.7, 0.8, 0.9, 1.0])
def test_lsh_banding_proposes_pairs_at_the_threshold(threshold: float) -> None:
    bands, rows = lsh_bands(threshold)
    assert bands >= 2 and bands * rows <= NUM_PERM
    assert 1 - (1 - threshold**rows) ** bands >= RECALL_AT_THRESHOLD


words = st.sampled_from(["refund", "order", "kettle", "blender", "late", "broken", "my", "the"])
texts = st.lists(words, min_size=1, max_size=9).map(" ".join)


@given(st.lists(texts, min_size=1, max_size=25), st.sampled_from([0.5, 0.7, 0.8, 0.9]))
def test_no_false_positives_and_groups_are_stars(inputs: list[str], threshold: float) -> None:
    index = DuplicateIndex(DuplicateOptions(threshold=threshold))
    numbers = [index.add(text, index=position) for position, text in enumerate(inputs)]
    for number, first in index.exact_of.items():
        assert comparable_text(inputs[number]) == comparable_text(inputs[first]) and first < number
    for number, (first, found) in index.near_of.items():
        assert first < number and number not in index.exact_of
        assert found == pytest.approx(similarity(inputs[first], inputs[number]))
        assert found >= threshold
        assert first not in index.near_of  # a group's first row belongs to no other group
    for number in numbers:
        assert number is not None
        assert index.group_of(index.group_of(number)) == index.group_of(number)


def test_a_crowd_of_look_alikes_stays_linear() -> None:
    # one template filled with many values: the rows are similar to each other just below
    # the threshold, so each starts a group; the index stops growing where it is crowded
    index = DuplicateIndex()
    for number in range(400):
        index.add(
            f"please check the status of order {number} for customer {number * 7} in region"
            f" {number % 13} today",
            index=number,
        )
    assert len(index._leaders) + len(index.near_of) == 400


# --- writing a set without its repeats ---------------------------------------------------------


def test_remove_duplicates_writes_the_last_set_without_its_repeats(tmp_path: Path) -> None:
    dev = write_set(tmp_path / "dev.json", case_row("d1", KETTLE, "dev"))
    train = write_set(
        tmp_path / "train.json",
        case_row("t1", BLENDER),
        case_row("t2", KETTLE_AGAIN),
        case_row("t3", KETTLE_NEAR),
        case_row("t4", BLENDER + "!"),
    )
    result = remove_duplicates([dev, train], tmp_path / "clean.jsonl")
    assert [(row.id, first.id) for row, first in result.removed] == [("t2", "d1"), ("t4", "t1")]
    written = [
        json.loads(line)["id"]
        for line in (tmp_path / "clean.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert written == ["t1", "t3"]  # the near-duplicate t3 is reported, never removed
    assert result.report.near and result.export.rows == 2
    header = json.loads((tmp_path / "clean.jsonl.set.json").read_text(encoding="utf-8"))
    assert header["name"] == "test-set"


def test_remove_duplicates_never_overwrites_without_force(tmp_path: Path) -> None:
    path = write_set(tmp_path / "s.json", case_row("a", KETTLE), case_row("b", KETTLE_AGAIN))
    before = path.read_bytes()
    existing = tmp_path / "out.json"
    existing.write_text("keep me", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        remove_duplicates([path], existing)
    assert existing.read_text(encoding="utf-8") == "keep me"
    with pytest.raises(OutputExistsError):
        remove_duplicates([path], path)
    assert path.read_bytes() == before
    result = remove_duplicates([path], path, force=True)
    assert result.export.rows == 1
    assert [r["id"] for r in json.loads(path.read_text(encoding="utf-8"))["rows"]] == ["a"]


def test_remove_duplicates_writes_canonical_formats_only(tmp_path: Path) -> None:
    path = write_set(tmp_path / "s.json", case_row("a", KETTLE))
    with pytest.raises(UsageError, match="canonical"):
        remove_duplicates([path], tmp_path / "out.yaml")
    promptfoo = tmp_path / "tests.yaml"
    promptfoo.write_text(
        "- vars: {question: hello there my friend}\n  assert: [{type: equals, value: hi}]\n",
        encoding="utf-8",
    )
    before = promptfoo.read_bytes()
    with pytest.raises(UsageError, match="canonical"):
        remove_duplicates([promptfoo], promptfoo, force=True)
    as_json = promptfoo.with_suffix(".json")
    as_json.write_bytes(before)
    # YAML in a .json file is no promptfoo JSON: refused as read, before any writing
    with pytest.raises((UsageError, EditRefused, UnknownFormatError)):
        remove_duplicates([as_json], as_json, force=True, format="promptfoo")
    assert promptfoo.read_bytes() == before == as_json.read_bytes()
