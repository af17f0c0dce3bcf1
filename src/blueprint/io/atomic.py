"""Writing output files so that a failure never leaves a half-written or clobbered file.

Every target is first written to a temporary file in the same folder; only when all targets
of one operation are complete are they renamed into place. Existing files are replaced only
when the caller says so (``--force``), and a target that appears while the output is written
is not replaced either: the final rename itself refuses to replace. Temporary names carry the
writer's process id, so that what a killed run left behind is removed by the next one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import IO, Final, Literal, overload

from blueprint.core.errors import BlueprintError, OutputError, OutputExistsError
from blueprint.io.locking import check_unchanged

#: errors that mean the disk (or the quota) is full, not that the data is wrong
_DISK_FULL: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: what tempfile adds after a prefix: our process id, then its eight random characters
_OWNED_NAME: Final = re.compile(r"([1-9]\d{0,9})\.[a-z0-9_]{8}")
#: an unfinished output of any target: ``.<name>.`` then the above, then ``.partial``
_PARTIAL_NAME: Final = re.compile(r"\..+\.([1-9]\d{0,9})\.[a-z0-9_]{8}\.partial")
#: whose leftovers a sweep may remove (None where files have no owner id: Windows)
_OWN_UID: Final = os.getuid() if hasattr(os, "getuid") else None


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # it exists and is someone else's; or no pid at all
        return True
    return True


def stale(folder: Path, prefix: str, suffix: str = "") -> list[Path]:
    """Entries of ``folder`` named ``prefix<pid>.<random>suffix`` whose process has ended:
    what a killed run left there."""

    def writer(name: str) -> int | None:
        if not (name.startswith(prefix) and name.endswith(suffix)):
            return None
        owned = _OWNED_NAME.fullmatch(name[len(prefix) : len(name) - len(suffix)])
        return None if owned is None else int(owned.group(1))

    return _left_by_ended(folder, writer)


def stale_partials(folder: Path) -> list[Path]:
    """The unfinished outputs (``.<name>.<pid>.<random>.partial``) of any target in
    ``folder`` whose writer has ended: a SIGKILL, which no handler sees, leaves them."""

    def writer(name: str) -> int | None:
        owned = _PARTIAL_NAME.fullmatch(name)
        return None if owned is None else int(owned.group(1))

    return _left_by_ended(folder, writer)


def _left_by_ended(folder: Path, writer: Callable[[str], int | None]) -> list[Path]:
    """Entries of ``folder`` whose name ``writer`` reads a process id from, that process
    having ended. Only this user's own files and folders: a symbolic link is never one
    Blueprint made (so it is neither followed nor removed), and neither is a file of
    another user, whose processes this one cannot see the end of."""
    found = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        pid = writer(entry.name)
        if pid is None or _alive(pid):
            continue
        try:
            if entry.is_symlink() or not (
                entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)
            ):
                continue
            if _OWN_UID is not None and entry.stat(follow_symlinks=False).st_uid != _OWN_UID:
                continue
        except OSError:
            continue
        found.append(folder / entry.name)
    return found


def sweep_partials(folder: Path) -> None:
    """Remove what killed writers left in ``folder``; a sweep that cannot (a folder it may
    not list, a file it may not remove) leaves things as they are and never fails a write."""
    for left in stale_partials(folder):
        with contextlib.suppress(OSError):
            _remove(left)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def _owned_prefix(target: Path) -> str:
    return f".{target.name}.{os.getpid()}."


@contextmanager
def scratch_folder(purpose: str) -> Iterator[Path]:
    """A private folder in the system's temporary folder, removed afterwards; one that a
    killed run left (``blueprint-<purpose>-<pid>.<random>``) is removed by the next."""
    base = Path(tempfile.gettempdir())
    for left in stale(base, f"blueprint-{purpose}-"):
        _remove(left)
    # the folder's removal is promised before it exists: a stop (SIGTERM, Ctrl-C) the
    # instant it is made, in any thread, still removes it
    made: list[Path] = []
    try:
        try:
            for _ in range(_NAME_TRIES):
                name = "".join(secrets.choice(_NAME_CHARACTERS) for _ in range(8))
                made.append(base / f"blueprint-{purpose}-{os.getpid()}.{name}")
                try:
                    made[-1].mkdir(mode=0o700)
                    break
                except FileExistsError:
                    made.pop()  # another's: never removed
            else:
                raise FileExistsError(errno.EEXIST, "every name tried is taken")
        except OSError as error:
            made.clear()  # not made
            reason = f"no temporary folder can be made there: {_reason(error)}"
            raise OutputError(base, reason) from None
        yield made[-1]
    finally:
        for folder in made:
            shutil.rmtree(folder, ignore_errors=True)


#: the letters of a scratch folder's random part (those ``tempfile.mkdtemp`` uses), and how
#: many names are tried before giving up
_NAME_CHARACTERS: Final = "abcdefghijklmnopqrstuvwxyz0123456789_"
_NAME_TRIES: Final = 100


#: the signals the command line turns into a clean exit (see blueprint.cli); held back
#: while outputs are renamed into place, so that a group of files is never half renamed
_HELD_SIGNALS: Final = (
    () if sys.platform == "win32" else (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
)


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait (blocked) while the block runs, and arrive after it."""
    if not _HELD_SIGNALS:
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def _place_new(temporary: Path, target: Path) -> None:
    """Rename ``temporary`` to ``target``, failing with FileExistsError if ``target`` exists
    by then: created by another program while the output was written."""
    try:
        os.link(temporary, target)  # fails if the target exists, with no window between
    except FileExistsError:
        raise
    except OSError as error:
        if error.errno not in {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK}:
            raise
        # a file system without hard links: check just before the rename instead
        if target.exists() or target.is_symlink():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target)) from None
        temporary.rename(target)
        return
    temporary.unlink()


def _appeared(target: Path) -> OutputError:
    return OutputError(
        target,
        "another program created it while this command ran; it was left as it is and nothing"
        " was written (pass --force to replace it)",
    )


def _disk_full(error: OSError, target: Path | None, fallback: Path) -> OutputError:
    """The disk filled while writing ``target``; before any output was opened, what filled
    was the temporary folder, where a writer puts rows aside."""
    if target is not None:
        return OutputError(target, _reason(error))
    return OutputError(
        fallback,
        f"{_reason(error)} in the temporary folder {tempfile.gettempdir()} (set TMPDIR to a"
        " folder with room)",
    )


def _refuse_link(target: Path) -> None:
    """An output that is a symbolic link (or a dangling one) would write where the link
    points, a file the user never named: refused, naming where it leads."""
    leads = target.readlink()
    raise OutputError(
        target,
        f"it is a symbolic link (to {leads}); name the file itself to write there",
    )


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class AtomicOutputs:
    """A group of output files that appear together, or not at all.

    Use as a context manager: files opened with :meth:`open` are renamed into place when the
    block ends normally and deleted when it raises.
    """

    def __init__(self, targets: list[Path], *, force: bool, follow_links: bool = False) -> None:
        for target in map(Path, targets):
            if target.is_symlink() and not follow_links:
                _refuse_link(target)
        # an edit through a symbolic link replaces the file it points to, not the link
        self.targets = [
            Path(target).resolve() if Path(target).is_symlink() else Path(target)
            for target in targets
        ]
        self._given = dict(zip([Path(target) for target in targets], self.targets, strict=True))
        for target in self.targets:
            # checked before anything is written, so that no rename can fail half-way
            if target.is_dir():
                raise OutputError(target, "it is a folder")
            if not target.parent.is_dir():
                raise OutputError(target, f"the folder {target.parent} does not exist")
            if target.exists() and not target.is_file():
                # --force replaces a file, never a device, a pipe or a socket with one
                raise OutputError(target, "it is not a regular file, and only a file is replaced")
            if target.exists() and not force:
                raise OutputExistsError(target)
        self.force = force
        for folder in dict.fromkeys(target.parent for target in self.targets):
            sweep_partials(folder)
        self._pending: dict[Path, tuple[Path, IO[bytes] | IO[str]]] = {}
        self._last_opened: Path | None = None

    @overload
    def open(self, target: Path, mode: Literal["wb"]) -> IO[bytes]: ...
    @overload
    def open(self, target: Path, mode: Literal["w"] = "w") -> IO[str]: ...

    def open(self, target: Path, mode: str = "w") -> IO[bytes] | IO[str]:
        target = self._given.get(Path(target), Path(target))
        if target not in self.targets:
            raise ValueError(f"{target} was not declared as an output")
        handle: IO[bytes] | IO[str]
        # a signal between creating the partial and noting it would leave it behind: the
        # two happen with signals held, so abort() always knows what to remove
        with signals_held():
            try:
                descriptor, temporary = tempfile.mkstemp(
                    dir=target.parent, prefix=_owned_prefix(target), suffix=".partial"
                )
            except OSError as error:
                raise OutputError(target, _reason(error)) from None
            if mode == "wb":
                handle = os.fdopen(descriptor, "wb")
            else:
                handle = os.fdopen(descriptor, "w", encoding="utf-8", newline="")
            self._pending[target] = (Path(temporary), handle)
        self._last_opened = target
        return handle

    def commit(self) -> None:
        target = None
        placed: list[Path] = []
        try:
            with signals_held():
                for target, (temporary, handle) in self._pending.items():
                    handle.close()
                    mode = target.stat().st_mode & 0o777 if target.exists() else _default_mode()
                    temporary.chmod(mode)
                for target in self._pending:
                    check_unchanged(target)
                for target, (temporary, _) in self._pending.items():
                    if self.force:
                        temporary.replace(target)
                    else:
                        _place_new(temporary, target)
                        placed.append(target)
                self._pending.clear()
        except FileExistsError:
            self._undo(placed)
            self.abort()
            raise _appeared(target or self.targets[0]) from None
        except OSError as error:
            self._undo(placed)
            self.abort()
            raise OutputError(target or self.targets[0], _reason(error)) from None
        except BaseException:
            self._undo(placed)
            self.abort()
            raise

    @staticmethod
    def _undo(placed: list[Path]) -> None:
        """Remove the new files already placed when a later one of the group cannot be: the
        group appears together or not at all (none of them existed before)."""
        for target in placed:
            with contextlib.suppress(OSError):
                target.unlink()

    def abort(self) -> None:
        for temporary, handle in self._pending.values():
            with contextlib.suppress(OSError):  # a full disk fails the last flush too
                handle.close()
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
        self._pending.clear()

    def __enter__(self) -> AtomicOutputs:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.commit()
            return
        self.abort()
        if _is_disk_full(exc):
            assert isinstance(exc, OSError)
            raise _disk_full(exc, self._last_opened, self.targets[0]) from None


def _is_disk_full(error: BaseException | None) -> bool:
    """An OSError of a full disk that names no file (a write to an open file): the caller
    names the output it was writing instead."""
    return (
        isinstance(error, OSError)
        and not isinstance(error, BlueprintError)
        and error.errno in _DISK_FULL
        and error.filename is None
    )


class AtomicFolder:
    """An output folder that appears whole, or not at all.

    The block writes into a temporary sibling folder (what ``with`` gives); when it ends
    normally, the folder is renamed into place. An existing folder is replaced only with
    ``force``: it is first renamed aside, and put back if the new one cannot take its place,
    so the target is never a mix of old and new files.
    """

    def __init__(self, target: Path, *, force: bool, follow_links: bool = False) -> None:
        target = Path(target)
        if target.is_symlink() and not follow_links:
            _refuse_link(target)
        self.target = target.resolve() if target.is_symlink() else target
        self.force = force
        if self.target.exists() and not self.target.is_dir():
            raise OutputError(self.target, "it is a file, and this output is a folder")
        if not self.target.parent.is_dir():
            raise OutputError(self.target, f"the folder {self.target.parent} does not exist")
        if self.target.is_dir() and any(self.target.iterdir()):
            if not force:
                raise OutputExistsError(self.target)
            if (self.target / ".git").exists():
                raise OutputError(
                    self.target,
                    "it holds a git repository (.git), and --force replaces the whole folder;"
                    " write to a new folder and copy the files in",
                )
        self._recover_stale()
        self._temporary: Path | None = None

    def _recover_stale(self) -> None:
        """Clear what a killed run left beside the target: unfinished outputs (its own and
        those of other targets in the folder), and the old folder it had set aside to
        replace, put back if the new one never took its place."""
        prefix = f".{self.target.name}."
        sweep_partials(self.target.parent)
        for aside in stale(self.target.parent, prefix, ".old"):
            if not self.target.exists():
                with contextlib.suppress(OSError):
                    aside.rename(self.target)
                    continue
            _remove(aside)

    def __enter__(self) -> Path:
        try:
            # held while the folder is made and noted; a signal waiting when they are
            # released is raised here, where __exit__ will not run: it is removed first
            with signals_held():
                try:
                    self._temporary = Path(
                        tempfile.mkdtemp(
                            dir=self.target.parent,
                            prefix=_owned_prefix(self.target),
                            suffix=".partial",
                        )
                    )
                except OSError as error:
                    raise OutputError(self.target, _reason(error)) from None
        except BaseException:
            if self._temporary is not None:
                _remove(self._temporary)
                self._temporary = None
            raise
        return self._temporary

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        temporary = self._temporary
        assert temporary is not None
        if exc_type is not None:
            shutil.rmtree(temporary, ignore_errors=True)
            if _is_disk_full(exc):
                assert isinstance(exc, OSError)
                raise OutputError(self.target, _reason(exc)) from None
            return
        try:
            with signals_held():
                self._place(temporary)
        except OSError as error:
            shutil.rmtree(temporary, ignore_errors=True)
            if isinstance(error, FileExistsError | IsADirectoryError) or (
                error.errno in {errno.ENOTEMPTY, errno.EEXIST}
            ):
                raise _appeared(self.target) from None
            raise OutputError(self.target, _reason(error)) from None
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise

    def _place(self, temporary: Path) -> None:
        temporary.chmod(0o777 & ~_umask())
        if self.target.is_dir() and not any(self.target.iterdir()):
            self.target.rmdir()
        if self.target.exists() and self.force:
            aside = Path(
                tempfile.mkdtemp(
                    dir=self.target.parent, prefix=_owned_prefix(self.target), suffix=".old"
                )
            )
            aside.rmdir()
            self.target.rename(aside)
            try:
                temporary.rename(self.target)
            except OSError:
                aside.rename(self.target)
                raise
            shutil.rmtree(aside, ignore_errors=True)
        elif self.target.exists() or self.target.is_symlink():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(self.target))
        else:
            # a folder renamed onto an empty folder replaces it: one that appeared since the
            # check above (a window of microseconds) is replaced only if it is empty
            temporary.rename(self.target)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
