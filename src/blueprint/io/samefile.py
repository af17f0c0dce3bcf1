"""An output never replaces what the command reads, however the two are named.

``-o set.json --force`` on a report of ``set.json`` would replace the golden set with the
report. Two names are one file when they resolve to one path (``./set.json``, ``a/../set.json``,
a symbolic link) or when they are two names of one file on disk (a hard link): both are
refused, with ``--force`` or without.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from blueprint.core.errors import UsageError


def same_file(one: Path, other: Path) -> bool:
    """Whether ``one`` and ``other`` name one file (existing or not)."""
    if _resolved(one) == _resolved(other):
        return True
    try:
        return one.samefile(other)
    except (OSError, ValueError):  # one is missing (a new output): not the same file
        return False


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of links: the path as given
        return Path.cwd() / path


def refuse_writing_over(
    outputs: Iterable[Path], inputs: Iterable[Path], *, instead: str = ""
) -> None:
    """A usage error (exit 2) when an output is one of the inputs; ``instead`` says what to
    do rather (``use --in-place``)."""
    read = list(inputs)
    for output in outputs:
        for given in read:
            if same_file(output, given):
                same = "" if str(output) == str(given) else f" (it is {given})"
                raise UsageError(
                    f"{output}: the output would replace a file this command reads{same};"
                    f" {instead or 'write it to another file'} (--force does not change this)"
                )
