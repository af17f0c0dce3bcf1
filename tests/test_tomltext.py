"""TOML key-value lines written directly are the lines tomlkit writes."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import tomlkit
from hypothesis import given
from hypothesis import strategies as st

from blueprint.formats.tomltext import key_value

_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from(list('a "\\\n\r\t\x00\x1b\x7f\u2028')), st.characters()),
    max_size=10,
)
_KEYS = st.one_of(st.sampled_from(["id", "x-y", "_1", "9", "a b", "é", ""]), st.text(max_size=3))


def _by_tomlkit(key: str, value: Any) -> str:
    document = tomlkit.document()
    multiline = isinstance(value, str) and "\n" in value and "\r" not in value
    document.add(key, tomlkit.string(value, multiline=True) if multiline else value)
    return tomlkit.dumps(document).removesuffix("\n")


@given(key=_KEYS, value=st.one_of(_TEXT, st.integers(-(2**63), 2**63 - 1), st.booleans()))
def test_a_line_is_what_tomlkit_writes(key: str, value: Any) -> None:
    line = key_value(key, value)
    if line is None:  # a key that needs quotes: left to tomlkit
        assert re.fullmatch(r"[A-Za-z0-9_-]+", key) is None
        return
    assert line == _by_tomlkit(key, value)
    assert tomllib.loads(line) == {key: value}


@given(value=st.one_of(st.floats(), st.lists(st.integers(), max_size=2), st.none()))
def test_what_tomlkit_lays_out_is_left_to_it(value: Any) -> None:
    assert key_value("key", value) is None
