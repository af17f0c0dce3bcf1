"""Atomic outputs: complete files or none, never a clobbered one."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprint.atomic import AtomicOutputs
from blueprint.errors import OutputError, OutputExistsError


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
