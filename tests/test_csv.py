"""Blueprint CSV specifics: layout, conflicts, and rows that CSV cannot hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blueprint.convert import data_rows
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.formats.canonical_csv import UnrepresentableRowError
from blueprint.io import jsonvalues
from conftest import row
from strategies import awkward_text, json_values

CSV = REGISTRY["csv"]
HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}


def roundtrip(rows: list[Any], folder: Path) -> list[Any]:
    target = folder / "set.csv"
    CSV.write(HEADER, iter(rows), target, WriteOptions(force=True))
    return list(data_rows(CSV.open(target)))


def test_header_order(tmp_path: Path) -> None:
    data = row("a", evaluator="human-expert", scenario="s")
    data["metadata"]["source"] = "log"
    CSV.write(HEADER, iter([data]), tmp_path / "s.csv", WriteOptions())
    header = (tmp_path / "s.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == [
        "id",
        "input",
        "expected",
        "case.caseId",
        "case.oracleType",
        "case.expectedBehavior",
        "case.provenance",
        "case.scenario",
        "case.evaluator",
        "metadata.source",
    ]


@pytest.mark.parametrize(
    "data",
    [
        {"id": "a", "metadata": {}},
        {"id": "a", "metadata": {"case": {}}},
        {"id": "a", "metadata": {"case": "not an object"}},
        {"id": "a", "metadata": [1]},
        {"id": "a", "difficulty": 3, "notes": None},
        {"id": 7, "input": "1"},
        {},
    ],
)
def test_invalid_rows_still_round_trip(data: dict, tmp_path: Path) -> None:
    assert roundtrip([data, row("b")], tmp_path) == [data, row("b")]


loose_rows = st.dictionaries(
    st.sampled_from(["id", "input", "expected", "notes", "difficulty"]), json_values, max_size=4
).flatmap(
    lambda base: st.one_of(
        st.just(base),
        st.builds(
            lambda metadata: {**base, "metadata": metadata},
            st.one_of(
                json_values,
                st.dictionaries(
                    awkward_text,
                    st.one_of(json_values, st.dictionaries(awkward_text, json_values, max_size=3)),
                    max_size=3,
                ),
            ),
        ),
    )
)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(loose_rows, max_size=4))
def test_any_object_row_round_trips(rows: list[dict], tmp_path: Path) -> None:
    back = roundtrip(rows, tmp_path)
    assert jsonvalues.dumps(back, sort_keys=True) == jsonvalues.dumps(rows, sort_keys=True)


@pytest.mark.parametrize("key", ["metadata.note", "case.oracleType", ""])
def test_keys_that_would_read_as_other_columns_are_refused(key: str, tmp_path: Path) -> None:
    data = row("a")
    data[key] = "x"
    with pytest.raises(UnrepresentableRowError):
        CSV.write(HEADER, iter([data]), tmp_path / "s.csv", WriteOptions())
    assert list(tmp_path.iterdir()) == []


def test_non_object_rows_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UnrepresentableRowError):
        CSV.write(HEADER, iter([row("a"), [1, 2]]), tmp_path / "s.csv", WriteOptions())


@pytest.mark.parametrize(
    "header",
    [
        "id,case.caseId,metadata.x,metadata",
        "id,metadata,case.caseId",
        "id,case.caseId,metadata.case",
        "id,metadata.case,case.caseId",
    ],
)
def test_whole_and_part_columns_cannot_both_have_values(header: str, tmp_path: Path) -> None:
    cells = {
        "id": "a",
        "case.caseId": "a",
        "metadata.x": "1",
        "metadata": '{"y":2}',
        "metadata.case": "{}",
    }
    line = ",".join('"' + cells[name].replace('"', '""') + '"' for name in header.split(","))
    path = tmp_path / "s.csv"
    path.write_text(header + "\r\n" + line + "\r\n", encoding="utf-8")
    items = list(CSV.open(path).rows)
    assert type(items[0]).__name__ == "UnreadableRow"


def test_unknown_columns_become_row_keys(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("id,notes,case.future\r\na,hello,1\r\n", encoding="utf-8")
    (item,) = CSV.open(path).rows
    assert item.data == {"id": "a", "notes": "hello", "metadata": {"case": {"future": 1}}}


def test_bare_carriage_return_line_ends_get_a_plain_message(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(b"id,input\ra,b\rc,d\r")
    from blueprint.core.errors import ParseError

    with pytest.raises(ParseError) as caught:
        CSV.open(path)
    assert "carriage return" in caught.value.reason


# --- what a spreadsheet leaves in a file, and the findings that name it once ----------------


def written(folder: Path, rows: list[Any] | None = None) -> tuple[Path, list[list[str]]]:
    """A set written as Blueprint CSV, and its records (header first) to edit."""
    import csv

    path = folder / "set.csv"
    rows = [row("a"), row("b"), row("c")] if rows is None else rows
    CSV.write(HEADER, iter(rows), path, WriteOptions(force=True))
    with path.open(newline="", encoding="utf-8") as handle:
        return path, list(csv.reader(handle))


def rewritten(path: Path, records: list[list[str]], separator: str = ",") -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, delimiter=separator, lineterminator="\r\n").writerows(records)
    return path


def with_column(records: list[list[str]], name: str, cell: str) -> list[list[str]]:
    """The records with one more column, holding ``cell`` in every row."""
    return [[*records[0], name], *([*record, cell] for record in records[1:])]


def findings(path: Path, *fields: str) -> list[tuple]:
    from blueprint.validation.validate import validate_file

    return validate_file(path).flatten(fields or ("code", "severity", "path", "line"))


def test_empty_rows_between_and_after_rows_are_skipped_once_per_run(tmp_path: Path) -> None:
    path, records = written(tmp_path)
    blank = [""] * len(records[0])
    # line 3 is empty; then rows b (line 4) and c (line 5); lines 6-8 are what Excel leaves
    records = [records[0], records[1], blank, records[2], records[3], blank, blank, [""] * 3]
    rewritten(path, records)
    assert [item.data["id"] for item in CSV.open(path).rows] == ["a", "b", "c"]
    assert [(item.index, item.line) for item in CSV.open(path).rows] == [(0, 2), (1, 4), (2, 5)]
    assert findings(path) == [
        ("empty-row", "info", "$", 3),
        ("empty-row", "info", "$", 6),
    ]
    from blueprint.validation.validate import validate_file

    assert validate_file(path).valid


def test_the_empty_row_finding_names_the_lines(tmp_path: Path) -> None:
    from blueprint.validation.validate import validate_file

    path, records = written(tmp_path)
    rewritten(path, [*records, [""] * len(records[0]), [""] * len(records[0])])
    (issue,) = validate_file(path).issues
    assert "5-6" in issue.message


def test_a_row_without_any_key_still_round_trips(tmp_path: Path) -> None:
    path, records = written(tmp_path, [{}, row("b")])
    assert records[1] == ["{}"]
    assert list(data_rows(CSV.open(path))) == [{}, row("b")]


@pytest.mark.parametrize(("separator", "named"), [(";", "';'"), ("\t", "tab")])
def test_a_file_saved_with_another_separator_is_named_in_one_parse_finding(
    tmp_path: Path, separator: str, named: str
) -> None:
    from blueprint.core.errors import ParseError
    from blueprint.formats import resolve_codec
    from blueprint.validation.validate import validate_file

    path, records = written(tmp_path)
    rewritten(path, records, separator)
    assert resolve_codec(path, None, reading=True).name == "csv"  # detected, not refused
    report = validate_file(path)
    assert report.flatten(("code", "path", "line")) == [("parse", "$", 1)]
    assert named in report.issues[0].message
    with pytest.raises(ParseError) as caught:
        CSV.open(path)
    assert caught.value.line == 1 and named in caught.value.reason


def test_a_foreign_semicolon_file_is_not_taken_for_blueprint_csv(tmp_path: Path) -> None:
    from blueprint.core.errors import UnknownFormatError
    from blueprint.formats import resolve_codec

    path = tmp_path / "other.csv"
    path.write_text("question;answer\r\nwhy?;because\r\n", encoding="utf-8")
    with pytest.raises(UnknownFormatError):
        resolve_codec(path, None, reading=True)


def test_a_semicolon_inside_a_comma_separated_file_is_just_text(tmp_path: Path) -> None:
    path, records = written(tmp_path)
    records[1][records[0].index("input")] = "first; second; third"
    rewritten(path, records)
    assert findings(path) == []


@pytest.mark.parametrize(
    ("deleted", "place"),
    [
        ("case.caseId", "$.rows[*].metadata.case.caseId"),
        ("case.provenance", "$.rows[*].metadata.case.provenance"),
        ("id", "$.rows[*].id"),
        ("input", "$.rows[*].input"),
    ],
)
def test_a_required_column_missing_from_the_file_is_one_finding_at_the_header(
    tmp_path: Path, deleted: str, place: str
) -> None:
    path, records = written(tmp_path)
    position = records[0].index(deleted)
    rewritten(path, [record[:position] + record[position + 1 :] for record in records])
    assert findings(path, "code", "row_index", "path", "line") == [("schema", None, place, 1)]


def test_without_any_case_column_each_missing_one_is_named_once(tmp_path: Path) -> None:
    path, records = written(tmp_path)
    kept = [i for i, name in enumerate(records[0]) if not name.startswith("case.")]
    rewritten(path, [[record[i] for i in kept] for record in records])
    assert findings(path, "code", "path", "line") == [
        ("schema", "$.rows[*].metadata.case.caseId", 1),
        ("schema", "$.rows[*].metadata.case.oracleType", 1),
        ("schema", "$.rows[*].metadata.case.expectedBehavior", 1),
        ("schema", "$.rows[*].metadata.case.provenance", 1),
    ]


def test_a_required_cell_left_empty_is_still_reported_on_its_row(tmp_path: Path) -> None:
    path, records = written(tmp_path)
    records[2][records[0].index("case.provenance")] = ""
    rewritten(path, records)
    assert findings(path, "code", "path", "line") == [
        ("schema", "$.rows[1].metadata.case.provenance", 3)
    ]


def test_a_header_without_rows_has_nothing_to_report(tmp_path: Path) -> None:
    path, _ = written(tmp_path, [])
    rewritten(path, [["id", "notes"]])
    assert findings(path) == []


@pytest.mark.parametrize(
    ("column", "meant"),
    [
        ("notes", "'metadata.notes'"),
        ("case.scenaro", "'case.scenario'"),
        ("case.favouriteColour", "'metadata.favouriteColour'"),
        ("oracleType", "'case.oracleType'"),
        ("Input", "'input'"),
        ("Case.actor", "'case.actor'"),
    ],
)
def test_a_column_that_is_not_blueprints_is_one_finding_with_a_suggestion(
    tmp_path: Path, column: str, meant: str
) -> None:
    from blueprint.validation.validate import validate_file

    path, records = written(tmp_path)
    rewritten(path, with_column(records, column, "x"))
    report = validate_file(path)
    place = "$.rows[*]." + ("metadata.case." + column[5:] if column.startswith("case.") else column)
    if column == "Case.actor":
        place = "$.rows[*]['Case.actor']"
    assert report.flatten(("code", "row_index", "path", "line")) == [("schema", None, place, 1)]
    assert meant in report.issues[0].message
    assert not report.valid


@pytest.mark.parametrize(
    ("column", "place"),
    [
        ("Priority", "$.rows[{}].Priority"),
        ("metadata.Priority", "$.rows[{}].metadata.Priority"),
        ("case.DIFFICULTY", "$.rows[{}].metadata.case.DIFFICULTY"),
        ("metadata.Score", "$.rows[{}].metadata.Score"),
    ],
)
def test_a_column_of_an_omitted_field_is_refused_in_any_letter_case(
    tmp_path: Path, column: str, place: str
) -> None:
    """Not a suggestion to rename it to a metadata column: an omitted field on every row."""
    path, records = written(tmp_path)
    rewritten(path, with_column(records, column, "P1"))
    assert findings(path, "code", "path") == [
        ("omitted-field", place.format(index)) for index in range(3)
    ]


def test_a_column_that_is_not_blueprints_but_stays_empty_is_harmless(tmp_path: Path) -> None:
    path, records = written(tmp_path)
    rewritten(path, with_column(records, "notes", ""))
    assert findings(path) == []


def test_a_column_that_is_not_blueprints_is_reported_when_first_filled(tmp_path: Path) -> None:
    path, records = written(tmp_path)
    records = with_column(records, "notes", "")
    records[3][-1] = "only the last row says something"
    rewritten(path, records)
    assert findings(path, "code", "path", "line") == [("schema", "$.rows[*].notes", 1)]


def test_a_column_that_is_not_blueprints_still_stops_a_conversion(tmp_path: Path) -> None:
    from blueprint.convert import convert
    from blueprint.core.errors import ConversionRefused

    path, records = written(tmp_path)
    rewritten(path, with_column(records, "notes", "x"))
    with pytest.raises(ConversionRefused):
        convert(path, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


#: answers pandas' read_csv would take for missing values if they were written bare
MISSING_LOOKING = ["NA", "N/A", "n/a", "None", "null", "NaN", "nan", "NULL", "#N/A", "<NA>", ""]


def missing_looking_rows() -> list[dict[str, Any]]:
    rows = []
    for number, text in enumerate(MISSING_LOOKING):
        data = row(f"r{number}", expected=text, scenario=text, linkedConcerns=[text])
        data["input"] = text
        data["metadata"]["answer"] = text
        rows.append(data)
    return rows


def test_plain_pandas_read_csv_gets_every_string_back(tmp_path: Path) -> None:
    import pandas as pd

    from blueprint.formats.cells import decode_cell, decode_list_cell

    path, _ = written(tmp_path, missing_looking_rows())
    frame = pd.read_csv(path)  # pandas' defaults: 'NA', 'None', 'null'... would be NaN
    columns = ["input", "expected", "case.scenario", "case.linkedConcerns", "metadata.answer"]
    assert not frame[columns].isna().any().any()
    for text, (_, cells) in zip(MISSING_LOOKING, frame.iterrows(), strict=True):
        assert [decode_cell(cells[name]) for name in columns[:3]] == [text] * 3
        assert decode_list_cell(cells["case.linkedConcerns"]) == [text]
        assert decode_cell(cells["metadata.answer"]) == text


def test_the_documented_pandas_recipe_reads_every_cell_as_written(tmp_path: Path) -> None:
    import csv

    import pandas as pd

    path, records = written(tmp_path, missing_looking_rows())
    frame = pd.read_csv(path, keep_default_na=False, dtype=str)
    assert [list(frame.columns), *frame.to_numpy().tolist()] == records
    with path.open(newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == records


def test_bare_missing_looking_cells_written_by_hand_still_read_as_strings(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    # null and the empty cell are excluded: bare, they are JSON null and an absent field
    texts = [text for text in MISSING_LOOKING if text not in ("null", "")]
    lines = ["id,expected", *(f"r{n},{text}" for n, text in enumerate(texts))]
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    assert [r["expected"] for r in data_rows(CSV.open(path))] == texts


def test_a_kept_column_order_stays_and_new_columns_go_beside_their_neighbours(
    tmp_path: Path,
) -> None:
    data = row("a", caseFamily="f")
    data["metadata"]["source"] = "log"
    kept = (
        "metadata.source",
        "id",
        "case.caseFamily",
        "case.provenance",
        "input",
        "expected",
        "case.caseId",
        "case.oracleType",
        "case.expectedBehavior",
        "case.retired",  # no row needs it any more: it stays, empty
    )
    added = {**data, "metadata": {**data["metadata"], "case": {**data["metadata"]["case"]}}}
    added["metadata"]["case"]["actor"] = "customer"
    path = tmp_path / "s.csv"
    CSV.write(HEADER, iter([data, added]), path, WriteOptions(column_order=kept))
    assert (
        CSV.open(path).columns
        == (
            *kept[:4],
            "case.actor",  # after case.provenance, its canonical predecessor
            *kept[4:],
        )
    )
    assert list(data_rows(CSV.open(path))) == [data, added]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(["id", "input", "expected", "case.caseId", "metadata.x", "notes"]))
def test_any_kept_order_reads_back_the_same_rows(order: list[str], tmp_path: Path) -> None:
    data = {**row("a"), "notes": "n"}
    data["metadata"]["x"] = 1
    path = tmp_path / "s.csv"
    CSV.write(HEADER, iter([data]), path, WriteOptions(force=True, column_order=tuple(order)))
    written = CSV.open(path).columns or ()
    assert [name for name in written if name in order] == order
    assert list(data_rows(CSV.open(path))) == [data]


@pytest.mark.parametrize("name", ["s.csv", "s.jsonl"])
def test_rows_without_a_set_file(tmp_path: Path, name: str) -> None:
    result = REGISTRY[name.split(".")[1]].write(
        HEADER, iter([row("a")]), tmp_path / name, WriteOptions(set_file=False)
    )
    assert result.files == [tmp_path / name]
    assert [p.name for p in tmp_path.iterdir()] == [name]


# --- exactness: numbers keep their text, JSON refused rather than turned into text ----------

_CSV_HEADER = (
    "id,input,expected,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,"
    "metadata.n\r\n"
)


def _hand_written(folder: Path, lines: list[str]) -> Path:
    target = folder / "hand.csv"
    target.write_bytes((_CSV_HEADER + "".join(line + "\r\n" for line in lines)).encode())
    return target


def _data_lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8").split("\r\n")[1:]


def test_numbers_written_by_hand_keep_their_text_through_an_edit(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blueprint.cli import app

    lines = [
        "r1,hi, 42,r1,reference-answer,b,expert-authored,1e5",
        "r2,hi,1.10,r2,reference-answer,b,expert-authored,-0",
        "r3,hi,1E2,r3,reference-answer,b,expert-authored,-3",
    ]
    target = _hand_written(tmp_path, lines)
    result = CliRunner().invoke(app, ["rm", str(target), "r3"])
    assert result.exit_code == 0, result.output
    assert _data_lines(target) == [*lines[:2], ""]


def test_a_number_read_with_its_text_equals_the_number_and_an_edited_one_is_canonical(
    tmp_path: Path,
) -> None:
    target = _hand_written(tmp_path, ["r1,hi,1.10,r1,reference-answer,b,expert-authored,1e5"])
    (data,) = data_rows(CSV.open(target))
    assert data["expected"] == 1.1 and data["metadata"]["n"] == 100000.0
    assert jsonvalues.dumps(data["expected"]) == b"1.1"  # JSON output stays canonical
    data["metadata"]["n"] = 2e5  # an edited value
    out = tmp_path / "out.csv"
    CSV.write(HEADER, iter([data]), out, WriteOptions())
    assert _data_lines(out)[0].endswith(",1.10,r1,reference-answer,b,expert-authored,200000.0")


@pytest.mark.parametrize(
    "cell",
    [
        "1" * 5000,
        '"{""a"": ' + "1" * 5000 + '}"',
        '"""\\ud800"""',
        '"{""a"": [""\\udc00""]}"',
        '"' + "[" * 200 + "]" * 200 + '"',
        "1e999",
    ],
    ids=[
        "long-number",
        "long-number-in-object",
        "lone-surrogate",
        "surrogate-inside",
        "deep",
        "inf",
    ],
)
def test_json_a_cell_cannot_hold_exactly_is_a_parse_finding_on_its_line(
    cell: str, tmp_path: Path
) -> None:
    from blueprint.validation.validate import validate_file

    target = _hand_written(
        tmp_path,
        [
            "r1,hi,yes,r1,reference-answer,b,expert-authored,",
            f"r2,hi,{cell},r2,reference-answer,b,expert-authored,",
        ],
    )
    report = validate_file(target)
    parse = [issue for issue in report.issues if issue.code == "parse"]
    assert [(issue.row_index, issue.line) for issue in parse] == [(1, 3)]
    assert "'expected'" in parse[0].message


def test_the_digit_limit_is_the_configured_one(tmp_path: Path) -> None:
    from blueprint.formats import UnreadableRow
    from blueprint.io import limits

    target = _hand_written(tmp_path, ["r1,hi,123456789012,r1,reference-answer,b,expert-authored,"])
    with limits.overridden(max_number_digits=10):
        rows = list(CSV.open(target).rows)
    assert isinstance(rows[0], UnreadableRow) and "max-number-digits" in rows[0].reason
    (data,) = data_rows(CSV.open(target))
    assert data["expected"] == 123456789012


def test_a_cell_past_max_cell_bytes_is_refused_naming_the_limit(tmp_path: Path) -> None:
    from blueprint.formats import UnreadableRow
    from blueprint.io import limits

    target = _hand_written(
        tmp_path,
        [
            "r1,hi,yes,r1,reference-answer,b,expert-authored,",
            f"r2,{'é' * 600},yes,r2,reference-answer,b,expert-authored,",
            "r3,hi,yes,r3,reference-answer,b,expert-authored,",
        ],
    )
    for limit in (1000, 100):  # past it in bytes only (é is two), and in characters too
        with limits.overridden(max_cell_bytes=limit):
            rows = list(CSV.open(target).rows)
        assert isinstance(rows[1], UnreadableRow)
        assert (rows[1].index, rows[1].line) == (1, 3)
        assert "max-cell-bytes" in rows[1].reason
    with limits.overridden(max_cell_bytes=0):
        assert len(list(data_rows(CSV.open(target)))) == 3


def test_a_set_past_max_rows_is_refused_at_the_first_row_too_many(tmp_path: Path) -> None:
    from blueprint.formats import UnreadableRow
    from blueprint.io import limits

    target = _hand_written(
        tmp_path,
        [f"r{n},hi,yes,r{n},reference-answer,b,expert-authored," for n in range(5)],
    )
    with limits.overridden(max_rows=3):
        rows = list(CSV.open(target).rows)
    assert len(rows) == 4 and isinstance(rows[3], UnreadableRow)
    assert rows[3].line == 5 and "max-rows" in rows[3].reason


def test_a_header_naming_a_column_twice_is_refused_naming_it(tmp_path: Path) -> None:
    from blueprint.core.errors import ParseError

    target = tmp_path / "twice.csv"
    target.write_text("id,input,case.caseId,input\r\na,b,a,c\r\n", encoding="utf-8")
    with pytest.raises(ParseError) as raised:
        CSV.open(target)
    assert raised.value.line == 1 and "'input'" in str(raised.value)


@pytest.mark.parametrize(
    ("format_name", "name"),
    [
        ("json", "out.json"),
        ("promptfoo", "out.yaml"),
        ("omk", "out.yaml"),
        ("apollia", "out.toml"),
        ("inspect", "out.csv"),
        ("langsmith", "out.jsonl"),
        ("huggingface", "out"),
    ],
)
def test_numbers_read_with_their_text_convert_to_any_format(
    format_name: str, name: str, tmp_path: Path
) -> None:
    from blueprint.convert import ConvertOptions, convert

    source = tmp_path / "hand.csv"
    source.write_text(
        "id,input,expected,case.caseId,case.oracleType,case.expectedBehavior,case.provenance,"
        "case.evaluator,metadata.n\r\nr1,hi, 42,r1,reference-answer,b,expert-authored,"
        "exact-or-programmatic,1e5\r\n",
        encoding="utf-8",
    )
    result = convert(source, tmp_path / name, ConvertOptions(target_format=format_name))
    assert result.valid and result.export.rows == 1
