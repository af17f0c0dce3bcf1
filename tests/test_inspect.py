"""The Inspect AI codec: samples in JSON Lines, JSON and CSV, written and read back."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import ConvertOptions, convert, data_rows, roundtrip
from blueprint.formats import REGISTRY, UnreadableRow, WriteOptions, resolve_codec
from blueprint.validation.validate import validate_file
from conftest import EXAMPLES, FIXTURES, case, row
from strategies import _with_extras, awkward_text, eval_sets, extra_objects, json_values

CODEC = REGISTRY["inspect"]
PUBLIC = FIXTURES / "native" / "inspect" / "public"
AWKWARD = FIXTURES / "awkward" / "awkward.json"
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}
NATIVE_RECORD = {"id": "a", "input": "q", "target": "x"}


def awkward_rows() -> list[dict[str, Any]]:
    return list(data_rows(REGISTRY["json"].open(AWKWARD)))


def with_an_empty_input(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows, the final-state one with an empty input: a set that validates has no such
    row, but the writer given one (``--allow-invalid``) leaves it out, saying why."""
    for data in rows:
        if data["id"] == "state-checks":
            data["input"] = ""
    return rows


def write(path: Path, rows: list[dict[str, Any]], **options: Any) -> Any:
    return CODEC.write(HEADER, iter(rows), path, WriteOptions(**options))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def by_kind(result: Any, kind: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for lossy in result.lossy:
        if lossy.kind == kind:
            found.setdefault(lossy.field, set()).update(lossy.row_ids)
    return found


# --- writing ---------------------------------------------------------------------------------


def test_each_oracle_type_lands_where_inspects_scorers_read_it(tmp_path: Path) -> None:
    target = tmp_path / "samples.jsonl"
    result = write(target, with_an_empty_input(awkward_rows()), include_human_review=True)
    samples = {sample["id"]: sample for sample in lines(target)}
    assert samples["ref-pipes-and-quotes"]["target"] == "a | b"
    assert samples["ref-number-vs-string"]["target"] == "1"  # a target is text
    assert samples["ref-json-looking"]["target"] == '{"a": 1}'
    assert samples["acc-enumerated"]["target"] == ["Paris", "paris", "", "null", "1"]
    assert samples["acc-graded"]["target"] == ["-5"]  # the top grade only
    assert samples["rubric-criteria"]["target"] == "\n".join(
        next(r for r in awkward_rows() if r["id"] == "rubric-criteria")["metadata"]["case"][
            "evaluationCriteria"
        ]
    )
    assert samples["tools-order"]["target"] == ""
    # an object input goes as its JSON text; chat messages as they are
    assert isinstance(samples["ref-json-looking"]["input"], str)
    assert isinstance(samples["rubric-criteria"]["input"], list)
    for sample in samples.values():
        assert sample["metadata"]["blueprint"]["case"]["caseId"] == sample["id"]
        assert (
            sample["metadata"]["oracleType"]
            == sample["metadata"]["blueprint"]["case"]["oracleType"]
        )
    # Inspect refuses an empty input: that row is left out, saying why
    assert "state-checks" not in samples
    assert CODEC_EXCLUSIONS()["empty-input"] in reasons(result)


def CODEC_EXCLUSIONS() -> dict[str, str]:
    from blueprint.formats.mapping import load_mapping

    return load_mapping("inspect").excluded


def reasons(result: Any) -> set[str]:
    return {lossy.reason for lossy in result.lossy}


def test_the_report_names_what_the_stock_scorers_weaken(tmp_path: Path) -> None:
    result = write(tmp_path / "samples.jsonl", awkward_rows())
    weakened = by_kind(result, "weakened")
    assert {"ref-pipes-and-quotes", "ref-number-vs-string"} <= weakened["expected"]
    assert "tools-order" in weakened["expected"]  # no stock scorer reads tool calls
    assert weakened["expected.acceptable[*]"] == {"acc-enumerated"}
    assert weakened["expected.graded"] == {"acc-graded"}
    assert weakened["input"] == {"ref-json-looking"}
    excluded = by_kind(result, "excluded")["*"]
    assert excluded == {"rubric-criteria", "behaviour-only"}


def test_a_csv_export_leaves_out_rows_a_cell_cannot_hold(tmp_path: Path) -> None:
    target = tmp_path / "samples.csv"
    result = write(target, awkward_rows(), include_human_review=True)
    mapping = CODEC_EXCLUSIONS()
    left_out = {
        kind: set(lossy.row_ids)
        for lossy in result.lossy
        if lossy.kind == "excluded"
        for kind, reason in mapping.items()
        if reason == lossy.reason
    }
    assert left_out["csv-target"] == {"acc-enumerated", "acc-graded"}
    assert left_out["csv-input"] == {"rubric-criteria"}
    cells = list(csv.DictReader(io.StringIO(target.read_text("utf-8"))))
    assert [cell["id"] for cell in cells] == [
        "ref-pipes-and-quotes",
        "ref-number-vs-string",
        "ref-json-looking",
        "tools-order",
        "state-checks",
        "behaviour-only",
    ]
    # metadata is JSON text, which csv_dataset parses; a target is one text
    assert json.loads(cells[0]["metadata"])["blueprint"]["case"]["caseId"] == cells[0]["id"]
    assert cells[1]["target"] == "1"


def test_a_carriage_return_in_a_csv_cell_is_reported_weakened(tmp_path: Path) -> None:
    rows = [row("cr", expected="line1\r\nline2"), row("plain", expected="cr\ronly")]
    rows[1]["id"] = rows[1]["metadata"]["case"]["caseId"] = "lone"
    result = write(tmp_path / "samples.csv", rows)
    assert [item.data for item in CODEC.open(tmp_path / "samples.csv").rows] == rows
    assert any(
        "universal newlines" in lossy.reason and lossy.row_ids == ("cr", "lone")
        for lossy in result.lossy
    )
    jsonl = write(tmp_path / "samples.jsonl", rows)
    assert not any("universal newlines" in lossy.reason for lossy in jsonl.lossy)


def test_strict_refuses_a_weakened_export_and_writes_nothing(tmp_path: Path) -> None:
    from blueprint.core.errors import LossyExportRefused

    with pytest.raises(LossyExportRefused):
        write(tmp_path / "samples.csv", awkward_rows(), strict=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_every_form_round_trips_exactly_what_it_declares(suffix: str, tmp_path: Path) -> None:
    for source in (
        AWKWARD,
        EXAMPLES / "support-refunds.json",
        FIXTURES / "awkward" / "awkward.csv",
    ):
        copy = tmp_path / f"{source.stem}{source.suffix}"
        copy.write_bytes(source.read_bytes())
        result = roundtrip(copy, "inspect")
        assert result.exact, (result.undeclared, result.unobserved)


# --- reading Inspect's own files --------------------------------------------------------------

PUBLIC_FILES = sorted(p for p in PUBLIC.rglob("*") if p.suffix in (".jsonl", ".json", ".csv"))


@pytest.mark.parametrize("path", PUBLIC_FILES, ids=lambda p: str(p.relative_to(PUBLIC)))
def test_inspects_own_files_are_detected_and_go_back_as_they_came(
    path: Path, tmp_path: Path
) -> None:
    assert resolve_codec(path, None, reading=True).name == "inspect"
    result = roundtrip(path, "inspect", source_format="inspect")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []
    imported = tmp_path / "imported.json"
    convert(path, imported, ConvertOptions(source_format="inspect"))
    report = validate_file(imported)
    assert report.valid
    assert "derived-value" in {issue.code for issue in report.issues}


def imported(path: Path) -> list[dict[str, Any]]:
    return [item.data for item in CODEC.open(path).rows]


def test_import_infers_the_oracle_type_from_the_target(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    records = [
        {"id": 7, "input": "2+2?", "target": "4"},
        {"id": "set", "input": "Capital?", "target": ["Paris", "paris"]},
        {"id": "mcq", "input": "Pick", "choices": ["3", "4"], "target": "B"},
        {"id": "open", "input": "Write a poem", "target": ""},
        {"input": [{"role": "user", "content": "Hi"}], "metadata": {"topic": "greeting"}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    rows = imported(path)
    assert [r["id"] for r in rows] == ["7", "set", "mcq", "open", "sample-5"]
    oracles = [r["metadata"]["case"]["oracleType"] for r in rows]
    assert oracles == [
        "reference-answer",
        "acceptable-set",
        "reference-answer",
        "expected-behavior-only",
        "expected-behavior-only",
    ]
    assert rows[1]["expected"] == {"acceptable": ["Paris", "paris"]}
    assert rows[2]["expected"] == "B"
    assert rows[2]["metadata"]["case"]["extensions"]["inspect"]["record"] == {"choices": ["3", "4"]}
    assert "expected" not in rows[3]
    assert rows[4]["metadata"]["topic"] == "greeting"
    for r in rows:
        assert r["metadata"]["case"]["provenance"] == "imported"
    derived = rows[0]["metadata"]["case"]["extensions"]["blueprint-import"]["derived"]
    assert "id" in derived  # a numeric id became text
    # and each goes back to Inspect as it came
    back = tmp_path / "back.jsonl"
    convert(path, tmp_path / "set.json", ConvertOptions(source_format="inspect"))
    convert(tmp_path / "set.json", back, ConvertOptions(target_format="inspect"))
    assert CODEC.compare_native(path, back) == []
    assert [CODEC.without_payload(r) for r in lines(back)] == records


def test_csv_cells_are_read_as_csv_dataset_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    path.write_text(
        "id,input,target,choices,metadata,files,sandbox,notes\n"
        'q1,Pick one,A,"red, green ,blue","{""k"": [1, 2]}",'
        '"{""a.txt"": ""hi""}","[""docker"", ""c.yaml""]",\n'
        ",,,,,,,\n"
        "q2,Say hi,hi,,,,docker,x\n",
        "utf-8",
    )
    first, second = imported(path)
    record = first["metadata"]["case"]["extensions"]["inspect"]["record"]
    assert record["choices"] == ["red", "green", "blue"]
    assert record["files"] == {"a.txt": "hi"}
    assert record["sandbox"] == ["docker", "c.yaml"]
    assert first["metadata"]["k"] == [1, 2]
    assert second["metadata"]["case"]["extensions"]["inspect"]["record"] == {
        "sandbox": "docker",
        "notes": "x",
    }


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('id,input,target,metadata\nq1,hi,x,"{not json"\n', 2),
        ("id,input,target\nq1,hi\n", 2),
        ('id,input,target,files\nq1,hi,x,{}\nq2,hi,y,"{bad"\n', 3),
    ],
)
def test_a_broken_csv_row_is_unreadable_with_its_line(text: str, line: int, tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    path.write_text(text, "utf-8")
    broken = [item for item in CODEC.open(path).rows if isinstance(item, UnreadableRow)]
    assert [item.line for item in broken] == [line]
    result = CliRunner().invoke(app, ["validate", str(path), "--from", "inspect"])
    assert result.exit_code == 2  # unreadable input


def test_a_json_file_holding_one_sample_is_read(tmp_path: Path) -> None:
    path = tmp_path / "sample.json"
    path.write_text(json.dumps({"id": "one", "input": "hi", "target": "hello"}), "utf-8")
    assert resolve_codec(path, None, reading=True).name == "inspect"
    [row] = imported(path)
    assert row["expected"] == "hello"


def test_the_formats_command_describes_inspect() -> None:
    result = CliRunner().invoke(app, ["formats", "inspect", "--report", "json"])
    assert result.exit_code == 0, result.output
    described = json.loads(result.stdout)
    assert described["extensions"] == [".jsonl", ".json", ".csv"]


# --- any native sample goes back as it came ------------------------------------------------------

chat = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "assistant"]), "content": awkward_text}
    ),
    min_size=1,
    max_size=2,
)
samples = _with_extras(
    st.fixed_dictionaries(
        {"input": st.one_of(awkward_text.filter(bool), chat)},
        optional={
            "id": st.one_of(awkward_text, st.integers(0, 10**6)),
            "target": st.one_of(awkward_text, st.lists(awkward_text, max_size=3)),
            "choices": st.lists(awkward_text, max_size=3),
            "metadata": st.one_of(st.none(), extra_objects),
            "sandbox": st.one_of(st.just("docker"), st.just(["docker", "compose.yaml"])),
            "files": st.dictionaries(awkward_text, awkward_text, max_size=2),
            "setup": awkward_text,
            "label": json_values,
        },
    )
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(records=st.lists(samples, min_size=1, max_size=4))
def test_any_native_samples_go_back_as_they_came(
    records: list[dict[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    result = roundtrip(path, "inspect", source_format="inspect")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []


def test_a_row_written_from_blueprint_round_trips_its_case_profile(tmp_path: Path) -> None:
    original = row("r1", expected="Paris")
    original["metadata"]["case"] = case("r1", evaluator="exact-or-programmatic")
    original["metadata"]["blueprint"] = {"a vendor key": 1}  # a key named like the payload
    target = tmp_path / "samples.jsonl"
    write(target, [original])
    assert imported(target) == [original]


csv_cells = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(
    cells=st.lists(
        st.tuples(csv_cells.filter(str.strip), csv_cells, csv_cells, csv_cells, csv_cells),
        min_size=1,
        max_size=4,
    )
)
def test_any_inspect_csv_goes_back_as_it_came(cells: list[tuple[str, ...]], tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    buffer = io.StringIO()
    writer = csv.writer(buffer, dialect="unix")
    writer.writerow(["input", "target", "id", "choices", "notes"])
    for index, (text, target, row_id, choices, notes) in enumerate(cells):
        writer.writerow([text, target, f"{row_id}-{index}" if row_id else "", choices, notes])
    path.write_text(buffer.getvalue(), "utf-8")
    result = roundtrip(path, "inspect", source_format="inspect")
    assert result.exact, (result.undeclared, result.unobserved)
    assert result.vendor_changes == []


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(doc=eval_sets())
def test_any_valid_set_through_an_inspect_csv_loses_exactly_what_it_declares(
    doc: dict[str, Any], tmp_path: Path
) -> None:
    from blueprint.formats.vendor import InvalidRowForExport

    header = {key: value for key, value in doc.items() if key != "rows"}
    source = tmp_path / "set.csv"
    REGISTRY["csv"].write(header, iter(doc["rows"]), source, WriteOptions(force=True))
    try:
        result = roundtrip(source, "inspect")
    except InvalidRowForExport:
        return  # an inadmissible pairing never reaches a vendor
    assert result.exact, (result.undeclared, result.unobserved)


# --- what every vendor codec promises ------------------------------------------------------------


def test_rows_inherit_their_family_evaluator(tmp_path: Path) -> None:
    header = {
        **HEADER,
        "caseFamilies": [
            {"id": "expert", "oracleType": "reference-answer", "evaluator": "human-expert"},
            {"id": "exact", "oracleType": "reference-answer", "evaluator": "exact-or-programmatic"},
        ],
    }
    rows = [row("judged", caseFamily="expert"), row("checked", caseFamily="exact")]
    target = tmp_path / "out.jsonl"
    result = CODEC.write(header, iter(rows), target, WriteOptions())
    assert {i for lossy in result.lossy if lossy.field == "*" for i in lossy.row_ids} == {"judged"}
    assert result.rows == 1
    included = CODEC.write(
        header, iter(rows), target, WriteOptions(force=True, include_human_review=True)
    )
    assert included.rows == 2


def test_an_inherited_evaluator_travels_on_the_row(tmp_path: Path) -> None:
    from conftest import document, write_json

    family = {"id": "judged", "oracleType": "rubric", "evaluator": "llm-judge"}
    data = row("r", "rubric", caseFamily="judged", evaluationCriteria=["polite"])
    source = write_json(tmp_path / "s.json", document(data, caseFamilies=[family]))
    result = roundtrip(source, CODEC.name)
    assert result.exact, (result.undeclared, result.unobserved)
    moved = [i for i in result.export.lossy if i.field == "metadata.case.evaluator"]
    assert moved and moved[0].row_ids == ("r",)


def test_criteria_outside_rubric_rows_are_reported_weakened(tmp_path: Path) -> None:
    judged = row("r1", evaluator="llm-judge", evaluationCriteria=["must show working"])
    listed = row("r2", "acceptable-set", expected={"acceptable": ["a"]}, evaluationCriteria=["x"])
    result = CODEC.write(HEADER, iter([judged, listed]), tmp_path / "o.jsonl", WriteOptions())
    weakened = {
        i
        for lossy in result.lossy
        if lossy.field == "metadata.case.evaluationCriteria"
        for i in lossy.row_ids
    }
    assert weakened == {"r1", "r2"}


def test_an_expected_value_of_the_wrong_shape_stops_the_export(tmp_path: Path) -> None:
    from blueprint.formats.vendor import InvalidRowForExport

    bad = row("t", "expected-tool-calls", expected={"calls": [{"name": "refund"}]})
    with pytest.raises(InvalidRowForExport):
        CODEC.write(HEADER, iter([bad]), tmp_path / "o.jsonl", WriteOptions())
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("metadata", ["free text", 5, ["a"], {"case": "x"}, {"blueprint": 1}])
def test_vendor_metadata_of_any_shape_goes_back_as_it_came(tmp_path: Path, metadata: Any) -> None:
    record = {**NATIVE_RECORD, "metadata": metadata}
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = roundtrip(path, CODEC.name, source_format=CODEC.name)
    assert result.exact and result.vendor_changes == [], (result.undeclared, result.vendor_changes)
    imported = tmp_path / "set.json"
    convert(path, imported, ConvertOptions(source_format=CODEC.name))
    assert validate_file(imported).valid


def test_a_lone_choice_with_a_space_keeps_its_cell_splittable_on_commas(tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    path.write_text('input,target,id,choices\n0,,,",0 0"\n', "utf-8")
    result = roundtrip(path, "inspect", source_format="inspect")
    assert result.exact and result.vendor_changes == []
