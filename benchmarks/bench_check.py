"""How long `blueprint check` takes on a repository of many sets.

Generates a repository of SETS golden sets of ROWS rows each (JSON, JSON Lines and CSV in
turn, the rows of bench_core.py), a configuration that round-trips every set through the
vendor formats given, and times `check_sets` over it, in this process (no start-up counted).

    python benchmarks/bench_check.py                         # 36 sets of 200 rows
    python benchmarks/bench_check.py --sets 60 --rows 1000 --roundtrip promptfoo deepeval
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_core import generate_rows

from blueprint.formats import REGISTRY, WriteOptions
from blueprint.project.check import check_sets
from blueprint.project.config import load_project
from blueprint.project.discovery import project_sets

FORMATS = ("json", "jsonl", "csv")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=36)
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--roundtrip", nargs="*", default=["deepeval"])
    parser.add_argument("--jobs", type=int, default=1, help="processes (as check --jobs)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="blueprint-bench-check-") as folder:
        root = Path(folder)
        (root / "evals").mkdir()
        header = {"schemaVersion": "blueprint.eval-set/v1", "name": "bench"}
        for number in range(arguments.sets):
            fmt = FORMATS[number % len(FORMATS)]
            path = root / "evals" / f"set-{number:03d}.{fmt}"
            rows = generate_rows(arguments.rows, seed=number)
            REGISTRY[fmt].write(header, rows, path, WriteOptions())
        listed = ", ".join(f'"{name}"' for name in arguments.roundtrip)
        (root / "blueprint.toml").write_text(
            f'include = ["evals/*"]\nroundtrip = [{listed}]\n', encoding="utf-8"
        )
        project = load_project(start=root)
        started = time.perf_counter()
        report = check_sets(project, project_sets(project), jobs=arguments.jobs)
        seconds = time.perf_counter() - started
    steps = sum(len(outcome.steps) for outcome in report.sets)
    rows = arguments.sets * arguments.rows
    print(
        f"{arguments.sets} sets x {arguments.rows} rows, round-trips: canonical +"
        f" {', '.join(arguments.roundtrip) or 'none'}: {seconds:.2f} s,"
        f" {steps} steps, {rows / seconds:,.0f} rows/s checked,"
        f" {'passed' if report.passed else 'FAILED'}"
    )
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
