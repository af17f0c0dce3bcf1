"""A promptfoo config written in another folder than it was read from names the same files.

A config with comments and ``tests: file://tests.yaml`` is imported into a set in one folder
and written back in another: its references stay references, rewritten to name the same
files from the new folder, and its comments stay. Where the files cannot be kept by
reference, its tests go inline, the rest of its text kept, and the export says why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.formats import yamlkeep
from blueprint.formats.yaml12 import read_yaml

runner = CliRunner()

CONFIG = """\
# yaml-language-server: $schema=https://promptfoo.dev/config-schema.json
# capitals, asked in one word
description: capitals
prompts:
  - file://prompt.txt  # the prompt lives beside
providers:
  - echo
defaultTest:
  vars:
    # read by promptfoo when it runs
    style: file://style.txt
# the tests live in a file of their own
tests: file://tests.yaml
"""
TESTS = """\
# one test a country
- description: France
  vars:
    country: France
  assert:
    - type: icontains
      value: paris
- description: Japan
  vars:
    country: Japan
  assert:
    - type: contains
      value: Tokyo
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the suite in src/, the working folder."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "promptfooconfig.yaml").write_text(CONFIG, encoding="utf-8")
    (source / "tests.yaml").write_text(TESTS, encoding="utf-8")
    (source / "prompt.txt").write_text("Capital of {{country}}? {{style}}", encoding="utf-8")
    (source / "style.txt").write_text("One word.", encoding="utf-8")
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _convert(*arguments: str) -> dict[str, Any]:
    done = runner.invoke(app, ["convert", *arguments, "--report", "json"])
    assert done.exit_code == 0, done.output
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def test_a_config_written_in_another_folder_keeps_its_references_and_comments(
    project: Path,
) -> None:
    _convert("src/promptfooconfig.yaml", "suite.json")
    kept = json.loads((project / "suite.json").read_text("utf-8"))["extensions"]["promptfoo"]
    # the set names the config from its own folder
    assert kept["source"]["file"] == "src/promptfooconfig.yaml"
    result = _convert("suite.json", "out/promptfooconfig.yaml", "--to", "promptfoo")
    written = (project / "out" / "promptfooconfig.yaml").read_text("utf-8")
    assert written == CONFIG.replace("file://", "file://../src/")
    assert [Path(name).name for name in result["files"]] == ["promptfooconfig.yaml"]
    assert (project / "src" / "tests.yaml").read_text("utf-8") == TESTS
    (note,) = [note for note in result["notes"] if "rewritten" in note]
    assert "file://tests.yaml as file://../src/tests.yaml" in note
    # read back from the new folder, it reads the same tests from the same file
    _convert("out/promptfooconfig.yaml", "again.json")
    rows = json.loads((project / "again.json").read_text("utf-8"))["rows"]
    assert [row["metadata"]["case"]["passLogic"] for row in rows] == [
        "promptfoo grades it with: icontains 'paris'",
        "promptfoo grades it with: contains 'Tokyo'",
    ]


def test_a_config_converted_straight_to_another_folder_names_the_same_files(
    project: Path,
) -> None:
    _convert("src/promptfooconfig.yaml", "out/promptfooconfig.yaml", "--to", "promptfoo")
    written = (project / "out" / "promptfooconfig.yaml").read_text("utf-8")
    assert written == CONFIG.replace("file://", "file://../src/")


def test_files_that_cannot_be_found_put_the_tests_inline_and_say_why(
    project: Path,
) -> None:
    _convert("src/promptfooconfig.yaml", "suite.json")
    (project / "src" / "tests.yaml").unlink()
    result = _convert("suite.json", "out/promptfooconfig.yaml", "--to", "promptfoo")
    written = (project / "out" / "promptfooconfig.yaml").read_text("utf-8")
    assert _comments(written) == _comments(CONFIG)
    config = read_yaml(project / "out" / "promptfooconfig.yaml")
    assert [test["description"] for test in config["tests"]] == ["France", "Japan"]
    assert config["prompts"] == ["file://../src/prompt.txt"]
    (note,) = [note for note in result["notes"] if "inline" in note]
    assert "tests.yaml: no such file" in note


def test_tests_that_name_files_go_inline_with_the_names_rewritten(project: Path) -> None:
    """promptfoo reads a file:// name in a tests file from the config's folder: kept by
    reference, the config in another folder would not find it."""
    (project / "src" / "tests.yaml").write_text(
        TESTS.replace("country: Japan", "country: file://japan.txt"), encoding="utf-8"
    )
    (project / "src" / "japan.txt").write_text("Japan", encoding="utf-8")
    _convert("src/promptfooconfig.yaml", "suite.json")
    result = _convert("suite.json", "out/promptfooconfig.yaml", "--to", "promptfoo")
    config = read_yaml(project / "out" / "promptfooconfig.yaml")
    assert config["tests"][1]["vars"] == {"country": "file://../src/japan.txt"}
    (note,) = [note for note in result["notes"] if "inline" in note]
    assert "tests.yaml (file://japan.txt)" in note
    assert _comments((project / "out" / "promptfooconfig.yaml").read_text("utf-8")) == (
        _comments(CONFIG)
    )


def test_an_edited_test_is_written_inline_and_the_files_left_alone(project: Path) -> None:
    _convert("src/promptfooconfig.yaml", "suite.json")
    document = json.loads((project / "suite.json").read_text("utf-8"))
    document["rows"][0]["metadata"]["case"]["reviewerExpertise"] = "geography"
    (project / "suite.json").write_text(json.dumps(document), encoding="utf-8")
    result = _convert("suite.json", "out/promptfooconfig.yaml", "--to", "promptfoo", "--force")
    assert (project / "src" / "tests.yaml").read_text("utf-8") == TESTS
    assert [Path(name).name for name in result["files"]] == ["promptfooconfig.yaml"]
    (note,) = [note for note in result["notes"] if "inline" in note]
    assert "test 1 carry" in note and "leaves the files it names as they are" in note
    written = (project / "out" / "promptfooconfig.yaml").read_text("utf-8")
    assert _comments(written) == _comments(CONFIG)


def test_written_beside_where_it_was_read_nothing_is_rewritten(project: Path) -> None:
    _convert("src/promptfooconfig.yaml", "out/suite.json")
    result = _convert("out/suite.json", "src/promptfooconfig.yaml", "--to", "promptfoo", "--force")
    assert (project / "src" / "promptfooconfig.yaml").read_text("utf-8") == CONFIG
    assert not [note for note in result["notes"] if "rewritten" in note]


# --- the text edits underneath --------------------------------------------------------------


def _to_parent(at: yamlkeep.YamlPath, value: str) -> str | None:
    return "file://../" + value.removeprefix("file://") if value.startswith("file://") else None


def test_a_scalar_is_rewritten_in_its_own_place_and_quoting() -> None:
    text = (
        "a: file://x.txt  # plain\n"
        "b: 'file://y.txt'\n"
        'c: "file://z.txt"\n'
        "d: [file://w.txt, other]\n"
        "e: kept\n"
    )
    assert yamlkeep.scalars_replaced(text, _to_parent) == (
        "a: file://../x.txt  # plain\n"
        "b: 'file://../y.txt'\n"
        'c: "file://../z.txt"\n'
        "d: [file://../w.txt, other]\n"
        "e: kept\n"
    )


@pytest.mark.parametrize(
    "text",
    ["a: &name file://x.txt\nb: *name\n", "a: |-\n  file://x.txt\n"],
    ids=["anchored", "block-scalar"],
)
def test_a_scalar_that_cannot_be_rewritten_in_place_gives_none(text: str) -> None:
    assert yamlkeep.scalars_replaced(text, _to_parent) is None


def test_a_flow_list_of_tests_is_written_anew_and_the_comments_stay() -> None:
    text = "# the suite\nprompts: ['{{q}}']  # one\ntests: [{vars: {q: a}}]\n# end\n"
    records = [({"vars": {"q": "b"}}, {"vars": {"q": "b"}})]
    edited = yamlkeep.with_list(text, "tests", records, {"prompts": ["{{q}}"]})
    assert edited == "# the suite\nprompts: ['{{q}}']  # one\ntests:\n- vars:\n    q: b\n# end\n"
