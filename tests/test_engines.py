"""A set of shards validated on a Dask cluster gives the report one process gives."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.authoring.buckets import exact_duplicates
from blueprint.authoring.hygiene import find_duplicates
from blueprint.cli import app
from blueprint.core.errors import ParseError, UsageError
from blueprint.grading import grade_set
from blueprint.grading.streamed import UnknownResultIds
from blueprint.validation import engines
from blueprint.validation.engines import DaskEngine
from blueprint.validation.validate import ValidationOptions, validate_shards
from conftest import row
from test_dedupe_buckets import logs_lines, near_lines
from test_grade_buckets import IDS, result, shard_set, write_results
from test_parallel import FAMILIES, awkward_lines, line
from test_shards import parquet_rows, write_parquet, write_shards

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local cluster of two worker processes, as a real one would be reached: by address."""
    import logging

    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # any free port: a busy 8787 is no reason to warn
        silence_logs=logging.ERROR,
    ) as local:
        yield local.scheduler_address


def on_dask(address: str, paths: list[Path], **options: Any) -> dict[str, Any]:
    with DaskEngine(2, address) as engine:
        return validate_shards(paths, engine=engine, **options).to_json()


def test_dask_gives_the_one_process_report(tmp_path: Path, cluster: str) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [3, 11, 12, 30])
    rows = parquet_rows()
    write_parquet(folder / "part-99998.parquet", rows[:5], group_rows=2)
    write_parquet(folder / "part-99999.parquet", rows[5:], group_rows=2)
    serial = validate_shards([folder]).to_json()
    assert on_dask(cluster, [folder]) == serial
    codes = {issue["code"] for issue in serial["issues"]}
    assert {"duplicate-id", "duplicate-input", "duplicate-input-across-splits", "parse"} <= codes
    # the repeated id of the Parquet rows names the earlier row's shard
    assert any("part-99998.parquet" in issue["message"] for issue in serial["issues"])


@pytest.mark.parametrize(
    "options",
    [
        ValidationOptions(select=frozenset({"duplicate-input-across-splits", "parse"})),
        ValidationOptions(
            family_ignore={
                "lookup": frozenset({"duplicate-input", "case-family-mismatch"}),
                "tone": frozenset({"duplicate-id"}),
            }
        ),
        ValidationOptions(row_ids=True),
    ],
)
def test_dask_keeps_the_options(tmp_path: Path, cluster: str, options: ValidationOptions) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [20])
    assert on_dask(cluster, [folder], options=options) == (
        validate_shards([folder], options=options).to_json()
    )


def test_dask_on_the_command_line(tmp_path: Path, cluster: str) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10, 20])
    runner = CliRunner()
    local = runner.invoke(app, ["validate", "--shards", "--report", "json", str(folder)])
    remote = runner.invoke(
        app,
        [
            "validate",
            "--shards",
            "--engine",
            "dask",
            "--scheduler",
            cluster,
            "--report",
            "json",
            str(folder),
        ],
    )
    assert remote.exit_code == local.exit_code == 2  # broken lines
    assert json.loads(remote.stdout) == json.loads(local.stdout)


def test_dask_starts_a_local_cluster_of_its_own(tmp_path: Path) -> None:
    folder = write_shards(tmp_path / "logs", [line(row(f"r{n}")) for n in range(30)], [12])
    result = CliRunner().invoke(
        app,
        ["validate", "--shards", "--engine", "dask", "-j", "2", "--report", "json", str(folder)],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == 30


def test_a_local_cluster_of_its_own_runs_its_workers_without_the_profiler() -> None:
    # the dashboard's profiler samples a worker's task every 10 ms, holding the interpreter:
    # the cluster started for a run turns it off in its worker processes (docs/scale.md)
    def settings(dask_worker: Any) -> tuple[Any, bool]:
        import dask

        enabled = dask.config.get("distributed.worker.profile.enabled")
        return enabled, "profile" in dask_worker.periodic_callbacks

    with DaskEngine(1) as engine:
        assert engine.client is not None
        found = engine.client.run(settings)
    assert list(found.values()) == [(False, False)]


def test_a_workers_task_holds_the_collector_back_for_its_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # one process validates with the garbage collector held back, and the pool's workers
    # inherit it; a cluster's worker does not, so its tasks take the same settings
    import gc

    seen: list[tuple[int, int, int]] = []
    monkeypatch.setattr(engines, "check_span", lambda task: seen.append(gc.get_threshold()))
    monkeypatch.setattr(engines, "reduce_bucket", lambda task: seen.append(gc.get_threshold()))
    before = gc.get_threshold()
    engines._check_span(None)  # type: ignore[arg-type]
    task = engines.BucketTask(0, None, (), (), 0, False)  # type: ignore[arg-type]
    engines._reduce(task, b"")
    assert [threshold[0] >= 100_000 for threshold in seen] == [True, True]
    assert gc.get_threshold() == before


def test_an_unreachable_scheduler_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])
    monkeypatch.setattr(engines, "CONNECT_TIMEOUT", "1s")
    result = CliRunner().invoke(
        app,
        [
            "validate",
            "--shards",
            "--engine",
            "dask",
            "--scheduler",
            "tcp://127.0.0.1:9",
            str(folder),
        ],
    )
    assert result.exit_code == 2
    assert "tcp://127.0.0.1:9" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("address", ["nonsense", "foo://127.0.0.1:1"])
def test_an_address_that_is_none_is_a_usage_error(tmp_path: Path, address: str) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])
    command = ["validate", "--shards", "--engine", "dask", "--scheduler", address, str(folder)]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2
    assert address in result.stderr
    assert "internal error" not in result.output


def test_a_cluster_that_fails_the_run_is_named_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_shards(tmp_path / "logs", awkward_lines(), [10])

    def lost(task: Any) -> Any:
        raise RuntimeError("worker lost")

    # a cluster of threads in this process, so that the patched task is the one it runs
    monkeypatch.setattr(engines, "check_span", lost)
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=":0") as local:
        command = ["validate", "--shards", "--engine", "dask"]
        result = CliRunner().invoke(
            app, [*command, "--scheduler", local.scheduler_address, str(folder)]
        )
    assert result.exit_code == 2
    assert "worker lost" in result.stderr
    assert "internal error" not in result.output


# --- grading -----------------------------------------------------------------------------------


def _grade_files(tmp_path: Path) -> tuple[Path, list[Path]]:
    folder = shard_set(tmp_path / "set", [7, 19, 30])
    first = write_results(
        tmp_path / "a.jsonl",
        [result(row_id, passing=n % 4 != 1, trial=1 + n % 2) for n, row_id in enumerate(IDS)]
        + [result(row_id, trial=1 + (n + 1) % 2) for n, row_id in enumerate(IDS) if n % 3],
    )
    second = write_results(tmp_path / "b.jsonl", [result(row_id) for row_id in IDS[::3]])
    return folder, [first, second]


def test_grading_on_dask_gives_the_one_process_report(tmp_path: Path, cluster: str) -> None:
    folder, results = _grade_files(tmp_path)
    serial = grade_set(folder, results, source_format="shards")
    with DaskEngine(2, cluster) as engine:
        remote = grade_set(folder, results, source_format="shards", engine=engine)
    assert remote.to_json() == serial.to_json()
    assert serial.trials is not None and len(serial.trials.labels) == 3
    assert {row.verdict for row in serial.rows} >= {"pass", "fail", "invalid"}


def test_grading_on_dask_refuses_what_one_process_refuses(tmp_path: Path, cluster: str) -> None:
    folder, _ = _grade_files(tmp_path)
    repeated = write_results(
        tmp_path / "r.jsonl", [result(IDS[2]), result(IDS[30]), result(IDS[30]), result(IDS[2])]
    )
    unknown = write_results(tmp_path / "u.jsonl", [result("nobody"), result(IDS[1])])
    cases: list[tuple[list[Path], type[Exception]]] = [
        ([repeated], ParseError),
        ([repeated, unknown], ParseError),
        ([unknown, repeated], UnknownResultIds),
    ]
    for results, refusal in cases:
        with pytest.raises(refusal) as serial:
            grade_set(folder, results, source_format="shards")
        with DaskEngine(2, cluster) as engine, pytest.raises(refusal) as remote:
            grade_set(folder, results, source_format="shards", engine=engine)
        assert str(remote.value) == str(serial.value)
        assert remote.value.line == 3 if refusal is ParseError else "nobody" in str(remote.value)


def test_grading_on_dask_on_the_command_line(tmp_path: Path, cluster: str) -> None:
    folder, results = _grade_files(tmp_path)
    runner = CliRunner()
    command = ["grade", "--shards", "--report", "json", str(folder), *map(str, results)]
    local = runner.invoke(app, command)
    remote = runner.invoke(app, [*command, "--engine", "dask", "--scheduler", cluster])
    assert remote.exit_code == local.exit_code == 1  # failing rows
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    # the baseline is graded on the cluster too
    with_baseline = [*command, "--baseline", str(results[1])]
    local = runner.invoke(app, with_baseline)
    remote = runner.invoke(app, [*with_baseline, "--engine", "dask", "--scheduler", cluster])
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert "comparison" in json.loads(local.stdout)


@pytest.mark.parametrize(
    "arguments",
    [["--engine", "dask"], ["--scheduler", "tcp://127.0.0.1:9"], ["--shards", "--scheduler", "x"]],
)
def test_grading_engine_options_that_do_not_fit_are_usage_errors(
    tmp_path: Path, arguments: list[str]
) -> None:
    folder, results = _grade_files(tmp_path)
    result = CliRunner().invoke(app, ["grade", *arguments, str(folder), str(results[1])])
    assert result.exit_code == 2
    assert "internal error" not in result.output


# --- duplicates --------------------------------------------------------------------------------


def test_exact_duplicates_on_dask_on_the_command_line(tmp_path: Path, cluster: str) -> None:
    golden = write_shards(tmp_path / "golden", logs_lines(30), [9])
    logs = write_shards(tmp_path / "logs", logs_lines(60, offset=25), [20, 40])
    runner = CliRunner()
    command = ["dedupe", "--shards", "--exact-only", "--report", "json", str(golden), str(logs)]
    local = runner.invoke(app, command)
    remote = runner.invoke(app, [*command, "--engine", "dask", "--scheduler", cluster])
    assert remote.exit_code == local.exit_code == 1  # duplicates found
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert json.loads(local.stdout)["counts"]["acrossSets"]


def test_near_duplicates_on_dask_on_the_command_line(tmp_path: Path, cluster: str) -> None:
    golden = write_shards(tmp_path / "golden", near_lines(60), [9, 30])
    logs = write_shards(tmp_path / "logs", near_lines(200, offset=50), [20, 140])
    runner = CliRunner()
    command = ["dedupe", "--shards", "--threshold", "0.7", "--report", "json", str(golden)]
    local = runner.invoke(app, [*command, str(logs)])
    remote = runner.invoke(app, [*command, "--engine", "dask", "--scheduler", cluster, str(logs)])
    assert remote.exit_code == local.exit_code == 1, remote.output
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    assert json.loads(local.stdout)["counts"]["nearGroups"] >= 3


@pytest.mark.parametrize(
    "arguments",
    [
        ["--exact-only", "--engine", "dask"],  # not shards
        ["--engine", "dask"],  # not shards
        ["--exact-only", "-j", "2"],  # not shards
        ["-j", "2"],  # not shards
        ["--shards", "--engine", "dask", "--threshold", "1.5"],  # not a similarity
    ],
)
def test_dedupe_engine_options_that_do_not_fit_are_usage_errors(
    tmp_path: Path, arguments: list[str]
) -> None:
    folder = write_shards(tmp_path / "logs", logs_lines(10), [4])
    result = CliRunner().invoke(app, ["dedupe", *arguments, str(folder)])
    assert result.exit_code == 2
    assert "internal error" not in result.output


def test_without_dask_the_engine_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # an import of it fails
    with pytest.raises(UsageError, match=r"\[dask\]"), DaskEngine(2):
        pass


#: the rows of the large set, and every how many rows one breaks a rule across rows
LARGE_ROWS = 2_000_000
LARGE_SHARDS = 8


def _large_shards(folder: Path) -> None:
    """Two million rows in eight shards, with repeated ids, repeated inputs and inputs across
    splits planted within and across shards."""
    folder.mkdir()
    # the evaluator its family names, given: a finding a row only where one is planted
    template = row("ID", caseFamily="lookup", evaluator="exact-or-programmatic")
    template["input"] = "INPUT"
    text = json.dumps(template)
    head, rest = text.split('"ID"', 1)
    per_shard = LARGE_ROWS // LARGE_SHARDS
    for shard in range(LARGE_SHARDS):
        with (folder / f"part-{shard:05d}.jsonl").open("w", encoding="utf-8") as handle:
            for n in range(shard * per_shard, (shard + 1) * per_shard):
                row_id = f"r{n}" if n % 99_991 else f"r{n // 3}"  # an id used before
                question = f"question {n}" if n % 77_773 else f"Question {n // 2}!"
                body = rest.replace('"INPUT"', json.dumps(question)).replace('"ID"', f'"{row_id}"')
                if n % 50_021 == 0:
                    split = '"train"' if n % 2 else '"test"'
                    body = body.replace('"metadata": {', f'"metadata": {{"split": {split}, ', 1)
                handle.write(f'{head}"{row_id}"{body}\n')
    folder.with_name(folder.name + ".set.json").write_text(
        json.dumps(
            {"schemaVersion": "blueprint.eval-set/v1", "name": "logs", "caseFamilies": FAMILIES}
        )
    )


@pytest.fixture(scope="module")
def large_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("large") / "logs"
    _large_shards(folder)
    return folder


def test_two_million_rows_in_shards_on_a_cluster(large_set: Path, cluster: str) -> None:
    """The issue's measure: a sharded two-million-row set gives the same findings on a local
    cluster of two worker processes as in one process."""
    serial = validate_shards([large_set]).to_json()
    assert serial["rows"] == LARGE_ROWS
    assert on_dask(cluster, [large_set]) == serial
    codes = {issue["code"] for issue in serial["issues"]}
    assert {"duplicate-id", "duplicate-input"} <= codes


def test_two_million_rows_graded_on_a_cluster(
    large_set: Path, cluster: str, tmp_path: Path
) -> None:
    """The same verdicts, row for row, on a local cluster as in one process: a result for
    every id but a few (not run), most passing, some failing, the repeated ids invalid."""
    results = tmp_path / "results.jsonl"
    with results.open("w", encoding="utf-8") as handle:
        for n in range(LARGE_ROWS):
            if n % 99_991 and n % 400_009 != 5:  # a repeated id's row; a row not run
                handle.write(f'{{"id": "r{n}", "output": "{"yes" if n % 7 else "no"}"}}\n')
    serial = grade_set(large_set, [results], source_format="shards")
    with DaskEngine(2, cluster) as engine:
        remote = grade_set(large_set, [results], source_format="shards", engine=engine)
    assert remote.rows == serial.rows
    assert remote.to_json()["summary"] == serial.to_json()["summary"]
    counts = serial.summary()["verdicts"]
    assert counts["pass"] > counts["fail"] > 0 and counts["invalid"] and counts["not-run"]


def test_two_million_rows_searched_for_exact_duplicates_on_a_cluster(
    large_set: Path, cluster: str
) -> None:
    serial = find_duplicates([large_set], near=False, format="shards")
    with DaskEngine(2, cluster) as engine:
        remote = exact_duplicates(engine, [large_set])
    assert remote.to_json() == serial.to_json()
    assert serial.sets[0].rows == LARGE_ROWS and len(serial.exact) > 10
