"""Exact duplicates of sets in shards found in buckets by key (the engine's path) are the ones
one process finds: the same groups, rows, lines, splits and counts for any cut of the sets
into shards, spans and buckets, and the same refusal at the first row one process cannot
read."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.authoring.buckets import KeysTask, bucketed_duplicates, exact_duplicates, span_keys
from blueprint.authoring.hygiene import DuplicateOptions, find_duplicates
from blueprint.cli import app
from blueprint.core.errors import BlueprintError, OutputError
from blueprint.formats.shards import find_shards
from blueprint.io import limits
from blueprint.validation import engines, parallel
from blueprint.validation.engines import BlobRef, InlineEngine, PoolEngine, SpilledBlobs, blob_of
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


# --- near-duplicates ---------------------------------------------------------------------------

#: a few words, so that inputs made of them are near one another in chains and clusters
WORDS = ["refund", "order", "late", "please", "my", "the", "parcel", "never", "came", "help"]


def variant(seed: int) -> str:
    """One of four twenty-word sentences with one word (or, for a third of the seeds, two
    words) changed: one change is near at 0.8, two are not, all are at 0.35."""
    words = [WORDS[(seed % 4 + 3 * place) % len(WORDS)] + "abcd"[seed % 4] for place in range(20)]
    words[seed // 4 % 20] = "changed"
    if seed % 3 == 0:
        words[(seed // 4 + 7) % 20] = "also"
    return " ".join(words)


def near_lines(count: int, offset: int = 0) -> list[str]:
    lines = []
    for n in range(offset, offset + count):
        made = row(f"r{n}")
        made["input"] = variant(n % 37) if n % 5 else variant(n % 37).upper() + "!"
        if n % 4 == 0:
            made["metadata"]["split"] = "test" if n % 8 else "train"
        lines.append(line(made))
    return lines


def both_near(
    paths: list[Path], threshold: float, *, span_bytes: int = 600, buckets: int = 3
) -> tuple[Any, Any]:
    """One process's report with near-duplicates, and the buckets'."""
    options = DuplicateOptions(threshold=threshold)
    serial = outcome(lambda: find_duplicates(paths, threshold=threshold, format="shards"))
    engine = InlineEngine(span_bytes, buckets)
    return serial, outcome(lambda: bucketed_duplicates(engine, paths, options))


@pytest.mark.parametrize("span_bytes", [1, 700, 10**7])
@pytest.mark.parametrize("buckets", [1, 5, 40])
@pytest.mark.parametrize("threshold", [0.35, 0.8])
def test_near_duplicates_in_buckets_are_one_process_ones(
    tmp_path: Path, span_bytes: int, buckets: int, threshold: float
) -> None:
    first = write_shards(tmp_path / "golden", near_lines(60), [7, 30])
    second = write_shards(tmp_path / "logs", near_lines(90, offset=45), [44])
    serial, bucketed = both_near([first, second], threshold, span_bytes=span_bytes, buckets=buckets)
    assert bucketed == serial
    assert serial["counts"]["nearGroups"] >= 3 and serial["counts"]["exactGroups"] >= 3
    assert any(len(group["matches"]) > 1 for group in serial["near"])


def look_alike(seed: int) -> str:
    """Twelve to twenty-three words every input shares, then four of eight others."""
    import random

    rng = random.Random(seed)
    tails = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
    return " ".join([f"w{n}" for n in range(12 + seed % 12)] + rng.choices(tails, k=4))


def test_many_look_alike_groups_fill_buckets_as_in_one_process(tmp_path: Path) -> None:
    """Hundreds of leads sharing most of their words: LSH buckets reach their cap and rows
    have more candidates than are compared, so the order of matching decides the groups."""
    lines = []
    for n in range(400):
        made = row(f"r{n}")
        made["input"] = look_alike(n)
        lines.append(line(made))
    folder = write_shards(tmp_path / "logs", lines, [100, 250])
    for threshold in (0.8, 0.9):  # 120 leads and 88 groups; 364 leads and 34 groups
        serial, bucketed = both_near([folder], threshold, span_bytes=2000, buckets=7)
        assert bucketed == serial
        assert serial["counts"]["nearGroups"] >= 30


@with_files(80)
@given(
    sets=st.lists(
        st.tuples(
            st.lists(
                st.tuples(
                    st.one_of(
                        st.sampled_from([*INPUTS, None, 5, ["a", "b"], ""]),
                        st.lists(st.sampled_from(WORDS[:5]), min_size=3, max_size=9).map(" ".join),
                        st.integers(0, 60).map(look_alike),
                        st.integers(0, 36).map(variant),
                    ),
                    st.sampled_from([None, "train", "test"]),
                ),
                max_size=40,
            ),
            st.lists(st.integers(0, 40), max_size=3, unique=True),
        ),
        min_size=1,
        max_size=3,
    ),
    threshold=st.sampled_from([None, 0.2, 0.5, 0.8, 0.9, 1.0]),
    span_bytes=st.sampled_from([1, 300, 5000]),
    buckets=st.integers(1, 6),
)
def test_any_sets_give_the_groups_one_process_gives(
    tmp_path_factory: pytest.TempPathFactory,
    sets: list[tuple[list[tuple[Any, str | None]], list[int]]],
    threshold: float | None,
    span_bytes: int,
    buckets: int,
) -> None:
    """Exact groups (threshold None: near-duplicates off) and near ones at any threshold."""
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
    if threshold is None:
        serial, bucketed = both(paths, span_bytes=span_bytes, buckets=buckets)
    else:
        serial, bucketed = both_near(paths, threshold, span_bytes=span_bytes, buckets=buckets)
        if isinstance(serial, dict):
            event(f"near groups: {min(serial['counts']['nearGroups'], 3)}")
    assert bucketed == serial


@pytest.mark.parametrize(
    ("lines", "flags", "counted"),
    [(logs_lines, ["--exact-only"], "acrossSets"), (near_lines, [], "nearGroups")],
)
def test_duplicates_on_worker_processes_on_the_command_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lines: Callable[..., list[str]],
    flags: list[str],
    counted: str,
) -> None:
    monkeypatch.setattr(parallel, "SPAN_BYTES", 1500)  # spans of a few rows
    golden = write_shards(tmp_path / "golden", lines(40), [9])
    logs = write_shards(tmp_path / "logs", lines(120, offset=30), [50, 90])
    command = ["dedupe", "--shards", *flags, "--report", "json", str(golden), str(logs)]
    one = CliRunner().invoke(app, command)
    pooled = CliRunner().invoke(app, [*command, "-j", "2"])
    assert pooled.exit_code == one.exit_code == 1, pooled.output
    assert json.loads(pooled.stdout) == json.loads(one.stdout)
    assert json.loads(one.stdout)["counts"][counted] >= 3


# --- the pool's records ------------------------------------------------------------------------


def test_a_pool_workers_records_wait_in_a_file_not_in_this_process(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", near_lines(30), [12])
    piece = next(iter(parallel.pieces(None, find_shards([folder]), 10**6)))
    task = KeysTask(piece, 3, asdict(limits.current()), 0.8)
    expected = span_keys(task).blobs
    with PoolEngine(1) as pool:
        runner = pool.runner()
        found = runner.gather([runner.submit(span_keys, task)])[0]
        assert isinstance(found.blobs, SpilledBlobs)
        parts = [blob_of(found, bucket) for bucket in range(3)]
        assert [part.read() if isinstance(part, BlobRef) else part for part in parts] == expected
        written = Path(found.blobs.path)
        assert written.exists()
    assert not written.exists()  # the folder goes with the engine


def test_a_worker_with_no_room_for_its_records_is_an_output_error(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", logs_lines(10), [4])
    piece = next(iter(parallel.pieces(None, find_shards([folder]), 10**6)))
    task = KeysTask(piece, 2, asdict(limits.current()))
    found = engines._pooled(span_keys, str(tmp_path / "missing"), task)
    with pytest.raises(OutputError, match="TMPDIR"):
        engines._value(found)
