"""TOML nested without end (a project configuration, an apollia suite) is refused within the
depth limit, as JSON and YAML are: never a RecursionError, an internal error or memory
running out. The commands run as child processes, with a time limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from blueprint.io import limits, tomlload

DEEP = 100_000


def nested(kind: str, depth: int) -> str:
    """A TOML document nesting ``depth`` levels below its key ``x`` (a dotted key: below a)."""
    if kind == "arrays":
        return "x = " + "[" * depth + "1" + "]" * depth + "\n"
    if kind == "tables":
        return "x = " + "{a = " * depth + "1" + "}" * depth + "\n"
    if kind == "dotted":
        return ".".join(["a"] * (depth + 1)) + " = 1\n"
    if kind == "header":
        return "[" + ".".join(["a"] * (depth + 1)) + "]\nx = 1\n"
    raise AssertionError(kind)


KINDS = ["arrays", "tables", "dotted", "header"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_document_nested_without_end_is_refused(kind: str) -> None:
    with pytest.raises(tomlload.TomlError) as refused:
        tomlload.loads(nested(kind, DEEP))
    assert "nested deeper than" in refused.value.reason


@pytest.mark.parametrize("kind", KINDS)
def test_the_depth_limit_is_the_one_json_keeps(kind: str) -> None:
    depth = limits.current().max_depth
    assert tomlload.loads(nested(kind, depth - 2)) == tomllib.loads(nested(kind, depth - 2))
    with pytest.raises(tomlload.TomlError):
        tomlload.loads(nested(kind, depth + 2))
    with limits.overridden(max_depth=10), pytest.raises(tomlload.TomlError):
        tomlload.loads(nested(kind, 12))


def test_a_limit_beyond_the_parsers_reach_is_still_an_error() -> None:
    with limits.overridden(max_depth=10 * DEEP), pytest.raises(tomlload.TomlError):
        tomlload.loads(nested("arrays", DEEP))


def test_brackets_and_dots_in_strings_and_comments_do_not_count() -> None:
    text = (
        'a = "' + "[" * 500 + "." * 500 + '"\n'
        "b = '" + "{" * 500 + "'\n"
        'c = """\n' + "[" * 500 + '\n"""\n'
        "d = '''" + "." * 500 + "'''\n"
        "# " + "[" * 500 + "\n"
        'e = "\\"' + "[" * 500 + '"\n'
        "f = [1.5, 2.5, {g.h = 3}]\n"
    )
    assert tomlload.loads(text) == tomllib.loads(text)


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=5),
        st.recursive(
            st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(min_size=1, max_size=5), inner, max_size=3)
            ),
            max_leaves=20,
        ),
        max_size=5,
    )
)
def test_any_shallow_document_reads_as_tomllib_reads_it(document: dict) -> None:
    import tomlkit

    text = tomlkit.dumps(document)
    assert tomlload.loads(text) == tomllib.loads(text)


# --- the commands -----------------------------------------------------------------------------


def blueprint(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "blueprint", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={key: value for key, value in os.environ.items() if key != "BLUEPRINT_MAX_DEPTH"},
    )


def suite(kind: str) -> str:
    return 'name = "deep"\n[[tasks]]\nid = "t1"\nprompt = "hi"\n' + nested(kind, DEEP)


@pytest.mark.parametrize("kind", KINDS)
def test_a_deep_project_configuration_is_a_clean_error(tmp_path: Path, kind: str) -> None:
    (tmp_path / "blueprint.toml").write_text(nested(kind, DEEP), encoding="utf-8")
    done = blueprint("check", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "nested deeper than" in done.stderr


def test_a_deep_pyproject_table_is_a_clean_error(tmp_path: Path) -> None:
    deep = nested("arrays", DEEP)
    (tmp_path / "pyproject.toml").write_text(f"[tool.blueprint]\n{deep}", encoding="utf-8")
    done = blueprint("check", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", ["validate", "convert"])
def test_a_deep_apollia_suite_is_a_clean_error(tmp_path: Path, kind: str, command: str) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(suite(kind), encoding="utf-8")
    args = ["validate", path, "--report", "json"]
    if command == "convert":
        args = ["convert", path, tmp_path / "out.json"]
    done = blueprint(*args, cwd=tmp_path)
    assert done.returncode in (1, 2), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    if command == "validate":
        report = json.loads(done.stdout)
        assert report["valid"] is False
        assert any("nested deeper than" in issue["message"] for issue in report["issues"])
    else:
        assert not (tmp_path / "out.json").exists()


def test_a_depth_the_parser_cannot_recurse_to_is_an_error_not_a_crash() -> None:
    with limits.overridden(max_depth=900):
        try:
            read = tomlload.loads(nested("arrays", 850))
        except tomlload.TomlError:
            return
    assert read == tomllib.loads(nested("arrays", 850))
