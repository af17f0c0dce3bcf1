"""``blueprint grade`` against hostile sets, results and options, as real child processes:
commands that leave processes behind or print without end, paths that cannot be looked up,
and options that are not numbers. No case may hang, leave a process running, end in a
traceback or exit 3."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def blueprint(*args: object, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "blueprint", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def final_state_set(path: Path, *checks: dict[str, Any]) -> Path:
    """A valid set with one final-state row a check, ``row-1`` ... ``row-N``."""
    rows = []
    for number, check in enumerate(checks, start=1):
        row_id = f"row-{number}"
        case = {
            "caseId": row_id,
            "oracleType": "expected-final-state",
            "expectedBehavior": "The run leaves the state the check describes.",
            "provenance": "expert-authored",
            "evaluator": "trajectory-or-state-check",
        }
        rows.append(
            {
                "id": row_id,
                "input": "do the task",
                "expected": {"checks": [check]},
                "metadata": {"case": case},
            }
        )
    document = {"schemaVersion": "blueprint.eval-set/v1", "name": "hostile", "rows": rows}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def results_for(path: Path, count: int) -> Path:
    lines = "".join(
        json.dumps({"id": f"row-{n}", "output": "done"}) + "\n" for n in range(1, count + 1)
    )
    path.write_text(lines, encoding="utf-8")
    return path


def verdicts(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return {row["id"]: row["verdict"] for row in json.loads(done.stdout)["rows"]}


def alive(pid: int) -> bool:
    """Whether a process is running (a zombie no one has reaped yet is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --- commands (--allow-commands) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "timeout", "verdict"),
    [
        # the command waits for its background child: its time runs out, the group is killed
        ("sleep 100 & echo $! > grandchild.pid; wait", "1", "fail"),
        # the command ends at once and leaves its child running: the group is killed anyway
        ("sleep 100 & echo $! > grandchild.pid; exit 0", "30", "pass"),
        # the child leaves the command's output and input alone, and outlives nothing
        ("(trap '' HUP TERM; sleep 100) & echo $! > grandchild.pid; exit 0", "30", "pass"),
    ],
)
def test_no_process_a_command_starts_outlives_grade(
    tmp_path: Path, script: str, timeout: str, verdict: str
) -> None:
    set_path = final_state_set(
        tmp_path / "set.json", {"kind": "command", "run": script, "exitCode": 0}
    )
    results = results_for(tmp_path / "results.jsonl", 1)
    started = time.monotonic()
    done = blueprint(
        "grade", set_path, results, "--allow-commands", "--command-timeout", timeout,
        "--workdir", tmp_path, "--report", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert time.monotonic() - started < 30
    assert done.returncode in (0, 1), done.stderr
    assert verdicts(done) == {"row-1": verdict}
    pid = int((tmp_path / "grandchild.pid").read_text())
    try:
        assert gone(pid), f"process {pid} outlived grade"
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_commands_output_is_not_kept(tmp_path: Path) -> None:
    """300 MB of output: grade's memory does not grow with it (it took twice as much)."""
    set_path = final_state_set(
        tmp_path / "set.json",
        {"kind": "command", "run": "head -c 300000000 /dev/zero; exit 0", "exitCode": 0},
        {"kind": "command", "run": "head -c 300000000 /dev/zero >&2; exit 4", "exitCode": 4},
    )
    results = results_for(tmp_path / "results.jsonl", 2)
    measure = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n"
        "print(done.returncode, done.stdout.decode(),"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, sep='\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "blueprint", "grade",
         set_path, results, "--allow-commands", "--report", "json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    code, *report, peak = done.stdout.strip().split("\n")
    assert code == "0", done.stderr
    assert set(verdicts(subprocess.CompletedProcess([], 0, "\n".join(report))).values()) == {"pass"}
    assert int(peak) < 200_000  # kilobytes: far below the 300 MB the command printed


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "1e400"])
def test_the_command_timeout_is_a_finite_number_above_zero(tmp_path: Path, value: str) -> None:
    set_path = final_state_set(
        tmp_path / "set.json", {"kind": "command", "run": "exit 0", "exitCode": 0}
    )
    results = results_for(tmp_path / "results.jsonl", 1)
    done = blueprint(
        "grade", set_path, results, "--allow-commands", f"--command-timeout={value}",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr


# --- file checks in --workdir -----------------------------------------------------------------


def test_file_checks_no_file_can_pass_fail_without_an_error(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "loop").symlink_to("loop")
    (work / "a").symlink_to("b")
    (work / "b").symlink_to("a")
    (work / "out.txt").write_text("x", encoding="utf-8")
    set_path = final_state_set(
        tmp_path / "set.json",
        {"kind": "file_exists", "path": "out\x00.txt"},
        {"kind": "file_exists", "path": "loop"},
        {"kind": "file_exists", "path": "loop/x"},
        {"kind": "file_exists", "path": "a/b/c"},
        {"kind": "file_exists", "path": "x" * 5000},
        {"kind": "file_exists", "path": "out.txt"},
    )
    results = results_for(tmp_path / "results.jsonl", 6)
    done = blueprint(
        "grade", set_path, results, "--workdir", work, "--report", "json", cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr
    assert verdicts(done) == {
        "row-1": "fail",
        "row-2": "fail",
        "row-3": "fail",
        "row-4": "fail",
        "row-5": "fail",
        "row-6": "pass",
    }


@pytest.mark.parametrize("kind", ["loop", "file", "missing"])
def test_a_workdir_that_is_no_folder_is_refused(tmp_path: Path, kind: str) -> None:
    work = tmp_path / "work"
    if kind == "loop":
        work.symlink_to("work")
    elif kind == "file":
        work.write_text("x", encoding="utf-8")
    set_path = final_state_set(tmp_path / "set.json", {"kind": "file_exists", "path": "x"})
    results = results_for(tmp_path / "results.jsonl", 1)
    done = blueprint("grade", set_path, results, "--workdir", work, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr


def test_a_command_with_a_nul_byte_fails_its_row(tmp_path: Path) -> None:
    set_path = final_state_set(
        tmp_path / "set.json", {"kind": "command", "run": "exit\x00 0", "exitCode": 0}
    )
    results = results_for(tmp_path / "results.jsonl", 1)
    done = blueprint(
        "grade", set_path, results, "--allow-commands", "--report", "json", cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr
    assert verdicts(done) == {"row-1": "fail"}
