"""Findings on the rows of vendor files name the line each record starts on, in every report.

Each file below holds a record with an inadmissible evaluator (or one its vendor refuses) on
a line the test knows; ``validate --report json`` and ``--report github`` must both name it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.formats.canonical_json import element_lines
from blueprint.formats.yaml12 import item_lines, read_yaml_nodes

runner = CliRunner()

#: a Blueprint payload whose case bars its own evaluator (rubric graded by exact match)
PAYLOAD: dict[str, Any] = {
    "id": "bad",
    "case": {
        "caseId": "bad",
        "oracleType": "rubric",
        "evaluator": "exact-or-programmatic",
        "expectedBehavior": "answers kindly",
        "provenance": "expert-authored",
        "evaluationCriteria": ["is kind"],
    },
}


def payload_yaml(indent: int) -> str:
    pad = " " * indent
    case = PAYLOAD["case"]
    lines = ["blueprint:", "  id: bad", "  case:"]
    lines += [f"    {key}: {json.dumps(value)}" for key, value in case.items()]
    return "".join(f"{pad}{line}\n" for line in lines)


def validate(path: Path, *extra: str, report: str) -> str:
    done = runner.invoke(app, ["validate", str(path), *extra, "--report", report])
    assert done.exit_code in (0, 1, 2), done.output  # 2: a record could not be read
    return done.stdout


def findings(path: Path, *extra: str) -> list[dict[str, Any]]:
    text = validate(path, *extra, report="json")
    issues: list[dict[str, Any]] = json.loads(text[: text.rindex("}") + 1])["issues"]
    return issues


def annotations(path: Path, *extra: str) -> list[str]:
    return [
        line
        for line in validate(path, *extra, report="github").splitlines()
        if line.startswith("::")
    ]


def assert_on_line(path: Path, code: str, line: int, *extra: str, file: Path | None = None) -> None:
    """Every finding of ``code`` is on ``line`` (of ``file``, when not ``path`` itself), in
    the JSON report and in the GitHub annotations."""
    found = [issue for issue in findings(path, *extra) if issue["code"] == code]
    assert found, f"no {code} finding"
    assert {issue["line"] for issue in found} == {line}
    assert {issue.get("file") for issue in found} == {None if file is None else str(file)}
    marked = [note for note in annotations(path, *extra) if f"title={code} at" in note]
    assert marked and all(f"file={file or path},line={line}," in note for note in marked)


# --- promptfoo -------------------------------------------------------------------------------


def test_a_promptfoo_tests_list_names_each_tests_line(tmp_path: Path) -> None:
    tests = tmp_path / "tests.yaml"
    tests.write_text(
        "# the suite's tests\n"
        "- description: fine\n"
        "  vars: {question: hello}\n"
        "  assert: [{type: equals, value: hi}]\n"
        "\n"
        "- description: broken\n"  # line 6
        "  vars:\n"
        "    question: what\n"
        "  metadata:\n" + payload_yaml(4),
        encoding="utf-8",
    )
    assert_on_line(tests, "inadmissible-evaluator", 6)
    first = [issue for issue in findings(tests) if issue["rowIndex"] == 0]
    assert first and {issue["line"] for issue in first} == {2}


def test_a_promptfoo_config_names_the_line_of_an_inline_test(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(
        "description: refunds\n"
        "prompts: ['{{question}}']\n"
        "tests:\n"
        "  - vars: {question: hello}\n"
        "    assert: [{type: equals, value: hi}]\n"
        "  - vars: {question: what}\n"  # line 6
        "    metadata:\n" + payload_yaml(6),
        encoding="utf-8",
    )
    assert_on_line(config, "inadmissible-evaluator", 6)


def test_a_text_report_starts_with_file_and_line(tmp_path: Path) -> None:
    tests = tmp_path / "tests.yaml"
    tests.write_text("- vars: {q: a}\n- vars: {q: b}\n  metadata:\n" + payload_yaml(4), "utf-8")
    done = runner.invoke(app, ["validate", str(tests)])
    assert f"{tests}:2: error inadmissible-evaluator bad" in done.stdout


def test_a_promptfoo_json_config_names_the_line_of_a_test(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.json"
    tests = [{"vars": {"q": "a"}}, {"vars": {"q": "b"}, "metadata": {"blueprint": PAYLOAD}}]
    config.write_text(json.dumps({"prompts": ["{{q}}"], "tests": tests}, indent=2), "utf-8")
    line = config.read_text(encoding="utf-8").splitlines().index("    {", 6) + 1
    assert_on_line(config, "inadmissible-evaluator", line)


def test_a_test_in_an_included_file_is_named_with_that_file_and_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases").mkdir()
    included = Path("cases") / "refunds.yaml"
    included.write_text(
        "- vars: {q: a}\n"
        "\n"
        "# the broken one\n"
        "- vars: {q: b}\n"  # line 4
        "  metadata:\n" + payload_yaml(4),
        encoding="utf-8",
    )
    config = Path("promptfooconfig.yaml")
    config.write_text(
        "prompts: ['{{q}}']\ntests:\n  - vars: {q: inline}\n  - file://cases/refunds.yaml\n",
        encoding="utf-8",
    )
    assert_on_line(config, "inadmissible-evaluator", 4, file=included)
    inline = [issue for issue in findings(config) if issue["rowIndex"] == 0]
    assert inline and {(issue["line"], issue.get("file")) for issue in inline} == {(3, None)}
    done = runner.invoke(app, ["validate", str(config)])
    assert f"{included}:4: error inadmissible-evaluator bad" in done.stdout


def test_a_jsonl_test_included_by_a_config_names_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("tests.jsonl").write_text(
        '{"vars": {"q": "a"}}\n\n'
        + json.dumps({"vars": {"q": "b"}, "metadata": {"blueprint": PAYLOAD}})
        + "\n",
        encoding="utf-8",
    )
    config = Path("promptfooconfig.yaml")
    config.write_text("prompts: ['{{q}}']\ntests: file://tests.jsonl\n", encoding="utf-8")
    assert_on_line(config, "inadmissible-evaluator", 3, file=Path("tests.jsonl"))


# --- JSON arrays: DeepEval, LangSmith, Braintrust --------------------------------------------


def json_array(records: list[dict[str, Any]]) -> str:
    """Records laid out as people write them: nested values on lines of their own."""
    return json.dumps(records, indent=2) + "\n"


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("vendor", "record", "metadata_key"),
    [
        ("deepeval", {"input": "{}", "expected_output": "x"}, "additional_metadata"),
        ("langsmith", {"inputs": {"q": "{}"}, "outputs": {"a": "x"}}, "metadata"),
        ("braintrust", {"input": "{}", "expected": "x"}, "metadata"),
    ],
)
def test_a_json_array_names_each_records_line(
    tmp_path: Path, vendor: str, record: dict[str, Any], metadata_key: str
) -> None:
    def filled(marker: str) -> dict[str, Any]:
        return json.loads(json.dumps(record).replace("{}", marker))

    records = [filled("first"), filled("second"), filled("third")]
    records[2][metadata_key] = {"blueprint": PAYLOAD}
    path = tmp_path / f"{vendor}.json"
    text = json_array(records)
    path.write_text(text, encoding="utf-8")
    # the record opens on the line before its first key
    third = line_of(text, '"third"') - (2 if vendor == "langsmith" else 1)
    assert_on_line(path, "inadmissible-evaluator", third, "--from", vendor)
    second = [issue for issue in findings(path, "--from", vendor) if issue["rowIndex"] == 1]
    assert second and all(issue["line"] is not None for issue in second)


def test_a_langsmith_dataset_object_names_each_examples_line(tmp_path: Path) -> None:
    examples = [
        {"inputs": {"q": "a"}, "outputs": {"a": "x"}},
        {"inputs": {"q": "b"}, "outputs": {"a": "y"}, "metadata": {"blueprint": PAYLOAD}},
    ]
    path = tmp_path / "dataset.json"
    text = json.dumps({"name": "refunds", "examples": examples}, indent=2)
    path.write_text(text, encoding="utf-8")
    line = line_of(text, '"q": "b"') - 2
    assert_on_line(path, "inadmissible-evaluator", line, "--from", "langsmith")


# --- omk YAML and apollia TOML ---------------------------------------------------------------


def test_an_omk_yaml_sample_set_names_each_samples_line(tmp_path: Path) -> None:
    path = tmp_path / "eval-samples.yaml"
    path.write_text(
        "schemaVersion: omk.eval-sample-set/v2\n"
        "samples:\n"
        "  - sample_id: first\n"
        "    prompt: hello\n"
        "    expected: hi\n"
        "\n"
        "  # a sample with no check\n"
        "  - sample_id: second\n"  # line 8
        "    prompt: what\n",
        encoding="utf-8",
    )
    rows = [issue for issue in findings(path, "--from", "omk") if issue["rowIndex"] == 1]
    derived = [issue for issue in rows if issue["code"] == "derived-value"]
    assert derived and {issue["line"] for issue in derived} == {8}
    marked = [note for note in annotations(path, "--from", "omk") if "rows[1]" in note]
    assert marked and all(f"file={path},line=8," in note for note in marked)


def test_an_apollia_task_refused_is_named_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(
        'name = "refunds"\n\n[[tasks]]\nid = "first"\nprompt = "hi"\n\n'
        '[[tasks]]\nid = "second"\n',  # line 7, and no prompt
        encoding="utf-8",
    )
    assert_on_line(path, "parse", 7, "--from", "apollia")


# --- the helpers that find the lines ---------------------------------------------------------


def test_element_lines_skip_brackets_inside_strings() -> None:
    text = '[\n  {"a": "[{"},\n\n  {"b": [1, {"c": "]"}]}, [2]\n]'
    assert element_lines(text, 3) == [2, 4, 4]
    wrapped = '{"other": [{"x": 1}], "examples": [\n {"a": 1},\n {"b": "}"}\n], "z": [{}]}'
    assert element_lines(wrapped, 2, "examples") == [2, 3]


def test_element_lines_of_an_array_holding_other_values_too() -> None:
    assert element_lines('[1,\n {"a": [2]},\n "x"]', 3) == [1, 2, 3]
    assert element_lines('{"a": [1], "examples": [\n 3, [1]]}', 2, "examples") == [2, 2]


def test_element_lines_are_unknown_for_a_document_of_another_shape() -> None:
    assert element_lines('{"x": 1}', 1) == [None]
    assert element_lines('{"rows": [{}]}', 1, "examples") == [None]
    assert element_lines("[{}, {}]", 3) == [None, None, None]


def test_a_record_that_is_not_an_object_is_refused_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "goldens.json"
    path.write_text('[\n  {"input": "a"},\n  "stray text"\n]\n', encoding="utf-8")
    assert_on_line(path, "parse", 3, "--from", "deepeval")


def test_item_lines_of_a_document_or_of_one_key(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\ntests:\n  # one\n  - x: 1\n  - {y: 2}\n\n  - z\n", encoding="utf-8")
    data, node = read_yaml_nodes(path)
    assert data["tests"][2] == "z"
    assert item_lines(node, 3, "tests") == [4, 5, 7]
    assert item_lines(node, 2, "tests") == [None, None]
    assert item_lines(node, 1, None) == [None]
