"""The progress bar over large sets: on a terminal only, never with --quiet, never in a pipe."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.cli._common import PROGRESS_AFTER_ROWS, row_progress
from blueprint.formats import REGISTRY, WriteOptions
from conftest import row

HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "big"}


@pytest.fixture
def big_set(tmp_path: Path) -> Path:
    path = tmp_path / "big.jsonl"
    rows = (row(f"row-{n}") for n in range(PROGRESS_AFTER_ROWS + 1000))
    REGISTRY["jsonl"].write(HEADER, rows, path, WriteOptions())
    return path


def _read_within(path: Path, **options: object) -> tuple[int, str]:
    """Read every row of a set inside row_progress on a fake terminal: (rows, what it drew)."""
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    with row_progress(console=console, **options):  # type: ignore[arg-type]
        count = sum(1 for _ in REGISTRY["jsonl"].open(path).rows)
    return count, screen.getvalue()


def test_a_terminal_shows_the_rows_being_read(big_set: Path) -> None:
    count, drawn = _read_within(big_set)
    assert count == PROGRESS_AFTER_ROWS + 1000  # every row still comes through
    assert "reading big.jsonl" in drawn
    assert f"{PROGRESS_AFTER_ROWS:,} rows" in drawn


def test_quiet_draws_nothing(big_set: Path) -> None:
    count, drawn = _read_within(big_set, quiet=True)
    assert count == PROGRESS_AFTER_ROWS + 1000
    assert drawn == ""


def test_a_small_set_draws_nothing(tmp_path: Path) -> None:
    path = tmp_path / "small.jsonl"
    REGISTRY["jsonl"].write(HEADER, (row(f"r{n}") for n in range(50)), path, WriteOptions())
    count, drawn = _read_within(path)
    assert (count, "reading" in drawn) == (50, False)


def test_a_stderr_that_is_not_a_terminal_sees_no_bar(big_set: Path) -> None:
    result = CliRunner().invoke(app, ["validate", str(big_set)])
    assert result.exit_code == 0
    assert "reading" not in result.output
    assert "reading" not in (result.stderr if result.stderr_bytes is not None else "")


def test_rows_read_outside_a_command_are_not_watched(big_set: Path) -> None:
    source = REGISTRY["jsonl"].open(big_set)
    assert sum(1 for _ in source.rows) == PROGRESS_AFTER_ROWS + 1000
