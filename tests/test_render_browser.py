"""The rendered blueprint in a real headless browser (Debian's chromium): it loads without
console errors, screenshots, and shows the counts ``blueprint summary --report json`` gives.

Skipped when chromium is absent, unless ``BLUEPRINT_CONFORMANCE=required`` (as CI sets it),
where a missing browser fails the test instead.
"""

from __future__ import annotations

import base64
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


class DevTools:
    """Chromium driven over the DevTools protocol on a pipe (fds 3 and 4, no port opened):
    the only way to lay a page out at a phone's 390 px, as headless windows are 500 px at
    least, and to measure it without putting a script into the page."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_child, self._to_browser = os.pipe()
        self._from_browser, from_child = os.pipe()

        def plumb() -> None:
            # dup first: the pipe ends may themselves be fds 3 and 4
            reading, writing = os.dup(to_child), os.dup(from_child)
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        self._process = subprocess.Popen(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=plumb,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._sent = 0
        self._events: list[dict[str, Any]] = []
        self._session: str | None = None

    def __enter__(self) -> DevTools:
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self.call("Browser.close", page=False)
        except (OSError, RuntimeError):
            self._process.kill()
        self._process.wait(timeout=60)
        os.close(self._to_browser)
        os.close(self._from_browser)

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        received: dict[str, Any] = json.loads(message)
        return received

    def call(self, method: str, page: bool = True, **params: Any) -> dict[str, Any]:
        self._sent += 1
        message: dict[str, Any] = {"id": self._sent, "method": method, "params": params}
        if page and self._session is not None:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            received = self._receive()
            if received.get("id") == self._sent:
                assert "error" not in received, received
                result: dict[str, Any] = received["result"]
                return result
            self._events.append(received)

    def wait_for(self, method: str) -> None:
        while not any(event.get("method") == method for event in self._events):
            self._events.append(self._receive())

    def open_phone(self, page: Path, width: int = 390, height: int = 844) -> None:
        target = self.call("Target.createTarget", page=False, url="about:blank")
        attached = self.call(
            "Target.attachToTarget", page=False, targetId=target["targetId"], flatten=True
        )
        self._session = attached["sessionId"]
        self.call("Page.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=True,
        )
        self.call("Page.navigate", url=page.as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"][
            "value"
        ]

    def screenshot(self, target: Path) -> None:
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        target.write_bytes(base64.b64decode(shot["data"]))


# What overflows the page sideways, and every id that a line break cut in two (its text
# lies on more than one line). Content of a .scroll
# box may be wider than the screen: that box scrolls, the page does not.
PHONE_MEASURE = """(() => {
  const width = window.innerWidth;
  const wider = [];
  for (const element of document.querySelectorAll("body *")) {
    const box = element.closest(".scroll");
    if (box && box !== element) continue;
    if (element.getBoundingClientRect().right > width + 0.5) {
      wider.push(element.outerHTML.slice(0, 80));
    }
  }
  const lines = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    return new Set([...range.getClientRects()].map((rect) => Math.round(rect.bottom))).size;
  };
  const broken = [...document.querySelectorAll("table code, .id")]
    .filter((element) => lines(element) > 1)
    .map((element) => element.textContent.trim());
  return {width, document: document.documentElement.scrollWidth,
          body: document.body.scrollWidth, wider, broken};
})()"""


def long_ids_set(folder: Path) -> Path:
    """Ids with hyphens to break at, and one longer than a phone is wide."""
    long = "a-case-family-id-much-longer-than-any-phone-screen-is-wide-" * 2
    rows = [
        row("policy-lookup-001", caseFamily="policy-lookup", linkedConcerns=[long]),
        row(long + "row", caseFamily=long.rstrip("-")),
    ]
    families = [
        {"id": "policy-lookup", "oracleType": "reference-answer"},
        {"id": long.rstrip("-"), "oracleType": "reference-answer"},
    ]
    return write_json(folder / "long.json", document(*rows, caseFamilies=families))


def judge_report_page(folder: Path) -> Path:
    page = folder / "judge.html"
    done = runner.invoke(
        app,
        [
            "judge-report",
            str(EXAMPLES / "support-judged-labels.csv"),
            "--set",
            str(EXAMPLES / "support-judged.json"),
            "-o",
            str(page),
            "--resamples",
            "200",
        ],
    )
    assert done.exit_code in (0, 1), done.output
    return page


# every bundled example set (a .judge.json is a judge report, not a set), a pack's starter set,
# ids too long for the screen, and the judge report's own page
PHONE_PAGES = [
    *sorted(path.stem for path in EXAMPLES.glob("*.json") if ".judge" not in path.suffixes),
    "starter",
    "long-ids",
    "judge-report",
]


@pytest.mark.parametrize("example", PHONE_PAGES)
def test_a_phone_wide_page_does_not_overflow_and_keeps_ids_whole(
    chromium: str, example: str, tmp_path: Path
) -> None:
    if example == "judge-report":
        page = judge_report_page(tmp_path)
    else:
        if example == "starter":
            source = starter_set(tmp_path)
        elif example == "long-ids":
            source = long_ids_set(tmp_path)
        else:
            source = EXAMPLES / f"{example}.json"
        page = tmp_path / "b.html"
        done = runner.invoke(app, ["render", str(source), "-o", str(page)])
        assert done.exit_code == 0, done.output
    shot = tmp_path / "phone.png"
    with DevTools(chromium, tmp_path / "profile") as browser:
        browser.open_phone(page)
        measured = browser.evaluate(PHONE_MEASURE)
        browser.screenshot(shot)
    assert measured["width"] == 390
    assert measured["document"] <= measured["width"], measured["wider"]
    assert measured["body"] <= measured["width"], measured["wider"]
    assert measured["wider"] == []
    assert measured["broken"] == []
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
    if directory := os.environ.get("BLUEPRINT_SCREENSHOTS"):
        shutil.copy(shot, Path(directory) / f"phone-{example}.png")
