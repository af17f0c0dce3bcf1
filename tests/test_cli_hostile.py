"""The command line against hostile arguments and a hostile environment, as real child
processes: bytes that are not UTF-8, numbers past any use, a standard output that is closed.
Each ends in a clean exit code, never a traceback or an internal error (exit 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES

SET = EXAMPLES / "support-refunds.json"
ROW = "cs-refund-window-quote"


def blueprint(
    *args: str | bytes | Path, cwd: Path, **options: object
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "blueprint", *args],
        cwd=cwd,
        capture_output=True,
        timeout=120,
        **options,  # type: ignore[call-overload]
    )


def clean(done: subprocess.CompletedProcess[bytes]) -> bool:
    stderr = done.stderr.decode("utf-8", "replace")
    return "Traceback" not in stderr and "internal error" not in stderr


# --- text that is not UTF-8 -------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        [b"--text", b"metadata.case.scenario=\xff\xfe late"],
        [b"--text", b"metadata.case.scen\xffario=x"],
        [b"--set", b'metadata.case.scenario="\xff"'],
        [b"--unset", b"metadata.\xff"],
    ],
)
def test_edit_refuses_text_that_is_not_utf8(tmp_path: Path, arguments: list[bytes]) -> None:
    target = tmp_path / "set.json"
    shutil.copy(SET, target)
    before = target.read_bytes()
    done = blueprint("edit", target, ROW, *arguments, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert clean(done)
    assert target.read_bytes() == before


def test_a_row_id_that_is_not_utf8_is_refused_as_json_too(tmp_path: Path) -> None:
    target = tmp_path / "set.json"
    shutil.copy(SET, target)
    done = blueprint(
        "edit", target, b"cs-\xff", "--text", "metadata.case.scenario=x", "--report", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and clean(done)
    assert json.loads(done.stdout)["exitCode"] == 2


def test_add_refuses_text_that_is_not_utf8(tmp_path: Path) -> None:
    target = tmp_path / "set.json"
    shutil.copy(SET, target)
    before = target.read_bytes()
    done = blueprint(
        "add", target, "--family", "policy-lookup", "--id", "new-row", "--input", b"q\xff",
        "--behavior", "b", "--provenance", "expert-authored",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and clean(done)
    assert target.read_bytes() == before


def test_a_file_name_that_is_not_utf8_is_still_a_file_name(tmp_path: Path) -> None:
    name = b"set-\xff.json"
    (tmp_path / os.fsdecode(name)).write_bytes(SET.read_bytes())
    done = blueprint("validate", name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pack = b"pack-\xff.yaml"
    done = blueprint("packs", "show", pack, cwd=tmp_path)
    assert done.returncode in (1, 2) and clean(done)
    assert b"not UTF-8 text" not in done.stderr  # it names a file, which may be any bytes


# --- numbers past any use ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    ["--resamples=1000000000", "--resamples=100001", "--resamples=99", "--seed=-1"],
)
def test_judge_report_bounds_its_bootstrap(tmp_path: Path, option: str) -> None:
    done = blueprint(
        "judge-report", EXAMPLES / "support-judged-labels.csv",
        "--set", EXAMPLES / "support-judged.json", option,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert clean(done)


def test_the_bootstrap_holds_a_bounded_batch_in_memory() -> None:
    from blueprint.reports.judging import statistics

    seen: list[tuple[int, ...]] = []

    def statistic(indices: object, axis: int = -1) -> object:
        import numpy as np

        array = np.asarray(indices)
        seen.append(array.shape)
        return array.mean(axis=axis)

    size = 50_000
    options = statistics.BootstrapOptions(resamples=1000)
    assert statistics._interval(statistic, size, options, vectorized=True) is not None
    cells = max(shape[0] * shape[1] for shape in seen if len(shape) == 2)
    assert cells <= statistics._BATCH_CELLS  # 1000 x 50,000 at once would be 400 MB


# --- a standard output that is closed, or whose reader went away ------------------------------

RESULTS = EXAMPLES / "support-refunds.results.jsonl"


def closed(command: str, tmp_path: Path, streams: str = ">&-") -> subprocess.CompletedProcess[str]:
    """``blueprint COMMAND`` from a shell with a standard stream closed (``>&-``)."""
    return subprocess.run(
        ["bash", "-c", f"{sys.executable} -m blueprint {command} {streams}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (f"validate {SET}", 0),  # its report goes to stderr: nothing is lost
        (f"validate {SET} --report json", 2),
        (f"validate {EXAMPLES / 'broken.json'} --report json", 2),
        ("formats", 2),
        ("evaluators rubric", 2),
        (f"grade {SET} {RESULTS}", 2),
        (f"grade {SET} {RESULTS} --report junit", 2),
        (f"summary {SET}", 2),
        ("--version", 2),
        (f"validate {SET} --no-such-option", 2),
    ],
)
def test_a_closed_standard_output_is_a_clean_exit(tmp_path: Path, command: str, code: int) -> None:
    done = closed(command, tmp_path)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "Exception ignored" not in done.stderr


def test_files_written_with_standard_output_closed_are_whole(tmp_path: Path) -> None:
    """A file opened while descriptor 1 is free would take it: what a command then printed
    (or a command it ran) would land in the file."""
    done = closed(f"convert {SET} out.jsonl", tmp_path)
    assert done.returncode == 0, done.stderr
    again = subprocess.run(
        [sys.executable, "-m", "blueprint", "diff", SET, tmp_path / "out.jsonl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    done = closed(f"grade {SET} {RESULTS} -o report.json --report json", tmp_path, ">&- 2>&- <&-")
    assert done.returncode == 0
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["rows"]


@pytest.mark.parametrize(
    "command",
    [
        ["formats"],
        ["evaluators"],
        ["validate", str(SET), "--report", "json"],
        ["grade", str(SET), str(RESULTS)],
    ],
)
def test_a_reader_that_went_away_is_a_clean_exit(tmp_path: Path, command: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "blueprint", *command],
            cwd=tmp_path,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
