"""Importing vendor files that did not come from Blueprint: inferred, flagged, and valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.formats import REGISTRY, resolve_codec
from blueprint.formats.vendor import importing
from blueprint.formats.vendor.importing import _UniqueIds
from blueprint.io import firstseen
from blueprint.validation.validate import validate_file
from conftest import FIXTURES

NATIVE = FIXTURES / "native"


def rows_of(path: Path, fmt: str) -> dict[str, dict]:
    return {row["id"]: row for row in data_rows(REGISTRY[fmt].open(path))}


def derived(row: dict) -> set[str]:
    return set(row["metadata"]["case"]["extensions"]["blueprint-import"]["derived"])


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (NATIVE / "promptfoo" / "promptfooconfig.yaml", None),
        (NATIVE / "promptfoo" / "tests.csv", "promptfoo"),
        (NATIVE / "deepeval" / "goldens.json", "deepeval"),
        (NATIVE / "deepeval" / "goldens.csv", "deepeval"),
        (NATIVE / "deepeval" / "goldens.jsonl", "deepeval"),
        (NATIVE / "langsmith" / "examples.jsonl", None),
        (NATIVE / "braintrust" / "records.jsonl", None),
    ],
    ids=lambda value: value if isinstance(value, str) else getattr(value, "name", "auto"),
)
def test_native_files_convert_to_a_valid_set_with_flags(
    path: Path, fmt: str | None, tmp_path: Path
) -> None:
    target = tmp_path / "imported.json"
    result = convert(path, target, ConvertOptions(source_format=fmt))
    assert any("derived on import" in note for note in result.notes)
    report = validate_file(target)
    assert report.valid, report.flatten(("code", "path", "message"))
    codes = report.counts_by_code()
    assert codes.get("derived-value", 0) >= result.export.rows
    for data in rows_of(target, "json").values():
        assert data["metadata"]["case"]["provenance"] == "imported"


def test_promptfoo_config_inference() -> None:
    rows = rows_of(NATIVE / "promptfoo" / "promptfooconfig.yaml", "promptfoo")
    assert rows["geo-capital-fr"]["expected"] == "Paris"
    assert rows["geo-capital-fr"]["metadata"]["topic"] == "geography"
    assert "id" not in derived(rows["geo-capital-fr"])
    rubric = rows["test-2"]["metadata"]["case"]
    assert rubric["oracleType"] == "rubric" and rubric["evaluator"] == "llm-judge"
    assert rubric["evaluationCriteria"][0].startswith("Declines politely")
    tools = rows["test-3"]
    assert [c["name"] for c in tools["expected"]["calls"]] == ["find_restaurant", "book_table"]
    assert "expected" in derived(tools)
    programmatic = rows["test-4"]
    # the prompt {{input}} takes a var the test does not have: the prompt and the vars
    assert programmatic["input"] == {
        "prompt": "{{input}}",
        "vars": {"question": "Where do I send returns?", "locale": "en-GB"},
    }
    case = programmatic["metadata"]["case"]
    # icontains is a substring check, not an equality: a rubric stating it, no answer
    assert case["oracleType"] == "rubric" and "evaluator" not in case
    assert "expected" not in programmatic
    assert case["evaluationCriteria"] == [
        'output contains "returns centre", ignoring case (promptfoo icontains)'
    ]
    assert "icontains 'returns centre'" in case["passLogic"]
    kept = case["extensions"]["promptfoo"]["native"]["assert"]["value"]
    assert kept == [{"type": "icontains", "value": "returns centre"}]  # written back as it was
    assert rows["test-5"]["metadata"]["case"]["evaluator"] == "llm-judge"  # factuality


def test_promptfoo_csv_expected_grammar() -> None:
    rows = list(data_rows(REGISTRY["promptfoo"].open(NATIVE / "promptfoo" / "tests.csv")))
    assert rows[0]["expected"] == "4"  # equals:4
    assert rows[0]["metadata"]["tags"] == ["easy", "smoke"]
    assert rows[1]["expected"] == "necessary"  # a bare cell means equals
    contains = rows[2]["metadata"]["case"]
    assert contains["oracleType"] == "rubric" and "expected" not in rows[2]
    assert contains["evaluationCriteria"] == [
        'output contains "Bonjour", matching case (promptfoo contains)'
    ]
    assert "contains 'Bonjour'" in contains["passLogic"]


@pytest.mark.parametrize("second", ["question", " question"])
def test_promptfoo_csv_naming_a_column_twice_is_refused_at_the_header(
    second: str, tmp_path: Path
) -> None:
    from blueprint.core.errors import ParseError

    target = tmp_path / "tests.csv"
    target.write_text(f"question,__expected,{second}\nWhat?,yes,Why?\n", encoding="utf-8")
    with pytest.raises(ParseError) as raised:
        REGISTRY["promptfoo"].open(target)
    assert raised.value.line == 1 and "'question'" in str(raised.value)
    report = validate_file(target, format="promptfoo")
    assert [(issue.code, issue.line) for issue in report.issues] == [("parse", 1)]


def test_deepeval_inference() -> None:
    rows = rows_of(NATIVE / "deepeval" / "goldens.json", "deepeval")
    assert rows["capital-fr"]["expected"] == "Paris"
    assert rows["capital-fr"]["metadata"]["context"] == ["France's capital is Paris."]
    assert rows["golden-2"]["expected"]["calls"] == [
        {"name": "get_forecast", "arguments": {"city": "Lyon", "day": "tomorrow"}}
    ]
    assert rows["haiku"]["metadata"]["case"]["oracleType"] == "expected-behavior-only"
    csv_rows = rows_of(NATIVE / "deepeval" / "goldens.csv", "deepeval")
    assert csv_rows["capital-es"]["metadata"]["context"] == [
        "Spain's capital is Madrid.",
        "Madrid is in the centre.",
    ]


def test_langsmith_inference() -> None:
    rows = list(data_rows(REGISTRY["langsmith"].open(NATIVE / "langsmith" / "examples.jsonl")))
    assert rows[0]["expected"] == {"answer": "Paris"}
    assert rows[0]["metadata"]["split"] == "test"
    assert rows[1]["metadata"]["case"]["evaluationCriteria"] == [
        "The reply is polite.",
        "The reply is under 60 words.",
    ]
    assert rows[2]["metadata"]["case"]["oracleType"] == "acceptable-set"
    assert rows[3]["metadata"]["case"]["oracleType"] == "expected-behavior-only"


def test_braintrust_inference() -> None:
    rows = list(data_rows(REGISTRY["braintrust"].open(NATIVE / "braintrust" / "records.jsonl")))
    kept = rows[0]["metadata"]["case"]["extensions"]["braintrust"]
    assert kept["record"]["tags"] == ["faq", "shipping"]  # the record's own, written back
    assert rows[1]["metadata"]["case"]["oracleType"] == "expected-tool-calls"
    assert rows[2]["id"] == "record-3" and "id" in derived(rows[2])


def test_an_omitted_field_in_vendor_metadata_stays_in_the_extension_in_any_case(
    tmp_path: Path,
) -> None:
    source = tmp_path / "records.jsonl"
    source.write_text(
        '{"input": "hi", "expected": "yo", "metadata": {"Priority": "P1", "team": "x"}}\n'
    )
    (imported,) = data_rows(REGISTRY["braintrust"].open(source))
    assert {key for key in imported["metadata"] if key != "case"} == {"team"}
    target = tmp_path / "set.json"
    convert(source, target, ConvertOptions(source_format="braintrust"))
    assert validate_file(target).valid
    back = tmp_path / "back.jsonl"
    convert(target, back, ConvertOptions(target_format="braintrust"))
    assert json.loads(back.read_text()) == json.loads(source.read_text())


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("langsmith/examples.jsonl", "langsmith"),
        ("braintrust/records.jsonl", "braintrust"),
        ("promptfoo/promptfooconfig.yaml", "promptfoo"),
    ],
)
def test_native_files_are_detected(name: str, fmt: str) -> None:
    assert resolve_codec(NATIVE / name, None, reading=True).name == fmt


def test_deepeval_to_promptfoo_reports_both_legs(tmp_path: Path) -> None:
    result = convert(
        NATIVE / "deepeval" / "goldens.json",
        tmp_path / "tests.yaml",
        ConvertOptions(source_format="deepeval", target_format="promptfoo"),
    )
    assert any("derived on import" in note for note in result.notes)
    assert any(lossy.field == "*" for lossy in result.export.lossy)  # the haiku: human-only


def _imported(tmp_path, text: str) -> list[dict]:
    path = tmp_path / "tests.yaml"
    path.write_text(text, encoding="utf-8")
    return list(data_rows(REGISTRY["promptfoo"].open(path)))


def test_negated_checks_are_never_an_expected_answer(tmp_path) -> None:
    rows = _imported(
        tmp_path,
        "- vars: {input: Say something nice}\n"
        "  assert: [{type: not-contains, value: idiot}]\n"
        "- vars: {input: q}\n"
        "  assert: [{type: icontains, value: thanks}, {type: not-equals, value: I cannot help}]\n",
    )
    negated, mixed = (row["metadata"]["case"] for row in rows)
    assert "expected" not in rows[0] and negated["oracleType"] == "rubric"
    assert negated["unacceptableBehavior"] == [
        'output contains "idiot", matching case (promptfoo not-contains)'
    ]
    assert "evaluator" not in negated  # promptfoo runs it as code; no evaluator is claimed
    assert "expected" not in rows[1] and mixed["oracleType"] == "rubric"
    assert mixed["unacceptableBehavior"] == [
        'output equals "I cannot help" exactly (promptfoo not-equals)'
    ]
    assert mixed["evaluationCriteria"] == [
        'output contains "thanks", ignoring case (promptfoo icontains)',
        'output does not equal "I cannot help" (promptfoo not-equals)',
    ]


def test_checks_that_name_no_answer_become_criteria(tmp_path) -> None:
    (row,) = _imported(
        tmp_path,
        "- vars: {input: q}\n  assert:\n    - {type: is-json}\n"
        "    - {type: javascript, value: output.length < 100}\n",
    )
    case = row["metadata"]["case"]
    assert case["oracleType"] == "rubric" and "expected" not in row
    assert case["evaluationCriteria"] == [
        "output is valid JSON (promptfoo is-json)",
        'output passes the JavaScript check "output.length < 100" (promptfoo javascript)',
    ]


def test_a_templated_reference_is_resolved_from_the_vars_and_kept_live(tmp_path) -> None:
    (row,) = _imported(
        tmp_path,
        "- vars: {input: q, ground_truth: Paris}\n"
        "  assert: [{type: factuality, value: '{{ground_truth}}'}]\n",
    )
    assert row["expected"] == "Paris"
    how = row["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]["expected"]
    assert "{{ground_truth}}" in how
    back = tmp_path / "back.yaml"
    imported = tmp_path / "set.json"
    convert(tmp_path / "tests.yaml", imported, ConvertOptions())
    convert(imported, back, ConvertOptions(target_format="promptfoo"))
    import yaml

    (test,) = yaml.safe_load(back.read_text(encoding="utf-8"))
    assert test["assert"] == [{"type": "factuality", "value": "{{ground_truth}}"}]  # still live


def test_file_vars_list_vars_and_templates_are_kept_and_flagged(tmp_path) -> None:
    (row,) = _imported(
        tmp_path,
        "- vars: {input: 'file://q.txt', colours: [red, green], note: '{{ other }}'}\n"
        "  assert: [{type: contains, value: x}]\n",
    )
    assert row["input"] == {
        "input": "file://q.txt",
        "colours": ["red", "green"],
        "note": "{{ other }}",
    }
    how = row["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]["input"]
    assert "one test per value" in how and "files" in how and "templates" in how


def _renamed_by_a_set(ids: list[str]) -> list[str]:
    """The renaming of repeated ids, as a set of every id seen gives it."""
    seen: set[str] = set()
    out = []
    for row_id in ids:
        unique, number = row_id, 2
        while unique in seen:
            unique, number = f"{row_id}-{number}", number + 1
        seen.add(unique)
        out.append(unique)
    return out


def _settled(ids: list[str]) -> list[str]:
    """The ids rows read with these ids end up with, read in order by one import."""
    unique = _UniqueIds()
    renamed = []
    for row_id in ids:
        row: dict = {"id": row_id, "metadata": {"case": {}}}
        unique.settle(row, "deepeval")
        renamed.append(row["id"])
    return renamed


@given(st.lists(st.sampled_from(["a", "a-2", "a-3", "b", "a-2-2", "é"]), max_size=40))
@settings(max_examples=200)
def test_repeated_ids_are_renamed_as_a_set_of_every_id_would(ids: list[str]) -> None:
    unique = _UniqueIds()
    renamed = []
    for row_id in ids:
        row: dict = {"id": row_id, "metadata": {"case": {"caseId": row_id}}}
        unique.settle(row, "deepeval")
        renamed.append(row["id"])
        assert row["metadata"]["case"]["caseId"] == row["id"]
        if row["id"] != row_id:
            assert "id" in derived(row)
    assert renamed == _renamed_by_a_set(ids)


def test_ids_past_the_tables_memory_are_still_renamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(firstseen, "TABLE_BYTES", 48)  # a few ids in memory, the rest on disk
    ids = [f"row-{number % 300}" for number in range(900)]
    assert _settled(ids) == _renamed_by_a_set(ids)


def test_one_id_repeated_many_times_is_renamed_in_one_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    add = _UniqueIds._add

    def counted(self: _UniqueIds, row_id: str) -> bool:
        asked.append(row_id)
        return add(self, row_id)

    monkeypatch.setattr(_UniqueIds, "_add", counted)
    ids = ["x"] * 2000 + ["x-5", "y", "x"]
    assert _settled(ids) == _renamed_by_a_set(ids)
    assert len(asked) <= 2 * len(ids) + 2  # each repeat asks about its own id and one more


@given(st.lists(st.sampled_from(["a", "a-2", "a-3", "b", "b-2", "a-2-2"]), max_size=40))
@settings(max_examples=100)
def test_repeats_forgotten_past_the_memory_are_renamed_the_same(ids: list[str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(importing, "_REMEMBERED_REPEATS", 1)  # forgets at every other repeat
        patch.setattr(importing, "_REMEMBERED_CHARACTERS", 2)  # and at every long one
        renamed = _settled(ids)
    assert renamed == _renamed_by_a_set(ids)
