"""blueprint studio as a user starts it: a real process that serves on loopback, prints its
address and stops on Ctrl+C; beyond loopback it prints a token every request needs; what it
cannot serve is a usage error (exit 2), never a traceback."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from typer.testing import CliRunner

from blueprint.cli import app
from conftest import EXAMPLES, sigint_as_from_a_terminal

runner = CliRunner()
ADDRESS = re.compile(r"Blueprint Studio on (http://\S+)")


@contextmanager
def studio_process(*arguments: str, cwd: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``blueprint studio`` started as a user starts it; yields the address it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "blueprint", "studio", *arguments],
        cwd=cwd,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        preexec_fn=sigint_as_from_a_terminal,
    )
    assert process.stderr is not None
    printed: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                break
            printed.append(line)
            found = ADDRESS.search(line)
            if found:
                yield found.group(1), process
                return
        raise AssertionError("the studio printed no address:\n" + "".join(printed))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_it_serves_the_example_on_loopback_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    with studio_process(str(EXAMPLES / "support-refunds.json"), "--port", "0", cwd=tmp_path) as (
        url,
        process,
    ):
        assert url.startswith("http://127.0.0.1:")
        status, page = fetch(url + "sets/1/rows")
        assert status == 200
        assert "cs-refund-window-quote" in page
        process.send_signal(signal.SIGINT)
        # stopped by a signal, as every command is: 128 + SIGINT, after a clean shutdown
        assert process.wait(timeout=20) == 128 + signal.SIGINT


def test_beyond_loopback_it_prints_a_token_that_every_request_needs(tmp_path: Path) -> None:
    example = EXAMPLES / "support-refunds.json"
    with studio_process(str(example), "--host", "0.0.0.0", "--port", "0", cwd=tmp_path) as (
        url,
        _,
    ):
        token = re.search(r"\?token=(\S+)", url)
        assert token is not None
        port = re.search(r":(\d+)/", url)
        assert port is not None
        local = f"http://127.0.0.1:{port.group(1)}/"
        assert fetch(local)[0] == 401
        assert fetch(local + "?token=wrong")[0] == 401
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        with opener.open(local + "?token=" + token.group(1), timeout=20) as response:
            assert response.status == 200
            assert "support-refunds" in response.read().decode()


def test_what_it_cannot_serve_is_a_usage_error(tmp_path: Path) -> None:
    os.chdir(tmp_path)  # no blueprint.toml here, so no project sets
    try:
        nothing = runner.invoke(app, ["studio"])
        assert nothing.exit_code == 2
        missing = runner.invoke(app, ["studio", str(tmp_path / "absent.json")])
        assert missing.exit_code == 2
        example = str(EXAMPLES / "support-refunds.json")
        bad = tmp_path / "judged.csv"
        bad.write_text("caseId,output\ncs-refund-window-quote,hello\n", encoding="utf-8")
        unreadable = runner.invoke(app, ["studio", example, "--judge-results", str(bad)])
        assert unreadable.exit_code == 2
        assert "Traceback" not in unreadable.output
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = str(taken.getsockname()[1])
            busy = runner.invoke(app, ["studio", example, "--port", port])
            assert busy.exit_code == 2
    finally:
        os.chdir(Path(__file__).parent.parent)
