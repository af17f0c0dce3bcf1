"""The edit lock and the check at the rename: two edits of one set never lose an update."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from blueprint.authoring.curate import remove_rows
from blueprint.authoring.editing import EditOptions, EditRefused, editing
from blueprint.authoring.hygiene import remove_duplicates
from blueprint.authoring.merge import MergeOptions, merge_sets
from blueprint.io.locking import EditLock, SetBusyError, SetChangedError, lock_path_for
from curation_sets import SUFFIXES, curation_set, rows_of, snapshot

HOLD = """
import sys, time
from pathlib import Path
from blueprint.io.locking import EditLock
EditLock(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(60)
"""


def test_a_set_another_process_edits_is_refused_naming_it(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".csv")
    before = snapshot(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(SetBusyError) as refused:
            remove_rows(path, ["a"])
        assert f"process {holder.pid}" in str(refused.value)
        assert refused.value.exit_code == 1
        assert snapshot(tmp_path) == {**before, lock_path_for(path).name: b"%d\n" % holder.pid}
        # a dry run writes nothing, so it takes no lock and runs meanwhile
        assert remove_rows(path, ["a"], EditOptions(dry_run=True)).written is not None
    finally:
        holder.kill()
        holder.wait()
    remove_rows(path, ["a"])  # a lock its killed holder left is taken, and removed after
    assert "a" not in rows_of(path)
    assert not lock_path_for(path).exists()


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_change_made_while_the_edit_ran_is_not_overwritten(tmp_path: Path, suffix: str) -> None:
    path = curation_set(tmp_path, suffix)
    theirs = path.read_bytes() + b"\n"  # an editor saves the file meanwhile
    with pytest.raises(SetChangedError) as refused, editing(path) as edited:
        rows = list(edited.rows())
        path.write_bytes(theirs)
        edited.commit(rows[1:], len(rows) - 1)
    assert str(path) in str(refused.value) and refused.value.exit_code == 1
    assert path.read_bytes() == theirs
    assert not lock_path_for(path).exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_refused_edit_leaves_no_lock_behind(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".jsonl")
    before = snapshot(tmp_path)
    with pytest.raises(EditRefused):
        remove_rows(path, ["no-such-row"])
    assert snapshot(tmp_path) == before


def test_one_process_may_open_a_set_twice(tmp_path: Path) -> None:
    path = curation_set(tmp_path, ".json")
    merge_sets(path, path, tmp_path / "merged.json", MergeOptions())
    first, second = EditLock(path), EditLock(path)
    first.release()
    assert lock_path_for(path).exists()
    second.release()
    assert not lock_path_for(path).exists()


def test_an_in_place_dedupe_is_checked_at_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = curation_set(tmp_path, ".jsonl")
    theirs = path.read_bytes() + b"\n"
    import blueprint.authoring.hygiene as hygiene

    real = hygiene.find_duplicates

    def meanwhile(*args: object, **kwargs: object) -> object:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        path.write_bytes(theirs)  # another program writes the set after it was read
        return found

    monkeypatch.setattr(hygiene, "find_duplicates", meanwhile)
    with pytest.raises(SetChangedError):
        remove_duplicates([path], path, force=True)
    assert path.read_bytes() == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, f"{path.name}.set.json"]
