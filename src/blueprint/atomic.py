"""Writing output files so that a failure never leaves a half-written or clobbered file.

Every target is first written to a temporary file in the same folder; only when all targets
of one operation are complete are they renamed into place. Existing files are replaced only
when the caller says so (``--force``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Literal, overload

from blueprint.errors import OutputError, OutputExistsError


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
        self._pending: dict[Path, tuple[Path, IO[bytes] | IO[str]]] = {}

    @overload
    def open(self, target: Path, mode: Literal["wb"]) -> IO[bytes]: ...
    @overload
    def open(self, target: Path, mode: Literal["w"] = "w") -> IO[str]: ...

    def open(self, target: Path, mode: str = "w") -> IO[bytes] | IO[str]:
        target = self._given.get(Path(target), Path(target))
        if target not in self.targets:
            raise ValueError(f"{target} was not declared as an output")
        try:
            descriptor, temporary = tempfile.mkstemp(
                dir=target.parent, prefix=f".{target.name}.", suffix=".partial"
            )
        except OSError as error:
            raise OutputError(target, error.strerror or str(error)) from None
        handle: IO[bytes] | IO[str]
        if mode == "wb":
            handle = os.fdopen(descriptor, "wb")
        else:
            handle = os.fdopen(descriptor, "w", encoding="utf-8", newline="")
        self._pending[target] = (Path(temporary), handle)
        return handle

    def commit(self) -> None:
        target = None
        try:
            for target, (temporary, handle) in self._pending.items():
                handle.close()
                mode = target.stat().st_mode & 0o777 if target.exists() else _default_mode()
                temporary.chmod(mode)
            for target, (temporary, _) in self._pending.items():
                temporary.replace(target)
        except OSError as error:
            self.abort()
            raise OutputError(target or self.targets[0], error.strerror or str(error)) from None
        self._pending.clear()

    def abort(self) -> None:
        for temporary, handle in self._pending.values():
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
        else:
            self.abort()


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
        self._temporary: Path | None = None

    def __enter__(self) -> Path:
        try:
            self._temporary = Path(
                tempfile.mkdtemp(
                    dir=self.target.parent, prefix=f".{self.target.name}.", suffix=".partial"
                )
            )
        except OSError as error:
            raise OutputError(self.target, error.strerror or str(error)) from None
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
            return
        try:
            temporary.chmod(0o777 & ~_umask())
            if self.target.is_dir() and not any(self.target.iterdir()):
                self.target.rmdir()
            if self.target.exists():
                aside = Path(
                    tempfile.mkdtemp(
                        dir=self.target.parent, prefix=f".{self.target.name}.", suffix=".old"
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
            else:
                temporary.rename(self.target)
        except OSError as error:
            shutil.rmtree(temporary, ignore_errors=True)
            raise OutputError(self.target, error.strerror or str(error)) from None


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
