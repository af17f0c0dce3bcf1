"""The generated reference pages are current, and the docs cover every issue code."""

from __future__ import annotations

import re
from pathlib import Path

from blueprint.cli.docgen import main, stale_pages
from blueprint.core.issues import CODES

DOCS = Path(__file__).parent.parent / "docs"
README = Path(__file__).parent.parent / "README.md"


def test_generated_pages_are_current() -> None:
    assert stale_pages(DOCS) == [], "run: python -m blueprint.cli.docgen --write docs"


def test_issue_code_headings_match_the_code_table() -> None:
    text = (DOCS / "reference" / "issue-codes.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\S+)$", text, flags=re.MULTILINE)
    assert headings == list(CODES)


def test_docgen_check_exit_codes(tmp_path: Path) -> None:
    assert main(["--check", str(tmp_path)]) == 1
    assert main(["--write", str(tmp_path)]) == 0
    assert main(["--check", str(tmp_path)]) == 0


def test_readme_commands_name_real_files() -> None:
    """Every path under examples/ the README names is shipped (a glob matches a file)."""
    text = README.read_text(encoding="utf-8")
    named = {path.rstrip(".") for path in re.findall(r"examples/[\w./*-]*", text)}
    assert "examples/promptfoo/promptfooconfig.yaml" in named
    for path in named:
        assert list(README.parent.glob(path)), path


def _tour() -> list[tuple[str, str]]:
    """The tour's commands in order, each with its comment (the lines of its own that follow
    it included), from the README's first console block under "## A short tour"."""
    section = README.read_text(encoding="utf-8").split("## A short tour\n", 1)[1]
    block = re.search(r"^```console\n(.*?)^```", section, re.M | re.S)
    assert block is not None
    commands: list[list[str]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            commands.append([line[2:], ""])
        elif commands and commands[-1][0].endswith("\\"):
            commands[-1][0] = commands[-1][0][:-1] + line.strip()
        elif commands and line.lstrip().startswith("#"):
            commands[-1][1] += line
    for command in commands:
        code, _, comment = command[0].partition("  #")
        command[0], command[1] = code.strip(), comment + command[1]
    return [(command, comment) for command, comment in commands]


def test_the_tour_runs_as_written_on_a_fresh_clone(tmp_path: Path, monkeypatch) -> None:
    """Every tour command runs in order, from a checkout's top folder holding only what the
    repository ships, and exits as its comment says ("exit 1", "exits 1"; 0 when it says
    nothing, or "exit 1 if ...", which the example does not meet)."""
    import shlex
    import shutil
    import subprocess

    from typer.testing import CliRunner

    from blueprint.cli import app
    from conftest import git

    shutil.copytree(README.parent / "examples", tmp_path / "examples")
    git(tmp_path, "init", "--quiet")
    git(tmp_path, "add", "examples")
    git(tmp_path, "commit", "--quiet", "-m", "the examples")
    monkeypatch.chdir(tmp_path)
    tour = _tour()
    assert len(tour) > 40
    ran = []
    for command, comment in tour:
        words = shlex.split(command)
        if words[0] == "." or words[:2] == ["blueprint", "studio"]:
            continue  # the shell's own, and a server that runs until stopped (test_cli_studio)
        wanted = re.search(r"\bexits? (\d)\b(?! if)", comment)
        expected = int(wanted.group(1)) if wanted else 0
        if words[0] == "git":
            done = subprocess.run(words, capture_output=True, text=True, check=False)
            assert done.returncode == expected, (command, done.stdout, done.stderr)
            continue
        assert words[0] == "blueprint", command
        redirect = words.index(">") if ">" in words else None
        arguments = words[1:redirect]
        result = CliRunner().invoke(app, arguments)
        assert result.exit_code == expected, (command, result.output)
        if redirect is not None:
            Path(words[redirect + 1]).write_text(result.stdout, encoding="utf-8")
        ran.append(words[1])
    assert {"validate", "convert", "check", "grade", "new", "accept", "dedupe"} <= set(ran)
    # the shipped promptfoo suite went back into its folder byte for byte
    for path in (README.parent / "examples" / "promptfoo").iterdir():
        assert (tmp_path / "examples" / "promptfoo" / path.name).read_bytes() == path.read_bytes()


def test_the_shipped_promptfoo_suite_goes_back_as_it_came(tmp_path: Path) -> None:
    """examples/promptfoo: comments, vars, a file:// var and tests: file://, and several
    assertion types; imported and written back over itself, every file keeps its bytes."""
    import shutil

    from blueprint.convert import ConvertOptions, convert, roundtrip
    from blueprint.formats.promptfoo import read_yaml

    shipped = README.parent / "examples" / "promptfoo"
    folder = tmp_path / "promptfoo"
    shutil.copytree(shipped, folder)
    config = folder / "promptfooconfig.yaml"
    raw = read_yaml(config)
    assert raw["tests"] == "file://tests.yaml"
    assert raw["defaultTest"]["vars"]["policy"].startswith("file://")
    kinds = {check["type"] for test in read_yaml(folder / "tests.yaml") for check in test["assert"]}
    assert kinds >= {"equals", "contains", "icontains", "regex", "is-json", "llm-rubric"}
    assert "javascript" in kinds
    suite = tmp_path / "suite.json"
    convert(config, suite, ConvertOptions())
    convert(suite, config, ConvertOptions(target_format="promptfoo", force=True))
    for path in shipped.iterdir():
        assert (folder / path.name).read_bytes() == path.read_bytes(), path.name
    assert roundtrip(config, "promptfoo").exact


def test_relative_links_in_docs_resolve() -> None:
    for page in [README, *DOCS.rglob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), (page, target)


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)


def test_readme_python_examples_run(tmp_path: Path, monkeypatch) -> None:
    """Every Python example in the README runs as written, from a checkout's top folder."""
    import shutil

    shutil.copytree(README.parent / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks(README)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {"__name__": "readme_example"})
    assert (tmp_path / "refunds.jsonl").is_file()


def test_judge_validation_worked_example_is_what_the_code_prints(
    tmp_path: Path, monkeypatch
) -> None:
    """The worked example in docs/judge-validation.md is the command's own output, and the
    example's committed report is what the command writes today."""
    import json

    from typer.testing import CliRunner

    from blueprint.cli import app

    page = (DOCS / "judge-validation.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n\$ blueprint (judge-report [^\n]+)\n(.*?)```", page, re.S)
    assert block is not None
    monkeypatch.chdir(README.parent)
    result = CliRunner().invoke(app, block.group(1).split())
    assert result.exit_code == 1  # the example's tone family fails
    assert result.stdout == block.group(2)
    fresh = tmp_path / "support-judged.judge.json"
    arguments = block.group(1).split()[1:]
    CliRunner().invoke(app, ["judge-report", *arguments, "-o", str(fresh)])
    committed = json.loads((README.parent / "examples" / "support-judged.judge.json").read_text())
    written = json.loads(fresh.read_text())
    for key in ("set", "labels"):  # relative to where each report lies
        committed.pop(key), written.pop(key)
    assert written == committed
