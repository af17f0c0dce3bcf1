"""Where the command line writes: listings on stdout in whole lines, notes on stderr, completion."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.authoring.packs import load_overlay, load_pack
from blueprint.cli import app
from blueprint.core import admissibility
from blueprint.core.model import ORACLE_TYPES
from blueprint.formats.mapping import load_mapping
from conftest import document, row, write_json

runner = CliRunner()

#: a narrow terminal setting that a pipe must not inherit
NARROW = {"COLUMNS": "40"}


def run(*args: str, env: dict[str, str] | None = None):
    return runner.invoke(app, list(args), env=env)


def lines_holding(text: str, fragment: str) -> list[str]:
    return [line for line in text.splitlines() if fragment in line]


@pytest.mark.parametrize(
    "command",
    [
        ("evaluators",),
        ("evaluators", "rubric"),
        ("formats",),
        ("formats", "csv"),
        ("formats", "langsmith"),
        ("packs", "show", "customer-support"),
    ],
)
def test_listings_go_to_stdout_and_nothing_to_stderr(command: tuple[str, ...]) -> None:
    result = run(*command)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
    if command[0] != "packs":  # packs add the starter-example note, checked below
        assert result.stderr == ""


def test_the_evaluators_table_piped_is_whole_lines() -> None:
    piped = run("evaluators", env=NARROW).stdout
    for oracle_type in ORACLE_TYPES:
        rule = admissibility.rule_for(oracle_type)
        assert lines_holding(piped, oracle_type)
        for evaluator, reason in rule.bars.items():
            # `blueprint evaluators | grep judge` shows the whole reason on the line it matches
            assert lines_holding(piped, f"{evaluator}: {reason}"), (oracle_type, evaluator)
        for evaluator, conditions in rule.conditional.items():
            assert lines_holding(piped, f"{evaluator}: only if " + "; and ".join(conditions))


def test_one_oracle_type_piped_names_it_and_its_evaluators() -> None:
    piped = run("evaluators", "rubric").stdout
    rubric_line = lines_holding(piped, "rubric-human")
    assert rubric_line and "rubric" in rubric_line[0].split("rubric-human")[0]


def test_the_formats_table_piped_keeps_names_and_titles_whole() -> None:
    from blueprint.formats import REGISTRY

    piped = run("formats", env=NARROW).stdout
    for codec in REGISTRY.values():
        line = lines_holding(piped, f" {codec.name} ")
        assert line and codec.title in line[0], codec.name


def test_a_format_mapping_piped_keeps_every_destination_whole() -> None:
    piped = run("formats", "langsmith", env=NARROW).stdout
    mapping = load_mapping("langsmith")
    for entry in mapping.rows:
        assert lines_holding(piped, entry.field)
        if entry.to:
            assert lines_holding(piped, entry.to), entry.field


def test_packs_list_on_stdout_and_the_example_note_on_stderr() -> None:
    result = run("packs", env=NARROW)
    assert result.exit_code == 0
    pack = load_pack("customer-support")
    overlay = load_overlay("finance")
    for loaded in (pack, overlay):
        line = lines_holding(result.stdout, loaded.id)
        assert line and loaded.title in line[0]
    assert "not validated gold" in result.stderr
    assert "not validated gold" not in result.stdout


def test_packs_show_lists_families_on_stdout() -> None:
    result = run("packs", "show", "finance", env=NARROW)
    assert result.exit_code == 0
    overlay = load_overlay("finance")
    for family in overlay.case_families:
        line = lines_holding(result.stdout, family.id)
        assert line and family.oracle_type in line[0] and family.evaluator in line[0]
    assert "not validated gold" in result.stderr
    assert "not validated gold" not in result.stdout


def test_piped_listings_carry_no_terminal_codes() -> None:
    for command in (("evaluators",), ("formats", "promptfoo"), ("packs",)):
        assert "\x1b[" not in run(*command).stdout


def test_help_lists_every_command_and_the_completion_options() -> None:
    result = run("--help")
    assert result.exit_code == 0
    commands = [
        *("validate", "convert", "diff", "roundtrip", "formats", "evaluators", "schema"),
        *("packs", "new", "oracle", "add"),
    ]
    for command in commands:
        assert command in result.stdout
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_completion_prints_a_script(shell: str) -> None:
    result = run("--show-completion", shell)
    assert result.exit_code == 0, result.output
    assert "_BLUEPRINT_COMPLETE" in result.stdout
    assert result.exception is None


def complete(shell: str, **env: str):
    """What the shell's completion hook gets back (the script sets these variables)."""
    environment = {"_BLUEPRINT_COMPLETE": f"complete_{shell}", **env}
    return runner.invoke(app, [], prog_name="blueprint", env=environment)


def test_completion_through_the_environment_completes_commands_and_choices() -> None:
    commands = complete("bash", COMP_WORDS="blueprint ev", COMP_CWORD="1")
    assert commands.exit_code == 0 and commands.exception is None
    assert commands.stdout.split() == ["evaluators"]
    choices = complete("zsh", _TYPER_COMPLETE_ARGS="blueprint evaluators ")
    assert choices.exit_code == 0 and choices.exception is None
    for oracle_type in ORACLE_TYPES:
        assert f'"{oracle_type}"' in choices.stdout


#: an id longer than any terminal line, which a table folded to 80 columns would break
LONG = "a-row-id-" + "that-goes-on-" * 10 + "and-ends"


def _with_long_ids(tmp_path: Path) -> Path:
    rows = [
        row(f"{LONG}-{n}", expected="yes", caseFamily=f"{LONG}-family")
        for n in ("one", "two", "three", "four")
    ]
    for item in rows[:2]:
        item["input"] = "How do I return shoes?"  # the same input twice: a duplicate
    family = {"id": f"{LONG}-family", "oracleType": "reference-answer"}
    return write_json(tmp_path / "long.json", document(*rows, caseFamilies=[family]))


def test_the_dedupe_table_piped_keeps_long_ids_whole(tmp_path: Path) -> None:
    result = run("dedupe", str(_with_long_ids(tmp_path)), env=NARROW)
    assert result.exit_code == 1, result.output
    for name in ("one", "two"):
        assert lines_holding(result.stdout, f"{LONG}-{name}"), result.stdout


def test_split_and_sample_tables_piped_keep_family_names_whole(tmp_path: Path) -> None:
    long = _with_long_ids(tmp_path)
    split = run(
        "split", str(long), "--ratios", "dev=0.5,test=0.5", "--seed", "1",
        "-o", str(tmp_path / "split.json"), env=NARROW,
    )  # fmt: skip
    sample = run(
        "sample", str(long), "2", "--seed", "1", "-o", str(tmp_path / "s.json"), env=NARROW
    )
    for result in (split, sample):
        assert result.exit_code == 0, result.output
        line = lines_holding(result.stdout, f"{LONG}-family")
        assert line and "reference-answer" in line[0], result.stdout


def test_the_new_summary_keeps_family_ids_whole_when_piped(tmp_path: Path) -> None:
    result = run(
        "new", "customer-support", "--overlay", "finance", "-o", str(tmp_path / "s.csv"),
        env={"COLUMNS": "30"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for family in [
        *load_pack("customer-support").case_families,
        *load_overlay("finance").case_families,
    ]:
        line = lines_holding(result.stderr, f" {family.id} ")
        assert line and family.oracle_type in line[0] and family.evaluator in line[0], family.id
    assert "…" not in result.stderr


def test_the_evaluators_fit_an_80_column_terminal_broken_between_words() -> None:
    """In a terminal the prose wraps at word boundaries; four columns of it side by side
    left a word or two a line, split mid-word, in 279 lines."""
    import re

    result = run("evaluators", env={"FORCE_COLOR": "1", "COLUMNS": "80", "TERM": "xterm"})
    assert result.exit_code == 0, result.output
    text = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
    lines = text.splitlines()
    assert all(len(line.rstrip()) <= 80 for line in lines)
    assert len(lines) < 120
    flowed = " ".join(text.split())
    for oracle_type in ORACLE_TYPES:
        rule = admissibility.rule_for(oracle_type)
        assert oracle_type in lines
        for evaluator, reason in rule.bars.items():
            assert f"{evaluator}: {' '.join(reason.split())}" in flowed, (oracle_type, evaluator)
        for evaluator, conditions in rule.conditional.items():
            assert f"{evaluator}: only if " + "; and ".join(conditions) in flowed
