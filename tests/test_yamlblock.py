"""The block YAML writer gives exactly the bytes LibYAML gives for the same nodes."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from blueprint.formats import promptfoo, yaml12
from blueprint.formats.cells import FloatText, IntText
from blueprint.formats.yamlblock import WIDTH, block_yaml, literal, quoted_in_both
from strategies import AWKWARD

pytestmark = pytest.mark.skipif(
    not hasattr(yaml, "CSafeDumper"), reason="the reference is LibYAML's emitter"
)


def libyaml(value: Any) -> str:
    return yaml12._libyaml_text(value)


def same_as_libyaml(value: Any) -> None:
    written = block_yaml(value)
    assert written is not None
    assert written == libyaml(value)


#: pieces that decide a scalar's style, its escapes and where it folds
PIECES = [
    *AWKWARD,
    "a",
    "word",
    " ",
    "  ",
    ":",
    ": ",
    " #",
    "#",
    "?",
    "- ",
    "'",
    '"',
    "\\",
    "<<",
    "=",
    "~",
    "---",
    "...",
    "0o17",
    "yes",
    "\t",
    "\n",
    "\r",
    "\x85",
    "\u2028",
    "\xa0",
    "\ufeff",
    "\x00",
    "\x1b",
    "\x7f",
    "\ue000",
    "\ufffe",
    "中文",
    "é",
    "\U0001f600",
    "x" * 40,
]
text = st.lists(st.sampled_from(PIECES), max_size=30).map("".join) | st.text(max_size=150)
keys = text.filter(lambda key: not any(mark in key for mark in "\n\r\x85\u2028\u2029"))
scalars = (
    text
    | st.integers()
    | st.floats()
    | st.booleans()
    | st.none()
    | st.integers().map(lambda n: IntText(n, f" {n}"))
    | st.floats(allow_nan=False).map(lambda x: FloatText(x, f"{x} "))
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


@given(st.lists(values, min_size=1, max_size=3) | st.dictionaries(keys, values, min_size=1))
def test_any_json_like_value_is_written_as_libyaml_writes_it(value: Any) -> None:
    written = block_yaml(value)
    if written is not None:  # a key too long for a simple key goes to LibYAML
        assert written == libyaml(value)


@given(st.lists(st.sampled_from(["a", "bb", " ", "  ", "'", '"', "é", "\t", ":"]), max_size=200))
def test_long_text_folds_where_libyaml_folds_it(pieces: list[str]) -> None:
    long = "".join(pieces)
    for value in ([long], {"key": long}, [{"a": [long]}], {long[:20].strip("\t") or "k": long}):
        if block_yaml(value) is not None:
            same_as_libyaml(value)


@pytest.mark.parametrize("start", range(0, 0x10000, 0x1000))
def test_every_character_of_the_basic_plane_is_written_as_libyaml_writes_it(start: int) -> None:
    for point in range(start, start + 0x1000):
        if 0xD800 <= point <= 0xDFFF:
            continue
        character = chr(point)
        value: list[Any] = [character, "a " + character, {"k": character + " b"}]
        value.append("x" * (WIDTH - 3) + " " + character + " y")
        assert block_yaml(value) == libyaml(value), hex(point)
        if character not in "\n\r\x85\u2028\u2029":
            assert block_yaml({character: 1}) == libyaml({character: 1}), hex(point)


def test_escapes_of_every_kind_in_one_text_are_written_as_libyaml_writes_them() -> None:
    # the line breaks and tabs are replaced as whole strings, the rest one at a time
    for text in ("a\n\x01\tb\x7f", "é\n\xa0\u2028x\x85\ufeff", "\x00" + "y " * 70 + "\r\n"):
        for value in ([text], {"key": text}, [{"a": text + text}]):
            same_as_libyaml(value)


def test_what_needs_libyaml_is_left_to_it() -> None:
    assert block_yaml({"line\nbreak": 1}) is None  # a complex key
    assert block_yaml({"k" * 129: 1}) is None
    assert block_yaml(["\ud800"]) is None  # no UTF-8 for it
    assert block_yaml(["a\tb\n" + "x " * 80 + "\udfff"]) is None  # past the other escapes
    assert block_yaml([promptfoo.YamlDate("2026-01-01")]) is None
    assert block_yaml([]) is None and block_yaml({}) is None
    assert promptfoo.dump_yaml({"line\nbreak": 1}) == libyaml({"line\nbreak": 1}).encode()


def test_plain_text_is_only_what_yaml_11_reads_as_text() -> None:
    resolver = yaml.resolver.Resolver()
    for value in [*PIECES, "<<", "=", "", "y", "n", "No", "0x1F", "1_000", "12:30", "2026-01-01"]:
        if not quoted_in_both(value):
            plain = resolver.resolve(yaml.ScalarNode, value, (True, False))
            assert (plain == "tag:yaml.org,2002:str") == (value not in ("", "<<", "="))


#: lines of a text with line feeds: what decides whether it is a literal block, and how
LINES = [
    "",
    "a",
    " a",
    "a ",
    "  x: 1",
    "é",
    "中文",
    "\t",
    "\x85",
    "\u2028",
    "\ufeff",
    "x " * 60,
    "#",
]


@given(st.lists(st.sampled_from(LINES), min_size=2, max_size=8).map("\n".join))
def test_text_with_line_feeds_is_a_literal_block_when_libyaml_writes_one(text: str) -> None:
    for value in ([text], {"key": text}, {"a": [text, {"b": text}]}, [[{"c": text}]]):
        written = block_yaml(value)
        assert written is not None
        assert written == libyaml(value)
        assert yaml.load(written, Loader=yaml12.Yaml12Loader) == value
        assert yaml.safe_load(written) == value
    first = block_yaml({"key": text}).split("\n", 1)[0]  # type: ignore[union-attr]
    assert first.startswith("key: |") == literal(text)


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("a\nb\n", "|"),  # one line feed at the end: kept
        ("a\nb", "|-"),  # none: stripped
        ("a\n\n\n  b\n", "|"),  # empty lines stay empty, indented lines keep their indent
        ("é\n中文 " + "x" * 120 + "\n", "|"),  # never folded
        ("a\n\n", None),  # more than one line feed at the end: double-quoted
        (" a\nb", None),  # a leading space would need an indentation hint
        ("\na", None),
        ("a \nb", None),  # a space at the end of a line
        ("a\nb ", None),
        ("a\tb\nc", None),  # a tab or a line break other than the line feed is escaped
        ("a\r\nb", None),
        ("a\n\u2028b", None),
        ("one line", None),
    ],
)
def test_which_texts_are_literal_blocks(text: str, header: str | None) -> None:
    assert literal(text) == (header is not None)
    deep: Any = text
    for _ in range(40):  # past the indents kept ready
        deep = {"k": deep}
    for value in ({"key": text}, ["x", text], deep):
        written = block_yaml(value)
        assert written == libyaml(value)
        assert yaml.load(written, Loader=yaml12.Yaml12Loader) == value
    first = block_yaml({"key": text}).split("\n", 1)[0]  # type: ignore[union-attr]
    assert first == f"key: {header}" if header else not first.endswith(("|", "|-"))


def test_a_date_key_is_left_to_libyaml_after_the_same_text_as_a_plain_key() -> None:
    block_yaml({"2026-01-01": 1})  # the plain text's key is remembered (quoted)
    assert block_yaml({promptfoo.YamlDate("2026-01-01"): 1}) is None
