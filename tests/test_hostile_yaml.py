"""Hostile promptfoo configs and packs: each is refused quickly, with exit 1 or 2 and the file
(and line) named; never a hang, a traceback or exit 3, and never a file read from outside."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import data_rows
from blueprint.core.errors import ParseError
from blueprint.formats import REGISTRY
from blueprint.formats.base import ReadOptions, reading_with
from blueprint.formats.huggingface import read_card
from blueprint.formats.mapping import MappingError, load_mapping
from blueprint.io import limits

runner = CliRunner()
PACKS = Path(__file__).parent.parent / "packs"
EXPORTERS = Path(__file__).parent.parent / "exporters"

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def refused(result, *, where: str, codes: tuple[int, ...] = (1, 2)) -> str:
    """The error output of a refused command, after checking how it was refused."""
    assert result.exit_code in codes, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert where in result.stderr
    return result.stderr


# --- promptfoo configs and tests files ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        BOMB.replace("a: &a", "defaultTest: {}\nx: &a") + "tests: [{vars: {input: *i}}]\n",
        "tests:\n  - vars:\n      input: hi\n      " + BOMB.replace("\n", "\n      ") + "\n",
        "- vars: {input: hi}\n  metadata:\n    " + BOMB.replace("\n", "\n    ") + "\n",
    ],
    ids=["config", "vars", "metadata"],
)
def test_an_alias_bomb_in_promptfoo_yaml_is_refused_at_once(tmp_path: Path, text: str) -> None:
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(text, encoding="utf-8")
    started = time.monotonic()
    error = refused(run("convert", source, tmp_path / "out.json"), where="promptfooconfig.yaml:")
    assert time.monotonic() - started < 10
    assert "max_alias_nodes" in error
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("- vars: {input: a}\n  vars: {input: b}\n", 2, "twice"),
        ("- vars: {input: a, n: .nan}\n", 1, "not a number"),
        ("- vars: {input: a}\n- vars: {input: b, n: .inf}\n", 2, "infinite"),
        ("- vars: {input: a, n: -.inf}\n", 1, "infinite"),
        ("- vars:\n    input: a\n    n: 1e400\n", 3, "infinite"),
        ("- vars:\n    input: a\n    n: " + "7" * 5000 + "\n", 3, "max_number_digits"),
        ('- vars:\n    input: "\\ud800"\n', 2, "surrogate"),
        ("- vars: {input: " + "[" * 3000 + "]" * 3000 + "}\n", 1, "max_depth"),
    ],
)
def test_values_json_cannot_hold_are_refused_with_the_line(
    tmp_path: Path, text: str, line: int, what: str
) -> None:
    source = tmp_path / "tests.yaml"
    source.write_text(text, encoding="utf-8")
    error = refused(run("convert", source, tmp_path / "out.json"), where=f"tests.yaml:{line}:")
    assert what in error
    with pytest.raises(ParseError) as caught:
        REGISTRY["promptfoo"].open(source)
    assert caught.value.line == line


def test_references_that_expand_enormously_over_many_tests_are_refused(tmp_path: Path) -> None:
    # each test stays small; together they stand for ten million values
    big = "[" + ", ".join(["x"] * 10_000) + "]"
    tests = "".join(
        "  - {vars: {input: a}, assert: {$ref: '#/assertionTemplates/big'}}\n" for _ in range(1000)
    )
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(f"assertionTemplates:\n  big: {big}\ntests:\n{tests}", encoding="utf-8")
    started = time.monotonic()
    error = refused(run("convert", source, tmp_path / "out.json"), where="promptfooconfig.yaml")
    assert "max_alias_nodes" in error and time.monotonic() - started < 20


def test_references_that_nest_deeply_are_refused_never_a_recursion_error(tmp_path: Path) -> None:
    deep = "[" * 100 + "{$ref: '#/assertionTemplates/tN'}" + "]" * 100
    templates = "".join(f"  t{n}: {deep.replace('tN', f't{n + 1}')}\n" for n in range(30))
    source = tmp_path / "promptfooconfig.yaml"
    source.write_text(
        f"assertionTemplates:\n{templates}  t30: x\n"
        "tests: [{vars: {input: a}, assert: {$ref: '#/assertionTemplates/t0'}}]\n",
        encoding="utf-8",
    )
    error = refused(run("convert", source, tmp_path / "out.json"), where="promptfooconfig.yaml")
    assert "max_depth" in error


def diamond(folder: Path, levels: int, tests: str = "- vars: {input: leaf}\n") -> Path:
    """Configs c0 .. c<levels>, each listing the next one twice; the last holds ``tests``."""
    for level in range(levels):
        following = f"file://c{level + 1}.yaml"
        text = f"tests:\n  - {following}\n  - {following}\n"
        (folder / f"c{level}.yaml").write_text(text, encoding="utf-8")
    (folder / f"c{levels}.yaml").write_text(tests, encoding="utf-8")
    return folder / "c0.yaml"


def test_an_include_diamond_is_refused_at_once(tmp_path: Path) -> None:
    top = diamond(tmp_path, 25)  # 26 configs: 2^25 copies of the last one's tests
    started = time.monotonic()
    with pytest.raises(ParseError) as caught:
        REGISTRY["promptfoo"].open(top)
    assert time.monotonic() - started < 5
    assert "max_included_files" in caught.value.reason
    assert caught.value.line == 2 and str(top) in caught.value.reason + str(caught.value.path)


def test_a_small_include_diamond_gives_every_test_as_promptfoo_would(tmp_path: Path) -> None:
    top = diamond(tmp_path, 3, "- vars: {input: one}\n- vars: {input: two}\n")
    rows = list(data_rows(REGISTRY["promptfoo"].open(top)))
    assert [row["input"] for row in rows] == ["one", "two"] * 8
    assert len({row["id"] for row in rows}) == 16
    with limits.overridden(max_included_files=13), pytest.raises(ParseError):
        REGISTRY["promptfoo"].open(top)  # 2 + 4 + 8 = 14 includes


def test_a_loop_of_includes_names_every_file_in_it(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("tests: file://b.yaml\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("tests: [file://c.yaml]\n", encoding="utf-8")
    (tmp_path / "c.yaml").write_text("tests: [file://a.yaml]\n", encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        REGISTRY["promptfoo"].open(tmp_path / "a.yaml")
    assert all(name in caught.value.reason for name in ("a.yaml", "b.yaml", "c.yaml"))


def test_a_glob_that_matches_nothing_is_an_error_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text("description: d\ntests:\n  - file://cases/*.yaml\n", encoding="utf-8")
    result = run("convert", config, tmp_path / "out.json")
    error = refused(result, where="promptfooconfig.yaml:3")
    assert "cases/*.yaml" in error
    assert not (tmp_path / "out.json").exists()


# --- file:// references stay inside the config's folder or the working folder -----------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config in project/evals, run from an unrelated working folder; a secret beside it."""
    (tmp_path / "secret.yaml").write_text("- vars: {input: the secret}\n", encoding="utf-8")
    folder = tmp_path / "project" / "evals"
    folder.mkdir(parents=True)
    (folder / "cases.yaml").write_text("- vars: {input: a case}\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return folder


@pytest.mark.parametrize(
    "reference",
    [
        "file:///etc/passwd",
        "/etc/passwd",
        "file://../../../../../../../../etc/passwd",
        "file:///proc/self/environ",
        "file://../../secret.yaml",
        "file://{root}/secret.yaml",
        "file:///**/*.yaml",
        "file://../../*.yaml",
        "file://linked/*.yaml",
        "file://link.yaml",
    ],
)
def test_a_reference_that_leads_outside_is_refused(project: Path, reference: str) -> None:
    root = project.parent.parent
    (project / "link.yaml").symlink_to(root / "secret.yaml")
    (project / "linked").mkdir()
    (project / "linked" / "x.yaml").symlink_to(root / "secret.yaml")
    config = project / "promptfooconfig.yaml"
    config.write_text(
        f"prompts: [p]\ntests:\n  - file://cases.yaml\n  - {reference.format(root=root)}\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    result = run("convert", config, project / "out.json")
    assert time.monotonic() - started < 10
    error = refused(result, where="promptfooconfig.yaml:4", codes=(2,))
    assert "--allow-path" in error and "the secret" not in result.output
    assert "root:" not in result.output  # nothing of /etc/passwd


def test_a_default_test_outside_is_refused(project: Path) -> None:
    config = project / "promptfooconfig.yaml"
    config.write_text(
        "defaultTest: file://../../secret.yaml\ntests: [file://cases.yaml]\n", encoding="utf-8"
    )
    with pytest.raises(ParseError) as caught:
        REGISTRY["promptfoo"].open(config)
    assert caught.value.line == 1 and "--allow-path" in caught.value.reason


def test_references_inside_the_folder_or_the_working_folder_are_read(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    common = project.parent / "common-tests"
    common.mkdir()
    (common / "common.yaml").write_text("- vars: {input: common}\n", encoding="utf-8")
    config = project / "promptfooconfig.yaml"
    config.write_text(
        "tests:\n  - file://cases.yaml\n  - file://./*.yaml\n  - file://../common-tests/common.yaml\n",
        encoding="utf-8",
    )
    (project / "promptfooconfig.yaml").rename(project / "config.yml")  # not matched by *.yaml
    config = project / "config.yml"
    with pytest.raises(ParseError):
        REGISTRY["promptfoo"].open(config)  # the monorepo root is not the working folder
    monkeypatch.chdir(project.parent)  # a monorepo: run from its root
    rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    assert [row["input"] for row in rows] == ["a case", "a case", "common"]


def test_allow_path_widens_the_folders(project: Path) -> None:
    root = project.parent.parent
    config = project / "promptfooconfig.yaml"
    config.write_text("tests: [file://../../secret.yaml]\n", encoding="utf-8")
    unread = run("validate", config)
    assert unread.exit_code == 2 and "--allow-path" in unread.stdout
    for command in (
        ["validate", config],
        ["convert", config, project / "out.json"],
        ["roundtrip", config, "--via", "json"],
        ["diff", config, config],
    ):
        result = run(*command, "--allow-path", root)
        assert result.exit_code in (0, 1), result.output  # read: starter data may be invalid
        assert "leads outside" not in result.output
    with reading_with(ReadOptions(allowed_paths=(root,))):
        rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    assert rows[0]["input"] == "the secret"
    assert run("validate", config, "--allow-path", root / "missing").exit_code == 2


# --- packs ----------------------------------------------------------------------------------


@pytest.fixture
def pack_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "packs"
    shutil.copytree(PACKS, folder)
    monkeypatch.setenv("BLUEPRINT_PACKS", str(folder))
    return folder


def hostile_packs() -> dict[str, str]:
    good = (PACKS / "customer-support.yaml").read_text(encoding="utf-8")
    return {
        "bomb": BOMB + good,
        "duplicate": good.replace("title:", "title: first\ntitle:", 1),
        "digits": good + "\nextra: " + "1" * 5000 + "\n",
        "deep": "[" * 100_000 + "]" * 100_000,
        "deep-input": good.replace("input:", "input: " + "[" * 3000 + "]" * 3000 + "\n    x:", 1),
        "surrogate": good + '\nextra: "\\udfff"\n',
    }


@pytest.mark.parametrize("kind", list(hostile_packs()))
def test_hostile_pack_files_are_refused_naming_the_file(
    pack_folder: Path, tmp_path: Path, kind: str
) -> None:
    path = pack_folder / f"{kind}.yaml"
    path.write_text(hostile_packs()[kind], encoding="utf-8")
    started = time.monotonic()
    refused(run("packs", "check", path), where=f"{kind}.yaml", codes=(1,))
    refused(run("new", path, "-o", tmp_path / "s.json"), where=f"{kind}.yaml", codes=(1,))
    listing = run("packs", "--report", "json")
    refused(listing, where=f"{kind}.yaml", codes=(1,))
    assert len(json.loads(listing.stdout)) >= 8  # the other packs are still listed
    assert time.monotonic() - started < 30
    assert not (tmp_path / "s.json").exists()


def test_a_pack_that_leads_outside_the_pack_folder_is_refused(
    pack_folder: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("secret-content: do not print\n", encoding="utf-8")
    (pack_folder / "linked.yaml").symlink_to(secret)
    (pack_folder / "overlays" / "linked-overlay.yaml").symlink_to(secret)
    listing = run("packs")
    error = refused(listing, where="linked.yaml", codes=(1,))
    assert "linked-overlay.yaml" in error
    assert "do not print" not in listing.output
    for command in (["packs", "show", "linked"], ["new", "linked", "-o", tmp_path / "s.json"]):
        result = run(*command)
        assert result.exit_code in (1, 2) and "do not print" not in result.output
        assert "outside the pack folder" in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_in_the_pack_folder_is_refused_not_read(pack_folder: Path) -> None:
    os.mkfifo(pack_folder / "waiting.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "blueprint", "packs"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "BLUEPRINT_PACKS": str(pack_folder)},
    )
    assert done.returncode == 1 and "not a regular file" in done.stderr


# --- the other YAML readers -------------------------------------------------------------------


def test_a_card_with_a_key_twice_is_refused_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(
        "---\nlicense: mit\nlicense: apache-2.0\n---\n# card\n", encoding="utf-8"
    )
    with pytest.raises(ParseError) as caught:
        read_card(tmp_path)
    assert caught.value.line == 3 and "twice" in caught.value.reason


def test_a_mapping_file_with_a_key_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "exporters"
    shutil.copytree(EXPORTERS, folder)
    text = (folder / "langsmith.yaml").read_text(encoding="utf-8")
    (folder / "langsmith.yaml").write_text("format: x\n" + text, encoding="utf-8")
    monkeypatch.setenv("BLUEPRINT_EXPORTERS", str(folder))
    load_mapping.cache_clear()
    try:
        with pytest.raises(MappingError, match=r"langsmith\.yaml:2:"):
            load_mapping("langsmith")
    finally:
        load_mapping.cache_clear()
