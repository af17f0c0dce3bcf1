"""Vendor files that did not come from Blueprint go back to their own format as they came.

Importing keeps every key Blueprint has no field for; exporting to the same format writes it
back. These tests read real public vendor files, hand-written files full of unknown keys,
and hypothesis-generated records, and require two things of each: the canonical round trip
is exact, and the vendor reads back the same records it was given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.formats import REGISTRY
from blueprint.formats.native import ABSENT, NativeShape, extension_for, fingerprint, restore, same
from blueprint.formats.promptfoo import dump_yaml
from blueprint.io import jsonvalues
from blueprint.validation.validate import validate_file
from conftest import FIXTURES, READ_AS_ANOTHER_FORMAT
from strategies import (
    braintrust_records,
    conversational_goldens,
    deepeval_goldens,
    langsmith_examples,
    promptfoo_tests,
)

NATIVE = FIXTURES / "native"
UNKNOWN_KEYS = [
    ("promptfoo", NATIVE / "promptfoo" / "unknown-keys.yaml"),
    ("deepeval", NATIVE / "deepeval" / "unknown-keys.json"),
    ("langsmith", NATIVE / "langsmith" / "unknown-keys.jsonl"),
    ("braintrust", NATIVE / "braintrust" / "unknown-keys.jsonl"),
]


def describe(result: Any) -> str:
    return (
        f"undeclared={result.undeclared} unobserved={result.unobserved}"
        f" vendor={result.vendor_changes}"
    )


@pytest.mark.parametrize(
    ("fmt", "path"), UNKNOWN_KEYS, ids=lambda value: getattr(value, "name", value)
)
def test_a_native_file_full_of_unknown_keys_goes_back_as_it_came(
    fmt: str, path: Path, tmp_path: Path
) -> None:
    result = roundtrip(path, fmt, source_format=fmt)
    assert result.exact, describe(result)
    assert result.vendor_changes == []
    imported = tmp_path / "imported.json"
    convert(path, imported, ConvertOptions(source_format=fmt))
    report = validate_file(imported)
    assert report.valid, report.flatten(("code", "path", "message"))
    rows = list(data_rows(REGISTRY["json"].open(imported)))
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))  # repeated vendor ids were made unique, and flagged
    for row in rows:
        assert fmt in row["metadata"]["case"]["extensions"]
        assert not {"difficulty", "score", "case"} & set(row["metadata"]) - {"case"}


def public_files() -> list[tuple[str, Path]]:
    found = []
    for fmt in ("promptfoo", "deepeval", "langsmith", "braintrust"):
        for path in sorted((NATIVE / fmt / "public").rglob("*")):
            if path.suffix not in (".json", ".jsonl", ".csv", ".yaml", ".yml"):
                continue
            if fmt == "promptfoo" and path.suffix in (".yaml", ".yml") and "vars" in path.parts:
                continue  # var files a suite loads, not test files
            found.append((READ_AS_ANOTHER_FORMAT.get(path, fmt), path))
    return found


@pytest.mark.parametrize(
    ("fmt", "path"),
    public_files(),
    ids=lambda value: str(value.relative_to(NATIVE)) if isinstance(value, Path) else value,
)
def test_public_vendor_files_round_trip_exactly(fmt: str, path: Path) -> None:
    result = roundtrip(path, fmt, source_format=fmt)
    assert result.exact, describe(result)


def _write(fmt: str, records: list[dict[str, Any]], folder: Path) -> Path:
    if fmt == "promptfoo":
        path = folder / "tests.yaml"
        path.write_bytes(dump_yaml(records))
    elif fmt == "deepeval":
        path = folder / "goldens.json"
        path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    else:
        path = folder / "records.jsonl"
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
    return path


NATIVE_RECORDS = {
    "promptfoo": promptfoo_tests,
    "deepeval": st.one_of(
        st.lists(deepeval_goldens, min_size=1, max_size=4),
        st.lists(conversational_goldens, min_size=1, max_size=4),
    ),
    "langsmith": langsmith_examples,
    "braintrust": braintrust_records,
}


@pytest.mark.parametrize("fmt", list(NATIVE_RECORDS))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(data=st.data())
def test_any_native_records_go_back_as_they_came(fmt: str, data: Any, tmp_path: Path) -> None:
    strategy = NATIVE_RECORDS[fmt]
    records = (
        data.draw(strategy)
        if fmt == "deepeval"
        else data.draw(st.lists(strategy, min_size=1, max_size=4))
    )
    path = _write(fmt, records, tmp_path)
    result = roundtrip(path, fmt, source_format=fmt)
    assert result.exact, describe(result)
    assert result.vendor_changes == []


# --- the keeping itself ----------------------------------------------------------------------

SHAPE = NativeShape(mapped={"q": ("input",), "a": ("expected",)}, grading=("a",))


def _row(value: Any, expected: Any) -> dict[str, Any]:
    return {"id": "r", "input": value, "expected": expected, "metadata": {"case": {}}}


def test_the_vendor_value_comes_back_while_the_row_is_unchanged() -> None:
    record = {"q": "{{live}}", "a": "Paris", "extra": [1]}
    row = _row("{{live}}", "Paris")
    extension = extension_for(SHAPE, record, {"q": "escaped", "a": "Paris"}, row)
    assert extension["record"] == {"extra": [1]}
    assert extension["native"]["q"]["value"] == "{{live}}"
    assert "value" not in extension["native"]["a"]  # the same as the regenerated value
    restored = restore(SHAPE, {"q": "escaped", "a": "Paris"}, extension, row)
    assert restored.record == record and list(restored.record) == ["q", "a", "extra"]
    assert restored.kept == {"q", "a"} and not restored.edited


def test_an_edited_row_reaches_the_vendor_and_the_old_value_travels_with_it() -> None:
    row = _row("{{live}}", "Paris")
    extension = extension_for(SHAPE, {"q": "{{live}}", "a": "Paris"}, {"q": "x", "a": "Paris"}, row)
    edited = _row("new question", "Paris")
    restored = restore(SHAPE, {"q": "new-escaped", "a": "Paris"}, extension, edited)
    assert restored.record["q"] == "new-escaped"
    assert restored.edited == ["q"]
    assert restored.payload["entries"]["q"] == extension["native"]["q"]  # nothing is lost


def test_an_entry_from_before_the_check_fields_matches_a_row_without_them() -> None:
    # the shape came to depend on case.checks after the entry was written: a row with no
    # checks is as it was, so the vendor's value comes back; a row that has checks is edited
    later = NativeShape(mapped={"a": ("expected", "case.checks")}, grading=("a",))
    row = _row("q", "Paris")
    entry = {"from": fingerprint(row, ("expected",)), "value": "native"}
    extension = {"native": {"a": entry}}
    restored = restore(later, {"a": "regenerated"}, extension, row)
    assert restored.kept == {"a"} and restored.record["a"] == "native"
    gated = _row("q", "Paris")
    gated["metadata"]["case"]["checks"] = [{"type": "is-json"}]
    edited = restore(later, {"a": "regenerated"}, extension, gated)
    assert edited.edited == ["a"] and edited.record["a"] == "regenerated"


def test_fingerprints_tell_absent_from_null() -> None:
    assert fingerprint({"input": None}, ("input",)) != fingerprint({}, ("input",))
    assert fingerprint({"input": 1}, ("input",)) != fingerprint({"input": 1.0}, ("input",))


# few values, so that two drawn alike often: the places where equal Python values are different
# JSON (1, 1.0 and true; 0.0 and -0.0), or different Python values the same JSON (NaN and null;
# a tuple and a list; the key 1 and the key "1")
_CLOSE_SCALARS = st.sampled_from([0, 1, 0.0, -0.0, 1.0, True, False, None, "1", "", float("nan")])
_CLOSE_VALUES = st.recursive(
    _CLOSE_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=2),
        st.lists(children, max_size=2).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b", 1]), children, max_size=2),
    ),
    max_leaves=5,
)


def _same_text(left: Any, right: Any) -> bool | None:
    """Whether two values write the same JSON text, keys sorted; None when there is no text to
    compare (keys 1 and "a" cannot be sorted, and a key 1 leaves the writing to json.dumps,
    which refuses NaN)."""
    try:
        return jsonvalues.dumps(left, sort_keys=True) == jsonvalues.dumps(right, sort_keys=True)
    except (TypeError, ValueError):
        return None


@given(left=_CLOSE_VALUES, right=_CLOSE_VALUES)
def test_same_is_equality_of_json_texts(left: Any, right: Any) -> None:
    expected = _same_text(left, right)
    if expected is not None:
        assert same(left, right) == expected
    if _same_text(left, left) is not None:
        assert same(left, left)


def test_same_tells_absent_apart() -> None:
    assert same(ABSENT, ABSENT)
    assert not same(ABSENT, None)
    assert not same({}, ABSENT)


def _edit_and_export(tmp_path: Path, yaml_text: str, edit: Any, target: str) -> Any:
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(yaml_text, encoding="utf-8")
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions())
    document = json.loads(imported.read_text(encoding="utf-8"))
    edit(document["rows"])
    imported.write_text(json.dumps(document), encoding="utf-8")
    return convert(imported, tmp_path / target, ConvertOptions(target_format="promptfoo"))


def test_editing_one_var_keeps_the_others_as_the_suite_wrote_them(tmp_path: Path) -> None:
    from blueprint.formats.promptfoo import read_yaml

    def edit(rows: list[dict[str, Any]]) -> None:
        # the config's one prompt cannot be rendered plainly (its vars load a file, expand a
        # list): the input is the prompt and the vars
        rows[0]["input"]["vars"]["other"] = "edited {{ text }}"

    result = _edit_and_export(
        tmp_path,
        "prompts: ['{{input}}']\ntests:\n"
        "  - vars: {input: 'file://v.txt', colours: [red, green], other: y, live: '{{ x }}'}\n"
        "    assert: [{type: contains, value: '{{ other }}'}]\n",
        edit,
        "back.yaml",
    )
    (test,) = read_yaml(tmp_path / "back.yaml")["tests"]
    assert test["vars"]["input"] == "file://v.txt"  # still loaded by promptfoo
    assert test["vars"]["colours"] == ["red", "green"]  # still expanded into two tests
    assert test["vars"]["live"] == "{{ x }}"  # still a live template
    assert test["vars"]["other"] == 'edited {{ "{" }}{ text }}'  # Blueprint's text: literal
    assert "options" not in test
    assert any("read the edited vars other" in note for note in result.export.notes)


def test_a_config_written_as_json_lines_merges_its_default_test(tmp_path: Path) -> None:
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(
        "defaultTest: {assert: [{type: contains, value: ok}], vars: {tone: calm}}\n"
        "tests: [{vars: {input: 'ok fine'}}, {vars: {input: bad}}]\n",
        encoding="utf-8",
    )
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions())
    result = convert(imported, tmp_path / "t.jsonl", ConvertOptions(target_format="promptfoo"))
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    tests = [json.loads(line) for line in lines]
    assert all(t["assert"][0] == {"type": "contains", "value": "ok"} for t in tests)
    assert all(t["vars"]["tone"] == "calm" for t in tests)
    lost = {(item.kind, item.field) for item in result.export.lossy}
    assert ("dropped", "extensions") in lost  # the config: no place in a tests file
    assert ("dropped", "metadata.case.extensions.promptfoo") in lost
    back = list(data_rows(REGISTRY["promptfoo"].open(tmp_path / "t.jsonl")))
    before = list(data_rows(REGISTRY["json"].open(imported)))
    for old, new in zip(before, back, strict=True):  # only the declared field changed
        old["metadata"]["case"]["extensions"].pop("promptfoo")
        new["metadata"]["case"]["extensions"].pop("promptfoo")
        assert old == new


def test_unquoted_yaml_dates_stay_dates_for_promptfoo(tmp_path: Path) -> None:
    from blueprint.formats.promptfoo import YamlDate, read_yaml

    source = tmp_path / "tests.yaml"
    source.write_text(
        "- vars: {input: 2024-01-01, quoted: '2024-01-02'}\n"
        "  assert: [{type: contains, value: x}]\n",
        encoding="utf-8",
    )
    imported = tmp_path / "set.json"
    convert(source, imported, ConvertOptions())
    (row,) = data_rows(REGISTRY["json"].open(imported))
    assert row["input"] == {"input": "2024-01-01", "quoted": "2024-01-02"}
    assert (
        "as dates" in row["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]["input"]
    )
    convert(imported, tmp_path / "back.yaml", ConvertOptions(target_format="promptfoo"))
    (test,) = read_yaml(tmp_path / "back.yaml")
    assert isinstance(test["vars"]["input"], YamlDate)
    assert not isinstance(test["vars"]["quoted"], YamlDate)
    result = roundtrip(source, "promptfoo")
    assert result.exact and result.vendor_changes == []
