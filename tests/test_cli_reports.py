"""blueprint summary, risk and render: stdout for reports, exit codes, -o and --force."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from blueprint.cli import app
from conftest import EXAMPLES, document, row, write_json

runner = CliRunner()
EXAMPLE = EXAMPLES / "support-refunds.json"


def run(*args: Any):
    return runner.invoke(app, [str(a) for a in args])


def risky_set(folder: Path, *, guarded: bool) -> Path:
    safeguards = {"escalationExpectation": "hand off", "reviewerExpertise": "payments"}
    rows = [
        row("wire", reversibility="R3", blastRadius="B3", **(safeguards if guarded else {})),
        row("note", reversibility="R0", blastRadius="B0"),
    ]
    return write_json(folder / "set.json", document(*rows))


def test_summary_json_is_all_that_stdout_holds() -> None:
    done = run("summary", EXAMPLE, "--report", "json", "--no-exports")
    assert done.exit_code == 0
    data = json.loads(done.stdout)
    assert data["rows"] == 8 and data["exports"] is None and data["risk"]["rows"] == 8


def test_summary_text_and_markdown_go_to_stdout() -> None:
    text = run("summary", EXAMPLE, "--no-exports")
    assert text.exit_code == 0 and "rows by oracle type" in text.stdout
    assert "cs-escalate-chargeback-threat" in text.stdout  # the retired case, listed apart
    markdown = run("summary", EXAMPLE, "--report", "markdown", "--no-exports")
    assert markdown.exit_code == 0 and markdown.stdout.startswith("# support-refunds")
    assert "## Action risk" in markdown.stdout and "| case | input |" not in markdown.stdout


def test_summary_to_a_file_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    assert run("summary", EXAMPLE, "--report", "json", "-o", target, "--no-exports").exit_code == 0
    assert json.loads(target.read_text(encoding="utf-8"))["rows"] == 8
    again = run("summary", EXAMPLE, "--report", "json", "-o", target, "--no-exports")
    assert again.exit_code == 2
    assert json.loads(again.stdout)["exitCode"] == 2
    forced = run("summary", EXAMPLE, "-o", target, "--force", "--no-exports")
    assert forced.exit_code == 0 and "rows by oracle type" in target.read_text(encoding="utf-8")


def test_summary_of_an_unreadable_file_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "set.json"
    broken.write_text("{", encoding="utf-8")
    done = run("summary", broken, "--report", "json")
    assert done.exit_code == 2 and "exitCode" in json.loads(done.stdout)


def test_risk_fails_on_gaps_only_when_asked(tmp_path: Path) -> None:
    unguarded = risky_set(tmp_path, guarded=False)
    assert run("risk", unguarded).exit_code == 0
    failing = run("risk", unguarded, "--fail-on-gaps", "--report", "json")
    assert failing.exit_code == 1
    data = json.loads(failing.stdout)
    assert data["gapCount"] == 1 and data["gaps"][0]["id"] == "wire"
    assert data["cells"]["R3"]["B3"] == 1
    guarded = tmp_path / "guarded"
    guarded.mkdir()
    assert run("risk", risky_set(guarded, guarded=True), "--fail-on-gaps").exit_code == 0


def test_risk_markdown() -> None:
    done = run("risk", EXAMPLE, "--report", "markdown")
    assert done.exit_code == 0 and "| **R2** needs a compensating operation | 2 |" in done.stdout


def test_render_writes_html_or_markdown_and_refuses_others(tmp_path: Path) -> None:
    page = tmp_path / "b.html"
    assert run("render", EXAMPLE, "-o", page).exit_code == 0
    assert page.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert run("render", EXAMPLE, "-o", page).exit_code == 2
    assert run("render", EXAMPLE, "-o", page, "--force").exit_code == 0
    markdown = tmp_path / "b.md"
    assert run("render", EXAMPLE, "-o", markdown).exit_code == 0
    assert "| case | input |" in markdown.read_text(encoding="utf-8")
    assert run("render", EXAMPLE, "-o", tmp_path / "b.pdf").exit_code == 2
    assert not (tmp_path / "b.pdf").exists()
    assert run("render", EXAMPLE, "-o", page, "--force", "--rows-per-family", "-1").exit_code == 2
