"""Positions of keys and array elements in TOML text, for messages that name a line."""

from __future__ import annotations

import tomllib

from hypothesis import given
from hypothesis import strategies as st

from blueprint.io.toml_positions import Positions

TEXT = "\n".join(
    [
        "# header comment",
        'name = "s"  # trailing comment',
        "\"quoted key\" = 'literal'",
        "dotted.inner = 1979-05-27 07:32:00Z",
        "",
        "[[tasks]]",
        'id = "a"',
        'prompt = """',
        'multi "" line',
        "[[not a header]]",
        '"""',
        "",
        "  [[tasks.assertions]]",
        '  type = "exit_code"',
        "  equals = 0",
        "",
        "[tasks.sub]",
        "x = [1, [2, 3],",
        '  { y = "z" }, # comment inside an array',
        "]",
        "",
        "[[tasks]]",
        'id = "b"',
        "assertions = [",
        '  { type = "regex", on = "result", pattern = "^a\\\\\\\\$$" },',
        "  { type = 'llm_judge', rubric = '''x",
        "y''' },",
        "]",
        "",
    ]
)


def test_positions_of_keys_tables_and_elements() -> None:
    tomllib.loads(TEXT)  # the text is valid TOML
    positions = Positions(TEXT)
    assert positions.of(("name",)) == (2, 1)
    assert positions.line(("quoted key",)) == 3
    assert positions.line(("dotted", "inner")) == 4
    assert positions.line(("tasks", 0)) == 6
    assert positions.line(("tasks", 0, "prompt")) == 8
    assert positions.of(("tasks", 0, "assertions", 0)) == (13, 3)
    assert positions.of(("tasks", 0, "assertions", 0, "equals")) == (15, 3)
    assert positions.line(("tasks", 0, "sub", "x", 2, "y")) == 19
    assert positions.line(("tasks", 1, "id")) == 23
    assert positions.of(("tasks", 1, "assertions", 0, "pattern")) == (25, 36)
    assert positions.line(("tasks", 1, "assertions", 1, "rubric")) == 26


def test_a_missing_key_points_at_its_table() -> None:
    positions = Positions(TEXT)
    assert positions.line(("tasks", 1, "prompt")) == 22
    assert positions.of(("nowhere",)) == (None, None)


def test_crlf_and_a_leading_blank() -> None:
    positions = Positions('\r\nname = "s"\r\n[[tasks]]\r\nid = "a"\r\n')
    assert positions.line(("tasks", 0, "id")) == 4


@given(st.text(), st.text())
def test_strings_of_any_content_do_not_move_later_keys(first: str, second: str) -> None:
    import tomlkit

    text = tomlkit.dumps({"a": first, "b": {"c": second}, "d": [first, {"e": second}]})
    tomllib.loads(text)
    positions = Positions(text)
    lines = text.split("\n")
    for path, key in ((("a",), "a"), (("b", "c"), "c"), (("d",), "d")):
        line, column = positions.of(path)
        assert line is not None and column is not None
        assert lines[line - 1][column - 1 :].startswith(key), (path, text)
