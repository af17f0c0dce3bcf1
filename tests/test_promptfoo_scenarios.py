"""promptfoo scenarios read as the tests promptfoo runs, and conversions that read no row."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.core.errors import ParseError
from blueprint.formats import REGISTRY
from blueprint.formats.promptfoo import read_yaml
from conftest import document, row, write_json

runner = CliRunner()

SCENARIOS = """\
prompts:
  - 'Translate into {{language}}: {{input}}'
providers: [echo]
defaultTest:
  vars:
    tone: neutral
tests:
  - description: Plain
    vars: {language: English, input: Hi}
    assert: [{type: equals, value: Hi}]
scenarios:
  - description: two languages
    config:
      - vars: {language: Spanish, expected: Hola mundo}
        metadata: {team: es}
        assert: [{type: icontains, value: hola}]
      - vars: {language: French, expected: Bonjour le monde}
        options: {prefix: 'ignored: '}
    tests:
      - description: Hello World
        vars: {input: Hello world}
        assert: [{type: equals, value: '{{expected}}'}]
      - description: Good morning
        vars: {input: Good morning, language: German}
  - config:
      - vars: {language: Italian, input: Ciao}
"""


def _config(tmp_path: Path, text: str = SCENARIOS) -> Path:
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict[str, Any]]:
    return list(data_rows(REGISTRY["promptfoo"].open(path)))


def test_each_config_entry_crossed_with_each_test_is_a_row(tmp_path: Path) -> None:
    rows = _rows(_config(tmp_path))
    # the config's own tests first, then each scenario's entries x its tests, in order; a
    # scenario without tests runs each entry once
    assert [r["input"] for r in rows] == [
        "Translate into English: Hi",
        "Translate into Spanish: Hello world",
        "Translate into German: Good morning",  # the test's vars come after the entry's
        "Translate into French: Hello world",
        "Translate into German: Good morning",
        "Translate into Italian: Ciao",
    ]
    assert [r["metadata"]["case"]["expectedBehavior"] for r in rows[1:3]] == [
        "Hello World",
        "Good morning",
    ]
    # the entry's assertions run before the test's, on every test it is crossed with: the
    # entry's icontains, then the test's equals of its var
    assert rows[1]["expected"] == {
        "satisfies": {
            "type": "all",
            "checks": [
                {"type": "contains", "value": "hola", "normalize": ["lowercase"]},
                {"type": "equals", "value": "Hola mundo"},
            ],
        }
    }
    assert rows[3]["expected"] == "Bonjour le monde"
    assert rows[1]["metadata"]["team"] == rows[2]["metadata"]["team"] == "es"
    derived = rows[4]["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]
    assert "scenario 1: config entry 2 x test 2" in derived["input"]


def test_the_entrys_options_are_not_the_tests_as_promptfoo_merges_them(tmp_path: Path) -> None:
    # promptfoo gives a scenario's test the defaultTest's and the test's options only
    rows = _rows(_config(tmp_path))
    assert rows[3]["input"] == "Translate into French: Hello world"


def test_scenarios_convert_and_go_back_as_the_tests_promptfoo_runs(tmp_path: Path) -> None:
    source = _config(tmp_path)
    target = str(tmp_path / "s.jsonl")
    result = runner.invoke(app, ["convert", str(source), "--to", "inspect", "-o", target])
    assert result.exit_code == 0, result.output
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions())
    back = tmp_path / "back.yaml"
    convert(imported, back, ConvertOptions(target_format="promptfoo"))
    written = read_yaml(back)
    assert "scenarios" not in written  # promptfoo would run them again beside the tests
    assert len(written["tests"]) == 6
    assert written["defaultTest"] == {"vars": {"tone": "neutral"}}
    assert [r["input"] for r in _rows(back)] == [r["input"] for r in _rows(source)]
    assert roundtrip(source, "promptfoo", source_format="promptfoo").exact


def test_inspect_gets_every_row_of_the_scenarios(tmp_path: Path) -> None:
    source = _config(tmp_path)
    target = tmp_path / "samples.jsonl"
    result = convert(source, target, ConvertOptions(target_format="inspect"))
    # the two tests without an assertion are left out (no automated grader), saying so
    left_out = {i for x in result.export.lossy if x.kind == "excluded" for i in x.row_ids}
    assert left_out == {"test-5", "test-6"}
    assert len(target.read_text(encoding="utf-8").splitlines()) == 4


@pytest.mark.parametrize(
    ("scenarios", "named"),
    [
        ("  - file://more-scenarios.yaml\n", "file://more-scenarios.yaml"),
        ("  - config: [{$values: file://matrix.yaml}]\n    tests: [{vars: {a: 1}}]\n", "$values"),
        ("  - config: [{vars: {a: 1}}]\n    tests: file://tests.yaml\n", "scenarios[0].tests"),
        ("  - tests: [{vars: {a: 1}}]\n", "config list"),
    ],
)
def test_scenarios_blueprint_cannot_read_are_refused_by_name(
    tmp_path: Path, scenarios: str, named: str
) -> None:
    source = _config(tmp_path, "prompts: ['{{a}}']\nscenarios:\n" + scenarios)
    with pytest.raises(ParseError, match=re.escape(named)):
        _rows(source)


# --- a conversion that reads no row ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        ("promptfooconfig.yaml", "prompts: ['hi']\nproviders: [echo]\n", "promptfoo"),
        ("goldens.json", "[]", "deepeval"),
        ("tests.json", "[]", "promptfoo"),
    ],
)
def test_a_vendor_file_that_holds_no_test_converts_and_says_so(
    tmp_path: Path, name: str, text: str, fmt: str
) -> None:
    # every record is accounted for: none read, none written, and the notes say so (a file
    # whose records give no row is refused: tests/test_vendor_import.py)
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    result = runner.invoke(
        app, ["convert", str(source), str(tmp_path / "o.jsonl"), "--from", fmt, "--to", "inspect"]
    )
    assert result.exit_code == 0, result.output
    assert "holds no" in " ".join(result.output.split())


def test_a_set_of_no_rows_converts_with_a_note(tmp_path: Path) -> None:
    source = write_json(tmp_path / "empty.json", document())
    result = runner.invoke(
        app, ["convert", str(source), str(tmp_path / "o.jsonl"), "--to", "inspect"]
    )
    assert result.exit_code == 0
    assert "the set has no rows" in result.output
    with_rows = write_json(tmp_path / "full.json", document(row("a")))
    result = runner.invoke(
        app, ["convert", str(with_rows), str(tmp_path / "f.jsonl"), "--to", "inspect"]
    )
    assert "the set has no rows" not in result.output
    assert json.loads((tmp_path / "f.jsonl").read_text(encoding="utf-8"))["id"] == "a"
