"""Importing vendor files that did not come from Blueprint: inferred, flagged, and valid."""

from __future__ import annotations

import csv
import io
import json
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.core.errors import NoRowsRead, ParseError
from blueprint.formats import REGISTRY, MergedRecord, UnreadableRow, resolve_codec
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
    # icontains is a substring check, not an equality: the acceptable set the check defines
    assert case["oracleType"] == "acceptable-set"
    assert case["evaluator"] == "exact-or-programmatic"
    assert programmatic["expected"] == {
        "satisfies": {"type": "contains", "value": "returns centre", "normalize": ["lowercase"]}
    }
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
    assert contains["oracleType"] == "acceptable-set"
    assert rows[2]["expected"] == {"satisfies": {"type": "contains", "value": "Bonjour"}}
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
    # a negated check is no answer: the acceptable set is what the negation lets through
    assert negated["oracleType"] == mixed["oracleType"] == "acceptable-set"
    assert rows[0]["expected"] == {
        "satisfies": {"type": "not", "check": {"type": "contains", "value": "idiot"}}
    }
    assert rows[1]["expected"] == {
        "satisfies": {
            "type": "all",
            "checks": [
                {"type": "contains", "value": "thanks", "normalize": ["lowercase"]},
                {"type": "not", "check": {"type": "equals", "value": "I cannot help"}},
            ],
        }
    }


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


# --- every record accounted for -------------------------------------------------------------


def _lines(*records: object) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def _huggingface(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "test.jsonl").write_text(
        _lines({"question": "2+2?", "answer": "4"}, ["not", "a", "row"]), "utf-8"
    )
    return folder


_OME_GOOD = {"id": "c1", "prompt": "fix the UI", "expectedCards": ["browser"]}
_OMK_GOOD = {"sample_id": "s1", "prompt": "p", "assertions": [{"type": "contains", "value": "x"}]}

#: for each vendor format: a file holding one record it reads as a row and one it cannot place
#: (what its reader says of that one, and the line it is on)
UNPLACEABLE = {
    "promptfoo": (
        "tests.yaml",
        "- vars: {question: '2+2?'}\n  assert: [{type: equals, value: '4'}]\n- 42\n",
        "item 2 is integer",
        3,
    ),
    "deepeval": (
        "goldens.json",
        '[\n  {"input": "2+2?", "expected_output": "4"},\n  ["a", "list"]\n]\n',
        "item 2 is array",
        3,
    ),
    "langsmith": (
        "examples.jsonl",
        _lines({"inputs": {"q": "2+2?"}, "outputs": {"a": "4"}}, {"inputs": "2+2?"}),
        "has an inputs object",
        2,
    ),
    "braintrust": (
        "records.jsonl",
        _lines({"input": "2+2?", "expected": "4"}, 42),
        "item 2 is integer",
        2,
    ),
    "inspect": (
        "samples.jsonl",
        _lines({"input": "2+2?", "target": "4"}, "a text"),
        "item 2 is string",
        2,
    ),
    "openai-evals": (
        "samples.jsonl",
        _lines({"input": "2+2?", "ideal": "4"}, None),
        "item 2 is null",
        2,
    ),
    "huggingface": ("dataset", _huggingface, "item 2 is array", 2),
    "omk": (
        "eval-samples.json",
        json.dumps(
            {"schemaVersion": "omk.eval-sample-set/v2", "samples": [_OMK_GOOD, "a text"]},
            indent=2,
        ),
        "item 2 is string",
        None,
    ),
    "ome": (
        "suite.json",
        json.dumps(
            {
                "name": "suite",
                "cases": [
                    _OME_GOOD,
                    {**_OME_GOOD, "id": "c2", "prompt": 5},
                ],
            },
            indent=2,
        ),
        "prompt must be text",
        11,
    ),
    "apollia": (
        "suite.toml",
        'name = "s"\n\n[[tasks]]\nid = "a"\nprompt = "p"\n\n[[tasks]]\nid = "b"\n',
        "the task has no prompt",
        7,
    ),
}


def _unplaceable(tmp_path: Path, fmt: str) -> tuple[Path, str, int | None]:
    name, content, reason, line = UNPLACEABLE[fmt]
    path = tmp_path / name
    if callable(content):
        content(path)
    else:
        path.write_text(content, encoding="utf-8")
    return path, reason, line


def test_every_vendor_format_has_a_file_with_a_record_it_cannot_place() -> None:
    vendors = {name for name, codec in REGISTRY.items() if not codec.lossless and codec.can_read}
    assert set(UNPLACEABLE) == vendors


@pytest.mark.parametrize("fmt", sorted(UNPLACEABLE))
def test_a_record_the_format_cannot_place_is_counted_and_named(fmt: str, tmp_path: Path) -> None:
    path, reason, line = _unplaceable(tmp_path, fmt)
    source = REGISTRY[fmt].open(path)
    items = list(source.rows)
    count = source.records
    assert count is not None
    assert (count.read, count.rows, count.refused, count.merged) == (2, 1, 1, {})
    assert count.accounted
    (refusal,) = count.refusals
    assert refusal.startswith("record 2") and reason in refusal
    if line is not None:
        assert f"(line {line})" in refusal
    summary = count.summary()
    assert summary.startswith("2 ") and "1 row, 1 refused (record 2" in summary
    # the unreadable row is the refusal the validator and convert name, with its line
    (unread,) = [item for item in items if isinstance(item, UnreadableRow)]
    assert reason in unread.reason and unread.line == line
    result = CliRunner().invoke(
        app, ["convert", str(path), str(tmp_path / "out.json"), "--from", fmt, "--to", "json"]
    )
    assert result.exit_code == 2, result.output
    assert reason in " ".join(result.output.split())
    assert not (tmp_path / "out.json").exists()


def _records_in(path: Path) -> int | None:
    """How many records a vendor file holds, counted from its structure alone (not by the
    reader): the lines of JSON Lines, the rows of a CSV, the items of the list of records a
    document holds; None where that takes the vendor's own reading (a promptfoo config that
    includes other files)."""
    suffix = path.suffix.lower()
    text = path.read_text(encoding="utf-8")
    if suffix == ".jsonl":
        return sum(1 for line in text.splitlines() if line.strip())
    if suffix == ".csv":
        rows = csv.reader(io.StringIO(text, newline=""))
        return sum(1 for cells in list(rows)[1:] if any(cell.strip() for cell in cells))
    if suffix == ".toml":
        return len(tomllib.loads(text).get("tasks", []))
    document = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    if isinstance(document, list):
        return len(document)
    for key in ("examples", "samples", "cases", "tests"):
        if key in document:
            records = document[key]
            if key == "tests" and any(isinstance(test, str) for test in records):
                return None  # tests in other files
            return len(records)
    return 1  # one object: Inspect reads it as one sample, promptfoo as one test


def _fixtures() -> list[tuple[str, Path]]:
    found = []
    for folder in sorted(NATIVE.iterdir()):
        codec = REGISTRY[folder.name]
        if folder.name == "huggingface":
            continue  # a folder: its data files are counted by test_huggingface
        for path in sorted(folder.rglob("*")):
            if path.suffix.lower() in codec.read_extensions and "schema" not in path.parts:
                found.append((folder.name, path))
    return found


@pytest.mark.parametrize(
    ("fmt", "path"), _fixtures(), ids=lambda value: str(getattr(value, "name", value))
)
def test_every_record_of_a_vendor_file_is_accounted_for(fmt: str, path: Path) -> None:
    try:
        source = REGISTRY[fmt].open(path)
    except ParseError:
        return  # not a file of the format's records (a vars file, a cards file)
    rows = list(source.rows)
    count = source.records
    assert count is not None and count.accounted, count
    assert count.rows == sum(1 for row in rows if not isinstance(row, UnreadableRow))
    expected = _records_in(path)
    if expected is not None:
        assert count.read == expected, count.summary()


def test_a_conversion_says_where_the_records_of_its_source_went(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(_lines({"input": "a", "expected": "b"}, {"input": "c", "expected": "d"}))
    result = CliRunner().invoke(
        app, ["convert", str(path), str(tmp_path / "out.json"), "--report", "json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["records"] == {
        "what": "Braintrust record",
        "read": 2,
        "rows": 2,
        "merged": 0,
        "mergedBy": {},
        "refused": 0,
        "refusals": [],
    }
    assert "read from braintrust: 2 Braintrust records read: 2 rows" in report["notes"]
    # a canonical source's every record is a row: nothing to account for
    again = CliRunner().invoke(
        app,
        ["convert", str(tmp_path / "out.json"), str(tmp_path / "again.jsonl"), "--report", "json"],
    )
    assert json.loads(again.stdout)["records"] is None


def test_records_merged_into_other_rows_are_counted_by_reason() -> None:
    codec = REGISTRY["braintrust"]
    records = [
        (1, {"input": "a"}),
        MergedRecord(2, "a follow-up turn, merged into the row before it"),
        MergedRecord(3, "a follow-up turn, merged into the row before it"),
        (4, {"input": "b"}),
    ]
    rows = codec.rows(records)
    assert [item.index for item in rows] == [0, 1]  # merged records take no row index
    count = rows.count
    assert (count.read, count.rows, count.merged_count) == (4, 2, 2) and count.accounted
    assert count.summary() == (
        "4 Braintrust records read: 2 rows, 2 merged"
        " (2: a follow-up turn, merged into the row before it)"
    )


def test_a_vendor_file_whose_records_give_no_row_is_not_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(_lines({"input": "a"}, {"input": "b"}), encoding="utf-8")
    merged = [MergedRecord(1, "a follow-up turn"), MergedRecord(2, "a follow-up turn")]
    monkeypatch.setattr(type(REGISTRY["braintrust"]), "records", lambda self, path: merged)
    for target in ("out.jsonl", "out.json"):
        result = CliRunner().invoke(
            app, ["convert", str(path), str(tmp_path / target), "--to", "inspect"]
        )
        assert result.exit_code == 1, result.output
        message = " ".join(result.output.split())
        assert "no row was read from it (2 Braintrust records read: 0 rows, 2 merged" in message
        assert "nothing to write" in message and not (tmp_path / target).exists()
    tripped = CliRunner().invoke(app, ["roundtrip", str(path), "--via", "json"])
    assert tripped.exit_code == 1 and "no row was read" in " ".join(tripped.output.split())
    with pytest.raises(NoRowsRead):
        convert(path, tmp_path / "out.json", ConvertOptions(source_format="braintrust"))


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("records.json", "[]\n", "braintrust"),
        ("suite.json", '{"name": "s", "cases": []}\n', "ome"),
        ("promptfooconfig.yaml", "prompts: ['{{q}}']\nproviders: [echo]\n", "promptfoo"),
    ],
)
def test_a_vendor_file_of_no_records_converts_and_says_so(
    tmp_path: Path, name: str, content: str, fmt: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    result = convert(path, tmp_path / "out.json", ConvertOptions(source_format=fmt))
    assert result.records is not None and result.records.read == 0
    assert result.export.rows == 0
    said = f"{path}: it holds no {REGISTRY[fmt].record_noun}, so {tmp_path / 'out.json'} holds none"
    assert said in result.notes


def test_a_canonical_set_of_no_rows_converts_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text('{"schemaVersion": "blueprint.eval-set/v1", "name": "s", "rows": []}')
    result = convert(path, tmp_path / "out.jsonl", ConvertOptions(target_format="braintrust"))
    assert result.export.rows == 0
    assert any("the set has no rows" in note for note in result.notes)
