"""Conformance tests run the real vendor tools against our exports, offline.

They need the vendor extras (``pip install -e ".[conformance]"``) and, for promptfoo, the npm
package (``BLUEPRINT_PROMPTFOO`` names its executable). Where a tool is missing the test is
skipped, unless ``BLUEPRINT_CONFORMANCE=required`` (as CI sets it), where it fails instead.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

QUIET_ENV = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "LANGSMITH_TRACING": "false",
    "BRAINTRUST_DISABLE_ATEXIT_FLUSH": "1",
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "PROMPTFOO_DISABLE_REMOTE_GENERATION": "1",
    # anything that still tries the network meets a closed port on this machine
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "",
}


def required() -> bool:
    return os.environ.get("BLUEPRINT_CONFORMANCE") == "required"


def vendor(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        if required():
            pytest.fail(f"{module} is not installed but conformance tests are required")
        pytest.skip(f"{module} is not installed (pip install -e '.[conformance]')")
        raise


def openai_evals_python() -> str:
    """The Python of the environment that has the openai/evals package (``.ci/run`` builds
    one and names it in BLUEPRINT_OPENAI_EVALS_PYTHON)."""
    python = os.environ.get("BLUEPRINT_OPENAI_EVALS_PYTHON")
    if not python:
        message = "set BLUEPRINT_OPENAI_EVALS_PYTHON to a Python with the evals package"
        if required():
            pytest.fail(message)
        pytest.skip(message)
    return python


@pytest.fixture(autouse=True)
def quiet_vendors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key, value in QUIET_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("DEEPEVAL_HOME", str(tmp_path / "deepeval-home"))
    monkeypatch.setenv("PROMPTFOO_CONFIG_DIR", str(tmp_path / "promptfoo-home"))


@pytest.fixture
def promptfoo() -> str:
    executable = os.environ.get("BLUEPRINT_PROMPTFOO") or shutil.which("promptfoo")
    if not executable or not Path(executable).exists():
        if required():
            pytest.fail("promptfoo is not installed but conformance tests are required")
        pytest.skip("promptfoo is not installed (set BLUEPRINT_PROMPTFOO)")
    return str(executable)


def promptfoo_eval(promptfoo: str, config: Path) -> dict[str, Any]:
    """Run a promptfoo config offline (its providers as written); the results file's
    ``results`` object (``results["results"]`` holds one entry per test and prompt)."""
    results = config.with_name(f".results-{config.stem}.json")
    results.unlink(missing_ok=True)
    completed = subprocess.run(
        [
            promptfoo,
            "eval",
            "-c",
            str(config),
            "--no-cache",
            "--no-share",
            "--no-write",
            "-o",
            str(results),
        ],
        cwd=config.parent,
        capture_output=True,
        # promptfoo's progress table can end in the middle of a character when it exits
        # (a pipe's last write cut short); only the results file is read, the rest is shown
        encoding="utf-8",
        errors="replace",
        timeout=600,
        env=os.environ.copy(),
    )
    # exit 100: some assertions failed, which is what several tests look for; exit 1 also
    # comes after a complete run when an assertion needed a model that is not there (no API
    # key offline), depending on timing, so the results file decides
    output = completed.stdout[-3000:] + completed.stderr[-3000:]
    assert completed.returncode in (0, 1, 100), output
    assert results.is_file(), output
    return json.loads(results.read_text(encoding="utf-8"))["results"]
