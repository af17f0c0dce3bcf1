"""Which format a file is: by extension where one format has it, by content otherwise.

A file is read as a format only when its content fits it; content that fits none is refused
with what each format looked for, and content that fits several asks for --from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.errors import AmbiguousFormatError, UnknownFormatError
from blueprint.formats import resolve_codec
from conftest import EXAMPLES, FIXTURES

NATIVE = FIXTURES / "native"


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        (NATIVE / "promptfoo" / "tests.csv", "promptfoo"),
        (NATIVE / "promptfoo" / "public" / "csv-metadata" / "tests.csv", "promptfoo"),
        (
            NATIVE / "promptfoo" / "public" / "smoke-fixtures" / "configs" / "tests.json",
            "promptfoo",
        ),
        (
            NATIVE / "promptfoo" / "public" / "smoke-fixtures" / "configs" / "tests.jsonl",
            "promptfoo",
        ),
        (NATIVE / "promptfoo" / "promptfooconfig.yaml", "promptfoo"),
        (NATIVE / "deepeval" / "goldens.csv", "deepeval"),
        (NATIVE / "deepeval" / "goldens.json", "deepeval"),
        (NATIVE / "deepeval" / "goldens.jsonl", "deepeval"),
        (
            NATIVE / "deepeval" / "public" / "deepeval-test-core-datasets" / "convo_goldens.csv",
            "deepeval",
        ),
        (NATIVE / "langsmith" / "examples.jsonl", "langsmith"),
        (
            NATIVE
            / "langsmith"
            / "public"
            / "agent-lifecycle-workshop-baseline"
            / "baseline_dataset.json",
            "langsmith",
        ),
        (
            NATIVE
            / "langsmith"
            / "public"
            / "skills-benchmarks-ls-datasets"
            / "expected_dataset.json",
            "langsmith",
        ),
        (NATIVE / "braintrust" / "records.jsonl", "braintrust"),
        (
            NATIVE / "braintrust" / "public" / "bt-cli-datasets-fixtures" / "rows.jsonl",
            "braintrust",
        ),
        (
            NATIVE / "braintrust" / "public" / "autoevals-coqa-factuality" / "coqa-factuality.json",
            "braintrust",
        ),
        (EXAMPLES / "support-refunds.json", "json"),
        (FIXTURES / "awkward" / "awkward.csv", "csv"),
        (FIXTURES / "awkward" / "awkward.jsonl", "jsonl"),
    ],
    ids=lambda value: value.name if isinstance(value, Path) else value,
)
def test_files_are_read_as_the_format_their_content_fits(path: Path, fmt: str) -> None:
    assert resolve_codec(path, None, reading=True).name == fmt


def test_a_file_of_unknown_records_fits_no_format_and_the_message_says_what_was_tried(
    tmp_path: Path,
) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(
        json.dumps({"prompt": "2+2?", "completion": "4"}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(UnknownFormatError) as caught:
        resolve_codec(path, None, reading=True)
    message = str(caught.value)
    for name in (
        "jsonl:",
        "langsmith:",
        "braintrust:",
        "deepeval:",
        "promptfoo:",
        "inspect:",
        "openai-evals:",
    ):
        assert name in message
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "fits none" in result.stderr


@pytest.mark.parametrize(
    ("record", "fmt"),
    [
        ({"input": [{"role": "user", "content": "2+2?"}], "ideal": "4"}, "openai-evals"),
        ({"input": "2+2?", "criteria": "Is the sum right?"}, "openai-evals"),
        ({"input": "2+2?", "target": "4"}, "inspect"),
        ({"id": 1, "input": "2+2?", "target": ["4", "four"], "metadata": {"a": 1}}, "inspect"),
        ({"input": "Pick one", "choices": ["3", "4"], "target": "B"}, "inspect"),
    ],
)
def test_inspect_samples_and_openai_evals_samples_are_told_apart(
    tmp_path: Path, record: dict, fmt: str
) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert resolve_codec(path, None, reading=True).name == fmt


def test_arrays_of_langsmith_examples_and_braintrust_records_are_read(tmp_path: Path) -> None:
    examples = tmp_path / "examples.json"
    examples.write_text(json.dumps([{"inputs": {"q": "a"}, "outputs": {"a": "b"}}]), "utf-8")
    records = tmp_path / "records.json"
    records.write_text(json.dumps([{"input": "a", "expected": "b", "tags": ["x"]}]), "utf-8")
    assert resolve_codec(examples, None, reading=True).name == "langsmith"
    assert resolve_codec(records, None, reading=True).name == "braintrust"


#: a record as Braintrust's UI downloads a dataset: the record, and what its server stored
BRAINTRUST_EXPORT = {
    "id": "6f1c0b2e",
    "_xact_id": "1000194521",
    "created": "2025-01-05T10:00:00.000Z",
    "project_id": "p-1",
    "dataset_id": "d-1",
    "input": "Where do I send returns?",
    "expected": "To the returns centre",
    "metadata": {"topic": "returns"},
    "tags": ["returns"],
    "span_id": "6f1c0b2e",
    "root_span_id": "6f1c0b2e",
    "is_root": True,
    "origin": None,
    "comments": None,
    "audit_data": [],
    "facets": {},
    "classifications": None,
}


@pytest.mark.parametrize("name", ["dataset.json", "dataset.jsonl"])
def test_a_braintrust_ui_export_is_read_as_braintrust(tmp_path: Path, name: str) -> None:
    # its comments key is a golden's too: Braintrust's stored fields settle it
    path = tmp_path / name
    records = [BRAINTRUST_EXPORT, {**BRAINTRUST_EXPORT, "id": "7a", "span_id": "7a"}]
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    else:
        path.write_text(json.dumps(records, indent=2), "utf-8")
    assert resolve_codec(path, None, reading=True).name == "braintrust"
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "header",
    [
        "input,context,__expected",  # context and name are a golden's columns too
        "question,name,__expected1,__expected2",
        "id,input,__expected",  # an id column is a Blueprint CSV's too
        "id,input,expected,__description",
        "input,__metadata:id,__metadata:tags[]",
    ],
)
def test_a_promptfoo_csv_is_told_by_its_double_underscore_columns(
    tmp_path: Path, header: str
) -> None:
    path = tmp_path / "tests.csv"
    cells = ",".join(f'"{column.strip("_")}"' for column in header.split(","))
    path.write_text(f"{header}\n{cells}\n", encoding="utf-8")
    assert resolve_codec(path, None, reading=True).name == "promptfoo"


def test_a_csv_of_plain_columns_fits_nothing(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("question,answer\nwhat,that\n", encoding="utf-8")
    with pytest.raises(UnknownFormatError):
        resolve_codec(path, None, reading=True)
    assert resolve_codec(path, "promptfoo", reading=True).name == "promptfoo"


def test_a_row_without_its_case_profile_is_ambiguous_until_named(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    row = {"id": "a", "input": "q", "expected": "x", "metadata": {"team": "t"}}
    path.write_text(json.dumps(row) + "\n", "utf-8")
    with pytest.raises(AmbiguousFormatError) as caught:
        resolve_codec(path, None, reading=True)
    assert set(caught.value.candidates) == {"jsonl", "braintrust"}


def test_a_set_file_settles_a_shared_extension(tmp_path: Path) -> None:
    # a JSON Lines row a Braintrust record could also be, with its set file beside it
    path = tmp_path / "rows.jsonl"
    row = {"id": "a", "input": "q", "expected": "x", "metadata": {"team": "t"}}
    path.write_text(json.dumps(row) + "\n", "utf-8")
    (tmp_path / "rows.jsonl.set.json").write_text('{"name": "s"}', "utf-8")
    assert resolve_codec(path, None, reading=True).name == "jsonl"


# --- the form a vendor output takes ------------------------------------------------------------

runner = CliRunner()


def convert(*args: object):
    return runner.invoke(app, ["convert", str(EXAMPLES / "support-refunds.json"), *map(str, args)])


@pytest.mark.parametrize(("fmt", "name"), [("promptfoo", "tests.csv"), ("deepeval", "goldens.csv")])
def test_vendor_csv_outputs_are_refused_with_the_reason(
    tmp_path: Path, fmt: str, name: str
) -> None:
    result = convert(tmp_path / name, "--to", fmt)
    assert result.exit_code == 2
    assert "write .json" in result.stderr or "write .yaml" in result.stderr
    assert not (tmp_path / name).exists()


def test_promptfoo_json_and_jsonl_tests_files(tmp_path: Path) -> None:
    assert convert(tmp_path / "tests.json", "--to", "promptfoo").exit_code == 0
    tests = json.loads((tmp_path / "tests.json").read_text(encoding="utf-8"))
    assert isinstance(tests, list) and tests[0]["assert"]
    assert convert(tmp_path / "tests.jsonl", "--to", "promptfoo").exit_code == 0
    lines = (tmp_path / "tests.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["vars"] for line in lines] == [test["vars"] for test in tests]


def test_deepeval_jsonl_goldens_keep_lists(tmp_path: Path) -> None:
    assert convert(tmp_path / "goldens.jsonl", "--to", "deepeval").exit_code == 0
    goldens = [
        json.loads(line) for line in (tmp_path / "goldens.jsonl").read_text("utf-8").splitlines()
    ]
    assert all("input" in golden for golden in goldens)


@pytest.mark.parametrize("fmt", ["langsmith", "braintrust"])
def test_json_arrays_of_examples_and_records_are_written(tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"{fmt}.json"
    assert convert(target, "--to", fmt).exit_code == 0
    written = json.loads(target.read_text(encoding="utf-8"))
    assert isinstance(written, list) and written
    assert resolve_codec(target, None, reading=True).name == fmt


@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=20,
    ),
    indent=st.sampled_from([None, 2]),
    tail=st.sampled_from([",", "\n", " "]),
)
def test_a_json_value_is_skipped_whole(value, indent, tail) -> None:
    from blueprint.formats.sniffing import _skip_value

    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert _skip_value(text + tail + '"more"', 0) == len(text)
    # cut off, it runs to the end of what there is
    assert _skip_value(text[:-1], 0) == len(text) - 1 or text[:-1] == ""
