"""Exact JSON decoding: big numbers, depth, surrogates, and the same verdict on both paths."""

from __future__ import annotations

import pytest

from blueprint import jsonvalues
from blueprint.jsonvalues import MAX_DEPTH, JSONError

LONG = "1234567890123456789"  # forces the exact (standard library) path


def test_big_integers_are_exact() -> None:
    assert jsonvalues.loads(f"[{LONG}0000]") == [int(LONG + "0000")]
    assert jsonvalues.dumps(2**80) == str(2**80).encode()


@pytest.mark.parametrize("suffix", ["", f", {LONG}"])
def test_depth_limit_on_both_paths(suffix: str) -> None:
    ok = "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH
    assert jsonvalues.loads(f"[{ok[1:-1]}{suffix}]")
    deep = "[" * (MAX_DEPTH + 1) + "1" + "]" * (MAX_DEPTH + 1)
    with pytest.raises(JSONError, match="nested deeper"):
        jsonvalues.loads(f"[{deep}{suffix}]")
    very_deep = "[" * 5000 + "]" * 5000
    with pytest.raises(JSONError):
        jsonvalues.loads(f"[{very_deep}{suffix}]")


@pytest.mark.parametrize("suffix", ["", f", {LONG}"])
def test_lone_surrogates_are_refused_on_both_paths(suffix: str) -> None:
    with pytest.raises(JSONError):
        jsonvalues.loads(f'["\\ud800"{suffix}]')


@pytest.mark.parametrize("suffix", ["", f", {LONG}"])
def test_non_finite_numbers_are_refused_on_both_paths(suffix: str) -> None:
    for bad in ("NaN", "Infinity", "-Infinity", "1e400"):
        with pytest.raises(JSONError):
            jsonvalues.loads(f"[{bad}{suffix}]")


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    text = '["' + "[" * 500 + '"]'
    assert jsonvalues.loads(text) == ["[" * 500]


def test_error_position() -> None:
    with pytest.raises(JSONError) as caught:
        jsonvalues.loads('{\n  "a": }')
    assert (caught.value.line, caught.value.column) == (2, 8)
