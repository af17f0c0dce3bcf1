"""The one YAML loader: safe, bounded, and refusing what JSON cannot hold, with the line."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from blueprint.core.errors import ParseError
from blueprint.formats.promptfoo import Yaml12Loader
from blueprint.io import limits, yamlload

WHERE = Path("doc.yaml")


def bomb(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" document: each anchor lists the previous one ``width`` times."""
    names = "abcdefghijklmnop"[:levels]
    text = f"{names[0]}: &{names[0]} [{', '.join(['x'] * width)}]\n"
    for previous, name in itertools.pairwise(names):
        text += f"{name}: &{name} [{', '.join([f'*{previous}'] * width)}]\n"
    return text


def refusal(text: str, loader: type[yamlload.BoundedLoader] = yamlload.BoundedLoader) -> ParseError:
    with pytest.raises(ParseError) as caught:
        yamlload.load(text, WHERE, loader=loader)
    return caught.value


@pytest.mark.parametrize("loader", [yamlload.BoundedLoader, Yaml12Loader])
def test_an_alias_bomb_is_refused_at_once_naming_the_alias(loader) -> None:
    started = time.monotonic()
    error = refusal(bomb(), loader)
    assert time.monotonic() - started < 2
    assert error.path == WHERE and error.line == 7  # *f is where the count passes a million
    assert "max_alias_nodes" in error.reason


def test_the_alias_limit_is_the_configured_one() -> None:
    text = bomb(levels=3, width=3)  # 3 + 9 + 27 values reached through aliases
    assert yamlload.load(text, WHERE)["c"][0][0] == ["x", "x", "x"]
    with limits.overridden(max_alias_nodes=20):
        assert refusal(text).line == 3


def test_aliases_that_expand_little_are_read() -> None:
    data = yamlload.load("base: &b {x: 1}\nfirst: *b\nsecond: {<<: *b, y: 2}\n", WHERE)
    assert data == {"base": {"x": 1}, "first": {"x": 1}, "second": {"x": 1, "y": 2}}


def test_a_loop_through_an_alias_is_refused() -> None:
    error = refusal("a: &a [1, *a]\n")
    assert error.line == 1 and "loop" in error.reason


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[" * 100_000 + "]" * 100_000, 1),
        ("- " * 3000 + "x\n", 1),
        # each part is shallow; the alias makes it deep
        ("a: &a " + "[" * 100 + "]" * 100 + "\nb: " + "[" * 100 + "*a" + "]" * 100 + "\n", 2),
    ],
)
def test_deep_nesting_is_refused_never_a_recursion_error(text: str, line: int) -> None:
    error = refusal(text)
    assert error.line == line and "max_depth" in error.reason


def test_the_depth_limit_is_the_configured_one() -> None:
    text = "[" * 10 + "]" * 10
    assert yamlload.load(text, WHERE) is not None
    with limits.overridden(max_depth=9):
        assert "max_depth" in refusal(text).reason


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", 3),
        ("outer:\n  x: 1\n  'x': 2\n", 3),
        ("- {k: 1, k: 1}\n", 1),
    ],
)
def test_a_key_written_twice_is_refused(text: str, line: int) -> None:
    error = refusal(text)
    assert error.line == line and "twice" in error.reason


def test_a_merged_key_may_be_overridden() -> None:
    data = yamlload.load("b: &b {x: 1}\nc: {<<: *b, x: 2}\n", WHERE)
    assert data["c"] == {"x": 2}


@pytest.mark.parametrize("number", [".nan", ".NaN", ".inf", "-.inf", "+.Inf"])
@pytest.mark.parametrize("loader", [yamlload.BoundedLoader, Yaml12Loader])
def test_numbers_json_cannot_hold_are_refused(number: str, loader) -> None:
    error = refusal(f"a: 1\nb: [{number}]\n", loader)
    assert error.line == 2 and error.column == 5


def test_a_float_too_large_is_refused_where_yaml_reads_it_as_a_number() -> None:
    assert refusal("x: 1e400\n", Yaml12Loader).line == 1
    assert yamlload.load("x: '1e400'\n", WHERE, loader=Yaml12Loader) == {"x": "1e400"}


@pytest.mark.parametrize("loader", [yamlload.BoundedLoader, Yaml12Loader])
def test_a_number_with_too_many_digits_is_refused(loader) -> None:
    error = refusal("a: 1\nb: " + "9" * 5000 + "\n", loader)
    assert error.line == 2 and "max_number_digits" in error.reason
    assert yamlload.load("b: " + "9" * 4000 + "\n", WHERE, loader=loader)["b"] > 10**3999


def test_a_lone_surrogate_is_refused_with_its_line() -> None:
    error = refusal('a: fine\nb: "\\ud800"\n')
    assert error.line == 2 and "surrogate" in error.reason
    assert yamlload.load('b: "\\u00e9\\U0001F600"\n', WHERE) == {"b": "é\U0001f600"}


def test_broken_yaml_names_the_line_and_offset() -> None:
    with pytest.raises(ParseError) as caught:
        yamlload.load("a: [1\n", WHERE, line_offset=10)
    assert caught.value.line is not None and caught.value.line > 10
    assert "not valid YAML" in caught.value.reason


def test_tags_never_construct_objects() -> None:
    assert "not valid YAML" in refusal("!!python/object/apply:os.system [echo hi]\n").reason


def test_compose_keeps_the_same_bounds() -> None:
    with pytest.raises(ParseError):
        yamlload.compose(bomb(), WHERE)
    node = yamlload.compose("a:\n  - 1\n", WHERE)
    assert node is not None and node.start_mark.line == 0


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_any_json_value_reads_as_pyyaml_reads_it(value) -> None:
    text = yaml.safe_dump(value, allow_unicode=True)
    assert yamlload.load(text, WHERE) == yaml.safe_load(text)


@pytest.mark.parametrize("loader", [yamlload.BoundedLoader, Yaml12Loader])
@pytest.mark.parametrize(
    ("text", "line", "column"), [("\x00", 1, 1), ("a: 1\nb: x\x1ay\n", 2, 5), ("k: \x03", 1, 4)]
)
def test_a_character_yaml_forbids_is_a_parse_error_with_its_place(
    loader, text: str, line: int, column: int
) -> None:
    # found by tests/test_fuzz.py: PyYAML refuses such characters before it reads anything
    for read in (yamlload.load, yamlload.compose):
        with pytest.raises(ParseError) as raised:
            read(text, WHERE, loader=loader)
        assert (raised.value.line, raised.value.column) == (line, column)
