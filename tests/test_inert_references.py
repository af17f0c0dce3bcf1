"""No URL is ever fetched and no code from a dataset ever run: references stay inert text.

The readers, the validator and the writers run here with network connections and every way
of starting a program made to fail, over promptfoo files full of URLs, python: and
javascript: assertions and file:// references to scripts that would leave a mark if run.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.core.errors import ParseError
from blueprint.formats import REGISTRY
from blueprint.validation.validate import validate_file

SCRIPT = "import pathlib; pathlib.Path(__file__).with_name('RAN').write_text('ran')\n"
JS = "require('fs').writeFileSync(__dirname + '/RAN', 'ran');\nmodule.exports = () => true;\n"

CONFIG = """\
description: inert
prompts: [file://prompt.py, "https://example.com/prompt.txt"]
providers: [https://example.com/v1, file://provider.py, python:provider.py, exec:./run.sh]
defaultTest:
  assert:
    - {type: webhook, value: "https://example.com/grade"}
tests:
  - file://cases.yaml
  - file://cases.csv
  - vars: {input: file://evil.py, doc: "https://example.com/doc.pdf", pkg: "package:evil:fn"}
    assert:
      - {type: python, value: file://evil.py}
      - {type: javascript, value: file://evil.js}
      - {type: python, value: "__import__('os').system('touch RAN')"}
      - {type: javascript, value: "require('child_process').execSync('touch RAN')"}
      - {type: equals, value: "https://example.com/answer"}
"""
CASES = """\
- vars: {input: "python:__import__('os').system('touch RAN')", file: file://evil.js}
  assert: [{type: contains, value: "javascript:process.exit(1)"}]
- vars: file://vars.py
  assert: [{type: equals, value: x}]
"""
CSV = (
    "question,__expected1,__expected2,__expected3\n"
    "q,python: __import__('os').system('touch RAN'),file://evil.py,file://evil.js\n"
)


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"a reader tried to reach the network or run a program: {args!r}")


@pytest.fixture
def sealed(monkeypatch: pytest.MonkeyPatch) -> None:
    """No connection can be made and no program started while the test runs."""
    monkeypatch.setattr(socket.socket, "connect", _refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", _refuse)
    monkeypatch.setattr(socket, "create_connection", _refuse)
    monkeypatch.setattr(socket, "getaddrinfo", _refuse)
    monkeypatch.setattr(subprocess, "Popen", _refuse)
    for name in ("system", "popen", "execv", "execve", "execvp", "posix_spawn", "fork"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, _refuse)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name in ("evil.py", "provider.py", "prompt.py", "vars.py"):
        (tmp_path / name).write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "evil.js").write_text(JS, encoding="utf-8")
    (tmp_path / "promptfooconfig.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "cases.yaml").write_text(CASES, encoding="utf-8")
    (tmp_path / "cases.csv").write_text(CSV, encoding="utf-8")
    return tmp_path


def test_references_are_read_as_text_and_nothing_is_fetched_or_run(
    folder: Path, sealed: None
) -> None:
    config = folder / "promptfooconfig.yaml"
    rows = list(data_rows(REGISTRY["promptfoo"].open(config)))
    assert len(rows) == 4
    assert {"input": "file://evil.py", "doc": "https://example.com/doc.pdf"}.items() <= next(
        row["input"] for row in rows if isinstance(row["input"], dict) and "doc" in row["input"]
    ).items()
    texts = repr(rows)
    for reference in ("file://evil.py", "https://example.com/doc.pdf", "package:evil:fn"):
        assert reference in texts  # kept, as text
    assert "import pathlib" not in texts  # no script's content was read in
    report = validate_file(config)
    assert not report.unreadable
    for target, name in (("out.json", "json"), ("out.yaml", "promptfoo")):
        options = ConvertOptions(
            source_format="promptfoo",
            target_format=name,
            allow_invalid=True,
            include_human_review=True,
        )
        convert(config, folder / target, options)
        assert list(data_rows(REGISTRY[name].open(folder / target)))
    assert not (folder / "RAN").exists()


@pytest.mark.parametrize(
    "reference",
    [
        "https://example.com/tests.yaml",
        "http://127.0.0.1:9/tests.csv",
        "huggingface://datasets/evil/tests",
        "https://docs.google.com/spreadsheets/d/abc/edit",
    ],
)
def test_a_tests_url_is_refused_not_fetched(folder: Path, sealed: None, reference: str) -> None:
    config = folder / "promptfooconfig.yaml"
    config.write_text(f"prompts: [p]\ntests:\n  - {reference}\n", encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        REGISTRY["promptfoo"].open(config)
    assert caught.value.line == 3 and "fetches nothing" in caught.value.reason


@pytest.mark.parametrize("generator", ["file://evil.py:create_tests", "file://evil.js"])
def test_a_test_generator_is_refused_not_run(folder: Path, sealed: None, generator: str) -> None:
    config = folder / "promptfooconfig.yaml"
    config.write_text(f"tests: {generator}\n", encoding="utf-8")
    with pytest.raises(ParseError, match="generator"):
        REGISTRY["promptfoo"].open(config)
    assert not (folder / "RAN").exists()
