"""The benchmark script still runs end to end (a tiny size; no timings are checked)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).parent.parent / "benchmarks" / "run.py"


@pytest.mark.skipif(
    importlib.util.find_spec("jsonschema_rs") is None, reason="needs the bench extra"
)
def test_the_benchmark_runs_every_measurement_on_a_tiny_set():
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--rows", "200", "--start-up-runs", "1", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    document = json.loads(completed.stdout)
    names = {item["name"] for item in document["results"]}
    assert {"orjson parse (floor)", "validate jsonl", "convert jsonl -> promptfoo"} <= names
    assert {"diff jsonl (1% changed)", "start-up: blueprint --help"} <= names
    by_name = {item["name"]: item for item in document["results"]}
    assert by_name["validate jsonl"]["exit_code"] == 0  # the generated set is valid
    assert by_name["diff jsonl (1% changed)"]["exit_code"] == 1  # and the copy differs
    assert all(item["cpu_seconds"] >= 0 for item in document["results"])
    # every target is judged on the figures of the same run
    judged = {target["name"]: target for target in document["targets"]}
    assert {
        "validate jsonl, x orjson parse",
        "validate csv, x csv.reader",
        "convert jsonl -> promptfoo, x orjson parse",
        "validate jsonl, peak RSS MiB",
    } <= set(judged)
    assert judged["convert jsonl -> promptfoo, x orjson parse"]["wanted"] == 0.05
    assert judged["convert jsonl -> deepeval, x orjson parse"]["wanted"] == 0.15
    assert all(isinstance(target["met"], bool) for target in judged.values())
    # a writer is held to what validating a row costs, in the same run
    writer = judged["convert jsonl -> deepeval, writer µs a row (<= validate's)"]
    rows = 200
    assert writer["wanted"] == pytest.approx(by_name["validate jsonl"]["cpu_seconds"] / rows * 1e6)
    # an export that refused the set wrote nothing, and is not judged on its speed
    for name, item in by_name.items():
        if name.startswith("convert") and item["exit_code"] != 0:
            assert f"{name}, x orjson parse" not in judged


def test_the_jobs_benchmark_runs_and_finds_the_repeats_it_plants():
    script = SCRIPT.with_name("jobs.py")
    completed = subprocess.run(
        [sys.executable, str(script), "--rows", "1200", "--jobs", "1", "2", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    measured = json.loads(completed.stdout)
    assert [found["jobs"] for found in measured] == [1, 2]
    # every 100th row repeats an input and every 500th an id: 11 and 2 findings at least
    assert all(found["rows"] == 1200 and found["issues"] >= 13 for found in measured)
    assert measured[0]["issues"] == measured[1]["issues"]
    assert measured[0]["speedup"] == 1


def _scale(*arguments: str) -> list[dict[str, Any]]:
    """What ``scale.py`` measures on 1,500 rows in three shards."""
    pytest.importorskip("distributed")
    script = SCRIPT.with_name("scale.py")
    completed = subprocess.run(
        [sys.executable, str(script), "--rows", "1500", "--shards", "3", "--json", *arguments],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    measured: list[dict[str, Any]] = json.loads(completed.stdout)
    return measured


def test_the_scale_benchmark_runs_every_way_and_finds_the_same():
    measured = _scale()
    assert [(found["path"], found["workers"]) for found in measured] == [
        ("one process", 1),
        ("local", 2),
        ("dask", 1),
        ("dask", 2),
    ]
    assert len({found["issues"] for found in measured}) == 1
    assert all(found["rows"] == 1500 for found in measured)
    assert measured[0]["perWorkerOverOneProcess"] == 1


def test_the_scale_benchmark_grades_every_way_with_the_same_verdicts():
    measured = _scale("--command", "grade", "--trials", "2", "--workers", "2")
    assert [(found["path"], found["workers"]) for found in measured] == [
        ("one process", 1),
        ("local", 2),
        ("dask", 2),
    ]
    verdicts = {found["issues"] for found in measured}
    assert len(verdicts) == 1
    counts = json.loads(verdicts.pop())
    assert counts["pass"] and counts["fail"] and counts["invalid"]  # repeated ids: invalid
    assert all(found["rows"] == 1500 for found in measured)


def test_the_scale_benchmark_finds_the_same_duplicates_every_way():
    measured = _scale("--command", "dedupe", "--workers", "2")
    assert [(found["path"], found["workers"]) for found in measured] == [
        ("one process", 1),
        ("local", 2),
        ("dask", 2),
    ]
    assert all(found["issues"] == measured[0]["issues"] for found in measured)
    assert measured[0]["issues"]["exactGroups"] and measured[0]["issues"]["nearGroups"]


@pytest.mark.skipif(shutil.which("/usr/bin/time") is None, reason="GNU time is not installed")
def test_the_memory_benchmark_measures_each_command_at_each_size():
    script = SCRIPT.with_name("memory.py")
    completed = subprocess.run(
        [sys.executable, str(script), "--rows", "300", "600", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    measured = json.loads(completed.stdout)
    assert [found["rows"] for found in measured] == [300] * 17 + [600] * 17
    assert measured[0]["command"] == "validate -j 1"
    assert all(found["rss"] > 10 * 2**20 and found["seconds"] > 0 for found in measured)
