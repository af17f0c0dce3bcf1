"""Validation by a pool of processes gives the report one process gives."""

from __future__ import annotations

import errno
import io
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.cli._common import PROGRESS_AFTER_ROWS, row_progress
from blueprint.io import limits, places
from blueprint.validation import keyed, parallel, rowindex
from blueprint.validation.validate import ValidationOptions, validate_file
from conftest import row, sigint_as_from_a_terminal

#: the size from which the command line uses the pool (the tests here lower it)
POOL_FROM_BYTES = parallel.MIN_POOL_BYTES

FAMILIES = [
    {"id": "lookup", "oracleType": "reference-answer", "evaluator": "exact-or-programmatic"},
    {"id": "tone", "oracleType": "rubric"},
]


@pytest.fixture(autouse=True)
def small_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file takes the pool path, cut into spans of a few rows each."""
    monkeypatch.setattr(parallel, "MIN_POOL_BYTES", 0)
    monkeypatch.setattr(parallel, "SPAN_BYTES", 700)


def write_set(path: Path, lines: list[str], header: dict[str, Any] | None = None) -> Path:
    path.write_text("".join(lines), encoding="utf-8")
    if header is not None:
        side = path.with_name(path.name + ".set.json")
        side.write_text(json.dumps({"schemaVersion": "blueprint.eval-set/v1", **header}))
    return path


def line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False) + "\n"


def both(path: Path, options: ValidationOptions | None = None) -> tuple[Any, Any]:
    """The report of one process, and of two."""
    return (
        validate_file(path, options=options, jobs=1).to_json(),
        validate_file(path, options=options, jobs=2).to_json(),
    )


def awkward_lines() -> list[str]:
    """Rows that exercise every rule across rows, spread over many spans, with broken lines."""
    rows = [line(row(f"r{i}", caseFamily="lookup" if i % 3 else "tone")) for i in range(40)]
    rows[5] = line(row("r1"))  # the id of row 1 again, a span or more later
    rows[9] = line({**row("r9"), "input": "question for r2"})  # the input of row 2
    split_a = {**row("s1"), "input": "leak"}
    split_a["metadata"]["split"] = "train"
    split_b = {**row("s2"), "input": "leak"}
    split_b["metadata"]["split"] = "test"
    rows[12] = line(split_a)
    rows[33] = line(split_b)
    rows[14] = '{"id": "broken", "input": \n'  # not JSON
    rows[17] = '{"id": "dup", "id": "again"}\n'  # a repeated key
    rows[20] = "\n   \n"  # blank lines: line numbers and row indices part ways
    rows[22] = line(row("w", caseFamily="lookup", evaluator="llm-judge"))  # family mismatch
    rows[25] = line(row("x", caseFamily="nowhere"))
    rows[27] = line({"id": 7, "input": None})  # schema findings
    rows[30] = line(row("starter", provenance="starter-example"))
    rows[31] = line(row("rubric", "rubric", caseFamily="tone"))
    return rows


def test_the_pool_gives_the_one_process_report(tmp_path: Path) -> None:
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})
    serial, pooled = both(path)
    assert pooled == serial
    codes = {issue["code"] for issue in serial["issues"]}
    assert {
        "duplicate-id",
        "duplicate-input",
        "duplicate-input-across-splits",
        "parse",
        "case-family-mismatch",
        "unknown-case-family",
        "schema",
        "starter-example",
        "inherited-evaluator",
    } <= codes


def test_the_pool_without_a_set_file_and_with_a_byte_order_mark(tmp_path: Path) -> None:
    lines = awkward_lines()
    lines[0] = "\ufeff" + lines[0]
    path = write_set(tmp_path / "set.jsonl", lines)
    serial, pooled = both(path)
    assert pooled == serial
    assert "missing-set-file" in {issue["code"] for issue in serial["issues"]}


def test_the_pool_with_a_set_file_declaring_no_families(tmp_path: Path) -> None:
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"name": "no families"})
    serial, pooled = both(path)
    assert pooled == serial
    assert "undeclared-case-family" in {issue["code"] for issue in serial["issues"]}


@pytest.mark.parametrize(
    "options",
    [
        ValidationOptions(select=frozenset({"duplicate-id", "schema"})),
        ValidationOptions(ignore=frozenset({"duplicate-input", "starter-example"})),
        ValidationOptions(family_ignore={"lookup": frozenset({"inherited-evaluator"})}),
        ValidationOptions(row_ids=False),
    ],
)
def test_the_pool_honours_the_options(tmp_path: Path, options: ValidationOptions) -> None:
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})
    serial, pooled = both(path, options)
    assert pooled == serial


def test_the_row_limit_stops_the_pool_where_it_stops_one_process(tmp_path: Path) -> None:
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})
    with limits.overridden(max_rows=23):
        serial, pooled = both(path)
    assert pooled == serial
    assert serial["rows"] == 24  # 23 rows and the one that stops the reading


def test_an_overlong_line_is_reported_by_the_pool_as_by_one_process(tmp_path: Path) -> None:
    lines = awkward_lines()
    lines[8] = line({**row("long"), "input": "x" * 3000})
    path = write_set(tmp_path / "set.jsonl", lines)
    with limits.overridden(max_cell_bytes=2000):
        serial, pooled = both(path)
    assert pooled == serial
    assert any(issue["code"] == "parse" and issue["line"] == 9 for issue in serial["issues"])


def document_text(rows: list[str], layout: str) -> str:
    """A JSON document of the given row texts: indented, one row a line, or all on one."""
    head = '{"schemaVersion": "blueprint.eval-set/v1", "name": "t", "caseFamilies": '
    head += json.dumps(FAMILIES)
    if layout == "indented":
        body = ",\n".join(
            "    " + json.dumps(json.loads(text), indent=2).replace("\n", "\n    ")
            if not text.startswith('{"raw')
            else "    " + text[5:]
            for text in rows
        )
        return head + ',\n  "rows": [\n' + body + '\n  ],\n  "description": "after"\n}\n'
    separator = ",\n" if layout == "lines" else ", "
    return (
        head
        + ', "rows": ['
        + separator.join(text[5:] if text.startswith('{"raw') else text for text in rows)
        + "]}"
    )


def document_rows() -> list[str]:
    """Row texts for a document; ``{"raw`` marks text kept as written (a row the strict
    reader refuses: a repeated key, a lone surrogate)."""
    rows = [line(row(f"r{i}", caseFamily="lookup" if i % 3 else "tone")).strip() for i in range(30)]
    rows[5] = line(row("r1")).strip()
    rows[9] = line({**row("r9"), "input": "question for r2"}).strip()
    rows[11] = '{"raw{"id": "dup", "id": "again", "input": "x"}'
    rows[13] = '{"raw{"id": "s", "input": "\\ud800"}'
    rows[22] = line(row("w", caseFamily="lookup", evaluator="llm-judge")).strip()
    rows[25] = line({"id": 7, "input": None}).strip()
    return rows


@pytest.mark.parametrize("layout", ["indented", "lines", "one-line"])
def test_the_pool_reads_a_json_document_as_one_process_does(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "set.json"
    path.write_text(document_text(document_rows(), layout), encoding="utf-8")
    from blueprint.formats import REGISTRY

    assert parallel.worth_a_pool(REGISTRY["json"].open(path), 2)
    serial, pooled = both(path)
    assert pooled == serial
    assert {"duplicate-id", "duplicate-input", "parse", "schema"} <= {
        issue["code"] for issue in serial["issues"]
    }


def test_a_json_document_whose_places_and_lines_are_on_disk_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a few rows, a large document's row places and lines move to scratch files: the
    reports, of one process and of the pool, are what they are in memory."""
    path = tmp_path / "set.json"
    path.write_text(document_text(document_rows(), "indented"), encoding="utf-8")
    in_memory = both(path)
    monkeypatch.setattr(places, "PLACES_IN_MEMORY", 2)
    monkeypatch.setattr(rowindex, "LINE_CHANGES_IN_MEMORY", 2)
    assert both(path) == in_memory


def test_a_json_document_past_the_row_limit_takes_one_process(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text(document_text(document_rows(), "lines"), encoding="utf-8")
    from blueprint.formats import REGISTRY

    with limits.overridden(max_rows=10):
        assert not parallel.worth_a_pool(REGISTRY["json"].open(path), 2)
        serial, pooled = both(path)
    assert pooled == serial


def test_document_spans_cover_every_row_once() -> None:
    starts = [10 + 30 * n for n in range(40)]
    ends = [start + 25 for start in starts]
    found = list(parallel.document_spans(zip(starts, ends, strict=True), 100))
    assert found[0][0] == 0 and found[-1][1] == ends[-1]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(found))
    assert [s for _, _, (firsts, _) in found for s in firsts] == starts
    assert [e for _, _, (_, lasts) in found for e in lasts] == ends


def test_spans_cover_the_file_at_line_boundaries(tmp_path: Path) -> None:
    data = b"".join(b"x" * (n % 17) + b"\n" for n in range(200)) + b"tail without newline"
    path = tmp_path / "lines.jsonl"
    path.write_bytes(data)
    found = [(start, end) for start, end, _ in parallel.spans(path, 50)]
    assert found[0][0] == 0 and found[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(found))
    assert all(data[end - 1 : end] == b"\n" for _, end in found[:-1])


def test_small_files_and_other_formats_take_one_process(tmp_path: Path) -> None:
    path = write_set(tmp_path / "set.jsonl", [line(row("a"))])
    source_json = tmp_path / "set.json"
    source_json.write_text(json.dumps({"schemaVersion": "blueprint.eval-set/v1", "rows": []}))
    from blueprint.formats import resolve_codec

    assert not parallel.worth_a_pool(resolve_codec(path, None, reading=True).open(path), 1)
    opened = resolve_codec(source_json, None, reading=True).open(source_json)
    assert not parallel.worth_a_pool(opened, 4)


def test_validate_jobs_option(tmp_path: Path) -> None:
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})
    runner = CliRunner()
    one = runner.invoke(app, ["validate", "--report", "json", "--jobs", "1", str(path)])
    two = runner.invoke(app, ["validate", "--report", "json", "-j", "2", str(path)])
    assert one.exit_code == two.exit_code == 2  # broken lines make the file unreadable
    assert json.loads(one.stdout) == json.loads(two.stdout)


def test_the_pool_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    count = PROGRESS_AFTER_ROWS + 500
    path = write_set(tmp_path / "big.jsonl", [line(row(f"r{n}")) for n in range(count)])
    screen = io.StringIO()
    with row_progress(console=Console(file=screen, force_terminal=True, width=100)):
        report = validate_file(path, jobs=2)
    assert report.rows == count
    assert "reading big.jsonl" in screen.getvalue()
    assert f"{PROGRESS_AFTER_ROWS:,} rows" in screen.getvalue()


IDS = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@st.composite
def jsonl_lines(draw: st.DrawFn) -> list[str]:
    lines = []
    for number in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["row", "row", "row", "blank", "broken"]))
        if kind == "blank":
            lines.append("\n")
        elif kind == "broken":
            lines.append('{"id": \n')
        else:
            data = row(draw(IDS), caseFamily=draw(st.sampled_from(["lookup", "tone", "other"])))
            data["input"] = draw(st.sampled_from(["q1", "Q1!", "q2", "q3"]))
            split = draw(st.sampled_from([None, "train", "test"]))
            if split:
                data["metadata"]["split"] = split
            if draw(st.booleans()):
                data["metadata"]["case"]["evaluator"] = draw(
                    st.sampled_from(["llm-judge", "exact-or-programmatic"])
                )
            if draw(st.integers(0, 4)) == 0:  # a family's rows that disagree on the oracle type
                data["metadata"]["case"]["oracleType"] = "rubric"
                data["expected"] = None
            if draw(st.integers(0, 5)) == 0:
                data["metadata"]["case"]["provenance"] = "starter-example"
            lines.append(line(data) if number % 7 else line(data).rstrip("\n") + "   \n")
    return lines


#: options that change which rules across rows run, and for which rows
POOL_OPTIONS = st.sampled_from(
    [
        ValidationOptions(),
        ValidationOptions(select=frozenset({"duplicate-input-across-splits", "parse"})),
        ValidationOptions(ignore=frozenset({"duplicate-id"})),
        ValidationOptions(
            family_ignore={
                "lookup": frozenset({"duplicate-input", "case-family-mismatch"}),
                "tone": frozenset({"duplicate-id", "undeclared-case-family"}),
            }
        ),
        ValidationOptions(row_ids=False),
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=jsonl_lines(),
    header=st.sampled_from([None, {"name": "no families"}, {"caseFamilies": FAMILIES}]),
    options=POOL_OPTIONS,
    max_rows=st.sampled_from([0, 0, 5, 17]),
    bucket_bytes=st.sampled_from([parallel.BUCKET_BYTES, 1, 300]),
)
def test_any_set_gets_the_same_report_from_the_pool(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    lines: list[str],
    header: dict[str, Any] | None,
    options: ValidationOptions,
    max_rows: int,
    bucket_bytes: int,
) -> None:
    folder = tmp_path_factory.mktemp("pool")
    path = write_set(folder / "set.jsonl", lines or ["\n"], header)
    # from a few buckets (two a worker) to one for every few bytes of the file
    monkeypatch.setattr(parallel, "BUCKET_BYTES", bucket_bytes)
    with limits.overridden(max_rows=max_rows):
        serial, pooled = both(path, options)
    assert pooled == serial


def _workers_of(pid: int) -> list[int]:
    """The pids of the processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_pool_stops_cleanly(tmp_path: Path, signal_number: int) -> None:
    # a file over the pool's threshold, as a user's would be: the command runs for real
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for n in range(POOL_FROM_BYTES // 900 + 2000):
            handle.write(line({**row(f"r{n}"), "input": f"{n} " + "q" * 800}))
    process = subprocess.Popen(
        [sys.executable, "-m", "blueprint", "validate", "-j", "2", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group: the signal reaches it and its workers, as ^C does
        preexec_fn=sigint_as_from_a_terminal,
    )
    deadline = time.monotonic() + 60
    while len(_workers_of(process.pid)) < 2 and process.poll() is None:
        assert time.monotonic() < deadline, "no workers started"
        time.sleep(0.01)
    workers = _workers_of(process.pid)
    assert process.poll() is None, process.communicate()
    os.killpg(process.pid, signal_number)
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 128 + signal_number, errors.decode(errors="replace")
    assert b"Traceback" not in errors
    time.sleep(0.5)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers forked from this process, so that they see its patches: the pool picks a fork
    server when other threads run, as they may in a test run, and its workers would not."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    monkeypatch.setattr(parallel, "_start_method", lambda: multiprocessing.get_context("fork"))


@pytest.mark.usefixtures("forked")
def test_a_span_a_worker_cannot_read_makes_the_file_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as if the file were moved while it was checked: the workers (forked, so patched too)
    # fail to open it, and the command says so instead of failing with a traceback
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})

    def vanished(path: Path, start: int, end: int) -> int:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(parallel, "physical_lines", vanished)
    result = CliRunner().invoke(app, ["validate", "-j", "2", "--report", "json", str(path)])
    assert result.exit_code == 2
    assert str(path) in result.output  # the set is named, though the error named no file
    assert "could not be read again" in result.output  # not the report of a file read whole


@pytest.mark.usefixtures("forked")
def test_a_full_temporary_folder_is_an_output_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the workers write the records of the checks across rows to the temporary folder: with
    # no room there, the command names that folder and what to do, with no traceback
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})

    def full(keys: keyed.SpanKeys, records: Path) -> list[tuple[int, int]]:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(keyed.SpanKeys, "spill", full)
    result = CliRunner().invoke(app, ["validate", "-j", "2", str(path)])
    assert result.exit_code == 2
    assert "TMPDIR" in result.output  # the way out is named
    assert isinstance(result.exception, SystemExit)  # a message, not a traceback


def test_records_are_removed_when_the_pool_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})
    serial, pooled = both(path)
    assert pooled == serial
    # (multiprocessing's own folder, pymp-*, goes when this process ends)
    assert [entry.name for entry in scratch.iterdir() if not entry.name.startswith("pymp-")] == []


def test_a_long_temporary_folder_spawns_the_workers_when_a_thread_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread another library left running (Dask's event loop) rules out forking; a fork
    server's socket must fit under the temporary folder, else the workers are spawned (a
    long TMPDIR gave "AF_UNIX path too long", exit 2)."""
    import tempfile
    import threading

    stop = threading.Event()
    running = threading.Thread(target=stop.wait)
    running.start()
    try:
        long_folder = tmp_path / ("x" * 80)
        long_folder.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(long_folder))
        assert parallel._start_method().get_start_method() == "spawn"
        monkeypatch.setattr(tempfile, "tempdir", "/tmp")
        assert parallel._start_method().get_start_method() == "forkserver"
        path = write_set(tmp_path / "set.jsonl", awkward_lines(), {"caseFamilies": FAMILIES})
        monkeypatch.setattr(tempfile, "tempdir", str(long_folder))
        monkeypatch.setattr(parallel, "MIN_POOL_BYTES", 0)
        serial, pooled = both(path)
        assert pooled == serial
    finally:
        stop.set()
        running.join()
