"""Every command's --help at 80 columns: text wraps to the terminal, and flags show no metavar."""

from __future__ import annotations

import itertools

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.cli._commands import COMMANDS, build_command, reflow

runner = CliRunner()
WIDTH = 80


def command_paths() -> list[list[str]]:
    paths: list[list[str]] = [[]]
    for name in COMMANDS:
        paths.append([name])
        paths.extend([name, sub] for sub in getattr(build_command(name), "commands", {}))
    return paths


def hard_breaks(lines: list[str], width: int) -> list[tuple[str, str]]:
    """Consecutive lines of one paragraph where the next line's first word would have fit on
    the line before it: a break the terminal's wrapping did not make (typer puts
    ``[required]`` and ``[default: ...]`` on a line of their own on purpose)."""
    found = []
    for line, after in itertools.pairwise(lines):
        if not line or not after or after.startswith("["):
            continue
        if len(line) + 1 + len(after.split()[0]) <= width:
            found.append((line, after))
    return found


def text_blocks(output: str) -> list[tuple[list[str], int]]:
    """The help's text as blocks of lines with the width they wrap at: the prose outside the
    panels, and each panel's last (help) column."""
    blocks: list[tuple[list[str], int]] = []
    prose: list[str] = []
    panel: list[str] = []
    for line in output.splitlines():
        if line.startswith("╭"):
            panel = []
        elif line.startswith("╰"):
            blocks.append(panel_column(panel))
        elif line.startswith("│"):
            panel.append(line)
        else:
            prose.append(line.strip())
    blocks.append((prose, WIDTH - 2))  # rich indents the prose by one column each side
    return blocks


def panel_column(rows: list[str]) -> tuple[list[str], int]:
    """A panel's help column, the rightmost: it starts where the last cell starts furthest
    right (a folded metavar's rows end in the metavar column)."""
    starts: set[int] = set()
    for row in rows:
        inner = row[1:-1].rstrip()
        cut = inner.rfind("  ")
        if cut > 0:
            starts.add(cut + 2)
    if not starts:
        return ([], WIDTH)
    start = max(starts)
    end = len(rows[0]) - 3  # the borders and the padding before the right one
    column: list[str] = []
    for row in rows:
        if row[1 : 1 + start].strip():
            column.append("")  # a new option or command starts a new paragraph
        column.append(row[1 + start : -1].strip() if row[start : start + 1] == " " else "")
    return (column, end - start)


@pytest.mark.parametrize("path", command_paths(), ids=lambda path: " ".join(path) or "blueprint")
def test_help_wraps_to_an_80_column_terminal_and_shows_no_bool_metavar(path: list[str]) -> None:
    done = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)}, terminal_width=WIDTH)
    assert done.exit_code == 0, done.output
    assert "<bool>" not in done.output
    assert max(len(line) for line in done.output.splitlines()) <= WIDTH
    for lines, width in text_blocks(done.output):
        assert hard_breaks(lines, width) == [], (path, width)


def test_the_harness_finds_a_hard_break() -> None:
    lines = ["an invalid set is not written (exit 1) unless", "--allow-invalid is given"]
    assert hard_breaks(lines, 78) != []
    assert hard_breaks(["an invalid set is not written", "(exit 1)"], 30) == []


def test_reflow_joins_paragraph_lines_and_keeps_laid_out_ones() -> None:
    text = (
        "First line\n    goes on.\n\n    Second\n    paragraph.\n\n    - a list\n    - stays"
        "\f\n    hidden"
    )
    assert reflow(text) == "First line goes on.\n\nSecond paragraph.\n\n- a list\n- stays\f\nhidden"
    assert reflow("\b\nkept\nas is") == "\b\nkept\nas is"
    assert reflow(None) is None
