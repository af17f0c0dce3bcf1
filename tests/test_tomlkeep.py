"""An apollia-os suite written back goes out as its authors wrote it (tomlkit, in place)."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from blueprint.convert import ConvertOptions, convert
from blueprint.diff import diff_files
from conftest import FIXTURES

PUBLIC = sorted((FIXTURES / "native" / "apollia" / "public").rglob("*.toml"))
SUITE = """\
# refunds suite, hand-written
name = "refunds"

# --- first ---
[[tasks]]
id = "first"
prompt = "One"   # a comment on a key
assertions = [
  { type = "exit_code", equals = 0 },
]

# --- second ---
[[tasks]]
id = "second"
prompt = "Two"
assertions = [
  { type = "regex", on = "result", pattern = "two" },
]

# --- third ---
[[tasks]]
id = "third"
prompt = "Three"
assertions = [
  { type = "exit_code", equals = 0 },
]
"""


def _through(path: Path, tmp_path: Path, edit: Any = None, name: str = "back.toml") -> Path:
    imported = tmp_path / "set.json"
    convert(path, imported, ConvertOptions(source_format="apollia", force=True))
    if edit is not None:
        document = json.loads(imported.read_text("utf-8"))
        edit(document["rows"])
        imported.write_text(json.dumps(document), encoding="utf-8")
    target = path.with_name(name)
    options = ConvertOptions(target_format="apollia", include_human_review=True, force=True)
    convert(imported, target, options)
    return target


@pytest.mark.parametrize("original", PUBLIC, ids=lambda path: path.parent.name)
def test_an_unedited_suite_goes_back_byte_for_byte(original: Path, tmp_path: Path) -> None:
    source = tmp_path / original.name
    shutil.copy(original, source)
    assert _through(source, tmp_path).read_text("utf-8") == original.read_text("utf-8")


def test_edits_change_only_their_own_lines(tmp_path: Path) -> None:
    source = tmp_path / "suite.toml"
    source.write_text(SUITE, encoding="utf-8")

    def edit(rows: list[dict[str, Any]]) -> None:
        rows[0]["input"] = "One, edited"
        del rows[1]  # the second task goes, with the comment lines above it
        added = json.loads(json.dumps(rows[-1]))
        added["id"] = added["metadata"]["case"]["caseId"] = "fourth"
        added["metadata"]["case"]["extensions"].pop("apollia", None)
        rows.append(added)

    target = _through(source, tmp_path, edit)
    before = SUITE.splitlines()
    after = target.read_text("utf-8").splitlines()
    gone = [line for line in before if line not in after]
    assert gone == [
        'prompt = "One"   # a comment on a key',
        "# --- second ---",
        'id = "second"',
        'prompt = "Two"',
        '  { type = "regex", on = "result", pattern = "two" },',
    ]
    new = [line for line in after if line not in before]
    assert new[0] == 'prompt = "One, edited"   # a comment on a key'  # kept by tomlkit
    assert 'id = "fourth"' in new
    # every comment of what stayed is where it was
    assert [line for line in after if line.startswith("#")] == [
        "# refunds suite, hand-written",
        "# --- first ---",
        "# --- third ---",
    ]
    tasks = tomllib.loads(target.read_text("utf-8"))["tasks"]
    assert [task["id"] for task in tasks] == ["first", "third", "fourth"]
    assert tasks[2]["assertions"] == tasks[1]["assertions"]


def test_the_set_comes_back_from_an_edited_suite(tmp_path: Path) -> None:
    source = tmp_path / "suite.toml"
    source.write_text(SUITE, encoding="utf-8")

    def edit(rows: list[dict[str, Any]]) -> None:
        rows[2]["input"] = "Three, edited"

    target = _through(source, tmp_path, edit)
    written = tmp_path / "written.json"
    shutil.copy(tmp_path / "set.json", written)  # the edited set that was written
    again = tmp_path / "again.json"
    convert(target, again, ConvertOptions(source_format="apollia"))
    result = diff_files(written, again)
    # a task has no place for Blueprint's bookkeeping: only that, as the export declares
    changed = [change.path for row in result.changed for change in row.changes]
    assert changed and all(path.startswith("$.metadata.case.extensions.") for path in changed)
    assert not (result.added or result.removed or result.header or result.order_changed)


def test_reordered_tasks_are_written_anew(tmp_path: Path) -> None:
    source = tmp_path / "suite.toml"
    source.write_text(SUITE, encoding="utf-8")
    target = _through(source, tmp_path, lambda rows: rows.reverse())
    tasks = tomllib.loads(target.read_text("utf-8"))["tasks"]
    assert [task["id"] for task in tasks] == ["third", "second", "first"]
    assert "#" not in target.read_text("utf-8")
