"""Faults a user's machine has, with real processes: edits racing, signals, full disks.

Each test runs blueprint commands as child processes, as a user (or a CI job killing a step)
would, and checks what is left on disk: never a lost row, a truncated output or a temporary
file that nobody removes. Most children come from ``launcher.py`` (forked from a process
that imported blueprint once, so that dozens of rounds take seconds); a few are started as
``python -m blueprint`` to show the console script behaves the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from blueprint.formats import REGISTRY, WriteOptions
from curation_sets import curation_set, rows_of, snapshot

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
from bench_core import HEADER, generate_rows  # noqa: E402

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="fork, POSIX signals, /proc and tmpfs mounts"
)

BIG_ROWS = 200_000
KILL_ROUNDS = 30
RACE_ROUNDS = 20
KILL_NEAR_END_ROUNDS = 15


def blueprint(*arguments: str | Path, tmpdir: Path) -> subprocess.Popen[str]:
    environment = {**os.environ, "TMPDIR": str(tmpdir)}
    return subprocess.Popen(
        [sys.executable, "-m", "blueprint", *map(str, arguments)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


#: an edit in place: a row added (the set's path goes after "add")
ADD = (
    *("add", "--id", "new", "--behavior", "answers", "--input", "q"),
    *("--provenance", "expert-authored", "--oracle-type", "rubric"),
)


def finished(*arguments: str | Path, tmpdir: Path, set_path: Path | None = None) -> tuple[int, str]:
    if set_path is not None:
        arguments = (arguments[0], set_path, *arguments[1:])
    process = blueprint(*arguments, tmpdir=tmpdir)
    _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(
        p.name for p in folder.iterdir() if p.name.endswith((".partial", ".old", ".lock"))
    )


def generated_set(path: Path, rows: int) -> Path:
    REGISTRY[path.suffix.lstrip(".")].write(HEADER, generate_rows(rows), path, WriteOptions())
    return path


@pytest.fixture(scope="session")
def big_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generated_set(tmp_path_factory.mktemp("big") / "big.jsonl", BIG_ROWS)


@pytest.fixture
def tmpdir_(tmp_path: Path) -> Path:
    """The children's TMPDIR: empty, so that anything left in it is theirs."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


class Launcher:
    """Talks to ``launcher.py``: starts commands as forked children, and reaps them."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("launcher.py"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer

    def start(self, *arguments: str | Path, tmpdir: Path, gated: bool = False) -> Child:
        errors = tmpdir.parent / f"stderr-{time.monotonic_ns()}"
        request = {
            "start": [str(argument) for argument in arguments],
            "tmpdir": str(tmpdir),
            "stderr": str(errors),
            "gated": gated,
        }
        return Child(self, self._ask(request)["pid"], errors)

    def open_gate(self) -> None:
        self._ask({"open": True})

    def wait(self, pid: int) -> int:
        code: int = self._ask({"wait": pid})["code"]
        return code

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


class Child:
    def __init__(self, launcher: Launcher, pid: int, errors: Path) -> None:
        self.launcher, self.pid, self.errors = launcher, pid, errors
        self.code: int | None = None

    def finish(self) -> tuple[int, str]:
        """Wait for the child; its exit code (minus the signal that killed it) and stderr."""
        if self.code is None:
            self.code = self.launcher.wait(self.pid)
        text = self.errors.read_text()
        self.errors.unlink()
        return self.code, text

    def running(self) -> bool:
        """Whether it still runs (an ended child stays a zombie until the launcher reaps it)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return not _zombie(self.pid)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return False


@pytest.fixture(scope="session")
def launcher() -> Iterator[Launcher]:
    started = Launcher()
    try:
        yield started
    finally:
        started.close()


def wait_until(condition: Callable[[], bool], child: Child, limit: float = 60) -> bool:
    """Poll until ``condition()`` holds (True) or the child ends first (False)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        if not child.running():
            return False
        time.sleep(0.005)
    raise AssertionError("the condition never held")


# --- edits racing ----------------------------------------------------------------------------


def test_two_edits_at_once_never_lose_an_update_silently(
    launcher: Launcher, tmp_path: Path, tmpdir_: Path
) -> None:
    path = curation_set(tmp_path, ".csv")
    refusals = ("is being edited by", "changed since it was read")
    for round_number in range(RACE_ROUNDS):
        row_id = f"new-{round_number}"
        add = (
            *("add", path, "--id", row_id, "--behavior", "answers", "--input", "q"),
            *("--provenance", "expert-authored", "--oracle-type", "rubric"),
        )
        if round_number % 2:
            other_id = f"other-{round_number}"
            other: tuple[str | Path, ...] = (*add[:2], "--id", other_id, *add[4:])
        else:  # the family's oracle type changes while a row is added
            oracle = "expected-behavior-only" if round_number % 4 == 0 else "rubric"
            other = ("oracle", path, "c", oracle, "--family", "--drop-expected")
        children = [
            launcher.start(*command, tmpdir=tmpdir_, gated=True) for command in (add, other)
        ]
        launcher.open_gate()
        (first, first_errors), (second, second_errors) = [child.finish() for child in children]
        rows = rows_of(path)
        header = json.loads(path.with_name(path.name + ".set.json").read_text())
        for code, stderr in ((first, first_errors), (second, second_errors)):
            if code != 0:
                assert code in (1, 2), stderr
                assert any(refusal in stderr for refusal in refusals), stderr
        if first == 0:
            assert row_id in rows, f"round {round_number}: the added row was lost"
        if second == 0 and round_number % 2:
            assert other_id in rows, f"round {round_number}: the other added row was lost"
        elif second == 0:
            tone = next(f for f in header["caseFamilies"] if f["id"] == "tone")
            assert tone["oracleType"] == oracle, f"round {round_number}: the oracle change lost"
            assert rows["c"]["metadata"]["case"]["oracleType"] == oracle
        assert leftovers(tmp_path) == []
        assert list(tmpdir_.iterdir()) == []


def test_an_output_created_while_converting_is_not_overwritten(
    launcher: Launcher, tmp_path: Path, tmpdir_: Path
) -> None:
    source = generated_set(tmp_path / "in.jsonl", 5_000)
    target = tmp_path / "out.jsonl"
    child = launcher.start("convert", source, target, tmpdir=tmpdir_)
    started = wait_until(lambda: any(p.suffix == ".partial" for p in tmp_path.iterdir()), child)
    assert started, "the conversion ended before it began writing"
    target.write_text("theirs\n")  # another program, after convert checked the output
    code, stderr = child.finish()
    assert code == 2, stderr
    assert str(target) in stderr
    assert target.read_text() == "theirs\n"
    assert leftovers(tmp_path) == []


# --- signals ---------------------------------------------------------------------------------


def test_a_conversion_killed_at_any_moment_leaves_the_old_output_or_a_whole_one(
    launcher: Launcher, big_set: Path, tmp_path: Path, tmpdir_: Path
) -> None:
    rng = random.Random(10)
    input_hash, input_stat = sha256(big_set), big_set.stat()
    target = tmp_path / "out.jsonl"
    old = b'{"old": "output"}\n'
    target.write_bytes(old)
    for round_number in range(KILL_ROUNDS):
        chosen = rng.choice([signal.SIGTERM, signal.SIGKILL, signal.SIGINT])
        if round_number == KILL_ROUNDS - 1:
            chosen = signal.SIGTERM  # the last one also sweeps what SIGKILLs left
        child = launcher.start("convert", big_set, target, "--force", tmpdir=tmpdir_)
        own = f".{target.name}.{child.pid}."
        if round_number == KILL_ROUNDS - 1:
            wait_until(lambda: any(p.name.startswith(own) for p in tmp_path.iterdir()), child)  # noqa: B023
        else:
            time.sleep(rng.uniform(0.0, 2.5))
        os.kill(child.pid, chosen)
        code, stderr = child.finish()
        after = big_set.stat()
        assert (after.st_size, after.st_mtime_ns) == (input_stat.st_size, input_stat.st_mtime_ns)
        written = target.read_bytes()
        assert written == old or written.count(b"\n") == BIG_ROWS, "a truncated output"
        if chosen == signal.SIGKILL:
            assert code == -signal.SIGKILL
            continue
        assert code in (0, 128 + chosen), stderr
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(own)], stderr
        assert list(tmpdir_.iterdir()) == []
    assert leftovers(tmp_path) == [], "what a killed run left was not swept by the next"
    assert sha256(big_set) == input_hash


def test_a_conversion_killed_as_it_finishes_leaves_the_old_output_or_the_new_one(
    launcher: Launcher, tmp_path: Path, tmpdir_: Path
) -> None:
    """Kills around the last write and the renames, on a set converted in about a second:
    the output and its set file are both old or both new, never one of each."""
    rng = random.Random(11)
    source = generated_set(tmp_path / "in.jsonl", 2_000)
    target = tmp_path / "out.jsonl"
    set_file = tmp_path / "out.jsonl.set.json"
    old = (b'{"old": "output"}\n', b'{"old": "set file"}\n')
    outcomes = set()
    for _ in range(KILL_NEAR_END_ROUNDS):
        target.write_bytes(old[0])
        set_file.write_bytes(old[1])
        child = launcher.start("convert", source, target, "--force", tmpdir=tmpdir_)
        time.sleep(rng.uniform(0.0, 1.5))
        os.kill(child.pid, signal.SIGTERM)
        code, stderr = child.finish()
        written = (target.read_bytes(), set_file.read_bytes())
        if written == old:
            outcomes.add("old")
        else:
            assert written[0].count(b"\n") == 2_000 and b'"old"' not in written[1], stderr
            outcomes.add("new")
        assert code in (0, 128 + signal.SIGTERM), stderr
        assert leftovers(tmp_path) == [] and list(tmpdir_.iterdir()) == []
    assert outcomes, "no round ran"


def test_a_partial_a_sigkill_left_is_swept_by_the_next_write_to_its_folder(
    launcher: Launcher, tmp_path: Path, tmpdir_: Path
) -> None:
    """SIGKILL runs no handler: the killed conversion's partial stays until another
    command, writing any output to that folder, finds its process gone."""
    source = generated_set(tmp_path / "in.jsonl", 50_000)
    out = tmp_path / "out"
    out.mkdir()
    child = launcher.start("convert", source, out / "big.jsonl", tmpdir=tmpdir_)
    own = f".big.jsonl.{child.pid}."

    def partial_written() -> bool:
        for path in out.iterdir():
            with contextlib.suppress(FileNotFoundError):  # renamed into place meanwhile
                if path.name.startswith(own) and path.stat().st_size > 0:
                    return True
        return False

    assert wait_until(partial_written, child), "the conversion ended before it began writing"
    os.kill(child.pid, signal.SIGKILL)
    code, _ = child.finish()
    assert code == -signal.SIGKILL
    left = leftovers(out)
    assert left and all(name.startswith(own) for name in left)
    small = generated_set(tmp_path / "small.jsonl", 20)
    code, stderr = finished("convert", small, out / "small.json", tmpdir=tmpdir_)
    assert code == 0, stderr
    assert leftovers(out) == []
    assert sorted(p.name for p in out.iterdir()) == ["small.json"]
    assert len(json.loads((out / "small.json").read_text(encoding="utf-8"))["rows"]) == 20


def test_a_killed_roundtrip_leaves_its_temporary_folder_to_the_next_run(
    tmp_path: Path, tmpdir_: Path
) -> None:
    """With the console script itself (python -m blueprint), not the launcher."""
    source = generated_set(tmp_path / "in.jsonl", 5_000)
    for chosen in (signal.SIGKILL, signal.SIGTERM):
        process = blueprint("roundtrip", source, "--via", "jsonl", tmpdir=tmpdir_)
        own = f"blueprint-roundtrip-{process.pid}."
        deadline = time.monotonic() + 120
        while not any(p.name.startswith(own) for p in tmpdir_.iterdir()):
            assert process.poll() is None, "the round trip ended before it made its folder"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        process.send_signal(chosen)
        _, stderr = process.communicate(timeout=60)
    # the SIGTERMed run removed its own folder, and the SIGKILLed run's before it
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped by SIGTERM" in stderr
    assert list(tmpdir_.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "in.jsonl.set.json", "tmp"]


# --- full disks ------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB file system (tmpfs); mounting needs root (CI containers run as root)."""
    where = tmp_path / "disk"
    where.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def fill(folder: Path, *, room: int = 0) -> None:
    """Fill the file system ``folder`` is on, leaving ``room`` bytes."""
    with (folder / "filler").open("wb", buffering=0) as handle:
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"x" * 4096)
        with contextlib.suppress(OSError):
            while True:
                handle.write(b"x")
        handle.truncate(max(0, handle.tell() - room))


def test_dev_full_as_output_is_refused_naming_it(tmp_path: Path, tmpdir_: Path) -> None:
    source = curation_set(tmp_path, ".json")
    for force in ((), ("--force",)):
        code, stderr = finished(
            "convert", source, "/dev/full", "--to", "jsonl", *force, tmpdir=tmpdir_
        )
        assert code == 2 and "/dev/full" in stderr, stderr


def test_a_full_disk_names_the_output_and_leaves_nothing(
    tmp_path: Path, small_disk: Path, tmpdir_: Path
) -> None:
    source = generated_set(tmp_path / "in.jsonl", 200)  # about 150 KiB: more than the disk
    target = small_disk / "out.jsonl"
    code, stderr = finished("convert", source, target, tmpdir=tmpdir_)
    assert code == 2, stderr
    assert str(target) in stderr and "Traceback" not in stderr
    assert list(small_disk.iterdir()) == []


def test_an_edit_in_place_on_a_full_disk_leaves_the_set_byte_identical(
    small_disk: Path, tmpdir_: Path
) -> None:
    path = generated_set(small_disk / "set.csv", 40)  # fits once, not twice
    fill(small_disk)
    before = snapshot(small_disk)
    code, stderr = finished(*ADD, set_path=path, tmpdir=tmpdir_)
    assert code == 2, stderr
    assert str(path) in stderr and "Traceback" not in stderr
    assert snapshot(small_disk) == before


def test_a_full_temporary_folder_names_it_and_leaves_nothing(
    tmp_path: Path, small_disk: Path
) -> None:
    source = generated_set(tmp_path / "in.jsonl", 200)
    # room for Python's probe of the folder (else it quietly takes another), not for a set
    fill(small_disk, room=8192)
    filled = snapshot(small_disk)
    target = tmp_path / "out.csv"  # the CSV writer puts rows aside in the temporary folder
    code, stderr = finished("convert", source, target, tmpdir=small_disk)
    assert code == 2, stderr
    assert str(target) in stderr and str(small_disk) in stderr
    code, stderr = finished("roundtrip", source, "--via", "csv", tmpdir=small_disk)
    assert code == 2, stderr
    assert str(small_disk) in stderr and "Traceback" not in stderr
    (tmp_path / "edit").mkdir()
    dry = generated_set(tmp_path / "edit" / "set.csv", 200)
    before = snapshot(dry.parent)
    code, stderr = finished(*ADD, "--dry-run", set_path=dry, tmpdir=small_disk)
    assert code == 2, stderr
    assert str(small_disk) in stderr and "Traceback" not in stderr
    assert snapshot(dry.parent) == before
    assert snapshot(small_disk) == filled


def test_a_stop_python_wraps_in_an_error_of_its_own_is_still_a_stop() -> None:
    """A signal that arrives while a module makes a class: Python 3.11 wraps what a
    descriptor's ``__set_name__`` raises in a RuntimeError. The command stops as for the
    signal (128 + its number), not as for a bug (3)."""
    from blueprint.cli import _Stopped
    from blueprint.cli._common import boundary

    class Field:
        def __set_name__(self, owner: type, name: str) -> None:
            raise _Stopped(signal.SIGTERM)

    @boundary
    def command() -> None:
        type("Units", (), {"checks": Field()})

    with pytest.raises(_Stopped):
        command()

    @boundary
    def broken() -> None:
        raise RuntimeError("a bug") from ValueError("its cause")

    with pytest.raises(typer.Exit) as exited:  # a bug is still a bug
        broken()
    assert exited.value.exit_code == 3
