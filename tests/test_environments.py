"""The console script in odd environments and with odd arguments: an encoding that cannot spell
the data, a C locale, no colour, a 20-column terminal, paths that name folders or nothing. None
of them may end in an internal error (exit 3) or a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import document, row, write_json

EXAMPLES = int(os.environ.get("BLUEPRINT_FUZZ_EXAMPLES", "40"))

#: the environments a command may meet, on top of the test runner's own
ENVIRONMENTS: dict[str, dict[str, str]] = {
    "ascii": {"PYTHONIOENCODING": "ascii"},
    "latin-1": {"PYTHONIOENCODING": "latin-1"},
    "c-locale": {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""},
    "no-color": {"NO_COLOR": "1", "TERM": "dumb"},
    "narrow": {"COLUMNS": "20"},
    "force-color": {"FORCE_COLOR": "1", "COLUMNS": "20"},
}
#: ids and text no single-byte encoding holds
IDS = ("café-1", "naïve-2", "日本-3", "emoji-😀-4")


def blueprint(
    arguments: list[str], cwd: Path, environment: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(environment)
    env = {key: value for key, value in env.items() if value}
    return subprocess.run(
        [sys.executable, "-m", "blueprint", *arguments],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )


def assert_clean(result: subprocess.CompletedProcess[bytes]) -> None:
    stderr = result.stderr.decode("utf-8", "replace")
    assert result.returncode in (0, 1, 2), (result.args, result.returncode, stderr)
    assert "Traceback" not in stderr, stderr
    assert "internal error" not in stderr, stderr


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder with a valid set of non-ASCII ids, and a changed copy of it."""
    base = tmp_path_factory.mktemp("environments")
    rows = [row(key, expected=f"answer ü {key}") for key in IDS]
    write_json(base / "set.json", document(*rows, name="ünïcode"))
    changed = [*rows[:-1], row(IDS[-1], expected="another ☃")]
    write_json(base / "other.json", document(*changed, name="ünïcode"))
    recorded = [{"id": key, "output": f"answer ü {key}"} for key in IDS[:-1]]
    recorded.append({"id": IDS[-1], "output": "not ☃"})
    (base / "results.jsonl").write_text(
        "".join(json.dumps(item) + "\n" for item in recorded), encoding="utf-8"
    )
    work = base / "work"
    work.mkdir()
    return work


COMMANDS: list[list[str]] = [
    ["validate", "../set.json"],
    ["validate", "../set.json", "--report", "json"],
    ["validate", "../set.json", "--report", "junit"],
    ["validate", "../set.json", "--report", "github"],
    ["validate", "../set.json", "--statistics"],
    ["convert", "../set.json", "out.csv", "--force"],
    ["convert", "../set.json", "out.yaml", "--to", "promptfoo", "--force"],
    ["convert", "../set.json", ".", "--to", "json"],
    ["diff", "../set.json", "../other.json"],
    ["diff", "../set.json", "../other.json", "--report", "json"],
    ["summary", "../set.json", "--no-exports"],
    ["risk", "../set.json"],
    ["grade", "../set.json", "../results.jsonl"],
    ["grade", "../set.json", "../results.jsonl", "--report", "markdown"],
    ["evaluators"],
    ["formats"],
]


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
@pytest.mark.parametrize("arguments", COMMANDS, ids=" ".join)
def test_no_environment_gives_an_internal_error(
    folder: Path, name: str, arguments: list[str]
) -> None:
    result = blueprint(arguments, folder, ENVIRONMENTS[name])
    assert_clean(result)


@pytest.mark.parametrize("name", ["ascii", "latin-1", "c-locale"])
def test_json_on_a_narrow_encoding_is_still_json_with_the_same_ids(folder: Path, name: str) -> None:
    # what the encoding lacks comes as a JSON escape; ASCII streams may get UTF-8 (click's fix)
    encoding = "latin-1" if name == "latin-1" else "utf-8"
    environment = ENVIRONMENTS[name]
    result = blueprint(["validate", "../set.json", "--report", "json"], folder, environment)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.decode(encoding))
    assert report["valid"] is True and report["rows"] == len(IDS)
    changed = blueprint(
        ["diff", "../set.json", "../other.json", "--report", "json"], folder, environment
    )
    assert changed.returncode == 1, changed.stderr
    assert IDS[-1] in json.dumps(json.loads(changed.stdout.decode(encoding)), ensure_ascii=False)


def test_text_on_an_ascii_stream_escapes_what_it_cannot_spell(folder: Path) -> None:
    broken = row(IDS[0])
    broken["metadata"]["case"]["oracleType"] = "not-an-oracle-type"
    write_json(folder.parent / "broken.json", document(broken, name="x"))
    result = blueprint(["validate", "../broken.json"], folder, ENVIRONMENTS["ascii"])
    assert result.returncode == 1
    assert "caf\\u00e9-1" in result.stdout.decode("ascii")


def test_a_folder_where_a_file_belongs_is_a_usage_error(folder: Path) -> None:
    for target in (".", "./", "..", "/"):
        result = blueprint(["convert", "../set.json", target, "--to", "json"], folder, {})
        assert result.returncode == 2, (target, result.stderr)
        assert b"folder" in result.stderr


#: what an argument may be: folders, nothing, a dash, a missing file, names with odd characters
_PATHS = st.sampled_from(
    [
        ".",
        "./",
        "..",
        "",
        "-",
        " ",
        "missing.json",
        "../set.json",
        "../other.json",
        "ü.json",
        "out.csv",
        "out.jsonl",
        "out.yaml",
        "../set.json.set.json",
        "a\tb.json",
        "--",
        "-x",
    ]
)
_FLAGS = st.sampled_from(
    [
        [],
        ["--force"],
        ["--to", "json"],
        ["--to", "promptfoo"],
        ["--from", "deepeval"],
        ["--report", "json"],
        ["--report", "junit"],
        ["--strict"],
        ["--quiet"],
    ]
)
_VERBS = st.sampled_from(["validate", "convert", "diff", "roundtrip", "summary", "risk", "render"])


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    verb=_VERBS,
    paths=st.lists(_PATHS, min_size=0, max_size=3),
    flags=_FLAGS,
    environment=st.sampled_from(sorted(ENVIRONMENTS)),
)
def test_odd_arguments_in_odd_environments_never_give_an_internal_error(
    folder: Path, verb: str, paths: list[str], flags: list[str], environment: str
) -> None:
    result = blueprint([verb, *paths, *flags], folder, ENVIRONMENTS[environment])
    assert_clean(result)
