"""The rendered blueprint in a real headless browser (Debian's chromium): it loads without
console errors, screenshots, and shows the counts ``blueprint summary --report json`` gives.

Skipped when chromium is absent, unless ``BLUEPRINT_CONFORMANCE=required`` (as CI sets it),
where a missing browser fails the test instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from conftest import EXAMPLES, document, row, write_json

runner = CliRunner()
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("BLUEPRINT_CONFORMANCE") == "required":
            pytest.fail("chromium is not installed but conformance tests are required")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def browse(chromium: str, page: Path, profile: Path, *options: str) -> tuple[str, list[str]]:
    """Load a page headless; returns what chromium printed and the console messages it logged."""
    command = [
        chromium,
        "--headless",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *(["--no-sandbox"] if os.geteuid() == 0 else []),
        *options,
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [
        line for line in done.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line
    ]
    return done.stdout, console


class KeyedCounts(HTMLParser):
    """The text of every element carrying a data-key (a JSON path into the summary)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[list[Any], str]] = []
        self._open: tuple[str, list[Any], list[str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        key = dict(attrs).get("data-key")
        if key is not None:
            self._open = (tag, json.loads(key), [])

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[2].append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open is not None and self._open[0] == tag:
            self.found.append((self._open[1], "".join(self._open[2]).strip()))
            self._open = None


def resolve(data: Any, path: list[Any]) -> Any:
    for part in path:
        data = data[part]
    return data


def starter_set(folder: Path) -> Path:
    target = folder / "starter.json"
    done = runner.invoke(
        app, ["new", "customer-support", "--overlay", "finance", "-o", str(target)]
    )
    assert done.exit_code == 0, done.output
    return target


def test_the_harness_sees_console_errors(chromium: str, tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text('<!doctype html><script>throw new Error("boom")</script>', encoding="utf-8")
    _, console = browse(chromium, page, tmp_path / "profile", "--dump-dom")
    assert any("boom" in line for line in console)


@pytest.mark.parametrize("example", ["support-refunds", "refunds-dev", "refunds-test", "starter"])
def test_the_page_loads_cleanly_and_its_counts_are_the_summarys(
    chromium: str, example: str, tmp_path: Path
) -> None:
    source = starter_set(tmp_path) if example == "starter" else EXAMPLES / f"{example}.json"
    page = tmp_path / "b.html"
    done = runner.invoke(app, ["render", str(source), "-o", str(page)])
    assert done.exit_code == 0, done.output
    summary = runner.invoke(app, ["summary", str(source), "--report", "json"])
    assert summary.exit_code == 0
    expected = json.loads(summary.stdout)

    dom, console = browse(chromium, page, tmp_path / "profile", "--dump-dom")
    assert console == []
    parser = KeyedCounts()
    parser.feed(dom)
    keys = [tuple(map(str, path)) for path, _ in parser.found]
    assert ("rows",) in keys and ("risk", "cells", "R2", "B0") in keys
    assert any(key[0] == "families" for key in keys) and any(key[0] == "exports" for key in keys)
    for path, text in parser.found:
        assert int(text) == resolve(expected, path), path
    if example == "starter":
        assert dom.count("not validated gold") >= expected["provenanceMix"]["starter"]


@pytest.mark.parametrize("size", ["390,844", "1280,900"])
def test_a_screenshot_is_taken(chromium: str, size: str, tmp_path: Path) -> None:
    page = tmp_path / "b.html"
    done = runner.invoke(app, ["render", str(EXAMPLES / "support-refunds.json"), "-o", str(page)])
    assert done.exit_code == 0
    shot = tmp_path / "shot.png"
    _, console = browse(
        chromium, page, tmp_path / "profile", f"--screenshot={shot}", f"--window-size={size}"
    )
    assert console == []
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000


def test_markup_in_a_row_stays_text_in_the_browser(chromium: str, tmp_path: Path) -> None:
    hostile = row("x", linkedConcerns=["<b>bold</b>"])
    hostile["input"] = '<script>console.error("injected")</script><img src=x onerror="alert(1)">'
    hostile["metadata"]["case"]["expectedBehavior"] = "</td></tr></table><script>x()</script>"
    source = write_json(tmp_path / "set.json", document(hostile, description="<i>set</i>"))
    page = tmp_path / "b.html"
    assert runner.invoke(app, ["render", str(source), "-o", str(page)]).exit_code == 0
    dom, console = browse(chromium, page, tmp_path / "profile", "--dump-dom")
    assert console == []
    assert "<script>" not in dom and "<img" not in dom
    assert "&lt;script&gt;console.error" in dom
