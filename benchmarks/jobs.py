"""How ``blueprint validate --jobs N`` scales: wall time, and the parent's share of the work.

Run by hand from the repository root, on a machine doing nothing else::

    python benchmarks/jobs.py                          # 200,000 rows; --jobs 1 and 2
    python benchmarks/jobs.py --rows 1000000 --jobs 1 2 4 --repeat 3
    python benchmarks/jobs.py --json > jobs.json

The set is ``bench_core.generate_rows`` (the six oracle types in turn, about 950 bytes a row)
written as JSON Lines with its set file, and with every hundredth row's input and every
five-hundredth row's id repeated from an earlier row, so that the checks across rows have
findings to give. Each validation runs in a fresh child process, which reports its wall time,
its own CPU time (the parent's) and its workers' (``RUSAGE_CHILDREN``), and its peak RSS. The
parent's share is its CPU time over the whole; the pool can go no faster than the whole work
over the parent's part, however many cores it has.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import HEADER, generate_rows

MIB = 1024 * 1024


def rows_with_repeats(count: int) -> Iterator[dict[str, Any]]:
    """The benchmark's rows, every 100th repeating an earlier row's input and every 500th an
    earlier row's id."""
    earlier: dict[str, Any] = {}
    for index, row in enumerate(generate_rows(count)):
        if index and index % 100 == 0:
            row["input"] = earlier["input"]
        if index and index % 500 == 0:
            row["id"] = earlier["id"]
        if index % 1000 == 7:
            earlier = row
        yield row


def child_main(argv: Sequence[str]) -> int:
    """Validate the set with ``--jobs``; print seconds, CPU seconds and peak RSS."""
    from blueprint.validation.validate import validate_file

    path, jobs = Path(argv[0]), int(argv[1])
    started, cpu = time.perf_counter(), time.process_time()
    report = validate_file(path, jobs=jobs)
    seconds, own = time.perf_counter() - started, time.process_time() - cpu
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        json.dumps(
            {
                "seconds": seconds,
                "parentCpu": own,
                "workerCpu": workers.ru_utime + workers.ru_stime,
                "rows": report.rows,
                "issues": len(report.issues),
                "rss": peak,
            }
        )
    )
    return 0


def run_child(path: Path, jobs: int, repeat: int) -> dict[str, Any]:
    """The best of ``repeat`` runs, each in a fresh process."""
    return best_of([str(Path(__file__).resolve()), "--child", str(path), str(jobs)], repeat)


def best_of(script: list[str], repeat: int) -> dict[str, Any]:
    """The fastest of ``repeat`` runs of a benchmark script's child, each in a fresh process;
    the child prints its figures as JSON, ``seconds`` among them, on its last line."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, *script], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"validation failed (exit {done.returncode}):\n{done.stderr}")
        found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        if best is None or found["seconds"] < best["seconds"]:
            best = found
    assert best is not None
    return best


def measure(rows: int, jobs: Sequence[int], repeat: int, folder: Path) -> list[dict[str, Any]]:
    from blueprint.formats import REGISTRY, WriteOptions

    path = folder / "set.jsonl"
    REGISTRY["jsonl"].write(HEADER, rows_with_repeats(rows), path, WriteOptions(force=True))
    measured = []
    one: float | None = None
    issues: int | None = None
    for count in jobs:
        found = run_child(path, count, repeat)
        if issues is None:
            issues = found["issues"]
        elif found["issues"] != issues:
            raise RuntimeError(f"--jobs {count} found {found['issues']} issues, not {issues}")
        one = one or found["seconds"]
        work = found["parentCpu"] + found["workerCpu"]
        measured.append(
            {
                "rows": rows,
                "jobs": count,
                **found,
                "speedup": one / found["seconds"],
                "parentShare": found["parentCpu"] / work if work else None,
                "rowsPerSecondPerWorker": rows / found["seconds"] / count,
            }
        )
    return measured


def print_table(measured: list[dict[str, Any]]) -> None:
    print(
        "| rows | jobs | wall s | parent CPU s | workers' CPU s | x --jobs 1 | parent's share"
        " | rows/s a worker | peak RSS MiB (parent) |"
    )
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for found in measured:
        share = found["parentShare"]
        print(
            f"| {found['rows']:,} | {found['jobs']} | {found['seconds']:.2f}"
            f" | {found['parentCpu']:.2f} | {found['workerCpu']:.2f} | {found['speedup']:.2f}"
            f" | {'-' if share is None or found['jobs'] == 1 else f'{share:.1%}'}"
            f" | {found['rowsPerSecondPerWorker']:,.0f} | {found['rss'] / MIB:.1f} |"
        )


def main(argv: Sequence[str]) -> int:
    if argv and argv[0] == "--child":
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument("--json", action="store_true", help="print JSON, not a table")
    parser.add_argument("--workdir", type=Path, default=None, help="where the set is written")
    args = parser.parse_args(argv)
    if any(count < 1 for count in args.jobs):
        parser.error("--jobs: give whole numbers of processes, 1 or more")
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        print(f"{os.cpu_count()} CPUs; {args.rows:,} rows", file=sys.stderr)
        measured = measure(args.rows, args.jobs, args.repeat, Path(folder))
    if args.json:
        print(json.dumps(measured, indent=2))
    else:
        print_table(measured)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
