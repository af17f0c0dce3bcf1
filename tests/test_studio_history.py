"""The studio's row against its version at git HEAD: read once a commit, rows kept by id."""

from __future__ import annotations

from pathlib import Path

from blueprint.studio.history import History, row_diff
from conftest import document, git, row, write_json


def test_a_row_is_compared_with_its_version_at_head(tmp_path: Path) -> None:
    path = write_json(tmp_path / "set.json", document(row("a"), row("b", scenario="first")))
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "first")
    history = History()
    found = history.head_row(path, "b")
    assert found.unavailable is None and found.commit
    assert found.row["metadata"]["case"]["scenario"] == "first"
    assert history.head_row(path, "new since").row is None
    # a new commit is read again
    write_json(path, document(row("a"), row("b", scenario="second")))
    git(tmp_path, "commit", "-qam", "second")
    again = history.head_row(path, "b")
    assert again.commit != found.commit
    assert again.row["metadata"]["case"]["scenario"] == "second"
    lines = row_diff(found.row, again.row, before_label="HEAD~1", after_label="HEAD")
    assert any(line.startswith("-") and "first" in line for line in lines)


def test_outside_a_repository_there_is_nothing_to_compare_with(tmp_path: Path) -> None:
    path = write_json(tmp_path / "set.json", document(row("a")))
    found = History().head_row(path, "a")
    assert found.commit is None and found.unavailable
