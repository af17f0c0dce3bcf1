"""Exact JSON decoding: big numbers, depth, surrogates, and the same verdict on both paths."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.io import jsonvalues, limits
from blueprint.io.jsonvalues import MAX_DEPTH, JSONError
from strategies import json_values

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


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize(
    "after",
    ["]", "]}", ', "\x01"]', ', {"k": 1, "k": 2}]', "]]]", '] "unclosed'],
)
def test_a_non_finite_number_is_placed_whatever_follows_it(bad: str, after: str) -> None:
    # the decoder stops at the number; what comes after it need not be JSON at all
    for path in ("", f"{LONG}, "):
        with pytest.raises(JSONError) as raised:
            jsonvalues.loads(f"[{path}\n  {bad}{after}")
        # on the number (orjson places -Infinity at the character after the sign)
        assert raised.value.line == 2, (path, after)
        assert 3 <= raised.value.column < 3 + len(bad), (path, after)


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    text = '["' + "[" * 500 + '"]'
    assert jsonvalues.loads(text) == ["[" * 500]


def test_error_position() -> None:
    with pytest.raises(JSONError) as caught:
        jsonvalues.loads('{\n  "a": }')
    assert (caught.value.line, caught.value.column) == (2, 8)


# --- hostile input: repeated keys, limits, and where the problem is -----------------------------


@pytest.mark.parametrize("suffix", ["", f', "n": {LONG}'])
@pytest.mark.parametrize(
    ("text", "key", "column"),
    [
        ('{"a": 1, "a": 2', "a", 10),
        ('{"a": "x:y", "b": {"c": 1, "c": 2}', "c", 28),
        ('{"a": 1, "\\u0061": 2', "a", 10),  # the same key, escaped
    ],
)
def test_a_repeated_key_is_refused_with_its_place_on_both_paths(
    text: str, key: str, column: int, suffix: str
) -> None:
    with pytest.raises(JSONError) as caught:
        jsonvalues.loads(text + suffix + "}")
    assert repr(key) in caught.value.reason
    assert (caught.value.line, caught.value.column) == (1, column)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "\\u003a", "b": ":"}',  # an escaped colon, which the decoded text does not escape
        '[{"a": 1}, {"a": 2}]',  # the same key in two objects
        '{"a": {"a": {"a": 1}}}',
        '{"a:b": 1, "a": {"b": 2}}',
    ],
)
def test_keys_that_do_not_repeat_within_one_object_are_accepted(text: str) -> None:
    assert jsonvalues.loads(text) == json.loads(text)


@given(json_values)
def test_a_value_reads_back_as_the_standard_library_reads_it(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert jsonvalues.loads(text) == json.loads(text)
    assert jsonvalues.loads(text.encode("utf-8")) == json.loads(text)


@given(st.dictionaries(st.text(max_size=3), st.integers(), min_size=1, max_size=4), st.data())
def test_any_repeated_key_is_found(pairs: dict[str, int], data: st.DataObject) -> None:
    repeated = data.draw(st.sampled_from(sorted(pairs)))
    members = [f"{json.dumps(k)}: {v}" for k, v in pairs.items()] + [f"{json.dumps(repeated)}: 0"]
    with pytest.raises(JSONError, match="appears twice"):
        jsonvalues.loads("{" + ", ".join(members) + "}")


def test_a_lone_surrogate_is_placed_on_its_line_on_the_exact_path() -> None:
    with pytest.raises(JSONError) as caught:
        jsonvalues.loads(f'[\n{LONG},\n"\\ud800"]')
    assert "surrogate" in caught.value.reason
    assert (caught.value.line, caught.value.column) == (3, 1)


def test_a_number_over_the_digit_limit_is_placed_and_names_the_limit() -> None:
    with pytest.raises(JSONError) as caught:
        jsonvalues.loads("[1,\n  " + "7" * 5000 + "]")
    assert (caught.value.line, caught.value.column) == (2, 3)
    assert "max-number-digits" in caught.value.reason
    with limits.overridden(max_number_digits=6000):
        number = "7" * 5000
        assert jsonvalues.dumps(jsonvalues.loads(f"[{number}]")) == f"[{number}]".encode()
    with limits.overridden(max_number_digits=20), pytest.raises(JSONError):
        jsonvalues.loads("[1.5e123456789012345678901]")  # no run of sixteen, but 25 digits


@pytest.mark.parametrize("suffix", ["", f", {LONG}"])
def test_the_depth_limit_is_configurable_and_placed(suffix: str) -> None:
    deep = "[" * 20 + "1" + "]" * 20
    with limits.overridden(max_depth=10), pytest.raises(JSONError) as caught:
        jsonvalues.loads(f"[0,\n{deep}{suffix}]")
    assert (caught.value.line, caught.value.column) == (2, 10)
    assert "max-depth" in caught.value.reason
    with limits.overridden(max_depth=300):
        assert jsonvalues.loads("[" * 260 + "]" * 260)


def _with_streamed(value: Any, draw: Any) -> tuple[Any, Any]:
    """A JSON value with some of its arrays made Streamed (some items converted on the way):
    the value to write in pieces, and the plain value it stands for."""
    from blueprint.io.jsonvalues import Streamed

    if isinstance(value, dict):
        pairs = {key: _with_streamed(item, draw) for key, item in value.items()}
        return {k: v[0] for k, v in pairs.items()}, {k: v[1] for k, v in pairs.items()}
    if isinstance(value, list):
        if draw(st.booleans()):
            if draw(st.booleans()):
                return Streamed(value), value
            return Streamed([[item] for item in value], lambda boxed: boxed[0]), value
        pairs_list = [_with_streamed(item, draw) for item in value]
        return [p[0] for p in pairs_list], [p[1] for p in pairs_list]
    return value, value


@given(json_values, st.data())
def test_json_in_pieces_is_json_dumps_with_an_indent(value: Any, data: st.DataObject) -> None:
    from blueprint.io.jsonvalues import json_pieces

    pieced, plain = _with_streamed({"report": value, "more": [value]}, data.draw)
    written = "".join(json_pieces(pieced))
    assert written == json.dumps(plain, indent=2, ensure_ascii=False)
