"""diff in buckets: two sides matched by key a bucket at a time give what matching them whole
gives, in both sides' orders, and leave nothing behind."""

from __future__ import annotations

import errno
import json
import pickle
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint import diff as diff_module
from blueprint.core.errors import OutputError, ParseError
from blueprint.diff import (
    ABSENT,
    JoinedSets,
    LoadedSet,
    collect,
    diff_joined,
    index_for_diff,
    row_label,
    value_changes,
)
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.reports.review import review_joined
from conftest import left_behind, row, with_files

HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "n"}


def _keyed(rows: list[Any]) -> dict[tuple[str | None, int], Any]:
    """Rows by id and occurrence, as a comparison matches them (the test's own reckoning)."""
    seen: Counter[str | None] = Counter()
    keyed = {}
    for item in rows:
        found = item.get("id") if isinstance(item, dict) else None
        row_id = found if isinstance(found, str) else None
        seen[row_id] += 1
        keyed[row_id, seen[row_id]] = item
    return keyed


def _expected(left: list[Any], right: list[Any]) -> dict[str, Any]:
    """What a diff of two lists of rows holds, worked out whole in memory."""
    old, new = _keyed(left), _keyed(right)
    shared = [key for key in old if key in new]
    return {
        "removed": [row_label(key) for key in old if key not in new],
        "added": [row_label(key) for key in new if key not in old],
        "changed": [
            (row_label(key), [c.to_json() for c in value_changes(old[key], new[key])])
            for key in shared
            if value_changes(old[key], new[key])
        ],
        "orderChanged": shared != [key for key in new if key in old],
    }


def _found(left: Any, right: Any, buckets: int) -> tuple[dict[str, Any], dict[str, Any]]:
    with JoinedSets(left, right, buckets) as joined:
        found = diff_joined(joined)
        reviewed = review_joined(joined, found)
    shown = found.to_json()
    summary = {
        "removed": shown["removed"],
        "added": shown["added"],
        "changed": [(item["id"], item["changes"]) for item in shown["changed"]],
        "orderChanged": shown["orderChanged"],
    }
    whole = {**shown, "review": reviewed.to_json(), "added rows": reviewed.added}
    return summary, {**whole, "removed rows": reviewed.removed}


def _loaded(rows: list[Any], label: str) -> LoadedSet:
    return LoadedSet(label, dict(HEADER), _keyed(rows))


ids = st.sampled_from(["a", "b", "c", "d", "e", None, 7])
rows_of = st.lists(
    st.builds(
        lambda row_id, value, version, starter: {
            **({} if row_id is None else {"id": row_id}),
            "expected": value,
            "metadata": {
                "case": {
                    "version": version,
                    "provenance": "starter-example" if starter else "expert-authored",
                }
            },
        },
        ids,
        st.sampled_from([1, 2, "1", [1]]),
        st.sampled_from(["1", "2"]),
        st.booleans(),
    ),
    max_size=14,
)


@given(left=rows_of, right=rows_of, buckets=st.integers(1, 9))
@with_files(120)
def test_any_two_sides_in_any_buckets_diff_as_they_do_whole(
    left: list[Any], right: list[Any], buckets: int, private_temporary_folder: Path
) -> None:
    summary, whole = _found(_loaded(left, "L"), _loaded(right, "R"), buckets)
    assert summary == _expected(left, right)
    # the review reads the same pairs: one bucket (in memory) and several give it alike
    assert whole == _found(_loaded(left, "L"), _loaded(right, "R"), 1)[1]
    assert left_behind() == []


def _mixed_files(tmp_path: Path) -> tuple[Path, Path]:
    """Two JSONL sets with every kind of difference: added, removed, changed, repeated ids,
    rows without ids, a new order, grading, provenance and behaviour changes."""
    left_rows = [
        row("a"),
        row("b", scenario="old", version="1"),
        {"id": "r", "v": 1},
        {"id": "r", "v": 2},
        {"input": "no id"},
        row("c", provenance="starter-example"),
        row("d", expectedBehavior="old", version="3"),
        row("gone"),
    ]
    right_rows = [
        row("b", scenario="new", version="2"),
        row("d", expectedBehavior="new", version="3"),
        row("a", evaluator="llm-judge"),
        {"id": "r", "v": 1},
        {"id": "r", "v": 3},
        {"input": "no id, changed"},
        row("c"),
        row("new"),
    ]
    paths = tmp_path / "left.jsonl", tmp_path / "right.jsonl"
    for path, rows in zip(paths, (left_rows, right_rows), strict=True):
        REGISTRY["jsonl"].write(HEADER, iter(rows), path, WriteOptions())
    return paths


@pytest.mark.parametrize("buckets", [1, 2, 3, 16])
def test_files_in_buckets_diff_and_review_as_held_sets(
    tmp_path: Path, buckets: int, private_temporary_folder: Path
) -> None:
    left, right = _mixed_files(tmp_path)
    held = [collect(REGISTRY["jsonl"].open(path), str(path)) for path in (left, right)]
    _, expected = _found(*held, 1)
    _, found = _found(index_for_diff(left), index_for_diff(right), buckets)
    assert found == expected
    assert found["orderChanged"] and found["notCompared"]
    assert {item["id"] for item in found["changed"]} >= {"a", "b", "d", "r (occurrence 2)"}
    (finding,) = found["review"]["findings"]
    assert (finding["code"], finding["rowIndex"]) == ("unversioned-behavior-change", 1)
    assert left_behind() == []


def test_a_large_file_takes_buckets_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_temporary_folder: Path
) -> None:
    left, right = _mixed_files(tmp_path)
    monkeypatch.setattr(diff_module, "BUCKET_BYTES", 1000)
    with JoinedSets(index_for_diff(left), index_for_diff(right)) as joined:
        size = left.stat().st_size + right.stat().st_size
        assert joined.count == -(-size // 1000) > 1
        assert any(path.is_dir() for path in private_temporary_folder.iterdir())
    assert left_behind() == []
    # rows in memory have no size: one bucket, no files
    with JoinedSets(_loaded([row("a")], "L"), _loaded([], "R")) as joined:
        assert joined.count == 1
    assert not list(private_temporary_folder.iterdir())


def test_a_buckets_records_go_once_read_for_the_last_time(
    tmp_path: Path, private_temporary_folder: Path
) -> None:
    """The sides' index records and the rows read again are removed a bucket at a time as
    they are joined and compared: what stays on disk is what the reports still read."""
    left, right = _mixed_files(tmp_path)
    with JoinedSets(index_for_diff(left), index_for_diff(right), buckets=5) as joined:
        (folder,) = private_temporary_folder.iterdir()
        kinds = {path.name.rsplit("-", 1)[0] for path in folder.iterdir()}
        assert kinds <= {"pairs", "added", "changes", "changed"}
        assert {"pairs", "added", "changes", "changed"} <= kinds
        assert [pair.key for pair in joined.pairs()]  # what is left still reads
    assert left_behind() == []


class _Rereads:
    """A side whose second reading gives other rows: a file changed while compared."""

    def __init__(self, first: list[Any], then: list[Any]) -> None:
        self.label, self.header, self.notes, self.size = "changing.jsonl", None, [], 0
        self.readings = [first, then]

    def rows(self) -> Iterator[tuple[str | None, Any]]:
        rows = self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]
        return ((item.get("id"), item) for item in rows)


@pytest.mark.parametrize("buckets", [1, 4])
@pytest.mark.parametrize(
    "then",
    [
        [row("a"), row("b", scenario="edited again")],  # a differing row changed again
        [row("a")],  # the differing row is gone
        [row("b", scenario="new"), row("a")],  # the differing row moved
    ],
)
def test_a_side_that_changes_while_compared_is_refused(
    buckets: int, then: list[Any], private_temporary_folder: Path
) -> None:
    left = _loaded([row("a"), row("b")], "L")
    right = _Rereads([row("a"), row("b", scenario="new")], then)
    with pytest.raises(ParseError, match="changed while") as raised:
        JoinedSets(left, right, buckets)
    assert raised.value.path == Path("changing.jsonl")
    assert left_behind() == []


def test_no_room_for_the_buckets_is_an_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_temporary_folder: Path
) -> None:
    left, right = _mixed_files(tmp_path)

    def full(path: str, chunk: list[Any]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(diff_module, "append_chunk", full)
    with pytest.raises(OutputError, match="TMPDIR"):
        JoinedSets(index_for_diff(left), index_for_diff(right), 4)
    assert left_behind() == []


def test_the_absent_marker_is_itself_when_read_back() -> None:
    assert pickle.loads(pickle.dumps(ABSENT)) is ABSENT
    assert pickle.loads(pickle.dumps((1, ABSENT)))[1] is ABSENT


def _peak(left: Path, right: Path, buckets: int) -> int:
    tracemalloc.start()
    try:
        with JoinedSets(index_for_diff(left), index_for_diff(right), buckets) as joined:
            removed = sum(1 for pair in joined.pairs() if pair.place is None)
            added = sum(1 for _ in joined.added())
        return tracemalloc.get_traced_memory()[1] if removed == added == 0 else -1
    finally:
        tracemalloc.stop()


def test_memory_in_buckets_stays_the_same_however_many_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_temporary_folder: Path
) -> None:
    # what waits to be written, and what a merge of the buckets reads, is a few thousand
    # records in all, as many as a large set's hundreds of buckets take; here, fewer
    monkeypatch.setattr(diff_module, "records_a_chunk", lambda files, held=0: 4)
    monkeypatch.setattr(diff_module, "HELD_RECORDS", 64)
    monkeypatch.setattr(diff_module, "HELD_ROWS", 4)
    text = "a long input, the kind a real case has " * 25
    peaks = []
    # the first comparison imports deepdiff, which is not what is measured
    for turn, count in enumerate((1000, 1000, 4000)):
        paths = tmp_path / f"left-{turn}.jsonl", tmp_path / f"right-{turn}.jsonl"
        for side, path in enumerate(paths):
            rows = (
                row(f"row-{n}", scenario=f"{text} {n} {side if n % 100 == 0 else ''}")
                for n in range(count)
            )
            REGISTRY["jsonl"].write(HEADER, rows, path, WriteOptions())
        # a bucket for every 250 rows, as the size would give for rows of some 32 KiB
        peaks.append(_peak(*paths, count // 250))
    assert -1 not in peaks
    # four times the rows, four times the buckets: the same rows a bucket
    assert peaks[2] < peaks[1] * 1.5, peaks


def _large_change(tmp_path: Path) -> tuple[Path, Path]:
    """Two sets of 300 rows where most rows change, some go, some come and a few move."""
    left_rows = [row(f"r{n}", expectedBehavior=f"old {n}", version="1") for n in range(300)]
    right_rows = [
        row(f"r{n}", expectedBehavior=f"new {n}", version="1" if n % 3 else "2")
        for n in range(300)
        if n % 7
    ]
    right_rows[:10] = reversed(right_rows[:10])
    right_rows += [row(f"added {n}") for n in range(40)]
    paths = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    for path, rows in zip(paths, (left_rows, right_rows), strict=True):
        REGISTRY["jsonl"].write(HEADER, iter(rows), path, WriteOptions())
    return paths


def test_the_reports_of_a_large_change_in_buckets_are_those_held_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_temporary_folder: Path
) -> None:
    from typer.testing import CliRunner

    from blueprint.cli import app
    from blueprint.reports import review as review_module

    before, after = _large_change(tmp_path)

    def reports(name: str) -> tuple[str, str]:
        markdown = tmp_path / f"{name}.md"
        runner = CliRunner()
        shown = runner.invoke(app, ["diff", str(before), str(after), "--report", "json"])
        assert shown.exit_code == 1, shown.output
        written = runner.invoke(app, ["diff", str(before), str(after), "--markdown", str(markdown)])
        assert written.exit_code == 1, written.output
        return shown.stdout, markdown.read_text(encoding="utf-8")

    whole = reports("whole")
    # every list of the diff and the review past a chunk, and the sides in many buckets
    monkeypatch.setattr(diff_module, "LISTED_A_CHUNK", 8)
    monkeypatch.setattr(review_module, "LISTED_A_CHUNK", 8)
    monkeypatch.setattr(diff_module, "BUCKET_BYTES", 20_000)
    assert reports("buckets") == whole
    document = json.loads(whole[0])
    assert len(document["changed"]) == 300 - 43 and len(document["added"]) == 40
    assert len(document["removed"]) == 43 and document["orderChanged"]
    findings = document["review"]["findings"]
    assert [f["rowIndex"] for f in findings] == sorted(f["rowIndex"] for f in findings)
    assert len(findings) == len(document["review"]["unversioned"]) > 100
    assert left_behind() == []


def test_no_room_for_the_buckets_stops_the_command_with_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private_temporary_folder: Path
) -> None:
    from typer.testing import CliRunner

    from blueprint.cli import app

    before, after = _large_change(tmp_path)

    def full(path: str, chunk: list[Any]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(diff_module, "append_chunk", full)
    monkeypatch.setattr(diff_module, "BUCKET_BYTES", 20_000)
    done = CliRunner().invoke(app, ["diff", str(before), str(after)])
    assert done.exit_code == 2, done.output
    assert "TMPDIR" in done.stderr and "Traceback" not in done.output
    assert left_behind() == []
