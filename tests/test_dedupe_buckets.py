"""Exact duplicates of sets in shards found in buckets by key (the engine's path) are the ones
one process finds: the same groups, rows, lines, splits and counts for any cut of the sets
into shards, spans and buckets, and the same refusal at the first row one process cannot
read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.authoring.buckets import exact_duplicates
from blueprint.authoring.hygiene import find_duplicates
from blueprint.cli import app
from blueprint.core.errors import BlueprintError
from blueprint.io import limits
from blueprint.validation import parallel
from blueprint.validation.engines import InlineEngine
from conftest import row, with_files
from test_parallel import awkward_lines, line
from test_shards import parquet_rows, write_parquet, write_shards

#: inputs that are one after normalising (case, spacing, punctuation), and others
INPUTS = ["Refund my order", "refund  my order!", "REFUND MY ORDER.", "Where is it?", "where is it"]


def outcome(call: Any) -> Any:
    try:
        return call().to_json()
    except BlueprintError as error:
        return type(error).__name__, str(error)


def both(paths: list[Path], *, span_bytes: int = 600, buckets: int = 3) -> tuple[Any, Any]:
    """One process's report with near-duplicates off, and the buckets'."""
    serial = outcome(lambda: find_duplicates(paths, near=False, format="shards"))
    engine = InlineEngine(span_bytes, buckets)
    return serial, outcome(lambda: exact_duplicates(engine, paths))


def logs_lines(count: int, offset: int = 0) -> list[str]:
    lines = []
    for n in range(offset, offset + count):
        made = row(f"r{n}")
        made["input"] = INPUTS[n % len(INPUTS)] if n % 3 == 0 else f"question {n}"
        if n % 7 == 0:
            made["metadata"]["split"] = "test" if n % 2 else "train"
        lines.append(line(made))
    return lines


@pytest.mark.parametrize("span_bytes", [1, 500, 10**7])
@pytest.mark.parametrize("buckets", [1, 4, 50])
def test_exact_duplicates_in_buckets_are_one_process_ones(
    tmp_path: Path, span_bytes: int, buckets: int
) -> None:
    first = write_shards(tmp_path / "golden", logs_lines(30), [4, 11, 12])
    second = write_shards(tmp_path / "logs", logs_lines(45, offset=20), [17])
    serial, bucketed = both([first, second], span_bytes=span_bytes, buckets=buckets)
    assert bucketed == serial
    assert serial["counts"]["exactGroups"] >= 2 and serial["counts"]["acrossSets"]
    assert serial["counts"]["acrossSplits"]
    assert any(ref["line"] > 1 for group in serial["exact"] for ref in group["rows"])


def test_parquet_shards_and_blank_lines(tmp_path: Path) -> None:
    lines = logs_lines(12)
    lines[3] = "\n  \n"  # blank lines: rows and lines part ways
    folder = write_shards(tmp_path / "logs", lines, [6])
    rows = parquet_rows()
    for parquet in rows:
        parquet["input"] = INPUTS[0]
    write_parquet(folder / "part-99999.parquet", rows, group_rows=2)
    serial, bucketed = both([folder], span_bytes=1)
    assert bucketed == serial
    files = {ref.get("file", "")[-8:] for group in serial["exact"] for ref in group["rows"]}
    assert ".parquet" in files


def test_the_first_unreadable_row_is_refused_as_one_process_refuses_it(tmp_path: Path) -> None:
    lines = awkward_lines()  # a line that is not JSON at 15, a repeated key at 18
    good = write_shards(tmp_path / "good", logs_lines(10), [3])
    broken = write_shards(tmp_path / "broken", lines, [10, 16])
    for paths in ([broken], [good, broken], [broken, good]):
        serial, bucketed = both(paths, span_bytes=200)
        assert serial[0] == "ParseError", serial
        assert bucketed == serial


def test_a_set_that_does_not_open_is_refused_after_the_sets_before_it(tmp_path: Path) -> None:
    broken = write_shards(tmp_path / "broken", awkward_lines(), [10])
    missing = tmp_path / "missing"
    good = write_shards(tmp_path / "good", logs_lines(10), [3])
    for paths in ([good, missing], [broken, missing], [missing, broken]):
        serial, bucketed = both(paths)
        assert serial[0] in ("ParseError", "UsageError"), serial
        assert bucketed == serial


@pytest.mark.parametrize("limit", [1, 9, 10, 14, 40])
def test_the_row_limit_is_where_one_process_stops(tmp_path: Path, limit: int) -> None:
    lines = logs_lines(20)
    lines[12] = '{"broken": \n'
    folder = write_shards(tmp_path / "logs", lines, [5, 11])
    with limits.overridden(max_rows=limit):
        serial, bucketed = both([folder], span_bytes=100)
    assert bucketed == serial
    if limit < 13:
        assert "rows, the limit" in serial[1]


@with_files(60)
@given(
    sets=st.lists(
        st.tuples(
            st.lists(
                st.tuples(
                    st.sampled_from([*INPUTS, None, 5, ["a", "b"]]),
                    st.sampled_from([None, "train", "test"]),
                ),
                max_size=25,
            ),
            st.lists(st.integers(0, 25), max_size=3, unique=True),
        ),
        min_size=1,
        max_size=3,
    ),
    span_bytes=st.sampled_from([1, 300, 5000]),
    buckets=st.integers(1, 6),
)
def test_any_sets_give_the_groups_one_process_gives(
    tmp_path_factory: pytest.TempPathFactory,
    sets: list[tuple[list[tuple[Any, str | None]], list[int]]],
    span_bytes: int,
    buckets: int,
) -> None:
    folder = tmp_path_factory.mktemp("dedupe")
    paths = []
    for number, (rows, cuts) in enumerate(sets):
        lines = []
        for index, (value, split) in enumerate(rows):
            made: dict[str, Any] = {"id": f"s{number}r{index}"}
            if value is not None:
                made["input"] = value
            if split is not None:
                made["metadata"] = {"split": split}
            lines.append(json.dumps(made) + "\n")
        paths.append(
            write_shards(folder / f"set{number}", lines, [c for c in cuts if c <= len(lines)])
        )
    serial, bucketed = both(paths, span_bytes=span_bytes, buckets=buckets)
    assert bucketed == serial


def test_exact_duplicates_on_worker_processes_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parallel, "SPAN_BYTES", 500)  # spans of a few rows
    golden = write_shards(tmp_path / "golden", logs_lines(30), [9])
    logs = write_shards(tmp_path / "logs", logs_lines(60, offset=25), [20, 40])
    command = ["dedupe", "--shards", "--exact-only", "--report", "json", str(golden), str(logs)]
    one = CliRunner().invoke(app, command)
    pooled = CliRunner().invoke(app, [*command, "-j", "2"])
    assert pooled.exit_code == one.exit_code == 1, pooled.output
    assert json.loads(pooled.stdout) == json.loads(one.stdout)
    assert json.loads(one.stdout)["counts"]["acrossSets"]


def test_a_shard_two_sets_share_is_read_from_its_start_by_each(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", logs_lines(40), [15])
    shard = folder / "part-00001.jsonl"  # a set of its own too: lines count from its start
    serial, bucketed = both([folder, shard], span_bytes=300)
    assert bucketed == serial
    lines = [
        ref["line"]
        for group in serial["exact"]
        for ref in group["rows"]
        if ref["set"] == str(shard)
    ]
    assert lines and min(lines) < 15
