"""Rows per second per worker for a set in shards: one process, the local pool, and Dask.

Run by hand from the repository root, on a machine doing nothing else::

    python benchmarks/scale.py                              # 200,000 rows in 8 shards
    python benchmarks/scale.py --rows 2000000 --workers 1 2 --repeat 3
    python benchmarks/scale.py --command grade --trials 2   # grading, a results file a trial
    python benchmarks/scale.py --command dedupe             # exact and near-duplicates
    python benchmarks/scale.py --json > scale.json

The set is the one ``benchmarks/jobs.py`` validates (``bench_core.generate_rows`` with
repeated inputs and ids planted), cut into ``--shards`` JSON Lines files in a folder with
its set file beside. Each run validates it in a fresh child process:

- ``one process``: ``blueprint validate --shards`` with ``--jobs 1``;
- ``local``: the pool of ``--jobs N`` processes;
- ``dask``: ``--engine dask`` on a local Dask cluster of N worker processes, one thread
  each, started before the clock starts and warmed by validating the first shard (a real
  cluster is running already; the warming's own time is shown apart).

With ``--command grade``, each run grades the shards against ``--trials`` results files
(a result for every id, the first row of an id alone, each an output its row's rule may or
may not pass) instead: ``one process`` validates and grades in one process, ``local``
validates on the pool and grades in one process (``grade --jobs N``), ``dask`` validates
and grades on the cluster (``grade --engine dask``), warmed by grading the first shard
against an empty results file.

With ``--command dedupe`` (or ``dedupe-exact``), each run searches the shards for exact and
near-duplicate inputs (exact ones only): ``one process`` as ``blueprint dedupe --shards``
does, ``local`` on the pool (``dedupe --shards -j N``), ``dask`` on the cluster, warmed by
searching the first shard.

A run that finds other findings (or verdicts, or duplicate groups) than the one-process run
stops the benchmark.
``rows/s a worker`` is rows over wall seconds over workers; its ratio to the one-process
figure is what the issue's target (within 1.3x) is about.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import HEADER
from jobs import best_of, rows_with_repeats


def write_shards(rows: int, shards: int, folder: Path) -> Path:
    """The benchmark's rows in ``shards`` JSON Lines files under ``folder/logs``."""
    import orjson

    logs = folder / "logs"
    logs.mkdir()
    per_shard = -(-rows // shards)
    handles = [(logs / f"part-{n:05d}.jsonl").open("wb") for n in range(shards)]
    try:
        for index, row in enumerate(rows_with_repeats(rows)):
            handles[index // per_shard].write(orjson.dumps(row) + b"\n")
    finally:
        for handle in handles:
            handle.close()
    (folder / "logs.set.json").write_bytes(orjson.dumps(HEADER))
    return logs


def write_results(rows: int, trials: int, folder: Path) -> list[Path]:
    """A results file a trial: one result for each id (its first row's), whose output is
    the row's ``expected`` text in some trials and another text in the others."""
    import orjson

    paths = [folder / f"trial-{n + 1}.jsonl" for n in range(trials)]
    handles = [path.open("wb") for path in paths]
    seen: set[str] = set()
    try:
        for index, row in enumerate(rows_with_repeats(rows)):
            if row["id"] in seen:
                continue
            seen.add(row["id"])
            expected = row.get("expected")
            for trial, handle in enumerate(handles):
                output = expected if isinstance(expected, str) and (index + trial) % 4 else "no"
                handle.write(orjson.dumps({"id": row["id"], "output": output}) + b"\n")
    finally:
        for handle in handles:
            handle.close()
    (folder / "empty.jsonl").write_bytes(b"")
    return paths


def _dedupe(command: str, folder: Path, jobs: int = 1, engine: Any = None) -> tuple[int, Any]:
    """Search the shards for duplicates: the rows, and a digest of the report."""
    import hashlib

    from blueprint.authoring.buckets import bucketed_duplicates
    from blueprint.authoring.hygiene import DuplicateOptions, find_duplicates
    from blueprint.validation.engines import PoolEngine

    near = command == "dedupe"
    if engine is not None:
        report = bucketed_duplicates(engine, [folder], DuplicateOptions(near=near))
    elif jobs > 1:
        with PoolEngine(jobs) as pool:
            report = bucketed_duplicates(pool, [folder], DuplicateOptions(near=near))
    else:
        report = find_duplicates([folder], near=near, format="shards")
    digest = hashlib.sha256(json.dumps(report.to_json(), sort_keys=True).encode()).hexdigest()
    return report.sets[0].rows, {**report.counts(), "digest": digest[:16]}


def _run(command: str, folder: Path, results: list[Path], **how: Any) -> tuple[int, Any]:
    """Validate, grade or search the shards: the rows, and what was found (to compare runs
    by)."""
    if command.startswith("dedupe"):
        return _dedupe(command, folder, **how)
    if command == "grade":
        from blueprint.grading import grade_set

        graded = grade_set(folder, results, source_format="shards", **how)
        return len(graded.rows), json.dumps(graded.summary()["verdicts"], sort_keys=True)
    from blueprint.validation.validate import validate_shards

    report = validate_shards([folder], **how)
    return report.rows, len(report.issues)


def child_main(argv: Sequence[str]) -> int:
    """Validate or grade the shards one way; print seconds and what was found."""
    mode, folder, workers, command = argv[0], Path(argv[1]), int(argv[2]), argv[3]
    results = [Path(path) for path in argv[4:]]
    if mode == "dask":
        import dask
        import distributed

        from blueprint.validation.engines import WORKER_CONFIG, DaskEngine

        with (
            # the workers' settings a run's own cluster takes (docs/scale.md)
            dask.config.set(WORKER_CONFIG),
            distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            ) as cluster,
            DaskEngine(workers, cluster.scheduler_address) as engine,
        ):
            # a cluster runs on: its workers have imported Blueprint and built the schema's
            # validator before the set comes; what that takes a fresh cluster is shown apart
            started = time.perf_counter()
            first = sorted(folder.glob("*.jsonl"))[:1]
            if command == "grade":
                from blueprint.grading import grade_set

                empty = [folder.parent / "empty.jsonl"]
                grade_set(first[0], empty, source_format="shards", engine=engine)
            elif command.startswith("dedupe"):
                _dedupe(command, first[0], engine=engine)
            else:
                from blueprint.validation.validate import validate_shards

                validate_shards(first, engine=engine)
            warming = time.perf_counter() - started
            started = time.perf_counter()
            rows, found = _run(command, folder, results, engine=engine)
            seconds = time.perf_counter() - started
    else:
        warming = 0.0
        started = time.perf_counter()
        rows, found = _run(command, folder, results, jobs=workers)
        seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "warming": warming, "rows": rows, "issues": found}))
    return 0


def run_child(
    mode: str, folder: Path, workers: int, repeat: int, command: str, results: list[Path]
) -> dict[str, Any]:
    """The best of ``repeat`` runs, each in a fresh process."""
    script = [str(Path(__file__).resolve()), "--child", mode, str(folder), str(workers), command]
    return best_of([*script, *map(str, results)], repeat)


def measure(
    rows: int,
    shards: int,
    workers: Sequence[int],
    repeat: int,
    folder: Path,
    dask: bool,
    command: str = "validate",
    trials: int = 1,
) -> list[dict[str, Any]]:
    logs = write_shards(rows, shards, folder)
    results = write_results(rows, trials, folder) if command == "grade" else []
    runs = [("one process", 1)]
    runs += [("local", count) for count in workers if count > 1]
    if dask:
        runs += [("dask", count) for count in workers]
    measured: list[dict[str, Any]] = []
    for label, count in runs:
        mode = "dask" if label == "dask" else "local"
        found = run_child(mode, logs, count, repeat, command, results)
        if measured and found["issues"] != measured[0]["issues"]:
            raise RuntimeError(f"{label} x{count} found {found['issues']}, not the same")
        per_worker = rows / found["seconds"] / count
        single = measured[0]["rowsPerSecondPerWorker"] if measured else per_worker
        measured.append(
            {
                "path": label,
                "workers": count,
                **found,
                "rowsPerSecondPerWorker": per_worker,
                "perWorkerOverOneProcess": per_worker / single,
            }
        )
    return measured


def print_table(measured: list[dict[str, Any]]) -> None:
    print(
        "| path | workers | rows | wall s | rows/s | rows/s a worker | a worker / one process"
        " | first shard on a fresh cluster, s |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for found in measured:
        warming = f"{found['warming']:.2f}" if found["path"] == "dask" else ""
        print(
            f"| {found['path']} | {found['workers']} | {found['rows']:,} | {found['seconds']:.2f}"
            f" | {found['rows'] / found['seconds']:,.0f} | {found['rowsPerSecondPerWorker']:,.0f}"
            f" | {found['perWorkerOverOneProcess']:.2f} | {warming} |"
        )


def main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "--child":
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument(
        "--command", choices=["validate", "grade", "dedupe", "dedupe-exact"], default="validate"
    )
    parser.add_argument("--trials", type=int, default=1, help="results files, for grade")
    parser.add_argument("--no-dask", action="store_true", help="leave Dask out")
    parser.add_argument("--json", action="store_true", help="print JSON, not a table")
    parser.add_argument("--workdir", type=Path, default=None, help="where the shards are written")
    args = parser.parse_args(argv)
    if any(count < 1 for count in args.workers) or args.shards < 1 or args.trials < 1:
        parser.error("--workers, --shards and --trials: whole numbers, 1 or more")
    dask = not args.no_dask
    if dask:
        try:
            import distributed  # noqa: F401
        except ImportError:
            parser.error("Dask is not installed (pip install -e '.[dask]'), or pass --no-dask")
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        print(f"{os.cpu_count()} CPUs; {args.rows:,} rows in {args.shards} shards", file=sys.stderr)
        measured = measure(
            args.rows,
            args.shards,
            args.workers,
            args.repeat,
            Path(folder),
            dask,
            args.command,
            args.trials,
        )
    if args.json:
        print(json.dumps(measured, indent=2))
    else:
        print_table(measured)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
