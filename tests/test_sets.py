"""load_set and save_set: the model-level API over the codecs."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprint import InvalidSetError, load_set, save_set
from blueprint.diff import diff_files
from conftest import EXAMPLES, FIXTURES, document, row, write_json


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_load_then_save_is_identical(tmp_path: Path, suffix: str) -> None:
    source = FIXTURES / "awkward" / f"awkward{suffix}"
    loaded = load_set(source)
    assert len(loaded.rows) == 9
    target = tmp_path / f"copy{suffix}"
    save_set(loaded, target)
    assert diff_files(source, target).identical


def test_load_refuses_an_invalid_set_and_lists_errors(tmp_path: Path) -> None:
    bad = row("a")
    bad["metadata"]["case"]["caseId"] = "b"
    path = write_json(tmp_path / "bad.json", document(bad))
    with pytest.raises(InvalidSetError) as caught:
        load_set(path)
    assert [issue.code for issue in caught.value.issues] == ["case-id-mismatch"]


def test_save_never_overwrites_without_force(tmp_path: Path) -> None:
    loaded = load_set(EXAMPLES / "support-refunds.json")
    target = tmp_path / "s.json"
    save_set(loaded, target)
    with pytest.raises(FileExistsError):
        save_set(loaded, target)
    save_set(loaded, target, force=True)
