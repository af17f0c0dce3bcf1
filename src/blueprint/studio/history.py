"""A row against its version at git ``HEAD``: what saving would change, before it is saved.

The set at ``HEAD`` is read once per commit (and per version of the set's files there) and its
rows kept by id; outside a git repository, or for a set git does not track, there is nothing
to compare with, and the page says so.
"""

from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blueprint.core.errors import BlueprintError
from blueprint.io import jsonvalues
from blueprint.project.gitref import load_at_revision, repository_root, resolve_revision


@dataclass(frozen=True)
class HeadRow:
    """The row at HEAD (None: it is new since), or why there is nothing to compare with."""

    commit: str | None
    row: Any = None
    unavailable: str | None = None


class History:
    """The sets at HEAD, read when first asked for and again when HEAD moves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[Path, tuple[str, dict[str, Any]]] = {}

    def head_row(self, path: Path, row_id: str) -> HeadRow:
        try:
            root = repository_root(path)
            commit = resolve_revision(root, "HEAD")
        except BlueprintError:
            return HeadRow(None, unavailable="the set is not in a git repository with commits")
        with self._lock:
            cached = self._cache.get(path)
            if cached is None or cached[0] != commit:
                try:
                    loaded = load_at_revision(path, "HEAD")
                except BlueprintError as error:
                    return HeadRow(commit, unavailable=f"the set at HEAD cannot be read: {error}")
                rows = {
                    key[0]: row for key, row in loaded.rows_by_key.items() if key[0] is not None
                }
                cached = self._cache[path] = (commit, rows)
        return HeadRow(commit, cached[1].get(row_id))


def row_diff(before: Any, after: Any, *, before_label: str, after_label: str) -> list[str]:
    """A unified diff of two versions of a row, as indented JSON; empty when they are equal."""
    old = [] if before is None else _lines(before)
    new = [] if after is None else _lines(after)
    return list(
        difflib.unified_diff(old, new, fromfile=before_label, tofile=after_label, lineterm="", n=2)
    )


def _lines(row: Any) -> list[str]:
    return jsonvalues.dumps_text(row, indent=True).splitlines()
