"""Running a set's ``command`` check (``blueprint grade --allow-commands``) so that nothing it
starts outlives the check, and nothing it prints is kept.

The command runs under ``/bin/sh`` in a session of its own (its own process group), with no
input and its output thrown away: grading reads only the exit code, so a command that prints
gigabytes costs no memory. When it ends, or when it runs past its time, the whole group is
killed, so a process it left running in the background (``server &``) ends with it. A
process that leaves the group on purpose (``setsid``) is beyond this reach.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CommandRun:
    """How a command ended: its exit code, or None when it ran past its time."""

    exit_code: int | None

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None


def run_command(run: str, cwd: Path, timeout: float) -> CommandRun:
    """Run ``run`` in ``cwd`` for at most ``timeout`` seconds (OSError when it cannot start).

    Whatever happens here (the command ends, its time runs out, a signal stops grading), the
    command's process group is killed before this returns or raises.
    """
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"a command's timeout is a number of seconds above 0, not {timeout!r}")
    process = subprocess.Popen(
        run,
        shell=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=hasattr(os, "killpg"),
    )
    try:
        try:
            return CommandRun(process.wait(timeout))
        except subprocess.TimeoutExpired:
            return CommandRun(None)
    finally:
        _end_group(process)


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the command and every process of its group, then reap the command.

    The group's id is the command's process id; it stays reserved while any process of the
    group is alive, so killing it after the command itself was reaped reaches only them.
    """
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    else:  # pragma: no cover - no process groups (Windows): the command alone
        with contextlib.suppress(OSError):
            process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)
