"""CSV cell encoding: every JSON value survives one cell, and the common cases stay readable."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint import jsonvalues
from blueprint.formats.cells import (
    ABSENT,
    PANDAS_MISSING,
    decode_cell,
    decode_list_cell,
    encode_cell,
    encode_list_cell,
)
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
