"""Hugging Face dataset folders: layout, column types, splits, reading folders people publish,
writing the folder whole or not at all, and the command line with folders."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.core.errors import (
    LossyExportRefused,
    OutputError,
    OutputExistsError,
    ParseError,
    UnknownFormatError,
    UsageError,
)
from blueprint.formats import REGISTRY, UnreadableRow, WriteOptions, resolve_codec
from blueprint.formats.huggingface import (
    DEFAULT_SPLIT,
    HuggingfaceCodec,
    column_type,
    read_card,
    split_name,
)
from blueprint.validation.judge_status import LabelsError, read_set_families
from blueprint.validation.validate import validate_file
from conftest import EXAMPLES, FIXTURES, document, row, write_json
from strategies import awkward_text, eval_sets, json_values

CODEC = HuggingfaceCodec()
PUBLIC = FIXTURES / "native" / "huggingface" / "public"
COT = PUBLIC / "structured-data-cot-512-v4"
SUBSETS = PUBLIC / "hub-docs-multiple-subsets"
EXAMPLE = EXAMPLES / "support-refunds.json"
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "hf"}
runner = CliRunner()


def run(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def front_matter(folder: Path) -> dict[str, Any]:
    card = read_card(folder)
    assert card is not None
    return card.meta


def data_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def write(rows: list[dict[str, Any]], folder: Path, **options: Any) -> Any:
    return CODEC.write(HEADER, iter(rows), folder, WriteOptions(**options))


def read_back(folder: Path) -> list[dict[str, Any]]:
    return list(data_rows(CODEC.open(folder)))


def with_split(data: dict[str, Any], split: Any) -> dict[str, Any]:
    data["metadata"]["split"] = split
    return data


# --- the layout ------------------------------------------------------------------------------


def test_one_file_per_split_and_a_card_that_declares_them(tmp_path: Path) -> None:
    rows = [
        with_split(row("a"), "train"),
        row("b"),
        with_split(row("c"), "dev"),
        with_split(row("d"), "train"),
    ]
    folder = tmp_path / "set"
    result = write(rows, folder)
    meta = front_matter(folder)
    config = meta["configs"][0]
    assert config["config_name"] == "default"
    assert config["data_files"] == [
        {"split": "train", "path": "data/train.jsonl"},
        {"split": DEFAULT_SPLIT, "path": f"data/{DEFAULT_SPLIT}.jsonl"},
        {"split": "dev", "path": "data/dev.jsonl"},
    ]
    assert [line["id"] for line in data_lines(folder / "data" / "train.jsonl")] == ["a", "d"]
    assert [line["id"] for line in data_lines(folder / "data" / "test.jsonl")] == ["b"]
    assert meta["blueprint"]["set"] == HEADER
    assert folder / "README.md" in result.files
    assert sorted(p.name for p in (folder / "data").iterdir()) == [
        "dev.jsonl",
        "test.jsonl",
        "train.jsonl",
    ]


def test_every_column_is_declared_with_one_type(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    write([row("a"), row("b", "rubric")], folder, include_human_review=True)
    features = {f["name"]: f["dtype"] for f in front_matter(folder)["dataset_info"]["features"]}
    assert features["starter_example"] == features["human_review"] == "bool"
    assert {features[name] for name in ("id", "input", "expected", "blueprint")} == {"string"}
    for line in data_lines(folder / "data" / "test.jsonl"):
        assert list(line) == list(features)


def test_text_stays_text_and_values_of_other_types_travel_as_json_text(tmp_path: Path) -> None:
    plain, mixed = tmp_path / "plain", tmp_path / "mixed"
    write([row("a", expected="yes"), row("b", expected="no")], plain)
    lines = data_lines(plain / "data" / "test.jsonl")
    assert lines[0]["input"] == "question for a" and lines[0]["expected"] == "yes"
    assert "input" not in front_matter(plain)["blueprint"]["jsonColumns"]

    numbers = row("n", expected=3)
    numbers["input"] = {"question": "how many?"}
    write([row("a", expected="yes"), numbers], mixed)
    lines = data_lines(mixed / "data" / "test.jsonl")
    json_columns = front_matter(mixed)["blueprint"]["jsonColumns"]
    assert {"input", "expected", "blueprint"} <= set(json_columns)
    assert json.loads(lines[0]["input"]) == "question for a"
    assert json.loads(lines[1]["input"]) == {"question": "how many?"}
    assert json.loads(lines[1]["expected"]) == 3
    assert read_back(mixed) == [row("a", expected="yes"), numbers]


def test_no_value_is_null_and_json_null_is_null_text(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    write(
        [row("null", expected=None), row("rubric", "rubric"), row("a", expected=[1])],
        folder,
        include_human_review=True,
    )
    lines = {line["id"]: line for line in data_lines(folder / "data" / "test.jsonl")}
    assert lines["null"]["expected"] == "null"
    assert lines["rubric"]["expected"] is None
    assert read_back(folder)[0]["expected"] is None


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("train", "train"),
        ("hold-out 2", "hold_out_2"),
        ("v1.2", "v1.2"),
        ("..", DEFAULT_SPLIT),
        ("all", DEFAULT_SPLIT),
        ("", DEFAULT_SPLIT),
        (["a", "b"], DEFAULT_SPLIT),
        (3, DEFAULT_SPLIT),
        (None, DEFAULT_SPLIT),
    ],
)
def test_split_names_datasets_accepts(value: Any, name: str) -> None:
    assert split_name(value) == name


def test_splits_whose_names_differ_in_case_get_files_of_their_own(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    write([with_split(row("a"), "Dev"), with_split(row("b"), "dev")], folder)
    paths = [entry["path"] for entry in front_matter(folder)["configs"][0]["data_files"]]
    assert paths == ["data/Dev.jsonl", "data/dev-2.jsonl"]
    assert [r["metadata"]["split"] for r in read_back(folder)] == ["Dev", "dev"]


def test_rows_come_back_in_the_set_order_when_splits_interleave(tmp_path: Path) -> None:
    rows = [with_split(row("a"), "x"), with_split(row("b"), "y"), with_split(row("c"), "x")]
    folder = tmp_path / "set"
    write(rows, folder)
    assert [r["id"] for r in read_back(folder)] == ["a", "b", "c"]
    assert read_back(folder) == rows


def test_a_split_datasets_refuses_keeps_its_exact_value(tmp_path: Path) -> None:
    rows = [with_split(row("a"), "hold-out"), with_split(row("b"), ["x", "y"])]
    folder = tmp_path / "set"
    write(rows, folder)
    assert (folder / "data" / "hold_out.jsonl").is_file()
    assert read_back(folder) == rows


def test_starter_rows_are_flagged_and_the_card_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    write([row("a", provenance="starter-example"), row("b")], folder)
    lines = data_lines(folder / "data" / "test.jsonl")
    assert [line["starter_example"] for line in lines] == [True, False]
    assert "starter example" in (folder / "README.md").read_text(encoding="utf-8")


def test_set_level_fields_travel_in_the_card(tmp_path: Path) -> None:
    source = write_json(tmp_path / "set.json", json.loads(EXAMPLE.read_text(encoding="utf-8")))
    result = roundtrip(source, "huggingface")
    assert result.exact
    assert not [lossy for lossy in result.export.lossy if lossy.scope == "set"]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(doc=eval_sets())
def test_every_column_has_one_type_in_every_export(doc: dict[str, Any], tmp_path: Path) -> None:
    header = {key: value for key, value in doc.items() if key != "rows"}
    folder = tmp_path / "any"
    try:
        CODEC.write(header, iter(doc["rows"]), folder, WriteOptions(force=True))
    except Exception as error:  # an inadmissible pairing never reaches a vendor, and a set
        # whose every row the export leaves out is not written
        assert type(error).__name__ in ("InvalidRowForExport", "EveryRowExcluded")
        return
    cells: dict[str, list[Any]] = {}
    for file in (folder / "data").iterdir():
        for line in data_lines(file):
            for name, value in line.items():
                cells.setdefault(name, []).append(value)
    for name, values in cells.items():
        assert column_type(values) in (None, "string", "bool"), name
    # the card reads back as the header it was given, whatever text it holds
    assert front_matter(folder)["blueprint"]["set"] == header


# --- Parquet ---------------------------------------------------------------------------------


def test_parquet_export_reads_back_exactly(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    rows = json.loads(EXAMPLE.read_text(encoding="utf-8"))["rows"]
    folder = tmp_path / "pq"
    write(rows, folder, data_format="parquet", include_human_review=True)
    assert sorted(p.suffix for p in (folder / "data").iterdir()) == [".parquet"]
    assert read_back(folder) == rows


def test_parquet_is_written_in_batches_that_read_back_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow")
    from blueprint.formats.huggingface import columns

    monkeypatch.setattr(columns, "PARQUET_BATCH", 3)
    rows = [row(f"r{n}", expected=n) for n in range(7)]
    folder = tmp_path / "pq"
    write(rows, folder, data_format="parquet")
    assert read_back(folder) == rows
    empty = tmp_path / "empty"
    write([], empty, data_format="parquet")
    assert read_back(empty) == []


def test_rows_in_splits_one_after_another_carry_no_position(tmp_path: Path) -> None:
    rows = [with_split(row(f"r{n}"), "dev" if n < 2 else "test") for n in range(4)]
    folder = tmp_path / "ds"
    write(rows, folder)
    from blueprint.formats.huggingface.writing import _POSITION

    for path in (folder / "data").iterdir():
        for line in path.read_text(encoding="utf-8").splitlines():
            payload = json.loads(json.loads(line)["blueprint"])
            assert _POSITION not in payload
    assert read_back(folder) == rows


def test_parquet_without_pyarrow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(UsageError, match=r"parquet"):
        write([row("a")], tmp_path / "pq", data_format="parquet")
    assert not (tmp_path / "pq").exists()


def test_an_unknown_data_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        write([row("a")], tmp_path / "x", data_format="csv")


# --- writing the folder whole ------------------------------------------------------------------


def test_an_existing_folder_is_replaced_only_with_force(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        write([row("a")], folder)
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    write([row("a")], folder, force=True)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "data"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]  # nothing left beside it


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    folder.mkdir()
    write([row("a")], folder)
    assert (folder / "README.md").is_file()


def test_a_refused_export_leaves_the_old_folder_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    write([row("a")], folder)
    before = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    with pytest.raises(LossyExportRefused):
        write([row("b"), row("c", "expected-behavior-only")], folder, force=True, strict=True)
    after = {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["set"]


def test_a_file_or_a_repository_is_never_replaced(tmp_path: Path) -> None:
    file = tmp_path / "set"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(OutputError):
        write([row("a")], file, force=True)
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    with pytest.raises(OutputError):
        write([row("a")], clone, force=True)
    assert (clone / ".git").is_dir()


# --- reading folders people publish ----------------------------------------------------------


def test_a_folder_without_configs_has_the_splits_of_its_file_names() -> None:
    source = CODEC.open(COT)
    rows = [item.data for item in source.rows]
    assert [r["id"] for r in rows] == [f"validation-{n}" for n in (1, 2, 3)] + [
        f"test-{n}" for n in (4, 5, 6)
    ]
    first = rows[0]
    assert first["input"][0]["role"] == "system"
    assert "expected" not in first
    case = first["metadata"]["case"]
    assert case["oracleType"] == "expected-behavior-only"
    assert case["provenance"] == "imported"
    derived = case["extensions"]["blueprint-import"]["derived"]
    assert {"id", "metadata.case.oracleType", "metadata.case.expectedBehavior"} <= set(derived)
    kept = case["extensions"]["huggingface"]
    assert kept["record"]["metadata"]["format"] in {"json", "csv", "xml", "yaml", "toml"}
    assert kept["columns"] == {"input": "messages"}
    assert source.header is not None
    assert source.header["extensions"]["huggingface"]["card"]["license"] == "mit"


def test_a_card_with_several_configs_reads_every_one() -> None:
    source = CODEC.open(SUBSETS)
    rows = [item.data for item in source.rows]
    assert [(r["id"], r["input"], r["expected"]) for r in rows] == [
        ("train-1", "What is the capital of France?", "Paris"),
        ("train-2", "How many legs does a spider have?", "8"),
        ("train-3", "Which planet is known as the red planet?", "Mars"),
        ("additional_data-train-1", "What is 12 times 12?", "144"),
    ]
    assert {r["metadata"]["split"] for r in rows} == {"train"}
    kept = [r["metadata"]["case"]["extensions"]["huggingface"] for r in rows]
    assert [k["config"] for k in kept] == ["main_data"] * 3 + ["additional_data"]
    assert kept[0]["record"] == {"difficulty": 1}
    assert source.header is not None
    assert source.header["extensions"]["huggingface"] == {
        "configs": ["main_data", "additional_data"],
        "defaultConfig": "main_data",
    }
    assert source.records is not None and source.records.read == 4


def test_several_configs_are_written_back_as_several(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    result = convert(SUBSETS, folder, ConvertOptions(target_format="huggingface"))
    assert result.export.rows == 4
    card = yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---")[1])
    assert [(c["config_name"], c.get("default"), c["data_files"]) for c in card["configs"]] == [
        ("main_data", True, [{"split": "train", "path": "data/main_data/train.jsonl"}]),
        (
            "additional_data",
            None,
            [{"split": "train", "path": "data/additional_data/train.jsonl"}],
        ),
    ]
    assert [info["config_name"] for info in card["dataset_info"]] == [
        "main_data",
        "additional_data",
    ]
    assert data_lines(folder / "data" / "additional_data" / "train.jsonl")[0]["answer"] == "144"
    # each config keeps its own columns: a column of one is not added to the other
    other = tmp_path / "other"
    shutil.copytree(SUBSETS, other)
    (other / "additional_data.jsonl").write_text(
        json.dumps({"question": "Name a prime.", "answer": "7", "source": "quiz"}) + "\n",
        encoding="utf-8",
    )
    written = tmp_path / "written"
    convert(other, written, ConvertOptions(target_format="huggingface"))
    assert "source" not in data_lines(written / "data" / "main_data" / "train.jsonl")[0]
    assert "difficulty" not in data_lines(written / "data" / "additional_data" / "train.jsonl")[0]
    result = roundtrip(other, "huggingface")
    assert result.exact and result.vendor_changes == []


def test_a_row_written_in_blueprint_goes_to_the_default_config(tmp_path: Path) -> None:
    rows = read_back(SUBSETS)
    added = {
        "id": "new",
        "input": "What is 2+2?",
        "expected": "4",
        "metadata": {"case": {**rows[0]["metadata"]["case"], "caseId": "new"}, "split": "train"},
    }
    del added["metadata"]["case"]["extensions"]
    header = CODEC.open(SUBSETS).header
    assert header is not None
    folder = tmp_path / "out"
    CODEC.write(
        {**HEADER, **header},
        iter([rows[3], added, *rows[:3]]),
        folder,
        WriteOptions(),
    )
    main = data_lines(folder / "data" / "main_data" / "train.jsonl")
    assert main[0]["question"] is None and main[0]["input"] == "What is 2+2?"
    back = read_back(folder)
    assert [row["id"] for row in back] == [
        rows[3]["id"],
        "new",
        *(row["id"] for row in rows[:3]),
    ]  # the order the set had, though the configs interleave


@pytest.mark.parametrize("folder", [COT, SUBSETS], ids=lambda p: p.name)
def test_a_published_folder_goes_back_as_it_came(folder: Path) -> None:
    result = roundtrip(folder, "huggingface")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []


@pytest.mark.parametrize("folder", [COT, SUBSETS], ids=lambda p: p.name)
def test_derived_values_are_reported_for_review(folder: Path) -> None:
    report = validate_file(folder)
    assert "derived-value" in {issue.code for issue in report.issues}


def test_an_edited_imported_row_writes_its_edit_in_the_original_column(tmp_path: Path) -> None:
    rows = read_back(SUBSETS)
    rows[0]["expected"] = "Paris, France"
    folder = tmp_path / "edited"
    CODEC.write(HEADER, iter(rows), folder, WriteOptions())
    lines = data_lines(folder / "data" / "main_data" / "train.jsonl")
    assert lines[0]["answer"] == "Paris, France"
    assert lines[0]["question"] == "What is the capital of France?"
    assert lines[0]["difficulty"] == 1
    assert "expected" not in lines[0]


def test_a_folder_of_numbered_ids_without_a_card(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "train-00000-of-00001.jsonl").write_text(
        '{"id": 7, "premise": "a", "hypothesis": "b", "label": 1}\n', encoding="utf-8"
    )
    (rows,) = [read_back(folder)]
    assert rows[0]["id"] == "7"
    assert rows[0]["input"] == {"premise": "a", "hypothesis": "b"}
    assert rows[0]["expected"] == 1
    assert rows[0]["metadata"]["split"] == "train"
    result = roundtrip(folder, "huggingface")
    assert result.exact and result.vendor_changes == []


# --- bad folders -----------------------------------------------------------------------------


def make_folder(tmp_path: Path, card: str | None, files: dict[str, str]) -> Path:
    folder = tmp_path / "bad"
    folder.mkdir()
    if card is not None:
        (folder / "README.md").write_text(card, encoding="utf-8")
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_bad_yaml_in_the_card_names_the_line(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, "---\nconfigs:\n  - [unclosed\n---\n", {})
    with pytest.raises(ParseError) as error:
        CODEC.open(folder)
    assert error.value.path == folder / "README.md"
    assert error.value.line is not None


@pytest.mark.parametrize(
    "path", ["../outside.jsonl", "/etc/passwd", "missing.jsonl", "https://example.com/a.jsonl"]
)
def test_data_files_must_be_in_the_folder(tmp_path: Path, path: str) -> None:
    card = f"---\nconfigs:\n- config_name: default\n  data_files: {json.dumps(path)}\n---\n"
    folder = make_folder(tmp_path, card, {})
    (tmp_path / "outside.jsonl").write_text('{"input": "x"}\n', encoding="utf-8")
    with pytest.raises(ParseError):
        CODEC.open(folder)


def test_data_files_of_other_formats_are_refused(tmp_path: Path) -> None:
    card = "---\nconfigs:\n- config_name: default\n  data_files: data.csv\n---\n"
    folder = make_folder(tmp_path, card, {"data.csv": "question,answer\na,b\n"})
    with pytest.raises(ParseError, match="JSON Lines and Parquet"):
        CODEC.open(folder)


def test_a_bad_line_is_an_unreadable_row_naming_its_file(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, None, {"test.jsonl": '{"question": "a"}\n{not json\n'})
    items = list(CODEC.open(folder).rows)
    assert isinstance(items[1], UnreadableRow)
    assert items[1].line == 2 and items[1].file == folder / "test.jsonl"


@pytest.mark.parametrize(
    ("bad", "column"),
    [("{not json", 2), ("[1, 2]", None)],  # not JSON; JSON, but no record
    ids=["not-json", "not-a-record"],
)
def test_a_row_that_cannot_be_read_names_its_data_file(
    tmp_path: Path, bad: str, column: int | None
) -> None:
    good = '{"question": "a", "answer": "b"}\n'
    folder = make_folder(tmp_path, None, {"train.jsonl": good, "test.jsonl": good + bad + "\n"})
    with pytest.raises(ParseError) as raised:
        convert(folder, tmp_path / "out.jsonl", ConvertOptions(source_format="huggingface"))
    assert raised.value.path == folder / "test.jsonl"
    assert (raised.value.line, raised.value.column) == (2, column)
    assert not (tmp_path / "out.jsonl").exists()
    with pytest.raises(LabelsError, match=r"test\.jsonl:2"):
        read_set_families(folder, format="huggingface")


def test_json_text_that_is_not_json_is_an_unreadable_row(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    write([row("a"), row("b", expected={"x": 1})], folder)
    data = folder / "data" / "test.jsonl"
    lines = data_lines(data)
    lines[1]["expected"] = "{broken"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    items = list(CODEC.open(folder).rows)
    assert isinstance(items[1], UnreadableRow)
    assert "expected" in items[1].reason


def test_a_folder_without_data_is_not_a_dataset(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, None, {"notes.txt": "x"})
    with pytest.raises(ParseError):
        CODEC.open(folder)
    with pytest.raises(UnknownFormatError):
        resolve_codec(folder, None, reading=True)


# --- detection -------------------------------------------------------------------------------


def test_a_folder_is_read_as_a_dataset_whatever_its_name(tmp_path: Path) -> None:
    folder = tmp_path / "looks.json"
    write([row("a")], folder)
    assert resolve_codec(folder, None, reading=True).name == "huggingface"
    assert resolve_codec(COT, None, reading=True).name == "huggingface"


def test_a_dataset_folder_is_written_only_when_named(tmp_path: Path) -> None:
    with pytest.raises(UnknownFormatError):
        resolve_codec(tmp_path / "out", None, reading=False)
    assert resolve_codec(tmp_path / "out", "huggingface", reading=False).name == "huggingface"
    with pytest.raises(UsageError):
        resolve_codec(tmp_path / "out.jsonl", "huggingface", reading=False)


def test_a_file_without_an_extension_is_not_taken_for_a_folder(tmp_path: Path) -> None:
    file = tmp_path / "noext"
    file.write_text("{}", encoding="utf-8")
    with pytest.raises(UnknownFormatError):
        resolve_codec(file, None, reading=True)


# --- the command line ------------------------------------------------------------------------


def test_convert_to_a_folder_and_back(tmp_path: Path) -> None:
    folder = tmp_path / "hf"
    result = run("convert", EXAMPLE, folder, "--to", "huggingface", "--report", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["format"] == "huggingface"
    assert str(folder / "README.md") in report["files"]
    again = run("convert", EXAMPLE, folder, "--to", "huggingface")
    assert again.exit_code == 2
    forced = run("convert", EXAMPLE, folder, "--to", "huggingface", "--force")
    assert forced.exit_code == 0
    back = tmp_path / "back.json"
    assert run("convert", folder, back).exit_code == 0
    assert run("validate", folder).exit_code == 0
    assert run("roundtrip", folder, "--via", "huggingface").exit_code == 0
    assert run("roundtrip", EXAMPLE, "--via", "huggingface").exit_code == 0


def test_convert_writes_parquet_on_request(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    folder = tmp_path / "pq"
    result = run("convert", EXAMPLE, folder, "--to", "huggingface", "--data-format", "parquet")
    assert result.exit_code == 0, result.output
    assert {p.suffix for p in (folder / "data").iterdir()} == {".parquet"}
    diff = run("diff", EXAMPLE, folder)
    assert diff.exit_code == 1  # the human-review rows were left out
    included = tmp_path / "all"
    run(
        "convert",
        EXAMPLE,
        included,
        "--to",
        "huggingface",
        "--include-human-review",
        "--data-format",
        "parquet",
    )
    assert run("diff", EXAMPLE, included).exit_code == 0


def test_data_format_is_refused_for_a_format_of_one_file(tmp_path: Path) -> None:
    result = run("convert", EXAMPLE, tmp_path / "x.jsonl", "--data-format", "parquet")
    assert result.exit_code == 2
    assert not (tmp_path / "x.jsonl").exists()


def test_an_invalid_set_is_not_written_to_a_folder(tmp_path: Path) -> None:
    broken = document(row("a"), row("a"))
    source = write_json(tmp_path / "broken.json", broken)
    result = run("convert", source, tmp_path / "hf", "--to", "huggingface")
    assert result.exit_code == 1
    assert not (tmp_path / "hf").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.json"]


def test_formats_lists_huggingface() -> None:
    listed = json.loads(run("formats", "--report", "json").stdout)
    assert "huggingface" in {entry["name"] for entry in listed}
    one = json.loads(run("formats", "huggingface", "--report", "json").stdout)
    assert one["name"] == "huggingface"


def test_the_card_front_matter_is_plain_yaml(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    header = {**HEADER, "description": "line one\n---\nline three \u2028 \x85 end"}
    CODEC.write(header, iter([row("a")]), folder, WriteOptions())
    text = (folder / "README.md").read_text(encoding="utf-8")
    block = text.split("\n---\n", 1)[0].removeprefix("---\n")
    assert yaml.safe_load(block)["blueprint"]["set"] == header
    assert REGISTRY["huggingface"].open(folder).header == header


# --- any folder someone could publish --------------------------------------------------------

COLUMN_NAMES = st.one_of(
    st.sampled_from(
        [
            "id",
            "qid",
            "question",
            "prompt",
            "input",
            "answer",
            "label",
            "target",
            "expected",
            "text",
            "messages",
            "category",
            "difficulty",
            "metadata",
            "split",
        ]
    ),
    st.text(alphabet="abcdefghij_", min_size=1, max_size=6),
)
CELL_KINDS = [
    st.one_of(st.none(), awkward_text),
    st.one_of(st.none(), st.integers(min_value=-(2**70), max_value=2**70)),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.lists(awkward_text, max_size=3),
    st.fixed_dictionaries({"role": awkward_text, "content": awkward_text}),
    json_values,  # a column whose values change type, which datasets cannot load
]


@st.composite
def published_folders(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, list[dict]]]:
    names = draw(st.lists(COLUMN_NAMES, min_size=1, max_size=5, unique=True))
    kinds = {name: draw(st.sampled_from(CELL_KINDS)) for name in names}
    splits = draw(
        st.lists(
            st.sampled_from(["train", "test", "validation"]), min_size=1, max_size=3, unique=True
        )
    )
    data = {
        split: [
            {name: draw(kinds[name]) for name in names}
            for _ in range(draw(st.integers(min_value=1, max_value=3)))
        ]
        for split in splits
    }
    card = draw(st.sampled_from([None, {"license": "mit", "pretty_name": "x"}]))
    return {"card": card}, data


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(folder=published_folders())
def test_any_published_folder_goes_back_as_it_came(
    folder: tuple[dict[str, Any], dict[str, list[dict]]], tmp_path: Path
) -> None:
    meta, data = folder
    root = tmp_path / "published"
    if root.exists():
        shutil.rmtree(root)
    (root / "data").mkdir(parents=True)
    entries = []
    for split, records in data.items():
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (root / "data" / f"{split}.jsonl").write_text(lines, encoding="utf-8")
        entries.append({"split": split, "path": f"data/{split}.jsonl"})
    card = {**(meta["card"] or {}), "configs": [{"config_name": "default", "data_files": entries}]}
    (root / "README.md").write_text(
        "---\n" + yaml.safe_dump(card) + "---\n# published\n", encoding="utf-8"
    )
    result = roundtrip(root, "huggingface")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []


def test_a_parquet_folder_goes_back_as_parquet(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    folder = tmp_path / "published"
    (folder / "data").mkdir(parents=True)
    table = pa.table(
        {
            "prompt": ["Name a colour", "Name a fruit"],
            "ideal": [["red", "blue"], ["apple"]],
            "tags": [{"level": 1}, {"level": 2}],
        }
    )
    pq.write_table(table, folder / "data" / "test-00000-of-00001.parquet")
    rows = read_back(folder)
    assert rows[0]["input"] == "Name a colour"
    assert rows[0]["expected"] == ["red", "blue"]
    assert rows[0]["metadata"]["split"] == "test"
    result = roundtrip(folder, "huggingface")
    assert result.exact and result.vendor_changes == []
    middle = tmp_path / "set.json"
    assert run("convert", folder, middle).exit_code == 0
    again = tmp_path / "again"
    assert run("convert", middle, again, "--to", "huggingface").exit_code == 0
    assert [p.suffix for p in (again / "data").iterdir()] == [".parquet"]
    back = pq.read_table(again / "data" / "test.parquet")
    assert back.column("ideal").to_pylist() == [["red", "blue"], ["apple"]]
    assert back.column("tags").to_pylist() == [{"level": 1}, {"level": 2}]


def test_one_named_config_keeps_its_name(tmp_path: Path) -> None:
    folder = tmp_path / "named"
    folder.mkdir()
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: plain_text\n  data_files: qa.jsonl\n---\n",
        encoding="utf-8",
    )
    (folder / "qa.jsonl").write_text('{"question": "2+2?", "answer": "4"}\n', encoding="utf-8")
    (read,) = read_back(folder)
    assert read["metadata"]["case"]["extensions"]["huggingface"]["config"] == "plain_text"
    out = tmp_path / "out"
    convert(folder, out, ConvertOptions(target_format="huggingface"))
    assert [c["config_name"] for c in front_matter(out)["configs"]] == ["plain_text"]
    result = roundtrip(folder, "huggingface")
    assert result.exact and result.vendor_changes == []
