"""A promptfoo or omk YAML file written back goes out as its authors wrote it.

Every YAML file among the vendor fixtures is imported and written back beside itself: an
unedited set gives the file back byte for byte, comments included. An edited row changes
only its own lines, and Blueprint's bookkeeping takes one compact key in it. ``--clean``
writes no Blueprint key at all, and the file still says what the original said.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, roundtrip
from blueprint.formats.native import apply_changes, changes
from blueprint.formats.yaml12 import read_yaml
from conftest import FIXTURES
from strategies import json_values

NATIVE = FIXTURES / "native"
#: YAML files a suite refers to that are not suites themselves (vars promptfoo loads)
NOT_SETS = {"var_content_type.yaml", "var_topic.yaml"}
YAML_FILES = [
    path
    for fmt in ("promptfoo", "omk")
    for path in sorted((NATIVE / fmt).rglob("*.y*ml"))
    if path.name not in NOT_SETS
]

runner = CliRunner()


def _format(path: Path) -> str:
    return path.relative_to(NATIVE).parts[0]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the vendor fixtures, the working folder, so references between them
    (``file://../data/...``) resolve as they do in the repository."""
    copy = tmp_path / "native"
    # hidden files are scratch files other tests write beside the fixtures for a moment
    shutil.copytree(NATIVE, copy, ignore=shutil.ignore_patterns(".*"))
    monkeypatch.chdir(copy)
    return copy


def _import(tree: Path, original: Path) -> tuple[Path, Path]:
    """The copy of ``original`` in ``tree`` and the set it imports as."""
    source = tree / original.relative_to(NATIVE)
    imported = tree.parent / "set.json"
    convert(source, imported, ConvertOptions(source_format=_format(original), allow_invalid=True))
    return source, imported


def _export(imported: Path, target: Path, fmt: str, *extra: str) -> Any:
    done = runner.invoke(
        app,
        ["convert", str(imported), str(target), "--to", fmt, "--allow-invalid",
         "--include-human-review", "--report", "json", *extra],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def _edit(imported: Path, **fields: Any) -> dict[str, Any]:
    """Set case-profile fields on the set's first row; the row as edited."""
    document = json.loads(imported.read_text(encoding="utf-8"))
    first = document["rows"][0]
    first["metadata"]["case"].update(fields)
    imported.write_text(json.dumps(document), encoding="utf-8")
    edited: dict[str, Any] = first
    return edited


def _blueprint_keys(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [key for key in value if key == "blueprint"] + [
            found for item in value.values() for found in _blueprint_keys(item)
        ]
    if isinstance(value, list):
        return [found for item in value for found in _blueprint_keys(item)]
    return []


@pytest.mark.parametrize("original", YAML_FILES, ids=lambda p: str(p.relative_to(NATIVE)))
def test_an_unedited_yaml_file_goes_back_as_it_was_written(original: Path, tree: Path) -> None:
    source, imported = _import(tree, original)
    target = source.with_name(f"{source.stem}.back{source.suffix}")
    _export(imported, target, _format(original))
    before, after = source.read_text("utf-8"), target.read_text("utf-8")
    assert _comments(after) == _comments(before)
    if "public" in original.parts or "seed" in original.parts:
        # the tools' own files: nothing in them needs Blueprint's bookkeeping
        assert after.splitlines() == before.splitlines()
        assert after == before
    else:
        # hand-written hostile files (a repeated id renamed on import, the vendor's own
        # "blueprint" key): a compact key where a record needs one, every line kept
        records = read_yaml(source)
        records = records.get("tests", records) if isinstance(records, dict) else records
        assert len(after.splitlines()) <= len(before.splitlines()) * 1.1 + len(records)


@pytest.mark.parametrize("original", YAML_FILES, ids=lambda p: str(p.relative_to(NATIVE)))
def test_a_clean_yaml_file_has_no_blueprint_key_and_says_what_the_original_said(
    original: Path, tree: Path
) -> None:
    source, imported = _import(tree, original)
    target = source.with_name(f"{source.stem}.clean{source.suffix}")
    _export(imported, target, _format(original), "--clean")
    assert _blueprint_keys(read_yaml(target)) == _blueprint_keys(read_yaml(source))
    assert read_yaml(target) == read_yaml(source)
    assert _comments(target.read_text("utf-8")) == _comments(source.read_text("utf-8"))


def test_an_edited_row_changes_only_its_own_test(tree: Path) -> None:
    original = NATIVE / "promptfoo/public/openai-tools-call/promptfooconfig.yaml"
    source, imported = _import(tree, original)
    records = len(read_yaml(source)["tests"])
    edited = _edit(imported, reviewerExpertise="weather APIs")
    target = source.with_name("promptfooconfig.back.yaml")
    _export(imported, target, "promptfoo")
    before = source.read_text("utf-8").splitlines()
    after = target.read_text("utf-8").splitlines()
    assert _comments("\n".join(after)) == _comments("\n".join(before))
    # one compact key in the edited test, nothing else: at most 10% and a line a record more
    added = [line for line in after if line not in before]
    assert [line.strip().split(":")[0] for line in added] == ["metadata", "blueprint"]
    assert len(after) <= len(before) * 1.1 + records
    assert [line for line in before if line not in after] == []
    # and the set comes back from it, the edit included
    again = tree.parent / "again.json"
    convert(target, again, ConvertOptions(source_format="promptfoo", allow_invalid=True))
    rows = json.loads(again.read_text("utf-8"))["rows"]
    assert rows[0]["metadata"]["case"] == edited["metadata"]["case"]


def test_an_edited_omk_sample_keeps_the_files_comments_and_style(tmp_path: Path) -> None:
    samples = tmp_path / "eval-samples.yaml"
    samples.write_text(
        "# release checks, hand-written\n"
        "schemaVersion: omk.eval-sample-set/v2\n"
        "samples:\n"
        "  # the first\n"
        '  - sample_id: summary\n    prompt: "Summarise the release."   # quoted\n'
        "    covers:\n      - {targetKind: workflow, ref: release}\n"
        "  - sample_id: second\n    prompt: 'Second prompt'\n",
        encoding="utf-8",
    )
    imported = tmp_path / "set.json"
    convert(samples, imported, ConvertOptions(source_format="omk"))
    document = json.loads(imported.read_text("utf-8"))
    document["rows"][1]["input"] = "Second prompt, edited"
    imported.write_text(json.dumps(document), encoding="utf-8")
    target = tmp_path / "back.yaml"
    convert(imported, target, ConvertOptions(target_format="omk"))
    before = samples.read_text("utf-8").splitlines()
    after = target.read_text("utf-8").splitlines()
    assert [line for line in before if line not in after] == ["    prompt: 'Second prompt'"]
    assert [line for line in after if line not in before] == ["    prompt: Second prompt, edited"]


def test_a_record_edited_after_blueprint_wrote_it_is_read_again(tree: Path) -> None:
    original = NATIVE / "promptfoo/public/openai-tools-call/promptfooconfig.yaml"
    source, imported = _import(tree, original)
    _edit(imported, reviewerExpertise="weather APIs")
    target = source.with_name("promptfooconfig.back.yaml")
    _export(imported, target, "promptfoo")
    # someone edits the test in promptfoo's file: the bookkeeping's digest no longer matches
    text = target.read_text("utf-8")
    assert text.count("city: Boston") == 1
    target.write_text(text.replace("city: Boston", "city: Cambridge"), encoding="utf-8")
    again = tree.parent / "again.json"
    convert(target, again, ConvertOptions(source_format="promptfoo", allow_invalid=True))
    first = json.loads(again.read_text("utf-8"))["rows"][0]
    case = first["metadata"]["case"]
    assert "reviewerExpertise" not in case  # what Blueprint kept no longer applies
    assert "metadata.case" in case["extensions"]["blueprint-import"]["derived"]
    assert "Cambridge" in json.dumps(first["input"])


def test_clean_names_what_it_drops_and_roundtrip_proves_it(tree: Path) -> None:
    original = NATIVE / "promptfoo/public/openai-tools-call/promptfooconfig.yaml"
    _, imported = _import(tree, original)
    _edit(imported, reviewerExpertise="weather APIs")
    result = roundtrip(imported, "promptfoo", clean=True)
    assert result.exact, (result.undeclared, result.unobserved)
    dropped = {lossy.field for lossy in result.export.lossy if lossy.kind == "dropped"}
    assert "metadata.case.reviewerExpertise" in dropped


def test_clean_is_refused_for_a_canonical_format(tmp_path: Path, example_path: Path) -> None:
    done = runner.invoke(
        app,
        ["convert", str(example_path), str(tmp_path / "out.json"), "--clean"],
    )
    assert done.exit_code == 2
    assert not (tmp_path / "out.json").exists()


@given(before=json_values, after=json_values)
def test_the_compact_changes_turn_one_row_into_the_other(before: Any, after: Any) -> None:
    left, right = {"row": before}, {"row": after}
    assert apply_changes(left, changes(left, right)) == right
    assert changes(right, right) == []


def _separate_configs(tree: Path) -> tuple[Path, Path, Path]:
    """The public config whose tests live in files it names; its set, with the test about
    climate change edited (a var and a case-profile field)."""
    original = NATIVE / "promptfoo/public/separate-test-configs/promptfooconfig.yaml"
    source, imported = _import(tree, original)
    document = json.loads(imported.read_text("utf-8"))
    [row] = [
        row
        for row in document["rows"]
        if isinstance(row["input"], dict) and row["input"].get("topic") == "climate change"
    ]
    row["input"]["topic"] = "climate policy"
    row["metadata"]["case"]["reviewerExpertise"] = "policy"
    imported.write_text(json.dumps(document), encoding="utf-8")
    return source, imported, source.parent / "tests" / "tests1.yaml"


def test_a_test_edited_in_a_file_the_config_names_goes_back_to_that_file(tree: Path) -> None:
    source, imported, tests_file = _separate_configs(tree)
    config_before, file_before = source.read_text("utf-8"), tests_file.read_text("utf-8")
    result = _export(imported, source, "promptfoo", "--force")
    assert sorted(Path(name).name for name in result["files"]) == [
        "promptfooconfig.yaml",
        "tests1.yaml",
    ]
    assert source.read_text("utf-8") == config_before  # its file:// references kept
    before, after = file_before.splitlines(), tests_file.read_text("utf-8").splitlines()
    assert [line for line in before if line not in after] == ["    topic: climate change"]
    added = [line.strip().split(":")[0] for line in after if line not in before]
    # the defaultTest's file:// var is not written into the test: promptfoo merges it in
    assert added == ["topic", "metadata", "blueprint"]
    again = tree.parent / "again.json"
    convert(source, again, ConvertOptions(source_format="promptfoo"))
    done = runner.invoke(app, ["diff", str(imported), str(again)])
    assert done.exit_code == 0, done.output


def test_without_force_an_edited_named_file_is_left_alone(tree: Path) -> None:
    source, imported, tests_file = _separate_configs(tree)
    file_before = tests_file.read_text("utf-8")
    target = source.with_name("promptfooconfig.back.yaml")
    result = _export(imported, target, "promptfoo")
    assert [Path(name).name for name in result["files"]] == ["promptfooconfig.back.yaml"]
    assert tests_file.read_text("utf-8") == file_before
    assert any("--force" in note and "tests1.yaml" in note for note in result["notes"])
    tests = read_yaml(target)["tests"]
    assert not any(isinstance(entry, str) for entry in tests)  # written inline instead


def test_roundtrip_clean_is_refused_for_a_canonical_format(example_path: Path) -> None:
    done = runner.invoke(app, ["roundtrip", str(example_path), "--via", "jsonl", "--clean"])
    assert done.exit_code == 2


ANCHORED = """\
prompts: ["{{q}}"]
tests:
  - vars: {q: two}
    assert: &checks
      - type: equals
        value: "2"
  - vars:
      q: three
    assert: *checks
"""
MERGED = """\
prompts: ["{{q}}"]
x-base: &base
  assert: [{type: contains, value: base}]
tests:
  - vars: {q: one}
    <<: *base
  - vars: {q: two}
    assert: [{type: equals, value: B}]
"""


@pytest.mark.parametrize("text", [ANCHORED, MERGED], ids=["anchors", "merge-keys"])
@pytest.mark.parametrize("edit", ["none", "expected", "drop-first", "drop-last", "reverse"])
def test_anchors_and_aliases_never_give_a_wrong_file(text: str, edit: str, tmp_path: Path) -> None:
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(text, encoding="utf-8")
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions(source_format="promptfoo"))
    document = json.loads(imported.read_text("utf-8"))
    rows = document["rows"]
    if edit == "expected":
        rows[-1]["expected"] = "3"
    elif edit == "drop-first":
        del rows[0]
    elif edit == "drop-last":
        del rows[-1]
    elif edit == "reverse":
        rows.reverse()
    imported.write_text(json.dumps(document), encoding="utf-8")
    target = tmp_path / "back.yaml"
    convert(imported, target, ConvertOptions(target_format="promptfoo", allow_invalid=True))
    if edit == "none":
        assert target.read_text("utf-8") == text
    again = tmp_path / "again.json"
    convert(target, again, ConvertOptions(source_format="promptfoo", allow_invalid=True))
    back = json.loads(again.read_text("utf-8"))["rows"]
    assert [row["id"] for row in back] == [row["id"] for row in rows]
    assert [row.get("expected") for row in back] == [row.get("expected") for row in rows]


def test_an_edited_date_is_written_as_text_and_untouched_dates_stay_dates(tmp_path: Path) -> None:
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(
        'prompts: ["{{q}} {{when}}"]\n'
        "tests:\n"
        "  - vars: {q: b, when: 2024-01-01}\n"
        "    assert:\n"
        "      - type: equals\n"
        "        value: 2024-01-01\n",
        encoding="utf-8",
    )
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions(source_format="promptfoo"))
    document = json.loads(imported.read_text("utf-8"))
    document["rows"][0]["expected"] = "EDITED"
    document["rows"][0]["input"]["vars"]["q"] = "bb"
    imported.write_text(json.dumps(document), encoding="utf-8")
    target = tmp_path / "back.yaml"
    convert(imported, target, ConvertOptions(target_format="promptfoo"))
    text = target.read_text("utf-8")
    assert "!!timestamp" not in text and "value: EDITED" in text
    assert "when: 2024-01-01" in text  # unquoted: promptfoo still reads a date


def test_an_edited_description_keeps_the_tests_own_checks(tree: Path) -> None:
    original = NATIVE / "promptfoo/public/openai-tools-call/promptfooconfig.yaml"
    source, imported = _import(tree, original)
    _edit(imported, expectedBehavior="calls the weather tool for Boston")
    target = source.with_name("promptfooconfig.back.yaml")
    result = _export(imported, target, "promptfoo")
    assert not [item for item in result["lossy"] if item["kind"] == "excluded"]
    tests = read_yaml(target)["tests"]
    assert tests[0]["assert"] == read_yaml(source)["tests"][0]["assert"]
    assert tests[0]["description"] == "calls the weather tool for Boston"
