"""The per-set index: the answers a dict gives, in flat memory, with its runs on disk removed."""

from __future__ import annotations

import errno
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.core.errors import OutputError
from blueprint.validation import checks, rowindex
from blueprint.validation.rowindex import FirstSeen, RowLines
from blueprint.validation.validate import validate_document, validate_file
from conftest import document, row

#: keys from a few values (so that they repeat, often across runs) and from all 64 bits
_KEYS = st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1))


@pytest.fixture(autouse=True)
def _private_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "temporary"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _left_behind() -> list[str]:
    folder = Path(tempfile.gettempdir())
    return [entry.name for entry in folder.iterdir() if entry.name.startswith("blueprint-")]


@given(
    st.lists(st.tuples(st.booleans(), _KEYS, st.integers(0, 2**32 - 1)), max_size=400),
    st.sampled_from([2, 4, 8, 64]),
    st.booleans(),
)
def test_first_seen_answers_as_a_dict_does_past_its_budget(
    operations: list[tuple[bool, int, int]], max_slots: int, wide: bool
) -> None:
    table, reference = FirstSeen(slots=2, wide=wide, max_slots=max_slots), {}
    for storing, key, value in operations:
        if storing:
            assert table.setdefault(key, value) == reference.setdefault(key or 1, value)
        else:
            assert table.get(key) == reference.get(key or 1)
    assert len(table) == len(reference)
    for key, value in reference.items():
        assert table.get(key) == value
    table.close()
    assert _left_behind() == []


def test_wide_values_keep_all_64_bits_on_disk() -> None:
    table = FirstSeen(wide=True, max_slots=4)
    values = {key: (key << 40 | key) * (-1 if key % 2 else 1) for key in range(1, 200)}
    for key, value in values.items():
        assert table.setdefault(key, value) == value
    assert all(table.get(key) == value for key, value in values.items())
    assert table.get(200) is None


def test_runs_are_merged_and_keys_stay_exact() -> None:
    rng = random.Random(7)
    keys = [rng.getrandbits(64) for _ in range(20_000)]
    table = FirstSeen(max_slots=64)
    for index, key in enumerate(keys):
        assert table.setdefault(key, index) == index
    assert len(table) == len(keys)
    assert len(table._runs.runs) <= rowindex.MAX_RUNS  # type: ignore[union-attr]
    assert [table.setdefault(key, 0) for key in keys] == list(range(len(keys)))
    assert table.get(rng.getrandbits(64)) is None


def _peak_of_filling(count: int) -> int:
    rng = random.Random(count)
    tracemalloc.start()
    try:
        table = FirstSeen(max_slots=1024)
        for index in range(count):
            table.setdefault(rng.getrandbits(64), index)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_stays_flat_past_the_budget() -> None:
    _peak_of_filling(1_000)  # what the first run imports is not the table's
    small, large = _peak_of_filling(20_000), _peak_of_filling(60_000)
    # three times the keys: only the first key of each group of a run (8 bytes for 512) grows
    assert large - small < 16 * 1024


def test_runs_are_removed_when_the_table_is_collected() -> None:
    table = FirstSeen(max_slots=4)
    for key in range(100):
        table.setdefault(key, key)
    assert len(_left_behind()) == 1
    del table
    gc.collect()
    assert _left_behind() == []


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_a_forked_worker_leaves_its_parents_runs_alone() -> None:
    table = FirstSeen(max_slots=4)
    for key in range(1, 100):
        table.setdefault(key, key)
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        table.close()  # what exiting would do
        os._exit(0)
    os.waitpid(child, 0)
    assert len(_left_behind()) == 1
    assert [table.get(key) for key in range(1, 100)] == list(range(1, 100))
    assert table.setdefault(1000, 7) == 7
    table.close()
    assert _left_behind() == []


def test_a_small_table_never_touches_the_disk() -> None:
    table = FirstSeen()
    for key in range(100_000):
        table.setdefault(key, key)
    assert _left_behind() == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_what_a_killed_run_left_is_swept_by_the_next() -> None:
    left = Path(tempfile.gettempdir()) / f"blueprint-index-{_dead_pid()}.abcd1234"
    left.mkdir()
    (left / "run-x").write_bytes(b"\0" * 64)
    table = FirstSeen(max_slots=4)
    for key in range(10):
        table.setdefault(key, key)
    assert not left.exists()
    table.close()


def test_a_full_temporary_folder_is_an_output_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    table = FirstSeen(max_slots=4)
    with pytest.raises(OutputError) as raised:
        for key in range(10):
            table.setdefault(key, key)
    assert raised.value.exit_code == 2
    assert tempfile.gettempdir() in str(raised.value)
    del raised, table
    gc.collect()
    assert _left_behind() == []


@given(
    st.lists(st.integers(0, 50), max_size=200),
    st.integers(0, 3),
    st.sampled_from([2, 3, 7, rowindex.LINE_CHANGES_IN_MEMORY]),
)
def test_row_lines_answers_as_a_list_does(
    gaps: list[int], unknown_every: int, in_memory: int
) -> None:
    # a few changes in memory: the rest in chunks on disk, as a large JSON document's
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rowindex, "LINE_CHANGES_IN_MEMORY", in_memory)
        lines, reference, line = RowLines(), [], 0
        for position, gap in enumerate(gaps):
            line += 1 + gap
            value = 0 if unknown_every and position % (unknown_every + 1) == 0 else line
            lines.append(value)
            reference.append(value)
    assert len(lines) == len(reference)
    assert [lines[index] for index in range(len(reference))] == reference
    with pytest.raises(IndexError):
        lines[len(reference)]
    lines.close()


def test_row_lines_of_a_large_json_document_keep_little_in_memory() -> None:
    lines = RowLines()
    for index in range(3 * rowindex.LINE_CHANGES_IN_MEMORY):
        lines.append(2 + 30 * index)  # every row starts 30 lines after the one before
    assert len(lines._indices) < rowindex.LINE_CHANGES_IN_MEMORY
    assert lines[0] == 2
    assert lines[rowindex.LINE_CHANGES_IN_MEMORY + 5] == 2 + 30 * (
        rowindex.LINE_CHANGES_IN_MEMORY + 5
    )
    assert lines[len(lines) - 1] == 2 + 30 * (len(lines) - 1)
    lines.close()


# --- through the validator ----------------------------------------------------------------------


def _repeating_rows(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """Rows whose ids and inputs repeat, near and far, some of them in different splits."""
    rng = random.Random(seed)
    for _ in range(count):
        data = row(f"case-{rng.randrange(count // 2)}")
        data["input"] = rng.choice(
            [f"question {rng.randrange(count)}", f"Question  {rng.randrange(count)}!"]
        )
        split = rng.choice([None, None, "train", "dev", "test"])
        if split is not None:
            data["metadata"]["split"] = split
        yield data


@pytest.fixture
def tiny_budget(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Tables of four slots: a few rows and the index is on disk. Counts the runs written."""
    monkeypatch.setattr(rowindex, "TABLE_BYTES", 48)
    written: list[int] = []
    add = rowindex._Runs.add

    def counted(self: Any, entries: Any, count: int) -> None:
        written.append(count)
        add(self, entries, count)

    monkeypatch.setattr(rowindex._Runs, "add", counted)
    return written


def _duplicates(report: Any) -> list[tuple[Any, ...]]:
    return report.flatten(("code", "row_index", "path", "line", "message"))


def test_findings_are_the_same_with_the_index_on_disk(
    tmp_path: Path, tiny_budget: list[int]
) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(
        "".join(json.dumps(data) + "\n" for data in _repeating_rows(600, seed=3)),
        encoding="utf-8",
    )
    spilled = validate_file(path)
    assert len(tiny_budget) > 100
    with pytest.MonkeyPatch.context() as restore:
        restore.setattr(rowindex, "TABLE_BYTES", 12 * 2**20)
        written = len(tiny_budget)
        in_memory = validate_file(path)
        assert len(tiny_budget) == written
    codes = {issue.code for issue in in_memory.issues}
    assert {"duplicate-id", "duplicate-input", "duplicate-input-across-splits"} <= codes
    assert _duplicates(spilled) == _duplicates(in_memory)
    assert _left_behind() == []


def test_a_document_with_the_index_on_disk_reports_the_first_rows(tiny_budget: list[int]) -> None:
    doc = document(*(row(name) for name in "abcdefghij"), row("a"), row("j"))
    assert validate_document(doc).flatten(("code", "row_index", "path")) == [
        ("duplicate-id", 10, "$.rows[10].id"),
        ("duplicate-input", 10, "$.rows[10].input"),
        ("duplicate-id", 11, "$.rows[11].id"),
        ("duplicate-input", 11, "$.rows[11].input"),
    ]
    assert tiny_budget


def test_runs_are_removed_after_an_error_mid_stream(
    tmp_path: Path, tiny_budget: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen_on_disk: list[str] = []

    def failing(view: checks.RowView, state: checks.SetState) -> Iterator[Any]:
        if view.index == 300:
            seen_on_disk.extend(_left_behind())
            raise RuntimeError("a rule broke")
        return iter(())

    rules = (*checks.ROW_RULES, checks.RowRule(("duplicate-id",), failing))
    monkeypatch.setattr(checks, "ROW_RULES", rules)
    path = tmp_path / "set.jsonl"
    path.write_text(
        "".join(json.dumps(data) + "\n" for data in _repeating_rows(400, seed=5)),
        encoding="utf-8",
    )
    with pytest.raises(RuntimeError):
        validate_file(path)
    gc.collect()
    assert seen_on_disk
    assert _left_behind() == []


def test_row_ids_read_back_from_memory_and_from_the_scratch_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rowindex, "IDS_MEMORY_BYTES", 64)  # most ids reach the file
    ids = rowindex.RowIds()
    values = [None if n % 7 == 0 else f"case-{n}-é" * (n % 4) for n in range(500)]
    values[3] = "x" * 300  # a length of two bytes
    for value in values:
        ids.append(value)
    assert [ids[n] for n in range(len(values))] == values
    with pytest.raises(IndexError):
        ids[len(values)]
    ids.close()
