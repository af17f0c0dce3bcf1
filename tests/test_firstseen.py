"""The table of first uses: the answers a dict gives, in flat memory, with its runs on disk
removed."""

from __future__ import annotations

import errno
import gc
import os
import random
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.core.errors import OutputError
from blueprint.io import firstseen
from blueprint.io.firstseen import FirstSeen
from conftest import left_behind

#: keys from a few values (so that they repeat, often across runs) and from all 64 bits
_KEYS = st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1))


pytestmark = pytest.mark.usefixtures("private_temporary_folder")


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
    assert left_behind() == []


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
    assert len(table._runs.runs) <= firstseen.MAX_RUNS  # type: ignore[union-attr]
    assert [table.setdefault(key, 0) for key in keys] == list(range(len(keys)))
    assert table.get(rng.getrandbits(64)) is None


def test_the_bloom_filter_grows_with_the_keys_on_disk_and_forgets_none() -> None:
    rng = random.Random(11)
    keys = [rng.getrandbits(64) for _ in range(12_000)]
    table = FirstSeen(max_slots=1024)  # a run every 682 keys; the filter may reach 16 KiB
    sizes = []
    for index, key in enumerate(keys):
        assert table.setdefault(key, index) == index
        if table._runs is not None:
            sizes.append(len(table._runs._bloom))
    # 2**16 bits (8 KiB) up to 4,096 keys on disk, then rebuilt from the runs at 2**17
    assert sorted(set(sizes)) == [8 * 1024, 16 * 1024]
    assert [table.setdefault(key, 0) for key in keys] == list(range(len(keys)))
    absent = [rng.getrandbits(64) for _ in range(2_000)]
    assert all(table.get(key) is None for key in absent)


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
    assert len(left_behind()) == 1
    del table
    gc.collect()
    assert left_behind() == []


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
    assert len(left_behind()) == 1
    assert [table.get(key) for key in range(1, 100)] == list(range(1, 100))
    assert table.setdefault(1000, 7) == 7
    table.close()
    assert left_behind() == []


def test_a_small_table_never_touches_the_disk() -> None:
    table = FirstSeen()
    for key in range(100_000):
        table.setdefault(key, key)
    assert left_behind() == []


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
    assert left_behind() == []
