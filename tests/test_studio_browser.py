"""Blueprint Studio in a real browser: Playwright driving Debian's chromium (no browser
download) against a studio served by uvicorn on loopback.

The tests filter, edit a row into an error and out of it, save (and compare the file with what
``blueprint edit`` writes), promote with a reviewer, label 30 judge outputs by keyboard until
the report passes, and raise a conflict from a second page. Every page they open is checked
for console errors, for requests that leave loopback, and by axe-core for serious
accessibility violations; phone and desktop screenshots are saved (into
``$BLUEPRINT_SCREENSHOTS`` when set, as docs/studio.md's are made).

Skipped without chromium or Playwright, unless ``BLUEPRINT_CONFORMANCE=required`` (as CI sets
it), where their absence fails instead.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from blueprint.cli import app as cli_app
from blueprint.studio.server import StudioOptions, bind, build_studio
from curation_sets import rows_of
from studio_sets import JUDGED, judge_label, judge_results, studio_set

runner = CliRunner()
DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


def _required() -> bool:
    return os.environ.get("BLUEPRINT_CONFORMANCE") == "required"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if _required():
            pytest.fail("chromium is not installed but conformance tests are required")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if _required():
            pytest.fail("playwright is not installed but conformance tests are required")
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("BLUEPRINT_SCREENSHOTS", tmp_path / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass
class Served:
    url: str
    set_path: Path
    thread: threading.Thread
    server: Any


@dataclass
class Watch:
    """What a page did that it must not: console errors, uncaught errors, and requests to
    anywhere but the studio."""

    origin: str
    errors: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)

    def attach(self, page: Any) -> Any:
        page.on(
            "console",
            lambda message: self.errors.append(message.text) if message.type == "error" else None,
        )
        page.on("pageerror", lambda error: self.errors.append(str(error)))

        def seen(request: Any) -> None:
            parts = urlsplit(request.url)
            if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname != "127.0.0.1":
                self.elsewhere.append(request.url)

        page.on("request", seen)
        return page

    def clean(self, expected_status: int | None = None) -> None:
        """No console errors, except chromium's note of a status the test asked for (the
        409 of a refused save is the answer, not a fault); no request left loopback."""
        note = f"the server responded with a status of {expected_status}"
        assert [
            error for error in self.errors if expected_status is None or note not in error
        ] == []
        assert self.elsewhere == []


def serve(folder: Path, **options: Any) -> Served:
    import uvicorn

    set_path = studio_set(folder)
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    _, app = build_studio(StudioOptions(sets=[set_path], root=folder, **options), port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    return Served(f"http://127.0.0.1:{port}", set_path, thread, server)


@pytest.fixture
def studio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    monkeypatch.chdir(tmp_path)  # paths on the pages read as a user started it there
    served = serve(tmp_path, judge_results=judge_results(tmp_path))
    yield served
    served.server.should_exit = True
    served.thread.join(timeout=10)


def serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']}: {v['help']} ({len(v['nodes'])} node(s))"
        for v in found
        if v.get("impact") in ("serious", "critical")
    ]


def shoot(page: Any, folder: Path, name: str, show: str | None = None) -> None:
    """Screenshots at desktop and phone width; ``show`` is a selector to scroll into view."""
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        if show is not None:
            page.locator(show).first.scroll_into_view_if_needed()
        target = folder / f"studio-{name}-{label}.png"
        page.screenshot(path=str(target), full_page=False)
        assert target.read_bytes().startswith(b"\x89PNG")
    page.set_viewport_size(DESKTOP)


def test_filter_edit_into_an_error_and_out_save_as_the_command_does(
    browser: Any, studio: Served, shots: Path, tmp_path: Path
) -> None:
    context = browser.new_context(viewport=DESKTOP)
    watch = Watch(studio.url)
    page = watch.attach(context.new_page())
    page.goto(studio.url + "/")
    assert serious(page) == []
    shoot(page, shots, "sets")
    page.get_by_role("link", name="studio-set").click()
    page.get_by_role("link", name="Browse rows").click()
    page.get_by_label("Oracle type").select_option("reference-answer")
    page.get_by_label("Case family").select_option("lookup")
    page.get_by_role("button", name="Filter").click()
    listed = page.locator("table.rows tbody tr")
    assert listed.count() == 4
    assert serious(page) == []
    shoot(page, shots, "rows")
    page.get_by_role("link", name="lookup-1", exact=True).click()
    # the row's page, loaded, owns the key: pressed before, it reaches the list page
    page.wait_for_url("**/rows/lookup-1**")
    page.keyboard.press("e")  # the edit key
    page.wait_for_url("**/edit/lookup-1**")
    # an evaluator the family does not name: the validator's finding appears as typed
    page.get_by_label("Evaluator", exact=True).select_option("llm-judge")
    findings = page.locator("#check")
    findings.get_by_text("case-family-mismatch").wait_for()
    assert serious(page) == []
    shoot(page, shots, "edit")
    page.get_by_label("Evaluator", exact=True).select_option("exact-or-programmatic")
    page.get_by_label("Scenario").fill("A shopper asks before buying")
    findings.get_by_text("No findings.").wait_for()
    findings.get_by_text('"scenario": "A shopper asks before buying"').wait_for()  # the diff
    page.get_by_label("Scenario").press("Control+Enter")  # save
    page.get_by_role("status").get_by_text("Saved to the file").wait_for()
    assert "lookup-1" in page.url
    # the same edit by the command, on a copy of the set as it was
    copy = tmp_path / "cli" / "studio.json"
    copy.parent.mkdir()
    studio_set(copy.parent)
    done = runner.invoke(
        cli_app,
        [
            "edit",
            str(copy),
            "lookup-1",
            "--text",
            "metadata.case.scenario=A shopper asks before buying",
            "--text",
            "metadata.case.evaluator=exact-or-programmatic",
        ],
    )
    assert done.exit_code == 0, done.output
    assert studio.set_path.read_bytes() == copy.read_bytes()
    watch.clean()
    context.close()


def test_promote_a_starter_row_with_a_reviewer(browser: Any, studio: Served, shots: Path) -> None:
    context = browser.new_context(viewport=DESKTOP)
    watch = Watch(studio.url)
    page = watch.attach(context.new_page())
    page.goto(studio.url + "/queues/starter")
    page.get_by_role("link", name="starter-1").click()
    assert serious(page) == []
    shoot(page, shots, "row")
    page.get_by_label("Reviewer (your name)").fill("Dr. Rivera")
    page.get_by_role("button", name="Promote to gold").click()
    page.get_by_role("status").get_by_text("Promoted").wait_for()
    case = rows_of(studio.set_path)["starter-1"]["metadata"]["case"]
    assert case["provenance"] == "expert-authored"
    assert case["extensions"]["blueprint-review"]["reviewer"] == "Dr. Rivera"
    assert case["extensions"]["blueprint-review"]["previousProvenance"] == "starter-example"
    watch.clean()
    context.close()


def test_label_thirty_outputs_by_keyboard_until_the_report_passes(
    browser: Any, studio: Served, shots: Path
) -> None:
    context = browser.new_context(viewport=DESKTOP)
    watch = Watch(studio.url)
    page = watch.attach(context.new_page())
    page.goto(studio.url + "/judge")
    page.get_by_label("Your name (rater)").fill("alice")
    page.get_by_role("button", name="Start labelling").click()
    page.get_by_text("alice has labelled 0 of 30").wait_for()
    assert serious(page) == []
    shoot(page, shots, "judge")
    for number in range(1, JUDGED + 1):
        heading = page.get_by_role("heading", name=f"Case tone-{number:02d}")
        heading.wait_for()
        assert page.get_by_text("The judge said").count() == 0  # blind by default
        page.keyboard.press("p" if judge_label(number) == "pass" else "f")
        page.wait_for_load_state()
    page.get_by_text("alice has labelled 30 of 30").wait_for()
    report = page.locator("section.report")
    assert report.locator("strong.verdict").first.inner_text() == "pass"
    assert serious(page) == []
    shoot(page, shots, "judge-report", show="section.report")
    page.get_by_role("button", name="Write the report").click()
    page.get_by_role("status").get_by_text("The judge report is written").wait_for()
    labels = studio.set_path.parent / "judged.labels.csv"
    made = runner.invoke(cli_app, ["judge-report", str(labels), "--set", str(studio.set_path)])
    assert made.exit_code == 0
    validated = runner.invoke(cli_app, ["validate", str(studio.set_path), "--report", "json"])
    assert '"judge-validated"' in validated.stdout
    watch.clean()
    context.close()


def test_a_save_from_a_stale_second_page_is_a_conflict(browser: Any, studio: Served) -> None:
    context = browser.new_context(viewport=DESKTOP)
    watch = Watch(studio.url)
    first, second = watch.attach(context.new_page()), watch.attach(context.new_page())
    for page in (first, second):
        page.goto(studio.url + "/sets/1/edit/lookup-1")
    first.get_by_label("Scenario").fill("from the first tab")
    first.get_by_role("button", name="Save to studio.json").click()
    first.get_by_role("status").get_by_text("Saved to the file").wait_for()
    second.get_by_label("Scenario").fill("from the second tab")
    second.get_by_role("button", name="Save to studio.json").click()
    alert = second.get_by_role("alert").filter(has_text="the row changed")
    alert.wait_for()
    assert second.get_by_label("Scenario").input_value() == "from the second tab"
    assert "from the first tab" in second.locator("section pre").first.inner_text()
    assert rows_of(studio.set_path)["lookup-1"]["metadata"]["case"]["scenario"] == (
        "from the first tab"
    )
    assert serious(second) == []
    watch.clean(expected_status=409)
    context.close()


def test_a_save_leaves_the_fields_it_did_not_touch_as_they_were(
    browser: Any, studio: Served
) -> None:
    context = browser.new_context(viewport=DESKTOP)
    watch = Watch(studio.url)
    page = watch.attach(context.new_page())
    before = rows_of(studio.set_path)["multiline-1"]
    page.goto(studio.url + "/sets/1/edit/multiline-1")
    page.get_by_label("Scenario").fill("typed in a browser")
    page.get_by_role("button", name="Save to studio.json").click()
    page.get_by_role("status").get_by_text("Saved to the file").wait_for()
    after = rows_of(studio.set_path)["multiline-1"]
    assert after["metadata"]["case"].pop("scenario") == "typed in a browser"
    assert after == before  # the leading newline, the two-line actor: all as they were
    watch.clean()
    context.close()


def test_pages_at_phone_width_keep_every_control_usable(browser: Any, studio: Served) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    watch = Watch(studio.url)
    page = watch.attach(context.new_page())
    for path in ("/", "/sets/1/rows", "/sets/1/edit/lookup-1", "/judge"):
        page.goto(studio.url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"] + 1, path  # nothing runs off the side
        assert serious(page) == []
    watch.clean()
    context.close()
