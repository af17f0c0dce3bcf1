"""Atomic outputs: complete files or none, never a clobbered one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from blueprint.atomic import AtomicFolder, AtomicOutputs
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
