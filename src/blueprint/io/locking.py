"""Keeping two edits of one set from racing: a lock beside the set, and a check at the rename.

An edit takes an advisory lock (``fcntl.flock``) on ``.X.csv.lock`` beside the set before it
reads, and holds it until its output has replaced the set; a second edit meanwhile is refused,
naming the process that holds the lock. A writer that takes no lock (an editor, a script)
is caught at the rename instead: the set's files must still be the ones that were read (same
inode, size, modification and change times), or nothing is written.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from blueprint.core.errors import BlueprintError

if sys.platform != "win32":
    import fcntl


class SetBusyError(BlueprintError, BlockingIOError):
    """Another process is editing the set; nothing was written."""

    exit_code = 1


class SetChangedError(BlueprintError, RuntimeError):
    """The set changed on disk after the edit read it; nothing was written."""

    exit_code = 1


@dataclass(frozen=True)
class Stamp:
    """What identifies one version of a file without reading it again (None: no file)."""

    inode: int
    size: int
    modified_ns: int
    changed_ns: int


def stamp_of(path: Path) -> Stamp | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return Stamp(found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


#: files an edit read, with their stamps then: the rename that replaces one checks it first
_READ_AS: ContextVar[Mapping[Path, Stamp | None] | None] = ContextVar(
    "blueprint_read_as", default=None
)


@contextmanager
def replacing_only_as_read(stamps: Mapping[Path, Stamp | None]) -> Iterator[None]:
    """Within the block, an atomic output that replaces one of these files first checks that
    it is still as it was read (see :func:`check_unchanged`)."""
    outer = _READ_AS.get() or {}
    token = _READ_AS.set({**outer, **{path.resolve(): stamp for path, stamp in stamps.items()}})
    try:
        yield
    finally:
        _READ_AS.reset(token)


def check_unchanged(target: Path) -> None:
    """Refuse to replace ``target`` if an edit read it and it has changed since."""
    expected = _READ_AS.get() or {}
    resolved = target.resolve()
    if resolved in expected and stamp_of(resolved) != expected[resolved]:
        raise SetChangedError(
            f"{target} changed since it was read (another program wrote it meanwhile);"
            " nothing was written. Run the command again"
        )


LOCK_SUFFIX: Final = ".lock"


def lock_path_for(path: Path) -> Path:
    real = path.resolve()
    return real.parent / f".{real.name}{LOCK_SUFFIX}"


@dataclass
class _Held:
    descriptor: int
    holders: int


#: locks this process holds, by lock file: a set opened twice at once (merging a set with
#: itself) shares one lock, as flock would refuse a second descriptor of the same process
_HELD: dict[Path, _Held] = {}


class EditLock:
    """The lock of one set, held from before the edit reads it until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = lock_path_for(path)
        self._held = False
        held = _HELD.get(self.lock_path)
        if held is not None:
            held.holders += 1
            self._held = True
            return
        descriptor = _acquire(path, self.lock_path)
        if descriptor is not None:
            _HELD[self.lock_path] = _Held(descriptor, 1)
            self._held = True

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        held = _HELD.get(self.lock_path)
        if held is None:  # released already, by the end of the edit that took it
            return
        held.holders -= 1
        if not held.holders:
            _unlock(self.lock_path)


def _unlock(lock_path: Path) -> None:
    held = _HELD.pop(lock_path)
    # removed while still locked, so that no one locks a file that is about to vanish
    with contextlib.suppress(OSError):
        lock_path.unlink()
    os.close(held.descriptor)


def _acquire(path: Path, lock_path: Path) -> int | None:
    """Lock ``lock_path`` without waiting; None where no lock can be taken (no flock, a
    folder this process may not write: the edit then relies on the check at the rename)."""
    if sys.platform == "win32":
        return None
    while True:
        try:
            descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            return None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(descriptor)
            os.close(descriptor)
            raise SetBusyError(
                f"{path} is being edited by {holder}; nothing was written. Run the command"
                " again when it has finished"
            ) from None
        except OSError:  # a file system without locks
            os.close(descriptor)
            return None
        # the holder before us may have removed the file between our open and our lock:
        # then we hold a lock no one else can see, and take it again on the file now there
        try:
            current = lock_path.stat().st_ino
        except FileNotFoundError:
            current = None
        if current != os.fstat(descriptor).st_ino:
            os.close(descriptor)
            continue
        with contextlib.suppress(OSError):  # only a courtesy to the next: a full disk may refuse
            os.ftruncate(descriptor, 0)
            os.write(descriptor, f"{os.getpid()}\n".encode())
        return descriptor


def _holder(descriptor: int) -> str:
    """Who holds the lock: the pid it wrote, which may take a moment to land after it locked."""
    for _ in range(_HOLDER_READS):
        try:
            text = os.pread(descriptor, 32, 0).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            break
        if text.isdigit():
            return f"process {text}"
        time.sleep(0.01)
    return "another process"


#: how many times (10 ms apart) to read the holder's pid before calling it "another process"
_HOLDER_READS: Final = 10


@contextmanager
def rewriting_in_place(files: tuple[Path, ...]) -> Iterator[None]:
    """For the edit path (``authoring.editing``): the set's lock is held, and its ``files``
    (the set first) are replaced only as they were read, for the whole block."""
    lock = EditLock(files[0])
    try:
        with replacing_only_as_read({file: stamp_of(file) for file in files}):
            yield
    finally:
        lock.release()
