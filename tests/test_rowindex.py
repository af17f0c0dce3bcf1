"""The validator's per-set index: row lines and ids in flat memory, and the same findings with
its table of first uses on disk."""

from __future__ import annotations

import gc
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.io import firstseen
from blueprint.validation import checks, rowindex
from blueprint.validation.rowindex import RowLines
from blueprint.validation.validate import validate_document, validate_file
from conftest import document, left_behind, row

#: keys from a few values (so that they repeat, often across runs) and from all 64 bits
_KEYS = st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1))


pytestmark = pytest.mark.usefixtures("private_temporary_folder")


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
    monkeypatch.setattr(firstseen, "TABLE_BYTES", 48)
    written: list[int] = []
    add = firstseen._Runs.add

    def counted(self: Any, entries: Any, count: int) -> None:
        written.append(count)
        add(self, entries, count)

    monkeypatch.setattr(firstseen._Runs, "add", counted)
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
        restore.setattr(firstseen, "TABLE_BYTES", 12 * 2**20)
        written = len(tiny_budget)
        in_memory = validate_file(path)
        assert len(tiny_budget) == written
    codes = {issue.code for issue in in_memory.issues}
    assert {"duplicate-id", "duplicate-input", "duplicate-input-across-splits"} <= codes
    assert _duplicates(spilled) == _duplicates(in_memory)
    assert left_behind() == []


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
            seen_on_disk.extend(left_behind())
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
    assert left_behind() == []


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
