"""A set kept in shards: found, read as one set, validated alike by one process and a pool."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.errors import ParseError, UsageError
from blueprint.core.issues import Issue, ValidationReport
from blueprint.formats.shards import find_shards, open_shards
from blueprint.io import limits
from blueprint.validation import parallel
from blueprint.validation.validate import ValidationOptions, validate_file, validate_shards
from conftest import row
from test_parallel import FAMILIES, POOL_OPTIONS, awkward_lines, jsonl_lines, line

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "logs", "caseFamilies": FAMILIES}


@pytest.fixture(autouse=True)
def small_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    """With two jobs, every set of shards takes the pool path, a few rows a span."""
    monkeypatch.setattr(parallel, "MIN_POOL_BYTES", 0)
    monkeypatch.setattr(parallel, "SPAN_BYTES", 700)


def write_shards(
    folder: Path, lines: list[str], cuts: list[int], header: dict[str, Any] | None = HEADER
) -> Path:
    """The lines cut into JSON Lines shards at ``cuts`` (line numbers), and the set file
    beside the folder; returns the folder."""
    folder.mkdir()
    edges = [0, *sorted(cuts), len(lines)]
    for number, (start, end) in enumerate(itertools.pairwise(edges)):
        (folder / f"part-{number:05d}.jsonl").write_text("".join(lines[start:end]), "utf-8")
    if header is not None:
        folder.with_name(folder.name + ".set.json").write_text(json.dumps(header), "utf-8")
    return folder


def concatenated(folder: Path, header: dict[str, Any] | None = HEADER) -> Path:
    """The shards as one JSON Lines file (with the same set file)."""
    whole = folder.with_name(folder.name + "-whole.jsonl")
    whole.write_bytes(b"".join(path.read_bytes() for path in sorted(folder.glob("*.jsonl"))))
    if header is not None:
        whole.with_name(whole.name + ".set.json").write_text(json.dumps(header), "utf-8")
    return whole


def _unplaced(message: str) -> str:
    """A message without the place of the earlier row it names (shards name their file)."""
    return re.sub(r" \((?:\S+ )?line \d+\)", "", message)


def assert_same_as_one_file(shards: ValidationReport, whole: ValidationReport) -> None:
    """The shards' report is the concatenated file's, each finding placed in its shard."""
    assert shards.rows == whole.rows
    assert shards.valid == whole.valid
    assert shards.unreadable == whole.unreadable
    assert len(shards.issues) == len(whole.issues)
    bases = _line_bases(Path(shards.source))
    for mine, theirs in zip(shards.issues, whole.issues, strict=True):
        assert (mine.code, mine.severity, mine.row_index, mine.row_id, mine.path) == (
            theirs.code,
            theirs.severity,
            theirs.row_index,
            theirs.row_id,
            theirs.path,
        )
        if mine.row_index is None:
            continue
        assert mine.file is not None
        assert _unplaced(mine.message) == _unplaced(theirs.message)
        assert theirs.line == (None if mine.line is None else bases[mine.file] + mine.line)


def _line_bases(folder: Path) -> dict[str, int]:
    bases, total = {}, 0
    for path in sorted(folder.glob("*.jsonl")):
        bases[str(path)] = total
        total += path.read_bytes().count(b"\n")
    return bases


def test_shards_read_as_one_set(tmp_path: Path) -> None:
    lines = awkward_lines()
    folder = write_shards(tmp_path / "logs", lines, [7, 16, 29])
    report = validate_shards([folder])
    assert report.format == "jsonl"
    assert report.source == str(folder)
    assert_same_as_one_file(report, validate_file(concatenated(folder)))
    repeated = next(issue for issue in report.issues if issue.code == "duplicate-id")
    # row 5 repeats row 1's id: row 5 is in the first shard (lines 0-6), as is row 1
    assert (repeated.row_index, repeated.file, repeated.line) == (
        5,
        str(folder / "part-00000.jsonl"),
        6,
    )
    assert f"({folder / 'part-00000.jsonl'} line 2)" in repeated.message
    across = next(i for i in report.issues if i.code == "duplicate-input-across-splits")
    assert across.file == str(folder / "part-00003.jsonl")
    assert str(folder / "part-00001.jsonl") in across.message


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=jsonl_lines(),
    cuts=st.lists(st.integers(0, 30), max_size=4),
    header=st.sampled_from([None, {"name": "no families"}, HEADER]),
    options=POOL_OPTIONS,
    max_rows=st.sampled_from([0, 0, 5, 17]),
)
def test_any_set_in_shards_gets_one_report_from_every_path(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[str],
    cuts: list[int],
    header: dict[str, Any] | None,
    options: ValidationOptions,
    max_rows: int,
) -> None:
    """One process over the shards gives the concatenated file's findings, and the pool the
    one process's report, byte for byte."""
    base = tmp_path_factory.mktemp("shards")
    lines = lines or ["\n"]
    folder = write_shards(base / "logs", lines, [cut for cut in cuts if cut <= len(lines)], header)
    with limits.overridden(max_rows=max_rows):
        serial = validate_shards([folder], options=options, jobs=1)
        pooled = validate_shards([folder], options=options, jobs=2)
        whole = validate_file(concatenated(folder, header), format="jsonl", options=options)
    assert pooled.to_json() == serial.to_json()
    assert_same_as_one_file(serial, whole)


def test_a_folder_glob_and_files_name_the_same_shards(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10, 20])
    for skipped in ("_SUCCESS", ".part-00000.jsonl.crc", "README.md"):
        (folder / skipped).write_text("not a shard")
    by_folder = find_shards([folder])
    by_glob = find_shards([str(folder / "part-*.jsonl")])
    by_files = find_shards(sorted(folder.glob("part-*.jsonl")))
    names = [shard.path.name for shard in by_folder.shards]
    assert names == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    assert by_glob.shards == by_files.shards == by_folder.shards
    # the set file is the folder's, however the shards were named
    assert by_folder.folder == by_glob.folder == by_files.folder == folder


def test_a_glob_takes_the_shards_it_matches_as_a_folder_does(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10, 20])
    (folder / "_SUCCESS").write_text("")
    (folder / "notes.md").write_text("not a shard")
    by_glob = find_shards([str(folder / "*")])
    assert by_glob.shards == find_shards([folder]).shards
    with pytest.raises(ParseError, match=r"no \.jsonl"):
        find_shards([str(folder / "*.md")])


def test_a_folder_that_cannot_be_listed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])

    def denied(path: Path) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", denied)  # as a folder without read permission
    result = CliRunner().invoke(app, ["validate", "--shards", str(folder)])
    assert result.exit_code == 2
    assert "Permission denied" in result.stderr
    assert "Traceback" not in result.output


def test_what_is_not_a_shard_is_refused(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])
    with pytest.raises(ParseError, match="given twice"):
        find_shards([folder, folder / "part-00000.jsonl"])
    with pytest.raises(ParseError, match="no such file"):
        find_shards([tmp_path / "missing.jsonl"])
    with pytest.raises(ParseError, match="matches no file"):
        find_shards([str(tmp_path / "nothing-*.jsonl")])
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ParseError, match="not a shard"):
        find_shards([tmp_path / "notes.txt"])
    (folder / "inner.jsonl").mkdir()
    with pytest.raises(ParseError, match="folder"):
        find_shards([folder])
    (folder / "inner.jsonl").rmdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError):
        find_shards([empty])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_among_the_shards_is_refused(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])
    os.mkfifo(folder / "part-99999.jsonl")
    result = CliRunner().invoke(app, ["validate", "--shards", str(folder)])
    assert result.exit_code == 2
    assert "part-99999.jsonl" in result.stderr


def parquet_rows() -> list[dict[str, Any]]:
    rows = [row(f"p{n}", caseFamily="lookup") for n in range(12)]
    rows[3]["metadata"]["split"] = "train"  # a field only some rows have: null in the others
    rows[7]["id"] = "p1"  # a repeated id, and input, across shards below
    rows[7]["input"] = "question for p1"
    return rows


def write_parquet(path: Path, rows: list[dict[str, Any]], group_rows: int = 4) -> None:
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=group_rows)


def test_parquet_shards_read_as_json_rows(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    rows = parquet_rows()
    write_parquet(folder / "part-0.parquet", rows[:6])
    write_parquet(folder / "part-1.parquet", rows[6:])
    (tmp_path / "logs.set.json").write_text(json.dumps(HEADER))
    source = open_shards(find_shards([folder]))
    # a null field is an absent one: the rows are the rows written
    assert [item.data for item in source.rows] == rows
    report = validate_shards([folder])
    assert report.format == "parquet"
    found = [(issue.code, issue.row_index, issue.file, issue.line) for issue in report.issues]
    second = str(folder / "part-1.parquet")
    assert ("duplicate-id", 7, second, None) in found
    assert ("duplicate-input", 7, second, None) in found
    repeated = next(issue for issue in report.issues if issue.code == "duplicate-id")
    assert f"({folder / 'part-0.parquet'})" in repeated.message
    # the pool reads a few row groups a task, and gives the same report
    assert validate_shards([folder], jobs=2).to_json() == report.to_json()


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (b"bytes", "a bytes value"),
        (datetime(2026, 1, 1), "a datetime value"),
        (Decimal("1.5"), "a Decimal value"),
        (math.nan, "nan"),
    ],
)
def test_a_parquet_value_json_cannot_hold_makes_its_row_unreadable(
    tmp_path: Path, value: Any, named: str
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    rows = [{**row(f"r{n}"), "extra": value if n == 1 else None} for n in range(3)]
    write_parquet(folder / "part-0.parquet", rows)
    report = validate_shards([folder])
    parse = [issue for issue in report.issues if issue.code == "parse"]
    assert [(issue.row_index, issue.file) for issue in parse] == [
        (1, str(folder / "part-0.parquet"))
    ]
    assert named in parse[0].message
    assert "extra" in parse[0].message
    assert report.unreadable and report.rows == 3


def test_a_parquet_map_column_is_refused_by_row(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    table = pa.table(
        {
            "id": ["a", "b"],
            "input": ["q a", "q b"],
            "tags": pa.array([[("k", "v")], None], type=pa.map_(pa.string(), pa.string())),
        }
    )
    pq.write_table(table, folder / "part-0.parquet")
    report = validate_shards([folder])
    parse = [issue for issue in report.issues if issue.code == "parse"]
    assert [issue.row_index for issue in parse] == [0]
    assert "a map" in parse[0].message


def test_a_file_that_is_not_parquet_is_unreadable(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])
    (folder / "part-99999.parquet").write_text("not parquet")
    result = CliRunner().invoke(app, ["validate", "--shards", str(folder)])
    assert result.exit_code == 2
    assert "part-99999.parquet" in result.stderr


def test_the_shards_row_limit_counts_across_shards(tmp_path: Path) -> None:
    lines = [line(row(f"r{n}")) for n in range(10)]
    folder = write_shards(tmp_path / "logs", lines, [4])
    with limits.overridden(max_rows=6):
        report = validate_shards([folder])
    parse = [issue for issue in report.issues if issue.code == "parse"]
    # the seventh row is the second shard's third line
    assert [(issue.row_index, issue.file, issue.line) for issue in parse] == [
        (6, str(folder / "part-00001.jsonl"), 3)
    ]
    assert report.rows == 7


def test_validate_shards_on_the_command_line(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10, 20])
    runner = CliRunner()
    by_folder = runner.invoke(app, ["validate", "--shards", "--report", "json", str(folder)])
    by_glob = runner.invoke(
        app, ["validate", "--shards", "--report", "json", "-j", "2", str(folder / "*.jsonl")]
    )
    assert by_folder.exit_code == by_glob.exit_code == 2  # broken lines: unreadable rows
    document = json.loads(by_folder.stdout)
    globbed = json.loads(by_glob.stdout)
    # the set is named as it was given
    assert (document.pop("source"), globbed.pop("source")) == (str(folder), str(folder / "*.jsonl"))
    assert document == globbed
    assert document["rows"] == 39  # one of the 40 lines is blank
    assert {issue["file"] for issue in document["issues"] if issue["rowIndex"] is not None} == {
        str(folder / f"part-0000{n}.jsonl") for n in range(3)
    }


def test_the_engine_options_need_shards_and_dask(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])
    runner = CliRunner()
    without_shards = runner.invoke(app, ["validate", "--engine", "dask", str(folder)])
    assert without_shards.exit_code == 2
    assert "--shards" in without_shards.stderr
    address_alone = runner.invoke(
        app, ["validate", "--shards", "--scheduler", "tcp://127.0.0.1:1", str(folder)]
    )
    assert address_alone.exit_code == 2
    assert "--engine dask" in address_alone.stderr


def issue_places(issues: list[Issue]) -> list[tuple[Any, ...]]:
    return [(i.code, i.row_index, i.file, i.line, i.message) for i in issues]


def valid_shards(tmp_path: Path) -> Path:
    """The bundled example set as JSON Lines, in two shards, with two rows repeated."""
    whole = tmp_path / "whole.jsonl"
    example = Path(__file__).resolve().parents[1] / "examples" / "support-refunds.json"
    result = CliRunner().invoke(app, ["convert", str(example), str(whole)])
    assert result.exit_code == 0, result.output
    lines = whole.read_text("utf-8").splitlines(keepends=True)
    folder = tmp_path / "refunds"
    folder.mkdir()
    (folder / "part-0.jsonl").write_text("".join(lines[:4]), "utf-8")
    (folder / "part-1.jsonl").write_text("".join(lines[4:]), "utf-8")
    (tmp_path / "refunds.set.json").write_bytes((tmp_path / "whole.jsonl.set.json").read_bytes())
    return folder


def test_from_shards_is_the_shards_option(tmp_path: Path) -> None:
    folder = valid_shards(tmp_path)
    runner = CliRunner()
    flagged = runner.invoke(app, ["validate", "--shards", "--report", "json", str(folder)])
    named = runner.invoke(app, ["validate", "--from", "shards", "--report", "json", str(folder)])
    assert flagged.exit_code == named.exit_code == 0, flagged.output
    assert json.loads(flagged.stdout) == json.loads(named.stdout)
    both = runner.invoke(app, ["validate", "--shards", "--from", "jsonl", str(folder)])
    assert both.exit_code == 2
    # a folder of JSON Lines files is never taken for a set in shards unless named so
    found = runner.invoke(app, ["validate", "--report", "json", str(folder)])
    assert json.loads(found.stdout)["files"] == 2


def test_convert_a_set_in_shards_into_one_file(tmp_path: Path) -> None:
    folder = valid_shards(tmp_path)
    merged = tmp_path / "merged.jsonl"
    result = CliRunner().invoke(app, ["convert", "--from", "shards", str(folder), str(merged)])
    assert result.exit_code == 0, result.output
    assert merged.read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    refused = CliRunner().invoke(
        app, ["convert", str(merged), str(tmp_path / "x"), "--to", "shards"]
    )
    assert refused.exit_code == 2


def test_grade_a_set_in_shards(tmp_path: Path) -> None:
    folder = valid_shards(tmp_path)
    results = Path(__file__).resolve().parents[1] / "examples" / "support-refunds.results.jsonl"
    runner = CliRunner()
    whole = runner.invoke(
        app, ["grade", str(tmp_path / "whole.jsonl"), str(results), "--report", "json"]
    )
    sharded = runner.invoke(
        app, ["grade", "--shards", str(folder), str(results), "--report", "json"]
    )
    assert whole.exit_code == sharded.exit_code, sharded.output
    one, other = json.loads(whole.stdout), json.loads(sharded.stdout)
    assert other["set"] == str(folder)
    assert (other["rows"], other["summary"]) == (one["rows"], one["summary"])


def test_dedupe_names_each_rows_shard(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", [line(row(f"r{n}")) for n in range(10)], [5])
    with (folder / "part-00001.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(line({**row("again"), "input": "Question for R2!"}))
    runner = CliRunner()
    result = runner.invoke(
        app, ["dedupe", "--shards", "--exact-only", "--report", "json", str(folder)]
    )
    assert result.exit_code == 1, result.output
    group = json.loads(result.stdout)["exact"][0]["rows"]
    assert [(found["index"], found["file"], found["line"]) for found in group] == [
        (2, str(folder / "part-00000.jsonl"), 3),
        (10, str(folder / "part-00001.jsonl"), 6),
    ]
    text = runner.invoke(app, ["dedupe", "--shards", "--exact-only", str(folder)])
    assert "part-00001.jsonl" in text.stdout
    written = runner.invoke(
        app, ["dedupe", "--shards", str(folder), "-o", str(tmp_path / "clean.jsonl")]
    )
    assert written.exit_code == 2
    assert not (tmp_path / "clean.jsonl").exists()


def test_a_damaged_parquet_shard_stops_the_pool_cleanly(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    rows = [{"id": f"r{n}", "input": f"question {n} " + "x" * 40} for n in range(3000)]
    write_parquet(folder / "part-0.parquet", rows, group_rows=1000)
    damaged = bytearray((folder / "part-0.parquet").read_bytes())
    middle = len(damaged) // 2  # a row group's pages, not the footer: it opens, then breaks
    damaged[middle : middle + 200] = bytes(200)
    (folder / "part-0.parquet").write_bytes(bytes(damaged))
    for jobs in ("1", "2"):
        result = CliRunner().invoke(app, ["validate", "--shards", "-j", jobs, str(folder)])
        assert result.exit_code == 2, result.output
        assert "part-0.parquet" in result.stderr
        assert "Traceback" not in result.output
