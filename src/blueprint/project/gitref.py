"""A set as it was at a git revision: its files taken out of the repository into a folder.

``blueprint diff --against REF PATH`` compares a set with its version at REF. The version is
taken with git itself (``git ls-tree`` and ``git cat-file``, never a shell), together with the
set file beside a CSV or JSONL and every file of a dataset folder, and written under a
temporary folder with the same relative path, so that format detection sees what it would see
in the repository.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from blueprint.core.errors import OutputError, ParseError, UsageError
from blueprint.diff import ComparedSet, LoadedSet, index_for_diff, load_for_diff, renamed_error
from blueprint.formats.setfile import set_file_for
from blueprint.io.atomic import scratch_folder


def _git(folder: Path, *args: str, into: IO[bytes] | None = None) -> bytes:
    """What git prints (nothing when ``into`` takes it: a file, so that a set of any size is
    taken out without being held)."""
    executable = shutil.which("git")
    if executable is None:
        raise UsageError("--against needs git, which is not installed")
    try:
        completed = subprocess.run(
            [executable, *args],
            cwd=folder,
            stdout=subprocess.PIPE if into is None else into,
            stderr=subprocess.PIPE,
            check=False,
            timeout=None if into is not None else 120,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UsageError(f"git {' '.join(args[:1])} failed: {error}") from None
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]}: {message[-1] if message else 'failed'}")
    return completed.stdout or b""


def _existing_folder(path: Path) -> Path:
    folder = path if path.is_dir() else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def repository_root(path: Path) -> Path:
    folder = _existing_folder(path.resolve())
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
    except UsageError:
        raise UsageError(
            f"{path}: not inside a git repository, so --against has nothing to read"
        ) from None
    return Path(top.decode("utf-8").strip())


def resolve_revision(root: Path, revision: str) -> str:
    """The commit a revision names; refuses anything git would take for an option."""
    if not revision or revision.startswith("-"):
        raise UsageError(f"{revision!r} is not a git revision")
    try:
        return (
            _git(root, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
            .decode("ascii")
            .strip()
        )
    except UsageError:
        raise UsageError(f"{revision!r} names no commit in {root}") from None


def set_at_revision(path: Path, revision: str, into: Path) -> Path | None:
    """Write the set at ``path`` as it was at ``revision`` under ``into``; the path of the
    copy, or None when the set did not exist then."""
    root = repository_root(path)
    commit = resolve_revision(root, revision)
    relative = _relative(path, root)
    companion = set_file_for(relative)
    listed = _git(
        root, "ls-tree", "-r", "-z", "--name-only", commit, "--", str(relative), str(companion)
    )
    names = [name.decode("utf-8") for name in listed.split(b"\0") if name]
    if not names:
        return None
    for name in names:
        target = into / name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("wb") as handle:
                _git(root, "cat-file", "blob", f"{commit}:{name}", into=handle)
        except OSError as error:
            raise OutputError(
                into,
                f"{error.strerror or error}: the set at {revision} is taken out to the temporary"
                " folder to compare (set TMPDIR to a folder with room)",
            ) from None
    return into / relative


def _relative(path: Path, root: Path) -> Path:
    """A path relative to the repository root; it may no longer exist in the working tree."""
    try:
        return path.resolve().relative_to(root)
    except ValueError:
        raise UsageError(f"{path}: outside the git repository {root}") from None


def load_at_revision(path: Path, revision: str, *, format: str | None = None) -> LoadedSet:
    """The set at ``path`` as it was at ``revision``, read whole for comparing; a set that
    did not exist then has no rows."""
    with scratch_folder("revision") as folder:
        copy = set_at_revision(path, revision, Path(folder))
        label = f"{path}@{revision}"
        if copy is None:
            return _absent(path, revision)
        try:
            return load_for_diff(copy, format, label=label)
        except ParseError as error:  # name the file as the user knows it, not the copy
            raise renamed_error(error, Path(label)) from None


@contextlib.contextmanager
def revision_for_diff(
    path: Path, revision: str, *, format: str | None = None
) -> Iterator[ComparedSet]:
    """The set at ``path`` as it was at ``revision``, to compare without holding it: its
    files are taken out to a scratch folder, which lasts as long as the context, and its
    rows read from there as they are compared. Its errors name ``path@revision``. A set
    that did not exist then has no rows."""
    with scratch_folder("revision") as folder:
        copy = set_at_revision(path, revision, Path(folder))
        if copy is None:
            yield _absent(path, revision)
            return
        label = f"{path}@{revision}"
        try:
            compared = index_for_diff(copy, format, label=label, shown_as=Path(label))
        except ParseError as error:
            raise renamed_error(error, Path(label)) from None
        yield compared


def _absent(path: Path, revision: str) -> LoadedSet:
    return LoadedSet(f"{path}@{revision}", None, {}, [f"{path} did not exist at {revision}"])
