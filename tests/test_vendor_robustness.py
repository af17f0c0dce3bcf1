"""Vendor files that are odd or hostile: clear errors, never a crash, never a wrong format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.core.errors import (
    AmbiguousFormatError,
    ConversionRefused,
    LossyExportRefused,
    ParseError,
    UnknownFormatError,
)
from blueprint.formats import REGISTRY, resolve_codec
from blueprint.formats.vendor import InvalidRowForExport
from blueprint.validation.validate import validate_file
from conftest import EXAMPLES, document, row, write_json


def test_canonical_files_are_not_taken_for_vendor_files(tmp_path: Path) -> None:
    rows = json.loads((EXAMPLES / "support-refunds.json").read_text(encoding="utf-8"))["rows"]
    array = tmp_path / "rows.json"
    array.write_text(json.dumps(rows), encoding="utf-8")
    assert resolve_codec(array, None, reading=True).name == "json"
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        json.dumps({"id": "a", "input": "q", "metadata": {}}) + "\n", encoding="utf-8"
    )
    # a row without its case profile reads as a Braintrust record too: say so, do not guess
    with pytest.raises(AmbiguousFormatError) as caught:
        resolve_codec(broken, None, reading=True)
    assert caught.value.candidates == ["jsonl", "braintrust"]
    (tmp_path / "broken.jsonl.set.json").write_text('{"name": "b"}', encoding="utf-8")
    assert resolve_codec(broken, None, reading=True).name == "jsonl"  # its set file says so


def promptfoo_rows(path: Path) -> list:
    return list(data_rows(REGISTRY["promptfoo"].open(path)))


def test_promptfoo_odd_assertions_do_not_crash(tmp_path: Path) -> None:
    path = tmp_path / "tests.yaml"
    path.write_text(
        "- vars: {input: a}\n  assert: [equals, 5]\n"
        "- vars: {input: b}\n  assert: [{type: tool-call-f1, value: 5}]\n",
        encoding="utf-8",
    )
    rows = promptfoo_rows(path)
    assert [r["metadata"]["case"]["oracleType"] for r in rows] == [
        "expected-behavior-only",  # no assertion it can read
        "rubric",  # a tool-call-f1 without tool names: a check that names no answer
    ]
    assert "expected" not in rows[1]
    assert "tool-call-f1" in rows[1]["metadata"]["case"]["evaluationCriteria"][0]


def test_promptfoo_config_that_includes_itself(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("tests: file://promptfooconfig.yaml\n", encoding="utf-8")
    with pytest.raises(ParseError):
        REGISTRY["promptfoo"].open(config)


def test_a_file_name_the_system_cannot_take_is_a_clean_error(tmp_path: Path) -> None:
    too_long = "9" * 2000 + ".yaml"  # past any file system's limit on a name
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f"tests: file://{too_long}\n", encoding="utf-8")
    with pytest.raises(ParseError) as raised:
        REGISTRY["promptfoo"].open(config)
    assert raised.value.path.name == too_long
    for named in (config, tmp_path / too_long):
        report = validate_file(named)
        assert report.unreadable and report.flatten(("code",)) == [("parse",)]


def test_promptfoo_absolute_globs_and_json_tests_with_tabs(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('[\n\t{"vars": {"input": "x"}}\n]', encoding="utf-8")
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text(f'tests: "file://{tmp_path}/*.json"\n', encoding="utf-8")
    assert len(promptfoo_rows(config)) == 1


def test_promptfoo_yaml_is_read_as_promptfoo_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "tests.yaml"
    path.write_text(
        "- vars: {input: no, time: 12:30:00, mode: 0o17}\n  assert: [{type: equals, value: yes}]\n",
        encoding="utf-8",
    )
    (data,) = promptfoo_rows(path)
    assert data["input"] == {"input": "no", "time": "12:30:00", "mode": 15}
    assert data["expected"] == "yes"


def test_promptfoo_yaml_that_is_not_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tests.yaml"
    path.write_text("- vars: {input: !!binary aGVsbG8=}\n", encoding="utf-8")
    with pytest.raises(ParseError):
        REGISTRY["promptfoo"].open(path)
    assert validate_file(path).unreadable


def test_damaged_payloads_are_unreadable_rows_not_crashes(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    record = {"id": "a", "input": "q", "metadata": {"blueprint": {"case": {}, "metadata": 7}}}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = validate_file(path, format="braintrust")
    assert report.flatten(("code",)) == [("parse",)]


@pytest.mark.parametrize("fmt", ["langsmith", "braintrust"])
def test_vendor_metadata_named_case_is_kept_aside(tmp_path: Path, fmt: str) -> None:
    record = (
        {"inputs": {"q": 1}, "metadata": {"case": 1}}
        if fmt == "langsmith"
        else {"id": "r", "input": "a", "metadata": {"case": "x"}}
    )
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    target = tmp_path / "out.json"
    convert(path, target, ConvertOptions(source_format=fmt))
    assert validate_file(target).valid
    (data,) = data_rows(REGISTRY["json"].open(target))
    assert set(data["metadata"]) == {"case"}  # the vendor's metadata.case is kept aside...
    back = tmp_path / "back.jsonl"
    convert(target, back, ConvertOptions(target_format=fmt))
    (written,) = [json.loads(line) for line in back.read_text(encoding="utf-8").splitlines()]
    assert written["metadata"]["case"] == record["metadata"]["case"]  # ...and written back


def test_made_up_set_names_are_not_reported_lost(tmp_path: Path) -> None:
    native = Path(__file__).parent / "fixtures" / "native" / "langsmith" / "examples.jsonl"
    result = roundtrip(native, "braintrust", source_format="langsmith")
    assert result.exact, (result.undeclared, result.unobserved)
    out = convert(
        native,
        tmp_path / "r.jsonl",
        ConvertOptions(source_format="langsmith", target_format="braintrust"),
    )
    assert [item for item in out.export.lossy if item.scope == "set"] == []


def test_unknown_set_level_keys_are_reported_lost(tmp_path: Path) -> None:
    source = write_json(tmp_path / "s.json", document(row("a"), owner="team-a"))
    result = roundtrip(source, "braintrust")
    assert result.exact
    assert "owner" in {item.field for item in result.export.lossy}
    with pytest.raises(ConversionRefused):  # the set is not valid: an unknown key
        convert(source, tmp_path / "r.jsonl", ConvertOptions(target_format="braintrust"))
    written = convert(
        source, tmp_path / "r.jsonl", ConvertOptions(target_format="braintrust", allow_invalid=True)
    )
    assert not written.valid and "owner" in {item.field for item in written.export.lossy}
    with pytest.raises(LossyExportRefused):
        convert(
            source,
            tmp_path / "r.jsonl",
            ConvertOptions(target_format="braintrust", strict=True, force=True, allow_invalid=True),
        )


# --- hostile and odd vendor files found in review ----------------------------------------------


def test_a_config_of_scenarios_only_is_read_as_the_tests_they_run(tmp_path: Path) -> None:
    path = tmp_path / "scen.yaml"
    path.write_text(
        "prompts: ['{{input}}']\nproviders: [echo]\nscenarios:\n"
        "  - config: [{vars: {input: a}}]\n    tests: [{assert: [{type: equals, value: a}]}]\n",
        encoding="utf-8",
    )
    source = REGISTRY["promptfoo"].open(path)
    assert [item.data["input"] for item in source.rows] == ["a"]
    assert "scenarios" not in source.header["extensions"]["promptfoo"]["config"]
    result = roundtrip(path, "promptfoo")
    assert result.exact and result.vendor_changes == []


def test_a_yaml_file_that_is_not_promptfoo_fits_nothing(tmp_path: Path) -> None:
    path = tmp_path / "workflow.yaml"
    path.write_text("name: CI\non: {push: {}}\njobs:\n  build: {runs-on: x}\n", encoding="utf-8")
    with pytest.raises(UnknownFormatError):
        resolve_codec(path, None, reading=True)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "bomb.yaml",
            "a: &a [x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
                for p, c in zip("abcdefgh", "bcdefghi", strict=True)
            )
            + "tests: [{vars: {input: *i}}]\n",
        ),
        (
            "refs.yaml",
            "assertionTemplates:\n"
            + "".join(
                f"  t{n}: [{{$ref: '#/assertionTemplates/t{n + 1}'}},"
                f" {{$ref: '#/assertionTemplates/t{n + 1}'}}]\n"
                for n in range(30)
            )
            + "  t30: {type: equals, value: x}\n"
            + "tests: [{vars: {input: a}, assert: [{$ref: '#/assertionTemplates/t0'}]}]\n",
        ),
    ],
)
def test_small_files_that_expand_enormously_are_refused(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError):
        list(REGISTRY["promptfoo"].open(path).rows)


def test_test_generators_are_named_not_looked_for(tmp_path: Path) -> None:
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text("tests: file://gen.py:create_tests\n", encoding="utf-8")
    with pytest.raises(ParseError, match="generator"):
        REGISTRY["promptfoo"].open(path)


def test_a_long_first_golden_is_still_a_golden(tmp_path: Path) -> None:
    path = tmp_path / "goldens.json"
    golden = {"input": "x" * 70_000, "expected_output": "a", "name": "g1"}
    path.write_text(json.dumps([golden, {"input": "q", "expected_output": "b"}]), "utf-8")
    assert resolve_codec(path, None, reading=True).name == "deepeval"


def test_deeply_nested_json_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    report = validate_file(path)
    assert report.unreadable


def test_a_tampered_payload_is_an_unreadable_row(tmp_path: Path) -> None:
    case = {
        "caseId": "a",
        "oracleType": "reference-answer",
        "expectedBehavior": "x",
        "provenance": "imported",
    }
    record = {
        "id": "a",
        "input": "q",
        "expected": "a",
        "metadata": {"blueprint": {"id": "a", "case": case, "notMetadata": 5}},
    }
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    report = validate_file(path, format="braintrust")
    assert report.flatten(("code",)) == [("parse",)]


def test_deepeval_reads_an_empty_scenario_and_missing_cells_as_deepeval_does(
    tmp_path: Path,
) -> None:
    path = tmp_path / "goldens.json"
    path.write_text(
        json.dumps(
            [
                {"input": "a", "expected_output": "b"},
                {"input": "c", "expected_output": "d", "scenario": None},
            ]
        ),
        encoding="utf-8",
    )
    result = roundtrip(path, "deepeval")
    assert result.exact and result.export.rows == 2  # both single-turn: none left out
    csv_path = tmp_path / "goldens.csv"
    csv_path.write_text("input,expected_output,name\nq1,NA,g1\nq2,null,g2\n", encoding="utf-8")
    rows = list(data_rows(REGISTRY["deepeval"].open(csv_path)))
    assert all("expected" not in row for row in rows)  # pandas reads NA and null as missing


def test_langsmith_reference_outputs_and_dataset_objects(tmp_path: Path) -> None:
    path = tmp_path / "examples.jsonl"
    path.write_text(
        json.dumps({"inputs": {"question": "2+2?"}, "reference_outputs": {"answer": "4"}}) + "\n",
        encoding="utf-8",
    )
    (data,) = data_rows(REGISTRY["langsmith"].open(path))
    assert data["expected"] == {"answer": "4"}
    assert roundtrip(path, "langsmith").exact
    dataset = tmp_path / "dataset.json"
    dataset.write_text(
        json.dumps({"examples": [{"inputs": {"q": 1}}], "description": "d", "extra": [1]}),
        encoding="utf-8",
    )
    result = roundtrip(dataset, "langsmith")
    assert result.exact and result.vendor_changes == [], (result.undeclared, result.vendor_changes)


def test_an_expected_value_only_looks_like_another_oracle_when_it_fits(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    lines = [
        {"id": "a", "input": "q", "expected": {"calls": [{"name": "x"}]}, "tags": []},
        {"id": "b", "input": "q", "expected": {"graded": [1]}, "tags": []},
        {"id": "c", "input": "q", "expected": {"acceptable": ["S", "M"]}, "tags": []},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    target = tmp_path / "set.json"
    result = convert(path, target, ConvertOptions())
    assert result.valid
    oracles = [
        r["metadata"]["case"]["oracleType"] for r in data_rows(REGISTRY["json"].open(target))
    ]
    assert oracles == ["reference-answer", "reference-answer", "acceptable-set"]


@pytest.mark.parametrize("fmt", ["braintrust", "promptfoo"])
def test_vendor_metadata_that_is_not_an_object_goes_back_as_it_came(
    tmp_path: Path, fmt: str
) -> None:
    record = (
        {"id": "a", "input": "q", "expected": "x", "metadata": "free text"}
        if fmt == "braintrust"
        else {"vars": {"input": "q"}, "assert": [{"type": "equals", "value": "q"}], "metadata": 5}
    )
    path = tmp_path / ("records.jsonl" if fmt == "braintrust" else "tests.jsonl")
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = roundtrip(path, fmt, source_format=fmt)
    assert result.exact and result.vendor_changes == [], (result.undeclared, result.vendor_changes)


def test_an_assertion_type_that_is_not_text_is_read_not_crashed_on(tmp_path: Path) -> None:
    path = tmp_path / "tests.yaml"
    path.write_text(
        "- vars: {input: x}\n  assert: [{type: [a], value: 1}, {type: {a: 1}}]\n", "utf-8"
    )
    (data,) = promptfoo_rows(path)
    assert data["metadata"]["case"]["oracleType"] == "rubric"


def test_an_expected_value_of_the_wrong_shape_stops_a_vendor_export(tmp_path: Path) -> None:
    doc = json.loads((EXAMPLES / "support-refunds.json").read_text(encoding="utf-8"))
    tool_row = next(
        r for r in doc["rows"] if r["metadata"]["case"]["oracleType"] == "expected-tool-calls"
    )
    tool_row["expected"] = {"calls": [{"name": "issue_refund"}]}  # no arguments
    source = write_json(tmp_path / "x.json", doc)
    for fmt in ("deepeval", "promptfoo", "langsmith", "braintrust"):
        with pytest.raises((ConversionRefused, InvalidRowForExport)):
            convert(source, tmp_path / f"o-{fmt}.out", ConvertOptions(target_format=fmt))
    assert not list(tmp_path.glob("o-*"))


@pytest.mark.parametrize("extensions", ["oops", {"blueprint-import": 5}])
def test_a_repeated_id_beside_damaged_extensions_is_reported_not_crashed_on(
    tmp_path: Path, extensions: object
) -> None:
    case = {
        "caseId": "a",
        "oracleType": "reference-answer",
        "expectedBehavior": "x",
        "provenance": "imported",
        "extensions": extensions,
    }
    record = {
        "id": "a",
        "input": "q",
        "expected": "a",
        "metadata": {"blueprint": {"id": "a", "case": case}},
    }
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    report = validate_file(path, format="braintrust")
    assert ("schema", "a-2") in report.flatten(("code", "row_id"))
