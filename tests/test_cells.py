"""CSV cell encoding: every JSON value survives one cell, and the common cases stay readable."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.formats.cells import (
    ABSENT,
    PANDAS_MISSING,
    CellError,
    FloatText,
    IntText,
    decode_cell,
    decode_list_cell,
    encode_cell,
    encode_list_cell,
    formula_like,
)
from blueprint.io import jsonvalues
from strategies import awkward_text, json_values


def same(a: object, b: object) -> bool:
    return jsonvalues.dumps(a, sort_keys=True) == jsonvalues.dumps(b, sort_keys=True)


@given(json_values)
def test_any_value_round_trips(value: object) -> None:
    assert same(decode_cell(encode_cell(value)), value)


@given(st.one_of(st.lists(awkward_text, max_size=5), json_values))
def test_any_list_field_value_round_trips(value: object) -> None:
    assert same(decode_list_cell(encode_list_cell(value)), value)


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("What is the refund window?", "What is the refund window?"),
        ("", '""'),
        ("1", '"1"'),
        (1, "1"),
        (None, "null"),
        ("null", '"null"'),
        (True, "true"),
        ("=1+1", '"=1+1"'),
        ("@mention", '"@mention"'),
        ("-5", '"-5"'),
        ({"a": [1, "1"]}, '{"a":[1,"1"]}'),
        ("a | b", "a | b"),
    ],
)
def test_cell_text(value: object, cell: str) -> None:
    assert encode_cell(value) == cell
    assert same(decode_cell(cell), value)


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (["policy-drift", "tone"], "policy-drift|tone"),
        (["a|b", "c\\d"], "a\\|b|c\\\\d"),
        ([], "[]"),
        ([""], '[""]'),
        ([" padded"], '[" padded"]'),
        (["1"], '["1"]'),
        (["=x"], '["=x"]'),
    ],
)
def test_list_cell_text(value: list[str], cell: str) -> None:
    assert encode_list_cell(value) == cell
    assert decode_list_cell(cell) == value


def test_hand_written_list_cells_are_forgiving() -> None:
    assert decode_list_cell(" policy-drift | tone ") == ["policy-drift", "tone"]
    assert decode_list_cell("C:\\path") == ["C:\\path"]


def test_empty_cell_is_absent() -> None:
    assert decode_cell("") is ABSENT
    assert decode_list_cell("") is ABSENT


def test_big_integers_are_exact() -> None:
    big = 2**80 + 1
    assert decode_cell(encode_cell(big)) == big
    assert isinstance(decode_cell(encode_cell(big)), int)


@pytest.mark.parametrize("text", ["NA", "N/A", "n/a", "None", "NaN", "nan", "NULL", "#N/A", "<NA>"])
def test_strings_pandas_takes_for_missing_are_quoted_and_old_bare_cells_still_read(
    text: str,
) -> None:
    assert encode_cell(text) == f'"{text}"'
    assert encode_list_cell([text]) == f'["{text}"]'
    assert decode_cell(f'"{text}"') == text
    assert decode_cell(text) == text  # as an older Blueprint wrote it, or a person types it
    assert decode_list_cell(text) == [text]


def test_every_text_pandas_reads_as_missing_is_quoted() -> None:
    parsers = pytest.importorskip("pandas._libs.parsers")
    assert set(parsers.STR_NA_VALUES) - {""} <= PANDAS_MISSING


@given(st.one_of(st.sampled_from(sorted(PANDAS_MISSING)), awkward_text))
def test_no_string_is_written_as_a_cell_pandas_reads_as_missing(text: str) -> None:
    assert encode_cell(text) not in PANDAS_MISSING | {""}
    assert encode_list_cell([text]) not in PANDAS_MISSING | {""}


@pytest.mark.parametrize(
    ("cell", "value"),
    [(" 42", 42), ("1e5", 100000.0), ("1.10", 1.1), ("-0", 0), ("1E2", 100.0), ("42 ", 42)],
)
def test_a_number_keeps_the_text_it_was_read_with(cell: str, value: float) -> None:
    read = decode_cell(cell)
    assert read == value and type(read) is not bool
    assert isinstance(read, IntText | FloatText)
    assert encode_cell(read) == cell
    assert encode_cell(read + 0) == jsonvalues.dumps_text(value)  # arithmetic: canonical again


@pytest.mark.parametrize("cell", ["42", "-3", "1.5", "0", "1e+16"])
def test_a_number_in_canonical_text_is_a_plain_number(cell: str) -> None:
    assert type(decode_cell(cell)) in (int, float)


def test_numbers_that_keep_their_text_survive_copying() -> None:
    value = decode_cell("1.10")
    assert copy.deepcopy(value).text == "1.10"
    assert pickle.loads(pickle.dumps(value)).text == "1.10"


@pytest.mark.parametrize(
    "cell",
    ["1" * 4301, "[" + "1" * 4301 + "]", '"\\ud800"', '{"a": ["\\udc00"]}', "1e999"],
)
def test_json_that_cannot_be_read_exactly_is_refused_not_taken_for_text(cell: str) -> None:
    with pytest.raises(CellError):
        decode_cell(cell)
    with pytest.raises(CellError):
        decode_list_cell(cell)


def test_a_string_that_would_be_refused_bare_is_written_as_a_json_string() -> None:
    for text in ["1" * 4301, '"\\ud800"', "1e999"]:
        assert decode_cell(encode_cell(text)) == text


def test_not_json_stays_text() -> None:
    for text in ["[draft] notes", "{oops", "-foo", "2024-01-01", "01", "1.", "NaN", "[NaN]"]:
        assert decode_cell(text) == text


@given(json_values)
def test_the_encoding_never_writes_a_cell_a_spreadsheet_runs(value: object) -> None:
    assert not formula_like(encode_cell(value))
    assert not formula_like(encode_list_cell(value))


@pytest.mark.parametrize(
    ("text", "formula"),
    [
        ("=1+1", True),
        ("+1", True),
        ("-2+3", True),
        ("@SUM(A1)", True),
        ("\t=x", True),
        ("\r=x", True),
        ("-3", False),
        ("-1e5", False),
        ("hello", False),
        ("", False),
    ],
)
def test_formula_like(text: str, formula: bool) -> None:
    assert formula_like(text) is formula


_NUMBER_TEXT = st.from_regex(
    r"\A[ \t]{0,2}-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?[ \t]{0,2}\Z"
)


@given(_NUMBER_TEXT)
def test_any_json_number_text_comes_back_as_it_was_written(text: str) -> None:
    value = decode_cell(text)
    assert isinstance(value, int | float) and not isinstance(value, bool)
    assert encode_cell(value) == text
    assert jsonvalues.loads(jsonvalues.dumps(value)) == value  # JSON output: the same value
