"""What a dataset holds never reaches a person's terminal as control characters."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.cli._common import escape
from conftest import document, row, write_json

runner = CliRunner()
#: a colour change, a clipboard write (OSC 52), a cursor move and a right-to-left override
HOSTILE = "evil\x1b[31mred\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\u202eoops"


def test_escape_shows_control_characters_as_codes() -> None:
    shown = escape(HOSTILE)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert "\\x1b" in shown and "\\u202e" in shown
    assert escape("tab\tand\nnewline [b]") == "tab\tand\nnewline \\[b]"


def hostile_set(tmp_path: Path) -> Path:
    bad = row(HOSTILE, caseId="other")  # a finding that names the id
    bad["metadata"]["case"]["evaluator"] = "exact-or-programmatic"
    return write_json(tmp_path / "set.json", document(bad, row("plain")))


def test_no_command_prints_a_control_character(tmp_path: Path) -> None:
    path = hostile_set(tmp_path)
    other = write_json(tmp_path / "other.json", document(row("plain")))
    for args in (
        ["validate", path],
        ["validate", path, "--statistics"],
        ["check", path],
        ["diff", path, other],
        ["rm", path, HOSTILE, "--dry-run"],
        ["dedupe", path, other],
    ):
        result = runner.invoke(app, [str(a) for a in args])
        assert result.exit_code in (0, 1, 2), (args, result.output)
        for stream in (result.stdout, result.stderr):
            assert "\x1b" not in stream and "\x07" not in stream, args
            assert "\u202e" not in stream, args
