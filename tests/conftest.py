"""Shared fixtures: the awkward set stored in every canonical format, and builders for rows."""

from __future__ import annotations

import copy
import json
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=100
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=200)
settings.load_profile("default")


def with_files(examples: int) -> settings:
    """Settings of a property test that writes files in a folder of its own each example
    (``tmp_path_factory``): ``examples`` of them, no deadline."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


FIXTURES = Path(__file__).parent / "fixtures"
EXAMPLES = Path(__file__).parent.parent / "examples"

#: vendor fixtures kept beside a format that are another format's content, and that format:
#: DeepEval's community example writes its answers under Braintrust's ``expected``, which
#: DeepEval's loader drops, so ``--from deepeval`` refuses it and Braintrust reads it whole
READ_AS_ANOTHER_FORMAT = {
    FIXTURES / "native/deepeval/public/deepeval-example-chatbot-evaluation/dataset.json": (
        "braintrust"
    ),
}


def sigint_as_from_a_terminal() -> None:
    """For ``preexec_fn``: the child takes Ctrl-C as a terminal's command does, whatever the
    test run inherited. A shell that starts a job in the background without job control
    ignores SIGINT for it, and a Python started with SIGINT ignored never turns it into
    KeyboardInterrupt: a test that sends Ctrl-C would see the command run on to the end."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def case(row_id: str, oracle_type: str = "reference-answer", **fields: Any) -> dict[str, Any]:
    return {
        "caseId": row_id,
        "oracleType": oracle_type,
        "expectedBehavior": "answers with the published policy",
        "provenance": "expert-authored",
        **fields,
    }


def row(
    row_id: str, oracle_type: str = "reference-answer", *, expected: Any = "yes", **fields: Any
) -> dict[str, Any]:
    """A valid row of the given oracle type; keyword arguments go into the case profile."""
    data: dict[str, Any] = {"id": row_id, "input": f"question for {row_id}"}
    if oracle_type not in ("rubric", "expected-behavior-only"):
        data["expected"] = expected
    data["metadata"] = {"case": case(row_id, oracle_type, **fields)}
    return data


def document(*rows: dict[str, Any], **header: Any) -> dict[str, Any]:
    return {
        "schemaVersion": "blueprint.eval-set/v1",
        "name": "test-set",
        **header,
        "rows": list(rows),
    }


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def awkward_set() -> dict[str, Any]:
    """The shared fixture set: every oracle type, awkward strings, set-level fields."""
    return copy.deepcopy(load_json(FIXTURES / "awkward" / "awkward.json"))


@pytest.fixture
def example_path() -> Path:
    return EXAMPLES / "support-refunds.json"


def git(folder: Path, *args: str) -> str:
    """Run git in a test repository, with an author, and return what it printed."""
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def private_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary folder of the test's own, where scratch files and folders go."""
    folder = tmp_path / "temporary"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def left_behind() -> list[str]:
    """What Blueprint left in the temporary folder (its scratch files and folders)."""
    folder = Path(tempfile.gettempdir())
    return [entry.name for entry in folder.iterdir() if entry.name.startswith("blueprint-")]
