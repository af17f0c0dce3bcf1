"""Finding sets: folders walked, globs expanded, configured sets selected by path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blueprint.convert import ConvertOptions, convert
from blueprint.core.errors import UsageError
from blueprint.formats.base import ReadOptions, reading_with
from blueprint.project.config import ConfigError, load_project
from blueprint.project.discovery import expand, project_sets, select
from conftest import EXAMPLES, document, row, write_json

EXAMPLE = EXAMPLES / "support-refunds.json"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with sets in three formats, a non-set JSON file, a tool folder, a pack."""
    monkeypatch.chdir(tmp_path)
    evals = tmp_path / "evals"
    (evals / "dev").mkdir(parents=True)
    write_json(evals / "a.json", document(row("a1")))
    convert(EXAMPLE, evals / "dev" / "refunds.csv")
    convert(EXAMPLE, evals / "dev" / "refunds.jsonl")
    write_json(evals / "package.json", {"name": "web", "version": "1.0.0", "scripts": {}})
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    write_json(tmp_path / ".venv" / "lib" / "x.json", document(row("hidden")))
    (tmp_path / "node_modules").mkdir()
    write_json(tmp_path / "node_modules" / "y.json", document(row("vendored")))
    return tmp_path


def names(found) -> list[str]:
    return sorted(item.path.as_posix() for item in found.sets)


def test_a_folder_is_walked_for_sets(tree: Path) -> None:
    found = expand(["."])
    assert names(found) == ["evals/a.json", "evals/dev/refunds.csv", "evals/dev/refunds.jsonl"]
    # the set files beside the CSV and JSONL are companions, never sets; other JSON is noted
    assert any("package.json" in note for note in found.notes)


def test_a_named_file_is_a_set_whatever_it_holds(tree: Path) -> None:
    found = expand(["evals/package.json"])
    assert names(found) == ["evals/package.json"]


def test_globs_the_shell_left_alone(tree: Path) -> None:
    assert names(expand(["evals/**/*.csv"])) == ["evals/dev/refunds.csv"]
    with pytest.raises(UsageError):
        expand(["evals/*.parquet"])


def test_a_set_named_twice_is_checked_once(tree: Path) -> None:
    assert names(expand(["evals/a.json", "evals", "./evals/a.json"])).count("evals/a.json") == 1


def test_a_dataset_folder_with_its_card_is_one_set(tree: Path) -> None:
    convert(EXAMPLE, tree / "evals" / "hub", ConvertOptions(target_format="huggingface"))
    found = expand(["evals"])
    assert "evals/hub" in names(found)
    assert not any(name.startswith("evals/hub/") for name in names(found))


def test_configured_sets_include_exclude_and_entries(tree: Path) -> None:
    (tree / "blueprint.toml").write_text(
        'include = ["evals/**/*.csv", "evals/*.json"]\n'
        'exclude = ["evals/package.json"]\n'
        "[[set]]\n"
        'path = "evals/dev/refunds.jsonl"\n'
        'roundtrip = ["deepeval"]\n'
        "[[set]]\n"
        'path = "evals/gone.csv"\n',
        encoding="utf-8",
    )
    project = load_project(start=tree)
    found = project_sets(project)
    assert names(found) == ["evals/a.json", "evals/dev/refunds.csv", "evals/dev/refunds.jsonl"]
    entries = {item.path.as_posix(): item.entry for item in found.sets}
    assert entries["evals/dev/refunds.jsonl"] is not None
    assert entries["evals/a.json"] is None
    assert [path.as_posix() for path, _ in found.missing] == ["evals/gone.csv"]


def test_select_by_set_set_file_or_folder(tree: Path) -> None:
    (tree / "blueprint.toml").write_text('include = ["evals/**/*.csv", "evals/*.json"]\n')
    found = project_sets(load_project(start=tree))
    chosen = select(found, ["evals/dev/refunds.csv.set.json", "README.md"])
    assert names(chosen) == ["evals/dev/refunds.csv"]
    assert any("README.md" in note for note in chosen.notes)
    assert names(select(found, ["evals/dev"])) == ["evals/dev/refunds.csv"]


def test_json_of_the_walked_tree_is_not_read_as_a_dataset(tree: Path) -> None:
    # a folder of .json files without a dataset card is walked, not read as one dataset
    found = expand(["evals"])
    assert all(item.path.suffix for item in found.sets)
    assert json.loads((tree / "evals" / "a.json").read_text())["rows"]


def test_a_named_set_file_stands_for_its_set(tree: Path) -> None:
    assert names(expand(["evals/dev/refunds.csv.set.json"])) == ["evals/dev/refunds.csv"]
    assert names(expand(["evals/dev/*.set.json"])) == [
        "evals/dev/refunds.csv",
        "evals/dev/refunds.jsonl",
    ]


def test_a_walk_refuses_a_link_leading_outside(tree: Path) -> None:
    outside = tree.parent / f"{tree.name}-outside"
    outside.mkdir()
    write_json(outside / "secret.json", document(row("secret")))
    (tree / "evals" / "evil.json").symlink_to(outside / "secret.json")
    with pytest.raises(UsageError) as caught:
        expand(["evals"])
    assert caught.value.exit_code == 2 and "evil.json" in str(caught.value)
    # named on the command line, it is trusted as the user gave it
    assert names(expand(["evals/evil.json"])) == ["evals/evil.json"]
    with reading_with(ReadOptions(allowed_paths=(outside,))):
        assert "evals/evil.json" in names(expand(["evals"]))


def test_a_walk_follows_a_link_into_the_working_folder(tree: Path) -> None:
    write_json(tree / "shared.json", document(row("shared")))
    (tree / "evals" / "dev" / "shared.json").symlink_to(tree / "shared.json")
    assert "evals/dev/shared.json" in names(expand(["evals/dev"]))


def test_configured_paths_outside_the_project_are_refused(tree: Path) -> None:
    (tree / "proj" / "sets").mkdir(parents=True)
    write_json(tree / "proj" / "sets" / "a.json", document(row("a1")))
    (tree / "proj" / "sets" / "up.json").symlink_to(tree / "evals" / "a.json")
    (tree / "proj" / "blueprint.toml").write_text('include = ["sets/*.json"]\n', encoding="utf-8")
    project = load_project(tree / "proj" / "blueprint.toml")
    # the working folder holds the link's target, but the project's folder does not
    with pytest.raises(ConfigError) as caught:
        project_sets(project)
    assert caught.value.exit_code == 2 and "blueprint.toml:1" in str(caught.value)
    with reading_with(ReadOptions(allowed_paths=(tree / "evals",))):
        assert len(project_sets(project).sets) == 2


def test_what_reading_a_set_opens_must_lie_inside_too(tree: Path) -> None:
    outside = tree.parent / f"{tree.name}-outside"
    outside.mkdir()
    (outside / "stolen.json").write_text("{}", encoding="utf-8")
    project_folder = tree / "proj"
    (project_folder / "sets").mkdir(parents=True)
    convert(EXAMPLE, project_folder / "sets" / "hub", ConvertOptions(target_format="huggingface"))
    convert(EXAMPLE, project_folder / "sets" / "table.csv")
    (project_folder / "blueprint.toml").write_text('include = ["sets"]\n', encoding="utf-8")
    project = load_project(project_folder / "blueprint.toml")
    assert len(project_sets(project).sets) == 2
    # a file inside a dataset folder, or the set file beside a CSV, read with the set
    for link in (
        project_folder / "sets" / "hub" / "extra.json",
        project_folder / "sets" / "table.csv.set.json",
    ):
        saved = link.read_bytes() if link.exists() else None
        link.unlink(missing_ok=True)
        link.symlink_to(outside / "stolen.json")
        with pytest.raises(ConfigError):
            project_sets(project)
        link.unlink()
        if saved is not None:
            link.write_bytes(saved)
