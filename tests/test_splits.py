"""Seeded, stratified splits that keep duplicates together, and seeded, stratified samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.authoring.builder import EditRefused
from blueprint.authoring.hygiene import DuplicateOptions
from blueprint.authoring.splits import (
    SampleOptions,
    SplitOptions,
    largest_remainder,
    parse_ratios,
    sample_set,
    split_set,
)
from blueprint.core.errors import OutputExistsError, UsageError
from blueprint.diff import diff_files
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.validation.inputtext import comparable_text
from conftest import document, row, write_json

FAMILIES = [
    {"id": "policy", "title": "Policy", "oracleType": "reference-answer", "severity": "major"},
    {"id": "tone", "title": "Tone", "oracleType": "rubric", "severity": "minor"},
    {"id": "unused", "title": "Unused", "oracleType": "rubric", "severity": "minor"},
]


def family_row(row_id: str, family: str | None, value: Any, split: str | None = None) -> dict:
    oracle = {"policy": "reference-answer", "tone": "rubric", None: "reference-answer"}[family]
    data = row(row_id, oracle)
    data["input"] = value
    if family is not None:
        data["metadata"]["case"]["caseFamily"] = family
    if split is not None:
        data["metadata"]["split"] = split
    return data


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    header = {"schemaVersion": "blueprint.eval-set/v1", "name": "s", "caseFamilies": FAMILIES}
    REGISTRY["jsonl"].write(header, iter(rows), path, WriteOptions(force=True))
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def splits_of(path: Path) -> dict[str, str]:
    return {r["id"]: r["metadata"]["split"] for r in read_jsonl(path)}


TRAIN_TEST = parse_ratios("train=0.8,test=0.2")


# --- the allocation rule -------------------------------------------------------------------------


@given(
    st.integers(0, 60),
    st.lists(st.floats(0.01, 1), min_size=1, max_size=5),
)
def test_largest_remainder_is_within_one_of_every_quota(total: int, weights: list[float]) -> None:
    counts = largest_remainder(total, weights, at_least_one=False)
    assert sum(counts) == total
    for count, weight in zip(counts, weights, strict=True):
        assert abs(count - total * weight / sum(weights)) < 1


@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=12),
    st.lists(st.floats(0.05, 1), min_size=2, max_size=4),
)
def test_carried_remainders_add_up_to_the_overall_quota(
    sizes: list[int], weights: list[float]
) -> None:
    # many strata too small to split still share the rows out in the ratios overall
    carried = [0.0] * len(weights)
    totals = [0] * len(weights)
    for size in sizes:
        counts = largest_remainder(size, weights, at_least_one=False, carried=carried)
        for part, weight in enumerate(weights):
            quota = size * weight / sum(weights)
            assert abs(counts[part] - quota) < 1
            carried[part] += quota - counts[part]
            totals[part] += counts[part]
    for total, weight in zip(totals, weights, strict=True):
        assert abs(total - sum(sizes) * weight / sum(weights)) < 1 + 1e-9


@given(st.integers(1, 40), st.lists(st.floats(0.01, 1), min_size=1, max_size=5))
def test_at_least_one_gives_every_part_a_row_when_there_are_enough(
    total: int, weights: list[float]
) -> None:
    counts = largest_remainder(total, weights, at_least_one=True)
    assert sum(counts) == total
    if total >= len(weights):
        assert min(counts) >= 1


def test_largest_remainder_examples() -> None:
    assert largest_remainder(10, [0.8, 0.2], at_least_one=True) == [8, 2]
    assert largest_remainder(3, [0.8, 0.2], at_least_one=False) == [2, 1]  # 2.4, 0.6
    assert largest_remainder(2, [0.9, 0.1], at_least_one=False) == [2, 0]
    assert largest_remainder(2, [0.9, 0.1], at_least_one=True) == [1, 1]
    assert largest_remainder(5, [0.5, 0.5], at_least_one=False) == [3, 2]  # ties: first listed


@pytest.mark.parametrize(
    "text",
    [
        "train=0.8",
        "train=0.8,train=0.2",
        "train=0.8,test=0.3",
        "train=x,test=1",
        "=0.5,b=0.5",
        "a=0,b=1",
        "a=0.5;b=0.5",
        "a b=0.5,c=0.5",
    ],
)
def test_bad_ratios(text: str) -> None:
    with pytest.raises(UsageError):
        parse_ratios(text)


def test_ratios() -> None:
    assert parse_ratios(" dev=0.5, test=0.5 ") == (("dev", 0.5), ("test", 0.5))
    assert parse_ratios("train=0.7,dev=0.1,test=0.2") == (
        ("train", 0.7),
        ("dev", 0.1),
        ("test", 0.2),
    )


# --- split: the property ----------------------------------------------------------------------

WORDS = ["refund", "kettle", "late", "broken", "order"]
strata = st.sampled_from([None, "policy", "tone"])
# short inputs (three words) are compared exactly only, and each names its stratum, so the
# duplicate groups of this property sit inside one stratum
set_rows = st.lists(
    st.tuples(strata, st.sampled_from(WORDS), st.sampled_from(WORDS)), min_size=1, max_size=40
)


def as_rows(drawn: list[tuple[str | None, str, str]]) -> list[dict[str, Any]]:
    return [
        family_row(f"r{n}", family, f"{family or 'none'} {first} {second}")
        for n, (family, first, second) in enumerate(drawn)
    ]


@given(set_rows, st.integers(0, 2**32), st.floats(0.1, 0.9))
def test_split_property(drawn: list[tuple[str | None, str, str]], seed: int, share: float) -> None:
    rows = as_rows(drawn)
    ratios = (("dev", share), ("test", 1 - share))
    with tempfile.TemporaryDirectory() as folder:
        source = write_jsonl(Path(folder) / "s.jsonl", rows)
        options = SplitOptions(ratios=ratios, seed=seed)
        first = split_set(source, options, output=Path(folder) / "a.jsonl")
        split_set(source, options, output=Path(folder) / "b.jsonl")
        assigned = splits_of(Path(folder) / "a.jsonl")
        # the same seed, the same result
        assert assigned == splits_of(Path(folder) / "b.jsonl")
    # every row gets exactly one split, one of those asked for
    assert sorted(assigned) == sorted(r["id"] for r in rows)
    assert set(assigned.values()) <= {"dev", "test"}
    # duplicates never straddle splits
    by_input: dict[str | None, set[str]] = defaultdict(set)
    for data in rows:
        by_input[comparable_text(data["input"])].add(assigned[data["id"]])
    assert all(len(splits) == 1 for splits in by_input.values())
    # each stratum is within one row of its target, give or take what a duplicate group of
    # several rows forces (units of size s move the count by at most s - 1)
    for stratum in first.strata:
        members = [
            data for data in rows if data["metadata"]["case"].get("caseFamily") == stratum.family
        ]
        sizes = Counter(comparable_text(data["input"]) for data in members)
        slack = max(sizes.values()) - 1
        for name, target in stratum.targets.items():
            assert abs(stratum.counts[name] - target) < 1 + slack
        if slack == 0 and stratum.rows >= 2:
            assert min(stratum.counts.values()) >= 1  # every split sees every stratum
    assert sum(first.totals.values()) == len(rows)


def test_split_does_not_depend_on_python_hash_randomisation(tmp_path: Path) -> None:
    rows = [family_row(f"r{n}", ["policy", "tone"][n % 2], f"question {n}") for n in range(30)]
    source = write_jsonl(tmp_path / "s.jsonl", rows)
    script = (
        "import sys; from blueprint.authoring.splits import SplitOptions, parse_ratios, split_set;"
        "split_set(sys.argv[1], SplitOptions(parse_ratios('train=0.7,test=0.3'), 11),"
        " output=sys.argv[2])"
    )
    results = []
    for hash_seed in ("1", "2"):
        target = tmp_path / f"out-{hash_seed}.jsonl"
        subprocess.run(
            [sys.executable, "-c", script, str(source), str(target)],
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        results.append(splits_of(target))
    assert results[0] == results[1]
    # 15 rows per stratum, quotas 10.5 and 4.5: the first stratum's tied remainder goes to
    # train, and what test fell short is carried to the second, whose remainder it takes
    assert Counter(results[0].values()) == {"train": 21, "test": 9}


def test_a_different_seed_gives_different_splits(tmp_path: Path) -> None:
    rows = [family_row(f"r{n}", "policy", f"question number {n} about refunds") for n in range(40)]
    source = write_jsonl(tmp_path / "s.jsonl", rows)
    one = split_set(source, SplitOptions(TRAIN_TEST, 1), output=tmp_path / "a.jsonl")
    split_set(source, SplitOptions(TRAIN_TEST, 2), output=tmp_path / "b.jsonl")
    assert splits_of(tmp_path / "a.jsonl") != splits_of(tmp_path / "b.jsonl")
    assert one.totals == {"train": 32, "test": 8}


def test_near_duplicates_are_kept_together(tmp_path: Path) -> None:
    base = "How many days do I have to return a kettle bought online from your shop?"
    near = "How many days do I have to return a kettle I bought online from your shop?"
    rows = [family_row("a", "policy", base), family_row("b", "policy", near)]
    rows += [family_row(f"r{n}", "policy", f"a different question, number {n}") for n in range(8)]
    source = write_jsonl(tmp_path / "s.jsonl", rows)
    for seed in range(10):
        result = split_set(
            source,
            SplitOptions(TRAIN_TEST, seed),
            output=tmp_path / "o.jsonl" if seed == 0 else tmp_path / f"o{seed}.jsonl",
        )
        assigned = splits_of(result.output)
        assert assigned["a"] == assigned["b"]
        assert (result.groups, result.grouped_rows, result.largest_group) == (1, 2, 2)
    exact_only = SplitOptions(TRAIN_TEST, 0, duplicates=DuplicateOptions(near=False))
    assert split_set(source, exact_only, output=tmp_path / "x.jsonl").groups == 0


def test_split_writes_the_set_as_it_was_plus_the_split(tmp_path: Path) -> None:
    rows = [family_row(f"r{n}", "tone", f"question {n}") for n in range(5)]
    source = write_json(tmp_path / "s.json", document(*rows, caseFamilies=FAMILIES))
    result = split_set(source, SplitOptions(TRAIN_TEST, 3), output=tmp_path / "out.csv")
    assert result.export.format == "csv"
    assert (tmp_path / "out.csv.set.json").is_file()
    split_set(tmp_path / "out.csv", SplitOptions(TRAIN_TEST, 3, reassign=True))  # in place
    written = json.loads(json.dumps(result.to_json()))
    assert written["splits"] == {"train": 4, "test": 1}
    assert written["strata"][0]["targets"] == {"train": 4.0, "test": 1.0}
    difference = diff_files(source, tmp_path / "out.csv")
    assert difference.added == difference.removed == []
    assert {path for change in difference.changed for path in change.paths} == {"$.metadata.split"}


# --- split: refusals ---------------------------------------------------------------------------


def test_split_refuses_to_replace_existing_splits(tmp_path: Path) -> None:
    rows = [family_row("a", "policy", "one question", "dev"), family_row("b", "policy", "two")]
    source = write_jsonl(tmp_path / "s.jsonl", rows)
    before = source.read_bytes()
    with pytest.raises(EditRefused, match="reassign"):
        split_set(source, SplitOptions(TRAIN_TEST, 1))
    assert source.read_bytes() == before
    result = split_set(source, SplitOptions(TRAIN_TEST, 1, reassign=True))
    assert result.replaced == 1 and result.output == source
    assert set(splits_of(source).values()) <= {"train", "test"}


def test_split_refuses_what_it_cannot_write_faithfully(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "s.jsonl", [family_row("a", "policy", "x")])
    existing = tmp_path / "out.jsonl"
    existing.write_text("keep", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        split_set(source, SplitOptions(TRAIN_TEST, 1), output=existing)
    assert existing.read_text(encoding="utf-8") == "keep"
    with pytest.raises(UsageError, match="canonical"):
        split_set(source, SplitOptions(TRAIN_TEST, 1), output=tmp_path / "out.yaml")
    with pytest.raises(OutputExistsError):
        split_set(source, SplitOptions(TRAIN_TEST, 1), output=source)
    promptfoo = tmp_path / "tests.yaml"
    promptfoo.write_text("- vars: {q: hello}\n  assert: [{type: equals, value: hi}]\n")
    before = promptfoo.read_bytes()
    with pytest.raises(EditRefused, match="not rewritten in place"):
        split_set(promptfoo, SplitOptions(TRAIN_TEST, 1))
    assert promptfoo.read_bytes() == before
    result = split_set(promptfoo, SplitOptions(TRAIN_TEST, 1), output=tmp_path / "p.json")
    assert result.export.rows == 1


def test_split_refuses_a_row_without_metadata(tmp_path: Path) -> None:
    bad = family_row("a", "policy", "x")
    bad["metadata"] = "not an object"
    source = write_jsonl(tmp_path / "s.jsonl", [bad])
    with pytest.raises(EditRefused, match="metadata"):
        split_set(source, SplitOptions(TRAIN_TEST, 1), output=tmp_path / "o.jsonl")
    assert not (tmp_path / "o.jsonl").exists()


# --- sample ------------------------------------------------------------------------------------


def test_sample_is_stratified_seeded_and_keeps_the_families_it_uses(tmp_path: Path) -> None:
    rows = [family_row(f"p{n}", "policy", f"policy question {n}") for n in range(16)]
    rows += [family_row(f"t{n}", "tone", f"tone question {n}") for n in range(3)]
    rows += [family_row("n0", None, "no family at all")]
    source = write_jsonl(tmp_path / "s.jsonl", rows)
    result = sample_set(source, tmp_path / "a.json", SampleOptions(size=5, seed=9))
    assert [(s.family, s.rows, s.sampled) for s in result.strata] == [
        (None, 1, 1),
        ("policy", 16, 3),
        ("tone", 3, 1),
    ]
    written = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    ids = [r["id"] for r in written["rows"]]
    assert len(ids) == 5 and ids == sorted(ids, key=[r["id"] for r in rows].index)
    assert [f["id"] for f in written["caseFamilies"]] == ["policy", "tone"] == result.families
    again = sample_set(source, tmp_path / "b.json", SampleOptions(size=5, seed=9))
    assert again.to_json()["strata"] == result.to_json()["strata"]
    assert json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["rows"] == written["rows"]


def test_sample_refuses_sizes_it_cannot_draw_and_existing_outputs(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "s.jsonl", [family_row("a", "policy", "x")])
    for size in (0, 2):
        with pytest.raises(UsageError):
            sample_set(source, tmp_path / "o.json", SampleOptions(size=size, seed=1))
    (tmp_path / "o.json").write_text("keep", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        sample_set(source, tmp_path / "o.json", SampleOptions(size=1, seed=1))
    sample_set(source, tmp_path / "o.json", SampleOptions(size=1, seed=1, force=True))
    assert json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))["rows"][0]["id"] == "a"
