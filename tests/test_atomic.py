"""Atomic outputs: complete files or none, never a clobbered one."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint.core.errors import OutputError, OutputExistsError
from blueprint.io import atomic
from blueprint.io.atomic import (
    AtomicFolder,
    AtomicOutputs,
    scratch_folder,
    stale,
    stale_partials,
)


def test_all_files_appear_together(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "a.csv.set.json"
    with AtomicOutputs([a, b], force=False) as outputs:
        outputs.open(a).write("data")
        outputs.open(b).write("{}")
        assert not a.exists() and not b.exists()
    assert a.read_text() == "data" and b.read_text() == "{}"


def test_failure_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    with pytest.raises(RuntimeError), AtomicOutputs([target], force=False) as outputs:
        outputs.open(target).write("half")
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_refusals_happen_before_anything_is_written(tmp_path: Path) -> None:
    existing = tmp_path / "a.csv"
    existing.write_text("keep")
    with pytest.raises(OutputExistsError):
        AtomicOutputs([tmp_path / "new.json", existing], force=False)
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(OutputError):
        AtomicOutputs([tmp_path / "folder.json"], force=True)
    with pytest.raises(OutputError):
        AtomicOutputs([tmp_path / "missing" / "a.json"], force=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "folder.json"]


def test_overwrite_keeps_the_file_mode(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    target.write_text("old")
    target.chmod(0o640)
    with AtomicOutputs([target], force=True) as outputs:
        outputs.open(target).write("new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640


def test_new_files_get_ordinary_permissions(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    with AtomicOutputs([target], force=False) as outputs:
        outputs.open(target).write("x")
    assert target.stat().st_mode & 0o044  # readable by others, unlike a bare temporary file


# --- folders ---------------------------------------------------------------------------------


def test_a_folder_appears_whole_and_replaces_the_old_one_only_with_force(tmp_path: Path) -> None:
    target = tmp_path / "out"
    with AtomicFolder(target, force=False) as folder:
        (folder / "a.txt").write_text("new", encoding="utf-8")
        assert not target.exists()  # nothing there until the block ends
    assert (target / "a.txt").read_text(encoding="utf-8") == "new"
    with pytest.raises(OutputExistsError):
        AtomicFolder(target, force=False)
    with AtomicFolder(target, force=True) as folder:
        (folder / "b.txt").write_text("newer", encoding="utf-8")
    assert [p.name for p in target.iterdir()] == ["b.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_failed_folder_leaves_the_old_one_and_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), AtomicFolder(target, force=True) as folder:
        (folder / "half.txt").write_text("half", encoding="utf-8")
        raise RuntimeError("stopped half-way")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_a_folder_that_cannot_take_the_place_puts_the_old_one_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old", encoding="utf-8")
    real_rename = Path.rename

    def failing(self: Path, other: Any) -> Any:
        if self.name.endswith(".partial"):
            raise OSError(28, "No space left on device")
        return real_rename(self, other)

    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(OutputError), AtomicFolder(target, force=True) as folder:
        (folder / "new.txt").write_text("new", encoding="utf-8")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_an_output_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("keep", encoding="utf-8")
    link = tmp_path / "out.json"
    link.symlink_to(real)
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere" / "x.json")
    for target in (link, dangling):
        with pytest.raises(OutputError, match="symbolic link"):
            AtomicOutputs([target], force=True)
    assert real.read_text(encoding="utf-8") == "keep"
    assert not (tmp_path / "nowhere").exists()


def test_a_set_edited_in_place_through_a_link_is_written_where_it_leads(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "set.json"
    link.symlink_to(real)
    with AtomicOutputs([link], force=True, follow_links=True) as outputs:
        outputs.open(link).write("new")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new"


def test_convert_never_writes_through_a_link_or_its_set_file(tmp_path: Path) -> None:
    from blueprint.convert import ConvertOptions, convert
    from conftest import EXAMPLES

    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}", encoding="utf-8")
    (tmp_path / "a.csv.set.json").symlink_to(elsewhere)
    with pytest.raises(OutputError, match="symbolic link"):
        convert(EXAMPLES / "support-refunds.json", tmp_path / "a.csv", ConvertOptions(force=True))
    assert elsewhere.read_text(encoding="utf-8") == "{}"
    assert not (tmp_path / "a.csv").exists()


def _dead_pid() -> int:
    """The id of a process that has ended (reused only after the pid space wraps)."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


def test_a_target_created_while_writing_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    with pytest.raises(OutputError) as raised, AtomicOutputs([target], force=False) as outputs:
        outputs.open(target).write("ours")
        target.write_text("theirs")  # another program, after the check at the start
    assert "another program created it" in str(raised.value) and str(target) in str(raised.value)
    assert target.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_group_whose_second_target_appears_leaves_neither(tmp_path: Path) -> None:
    data, set_file = tmp_path / "a.csv", tmp_path / "a.csv.set.json"
    with pytest.raises(OutputError), AtomicOutputs([data, set_file], force=False) as outputs:
        outputs.open(data).write("rows")
        outputs.open(set_file).write("{}")
        set_file.write_text("theirs")
    assert not data.exists() and set_file.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv.set.json"]


def test_temporary_names_carry_the_process_id(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    with AtomicOutputs([target], force=False) as outputs:
        outputs.open(target).write("x")
        (partial,) = [p.name for p in tmp_path.iterdir()]
        assert partial.startswith(f".a.json.{os.getpid()}.") and partial.endswith(".partial")


def test_what_a_killed_writer_left_is_removed_by_the_next(tmp_path: Path) -> None:
    dead, alive = _dead_pid(), os.getpid()
    left = tmp_path / f".a.json.{dead}.abcd1234.partial"
    running = tmp_path / f".a.json.{alive}.abcd1234.partial"  # a writer still at work
    other = tmp_path / f".a.json.7.json.{dead}.abcd1234.partial"  # another target's
    absurd = [tmp_path / f".a.json.{pid}.abcd1234.partial" for pid in ("9" * 10, "9" * 11, "0")]
    for path in (left, running, other, *absurd):
        path.write_text("half")
    with AtomicOutputs([tmp_path / "a.json"], force=False) as outputs:
        outputs.open(tmp_path / "a.json").write("x")
    # another target's, its writer ended too: swept as well, whichever output comes next
    assert not left.exists() and running.exists() and not other.exists()
    assert all(path.exists() for path in absurd)


def test_any_write_sweeps_the_partials_killed_writers_left_in_its_folder(tmp_path: Path) -> None:
    dead = _dead_pid()
    file_partial = tmp_path / f".report.html.{dead}.k2_x9q0z.partial"
    folder_partial = tmp_path / f".dataset.{dead}.abcd1234.partial"  # an AtomicFolder's
    file_partial.write_text("half")
    (folder_partial / "data").mkdir(parents=True)
    (folder_partial / "data" / "train.jsonl").write_text("half")
    with AtomicOutputs([tmp_path / "a.json"], force=False) as outputs:
        outputs.open(tmp_path / "a.json").write("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
    file_partial.write_text("half")
    with AtomicFolder(tmp_path / "out", force=False) as folder:
        (folder / "card.md").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "out"]


def test_a_partial_whose_writer_is_alive_is_kept(tmp_path: Path) -> None:
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        partial = tmp_path / f".b.json.{writer.pid}.abcd1234.partial"
        folder = tmp_path / f".c.{writer.pid}.abcd1234.partial"
        partial.write_text("still writing")
        folder.mkdir()
        with AtomicOutputs([tmp_path / "a.json"], force=False) as outputs:
            outputs.open(tmp_path / "a.json").write("x")
        with AtomicFolder(tmp_path / "d", force=False):
            pass
        assert partial.read_text() == "still writing" and folder.is_dir()
    finally:
        writer.kill()
        writer.wait()


def test_files_named_almost_like_partials_are_kept(tmp_path: Path) -> None:
    dead = _dead_pid()
    names = [
        f".a.json.{dead}.abcd1234.partial.bak",
        f"a.json.{dead}.abcd1234.partial",  # no leading dot
        f".a.json.{dead}.ABCD1234.partial",  # tempfile's random part is lower case
        f".a.json.{dead}.abcd123.partial",  # and eight characters
        f".a.json.{dead}.abcd12345.partial",
        f".a.json.0{dead}.abcd1234.partial",
        f".{dead}.abcd1234.partial",  # no output name
        f".a.json.{dead}.abcd1234.old",  # an aside, only its own target's run puts it back
        f".a.json.{dead}.abcd1234",
        "notes.partial",
    ]
    for name in names:
        (tmp_path / name).write_text("theirs")
    with AtomicOutputs([tmp_path / "a.json"], force=False) as outputs:
        outputs.open(tmp_path / "a.json").write("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names, "a.json"])


def test_a_link_named_like_a_partial_is_neither_followed_nor_removed(tmp_path: Path) -> None:
    dead = _dead_pid()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "folder").mkdir(parents=True)
    (elsewhere / "folder" / "keep.txt").write_text("keep")
    (elsewhere / "file.txt").write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    to_folder = out / f".x.{dead}.abcd1234.partial"
    to_file = out / f".y.{dead}.abcd1234.partial"
    to_folder.symlink_to(elsewhere / "folder", target_is_directory=True)
    to_file.symlink_to(elsewhere / "file.txt")
    with AtomicOutputs([out / "a.json"], force=False) as outputs:
        outputs.open(out / "a.json").write("x")
    assert to_folder.is_symlink() and to_file.is_symlink()
    assert (elsewhere / "folder" / "keep.txt").read_text() == "keep"
    assert (elsewhere / "file.txt").read_text() == "keep"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs chown")
def test_a_partial_of_another_user_is_kept(tmp_path: Path) -> None:
    partial = tmp_path / f".b.json.{_dead_pid()}.abcd1234.partial"
    partial.write_text("theirs")
    os.chown(partial, 54321, 54321)
    with AtomicOutputs([tmp_path / "a.json"], force=False) as outputs:
        outputs.open(tmp_path / "a.json").write("x")
    assert partial.exists()


def test_a_sweep_that_fails_never_fails_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    left = tmp_path / f".b.json.{_dead_pid()}.abcd1234.partial"
    left.mkdir()

    def refused(path: object, *args: object, **kwargs: object) -> Any:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    for name in ("scandir", "rmtree"):  # a folder it may not list, a partial it may not remove
        with monkeypatch.context() as patched:
            patched.setattr(atomic.os if name == "scandir" else atomic.shutil, name, refused)
            target = tmp_path / f"{name}.json"
            with AtomicOutputs([target], force=False) as outputs:
                outputs.open(target).write("x")
            assert target.read_text() == "x" and left.exists()


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(
        # near misses of .<name>.<pid>.<random>.partial, and hits (dead pids mostly)
        st.from_regex(
            r"\.[a-z.]{0,4}\.[0-9]{1,11}\.[0-9a-zA-Z_.]{6,10}\.partia?l?", fullmatch=True
        ),
        max_size=6,
    )
)
def test_only_partial_names_a_writer_made_are_ever_swept(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name in set(names):
            (Path(folder) / name).write_text("")
        for path in stale_partials(Path(folder)):
            *name, pid, random_part, suffix = path.name[1:].split(".")
            assert name and pid.isdigit() and not pid.startswith("0")
            assert len(random_part) == 8 and suffix == "partial"


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.from_regex(r"\.a\.json\.[0-9a-z._]{0,24}", fullmatch=True), max_size=6))
def test_only_names_a_writer_made_are_ever_swept(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name in set(names):
            (Path(folder) / name).write_text("")
        for path in stale(Path(folder), ".a.json.", ".partial"):
            pid, random_part, _ = path.name.removeprefix(".a.json.").split(".")
            assert pid.isdigit() and len(random_part) == 8


def test_a_full_disk_names_the_output_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    with pytest.raises(OutputError) as raised, AtomicOutputs([target], force=False) as outputs:
        outputs.open(target).write("x")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert str(target) in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_before_any_output_names_the_temporary_folder(tmp_path: Path) -> None:
    target = tmp_path / "a.csv"
    with pytest.raises(OutputError) as raised, AtomicOutputs([target], force=False):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert str(target) in str(raised.value) and tempfile.gettempdir() in str(raised.value)


def test_an_abort_whose_last_flush_fails_still_removes_the_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a.json"

    class Failing(io.StringIO):
        def close(self) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(RuntimeError), AtomicOutputs([target], force=False) as outputs:
        outputs.open(target).write("x")
        temporary, handle = outputs._pending[target]
        handle.close()
        outputs._pending[target] = (temporary, Failing())
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_a_folder_created_while_writing_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "out"
    with pytest.raises(OutputError), AtomicFolder(target, force=False) as folder:
        (folder / "a.jsonl").write_text("ours")
        target.mkdir()
        (target / "theirs").write_text("keep")
    assert [p.name for p in target.iterdir()] == ["theirs"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_folder_set_aside_by_a_killed_run_is_put_back(tmp_path: Path) -> None:
    aside = tmp_path / f".out.{_dead_pid()}.abcd1234.old"
    aside.mkdir()
    (aside / "data.jsonl").write_text("old")
    with AtomicFolder(tmp_path / "out", force=True) as folder:
        (folder / "data.jsonl").write_text("new")
    assert (tmp_path / "out" / "data.jsonl").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_scratch_folder_is_removed_and_a_stale_one_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / f"blueprint-roundtrip-{_dead_pid()}.abcd1234"
    stale.mkdir()
    (stale / "big.jsonl").write_text("x")
    with scratch_folder("roundtrip") as folder:
        assert folder.parent == tmp_path and folder.name.startswith(
            f"blueprint-roundtrip-{os.getpid()}."
        )
        assert not stale.exists()
    assert list(tmp_path.iterdir()) == []


class _Stopped(Exception):
    pass


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("kind", ["file", "folder"])
def test_a_signal_as_a_partial_is_made_leaves_no_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A SIGTERM that arrives the moment the partial exists, before it is noted, still ends
    with the partial removed (the command line turns SIGTERM into an exception)."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise _Stopped

    name = "mkstemp" if kind == "file" else "mkdtemp"
    real = getattr(tempfile, name)

    def made_then_signalled(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)
        # to this thread, as a command's one thread receives it (another thread of the test
        # runner would take a signal sent to the process)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
        return made

    previous = signal.signal(signal.SIGTERM, stop)
    monkeypatch.setattr(tempfile, name, made_then_signalled)
    try:
        with pytest.raises(_Stopped):
            if kind == "file":
                with AtomicOutputs([tmp_path / "out.txt"], force=False) as outputs:
                    outputs.open(tmp_path / "out.txt").write("x")
            else:
                with AtomicFolder(tmp_path / "out.dir", force=False) as folder:
                    (folder / "a").write_text("x")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM is POSIX's")
def test_a_stop_the_instant_a_scratch_folder_is_made_still_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM that comes the instant the folder is made (delivered to any thread) finds
    its removal promised already: the stop removes the folder."""
    import signal

    class Stopped(Exception):
        pass

    def stop(*_: Any) -> None:
        raise Stopped

    made = Path.mkdir

    def made_then_stopped(path: Path, *args: Any, **kwargs: Any) -> None:
        made(path, *args, **kwargs)
        if path.name.startswith("blueprint-stopped-"):
            os.kill(os.getpid(), signal.SIGTERM)  # here, before scratch_folder has it back

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(Path, "mkdir", made_then_stopped)
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stopped), scratch_folder("stopped"):
            pytest.fail("the stop comes before the block runs")
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert list(tmp_path.iterdir()) == []
