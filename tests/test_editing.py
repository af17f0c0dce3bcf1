"""The one edit path: every command that rewrites a set is locked, stamped and keeps its file."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import blueprint.io.atomic as atomic
from blueprint.authoring.builder import AddRequest, OracleRequest, add_row, set_oracle
from blueprint.authoring.curate import (
    FamilyDefinition,
    FamilyEdit,
    PromoteRequest,
    accept_derived,
    add_family,
    edit_family,
    promote,
    remove_family,
    remove_rows,
    rename_row,
)
from blueprint.authoring.editing import EditRefused
from blueprint.authoring.hygiene import remove_duplicates
from blueprint.authoring.merge import MergeOptions, merge_sets
from blueprint.authoring.splits import (
    SampleOptions,
    SplitOptions,
    parse_ratios,
    sample_set,
    split_set,
)
from blueprint.core.errors import OutputExistsError, UsageError
from blueprint.formats import REGISTRY
from blueprint.io.locking import SetBusyError, SetChangedError, lock_path_for
from conftest import row
from curation_sets import SUFFIXES, curation_set, rows_of, snapshot, write_set
from test_locking import HOLD

HALVES = parse_ratios("a=0.5,b=0.5")

#: every command that rewrites a set, each rewriting the set at the path it is given
EDITS: dict[str, Callable[[Path], object]] = {
    "oracle": lambda path: set_oracle(path, OracleRequest("d", "acceptable-set")),
    "add": lambda path: add_row(
        path,
        AddRequest(None, "f", "q", "b", "expert-authored", "x", oracle_type="reference-answer"),
    ),
    "rm": lambda path: remove_rows(path, ["b", "d"]),
    "rename": lambda path: rename_row(path, "b", "b2"),
    "family add": lambda path: add_family(path, FamilyDefinition("fresh", "rubric")),
    "family edit": lambda path: edit_family(path, FamilyEdit("lookup", title="Look-ups")),
    "family rm": lambda path: remove_family(path, "lookup", "detach"),
    "accept": lambda path: accept_derived(path, ["e"]),
    "promote": lambda path: promote(path, PromoteRequest(("d",), "expert-authored", "Ana")),
    "merge": lambda path: merge_sets(
        path, path.with_name(f"other{path.suffix}"), path, MergeOptions(force=True)
    ),
    "dedupe": lambda path: remove_duplicates([path], path, force=True),
    "split": lambda path: split_set(path, SplitOptions(HALVES, seed=1)),
    "sample": lambda path: sample_set(path, path, SampleOptions(size=3, seed=1, force=True)),
}

#: the edits that change no set-level field
ROWS_ONLY = [command for command in EDITS if not command.startswith(("family", "merge"))]


def _edited_set(folder: Path, suffix: str) -> Path:
    """The curation set, and beside it the set that merge merges into it."""
    write_set(folder / f"other{suffix}", [row("z")])
    return curation_set(folder, suffix)


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("command", list(EDITS))
def test_every_edit_refuses_a_set_changed_since_it_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, suffix: str
) -> None:
    path = _edited_set(tmp_path, suffix)
    before = snapshot(tmp_path)
    theirs = path.read_bytes() + b"\n"
    real = atomic.check_unchanged

    def meanwhile(target: Path) -> None:
        if target.resolve() == path.resolve() and path.read_bytes() != theirs:
            path.write_bytes(theirs)  # another program saves the set just before the rename
        real(target)

    monkeypatch.setattr(atomic, "check_unchanged", meanwhile)
    with pytest.raises(SetChangedError) as refused:
        EDITS[command](path)
    assert str(path) in str(refused.value) and refused.value.exit_code == 1
    # their change stands; nothing else was written, and no lock or partial file is left
    assert snapshot(tmp_path) == {**before, path.name: theirs}


@pytest.mark.parametrize("command", list(EDITS))
def test_every_edit_refuses_a_set_another_process_edits(tmp_path: Path, command: str) -> None:
    path = _edited_set(tmp_path, ".csv")
    before = snapshot(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(SetBusyError) as refused:
            EDITS[command](path)
        assert f"process {holder.pid}" in str(refused.value)
        assert snapshot(tmp_path) == {**before, lock_path_for(path).name: b"%d\n" % holder.pid}
    finally:
        holder.kill()
        holder.wait()


#: per command that writes a set whole: a refusal, and its error
REFUSED: dict[str, tuple[Callable[[Path], object], type[Exception]]] = {
    "dedupe": (lambda path: remove_duplicates([path], path), OutputExistsError),
    "split": (lambda path: split_set(path, SplitOptions(HALVES, seed=2)), EditRefused),
    "sample": (
        lambda path: sample_set(path, path, SampleOptions(size=50, seed=1, force=True)),
        UsageError,
    ),
}


@pytest.mark.parametrize("command", list(REFUSED))
def test_a_refused_rewrite_leaves_the_folder_byte_identical(tmp_path: Path, command: str) -> None:
    path = curation_set(tmp_path, ".csv")
    split_set(path, SplitOptions(HALVES, seed=1))  # split refuses a set split already
    before = snapshot(tmp_path)
    refusal, error = REFUSED[command]
    with pytest.raises(error):
        refusal(path)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", ROWS_ONLY)
def test_a_rewrite_in_place_keeps_the_format_the_columns_and_no_set_file(
    tmp_path: Path, command: str
) -> None:
    path = curation_set(tmp_path, ".csv")
    path.with_name(f"{path.name}.set.json").unlink()  # a spreadsheet's CSV, alone
    columns = REGISTRY["csv"].open(path).columns or ()
    assert columns[:2] == ("metadata.source", "case.provenance")  # a person's order
    EDITS[command](path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    new = REGISTRY["csv"].open(path).columns or ()
    assert [name for name in new if name in columns] == [name for name in columns if name in new]
    assert rows_of(path)
