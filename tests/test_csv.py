"""Blueprint CSV specifics: layout, conflicts, and rows that CSV cannot hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blueprint import jsonvalues
from blueprint.convert import data_rows
from blueprint.formats import REGISTRY, WriteOptions
from blueprint.formats.canonical_csv import UnrepresentableRowError
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
    from blueprint.errors import ParseError

    with pytest.raises(ParseError) as caught:
        CSV.open(path)
    assert "carriage return" in caught.value.reason


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
