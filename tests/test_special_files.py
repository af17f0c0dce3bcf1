"""Inputs that are not regular files (a pipe, a device) are refused at once, never read.

Each command runs in a child process with a time limit: reading a FIFO would wait for a
writer forever, and /dev/zero never ends, so a regression shows as a timeout, not a hang.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def blueprint(*args: object, cwd: Path, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "blueprint", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def _fifo(path: Path) -> Path:
    if not path.exists():
        os.mkfifo(path)
    return path


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    return _fifo(tmp_path / "set.json")


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{fifo}"],
        ["validate", "{fifo}", "--from", "jsonl"],
        ["convert", "{fifo}", "out.csv"],
        ["diff", "{fifo}", "{example}"],
        ["roundtrip", "{fifo}", "--via", "csv"],
        ["check", "{fifo}"],
        ["check", "--config", "{fifo}"],
        ["packs", "check", "{fifo}"],
        ["packs", "check", "/dev/zero"],
        ["dedupe", "{fifo}"],
        ["grade", "{example}", "{fifo}"],
        ["grade", "{fifo}", "{results}"],
        ["grade", "{example}", "{fifo}", "--report", "json"],
        ["judge-report", "{fifo}", "--set", "{judged}"],
        ["judge-report", "{labels}", "--set", "{fifo}"],
        ["studio", "{judged}", "--port", "0", "--judge-results", "{fifo}"],
        ["studio", "{judged}", "--port", "0", "--judge-results", "{labels}", "--labels", "{csv}"],
    ],
)
def test_special_files_are_refused_not_read(tmp_path: Path, fifo: Path, command) -> None:
    args = [
        part.format(
            fifo=fifo,
            csv=_fifo(tmp_path / "labels.csv"),
            example=EXAMPLES / "support-refunds.json",
            results=EXAMPLES / "support-refunds.results.jsonl",
            judged=EXAMPLES / "support-judged.json",
            labels=EXAMPLES / "support-judged-labels.csv",
        )
        for part in command
    ]
    done = blueprint(*args, cwd=tmp_path)
    assert done.returncode in (1, 2), done.stderr
    assert "Traceback" not in done.stderr
    assert "not a regular file" in done.stderr + done.stdout


@pytest.mark.parametrize("name", ["results.jsonl", "results.json", "results.csv"])
def test_results_that_are_a_link_to_a_device_are_refused_not_read(
    tmp_path: Path, name: str
) -> None:
    # a committed symbolic link to /dev/zero would be read until memory ran out
    (tmp_path / name).symlink_to("/dev/zero")
    done = blueprint("grade", EXAMPLES / "support-refunds.json", name, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "not a regular file" in done.stderr


def test_a_fifo_among_packs_is_named_and_the_others_listed(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "evil.yaml")
    done = blueprint(
        "packs", "--report", "json", cwd=tmp_path, env={"BLUEPRINT_PACKS": str(tmp_path)}
    )
    assert done.returncode == 1
    assert "evil.yaml" in done.stderr and "not a regular file" in done.stderr
    json.loads(done.stdout)  # the listing of the readable packs still comes out


def test_a_folder_walk_passes_over_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "ok.json").write_bytes((EXAMPLES / "support-refunds.json").read_bytes())
    done = blueprint("validate", tmp_path, "--report", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["valid"] is True


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{example}", "--report", "json"],
        ["validate", "{broken}"],
        ["formats"],
        ["evaluators", "rubric"],
        ["validate", "--report", "json", "--no-such-option", "x"],
    ],
)
def test_a_full_standard_output_is_an_error_not_a_traceback(tmp_path: Path, command) -> None:
    args = [
        part.format(example=EXAMPLES / "support-refunds.json", broken=EXAMPLES / "broken.json")
        for part in command
    ]
    with Path("/dev/full").open("w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "blueprint", *args],
            cwd=tmp_path,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
