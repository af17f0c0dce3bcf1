"""The command line against hostile arguments and a hostile environment, as real child
processes: bytes that are not UTF-8, numbers past any use, a standard output that is closed.
Each ends in a clean exit code, never a traceback or an internal error (exit 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES

SET = EXAMPLES / "support-refunds.json"
ROW = "cs-refund-window-quote"


def blueprint(
    *args: str | bytes | Path, cwd: Path, **options: object
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "blueprint", *args],
        cwd=cwd,
        capture_output=True,
        timeout=120,
        **options,  # type: ignore[call-overload]
    )


def clean(done: subprocess.CompletedProcess[bytes]) -> bool:
    stderr = done.stderr.decode("utf-8", "replace")
    return "Traceback" not in stderr and "internal error" not in stderr


# --- text that is not UTF-8 -------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        [b"--text", b"metadata.case.scenario=\xff\xfe late"],
        [b"--text", b"metadata.case.scen\xffario=x"],
        [b"--set", b'metadata.case.scenario="\xff"'],
        [b"--unset", b"metadata.\xff"],
    ],
)
def test_edit_refuses_text_that_is_not_utf8(tmp_path: Path, arguments: list[bytes]) -> None:
    target = tmp_path / "set.json"
    shutil.copy(SET, target)
    before = target.read_bytes()
    done = blueprint("edit", target, ROW, *arguments, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert clean(done)
    assert target.read_bytes() == before


def test_a_row_id_that_is_not_utf8_is_refused_as_json_too(tmp_path: Path) -> None:
    target = tmp_path / "set.json"
    shutil.copy(SET, target)
    done = blueprint(
        "edit", target, b"cs-\xff", "--text", "metadata.case.scenario=x", "--report", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and clean(done)
    assert json.loads(done.stdout)["exitCode"] == 2


def test_add_refuses_text_that_is_not_utf8(tmp_path: Path) -> None:
    target = tmp_path / "set.json"
    shutil.copy(SET, target)
    before = target.read_bytes()
    done = blueprint(
        "add", target, "--family", "policy-lookup", "--id", "new-row", "--input", b"q\xff",
        "--behavior", "b", "--provenance", "expert-authored",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and clean(done)
    assert target.read_bytes() == before


def test_a_file_name_that_is_not_utf8_is_still_a_file_name(tmp_path: Path) -> None:
    name = b"set-\xff.json"
    (tmp_path / os.fsdecode(name)).write_bytes(SET.read_bytes())
    done = blueprint("validate", name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    pack = b"pack-\xff.yaml"
    done = blueprint("packs", "show", pack, cwd=tmp_path)
    assert done.returncode in (1, 2) and clean(done)
    assert b"not UTF-8 text" not in done.stderr  # it names a file, which may be any bytes


# --- numbers past any use ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    ["--resamples=1000000000", "--resamples=100001", "--resamples=99", "--seed=-1"],
)
def test_judge_report_bounds_its_bootstrap(tmp_path: Path, option: str) -> None:
    done = blueprint(
        "judge-report", EXAMPLES / "support-judged-labels.csv",
        "--set", EXAMPLES / "support-judged.json", option,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert clean(done)


def test_the_bootstrap_holds_a_bounded_batch_in_memory() -> None:
    from blueprint.reports.judging import statistics

    seen: list[tuple[int, ...]] = []

    def statistic(indices: object, axis: int = -1) -> object:
        import numpy as np

        array = np.asarray(indices)
        seen.append(array.shape)
        return array.mean(axis=axis)

    size = 50_000
    options = statistics.BootstrapOptions(resamples=1000)
    assert statistics._interval(statistic, size, options, vectorized=True) is not None
    cells = max(shape[0] * shape[1] for shape in seen if len(shape) == 2)
    assert cells <= statistics._BATCH_CELLS  # 1000 x 50,000 at once would be 400 MB


# --- a standard output that is closed, or whose reader went away ------------------------------

RESULTS = EXAMPLES / "support-refunds.results.jsonl"


def closed(command: str, tmp_path: Path, streams: str = ">&-") -> subprocess.CompletedProcess[str]:
    """``blueprint COMMAND`` from a shell with a standard stream closed (``>&-``)."""
    return subprocess.run(
        ["bash", "-c", f"{sys.executable} -m blueprint {command} {streams}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (f"validate {SET}", 0),  # its report goes to stderr: nothing is lost
        (f"validate {SET} --report json", 2),
        (f"validate {EXAMPLES / 'broken.json'} --report json", 2),
        ("formats", 2),
        ("evaluators rubric", 2),
        (f"grade {SET} {RESULTS}", 2),
        (f"grade {SET} {RESULTS} --report junit", 2),
        (f"summary {SET}", 2),
        ("--version", 2),
        (f"validate {SET} --no-such-option", 2),
    ],
)
def test_a_closed_standard_output_is_a_clean_exit(tmp_path: Path, command: str, code: int) -> None:
    done = closed(command, tmp_path)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "Exception ignored" not in done.stderr


def test_files_written_with_standard_output_closed_are_whole(tmp_path: Path) -> None:
    """A file opened while descriptor 1 is free would take it: what a command then printed
    (or a command it ran) would land in the file."""
    done = closed(f"convert {SET} out.jsonl", tmp_path)
    assert done.returncode == 0, done.stderr
    again = subprocess.run(
        [sys.executable, "-m", "blueprint", "diff", SET, tmp_path / "out.jsonl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    done = closed(f"grade {SET} {RESULTS} -o report.json --report json", tmp_path, ">&- 2>&- <&-")
    assert done.returncode == 0
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["rows"]


@pytest.mark.parametrize(
    "command",
    [
        ["formats"],
        ["evaluators"],
        ["validate", str(SET), "--report", "json"],
        ["grade", str(SET), str(RESULTS)],
    ],
)
def test_a_reader_that_went_away_is_a_clean_exit(tmp_path: Path, command: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "blueprint", *command],
            cwd=tmp_path,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


# --- no output replaces an input ----------------------------------------------------------------


def _named(tmp_path: Path, target: Path, how: str, suffix: str | None = None) -> str:
    """Another name for ``target``: itself, with ./, through a symbolic link or a hard link
    (with ``suffix``, a name ending so: a report's extension, for a file that has another)."""
    if how == "same" and suffix is None:
        return target.name
    if how == "dot" and suffix is None:
        return f"./{target.name}"
    name = f"{how}-{target.stem}{suffix or target.suffix}"
    if how == "symlink":
        (tmp_path / name).symlink_to(target.name)
    else:
        os.link(target, tmp_path / name)
    return name


JUDGE = ["judge-report", "labels.csv", "--set", "judged.json"]
SPLIT = ["split", "set.json", "--ratios", "dev=0.5,test=0.5", "--seed", "1"]
COMMANDS = {
    "grade-set": (["grade", "set.json", "results.jsonl", "--report", "json"], "set.json", None),
    "grade-results": (["grade", "set.json", "results.jsonl"], "results.jsonl", None),
    "judge-report-set": (JUDGE, "judged.json", ".json"),
    "judge-report-labels": (JUDGE, "labels.csv", ".json"),
    "summary": (["summary", "set.json"], "set.json", None),
    "risk": (["risk", "set.json", "--report", "markdown"], "set.json", None),
    "render": (["render", "set.json"], "set.json", ".html"),
    "merge-a": (["merge", "set.json", "other.json"], "set.json", None),
    "merge-b": (["merge", "set.json", "other.json"], "other.json", None),
    "split": (SPLIT, "set.json", None),
    "sample": (["sample", "set.json", "2", "--seed", "1"], "set.json", None),
    # the last set is dedupe's to rewrite (-o naming it is documented); a set before it is not
    "dedupe": (["dedupe", "other.json", "set.json"], "other.json", None),
    "convert": (["convert", "set.json"], "set.json", ".jsonl"),
}  # fmt: skip


@pytest.mark.parametrize("how", ["same", "dot", "symlink", "hardlink"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_output_replaces_an_input(tmp_path: Path, name: str, how: str) -> None:
    command, victim, suffix = COMMANDS[name]
    shutil.copy(SET, tmp_path / "set.json")
    shutil.copy(SET, tmp_path / "other.json")
    shutil.copy(RESULTS, tmp_path / "results.jsonl")
    shutil.copy(EXAMPLES / "support-judged.json", tmp_path / "judged.json")
    shutil.copy(EXAMPLES / "support-judged-labels.csv", tmp_path / "labels.csv")
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    if suffix is not None and how in ("same", "dot"):
        how = "hardlink"  # the file itself has no extension the command writes
    output = _named(tmp_path, tmp_path / victim, how, suffix)
    args = [*command, output] if name == "convert" else [*command, "-o", output]
    done = blueprint(*args, "--force", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert clean(done)
    assert {name: (tmp_path / name).read_bytes() for name in before} == before
