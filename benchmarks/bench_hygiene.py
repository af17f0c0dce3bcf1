"""Throughput and peak-memory benchmark for finding duplicate inputs and splitting a set.

Run by hand from the repository root::

    python benchmarks/bench_hygiene.py                   # 10,000 and 100,000 rows
    python benchmarks/bench_hygiene.py --rows 1000 --json

Two kinds of set are measured. ``varied``: inputs of 8 to 30 words drawn from a large
vocabulary, with 5% of the rows an earlier row's input re-cased and re-punctuated (exact
duplicates) and 5% an earlier input with one word added (near-duplicates). ``templated``: the
rows of ``bench_core.py``, a handful of templates filled with products, order numbers and
amounts, where thousands of inputs are near one another: the hard case for near-duplicate
search. Each operation runs in a fresh child process, as in ``bench_core.py``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench_core import HEADER, MIB, SEED, generate_rows, peak_rss_bytes, progress

DEFAULT_ROWS = (10_000, 100_000)
KINDS = ("varied", "templated")
OPERATIONS = ("dedupe-exact", "dedupe", "split")


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "de", "fi"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randrange(2, 5))))
    return sorted(words)


def varied_rows(count: int, seed: int = SEED) -> Iterator[dict[str, Any]]:
    """Mostly distinct inputs, with planted exact (5%) and near (5%) duplicates."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng)
    recent: list[str] = []
    for index in range(count):
        draw = rng.random()
        if recent and draw < 0.05:
            text = rng.choice(recent).upper() + "?!"
        elif recent and draw < 0.10:
            words = rng.choice(recent).split()
            words.insert(rng.randrange(len(words) + 1), rng.choice(vocabulary))
            text = " ".join(words)
        else:
            text = " ".join(rng.choice(vocabulary) for _ in range(rng.randrange(8, 31)))
            recent = [*recent[-999:], text]
        row_id = f"row-{index:06d}"
        yield {
            "id": row_id,
            "input": text,
            "expected": "yes",
            "metadata": {
                "case": {
                    "caseId": row_id,
                    "oracleType": "reference-answer",
                    "expectedBehavior": "answers",
                    "provenance": "expert-authored",
                    "caseFamily": f"family-{index % 7}",
                }
            },
        }


def child_main(argv: Sequence[str]) -> int:
    from blueprint.authoring.hygiene import find_duplicates
    from blueprint.authoring.splits import SplitOptions, parse_ratios, split_set
    from blueprint.formats import REGISTRY, WriteOptions

    operation, *args = argv
    started = time.perf_counter()
    found: dict[str, int] = {}
    if operation == "write":
        kind, count, path = args
        rows = varied_rows(int(count)) if kind == "varied" else generate_rows(int(count))
        REGISTRY["jsonl"].write(HEADER, rows, Path(path), WriteOptions(force=True))
    elif operation in ("dedupe", "dedupe-exact"):
        report = find_duplicates([args[0]], near=operation == "dedupe")
        found = report.counts()
    elif operation == "split":
        options = SplitOptions(parse_ratios("train=0.8,test=0.2"), seed=1, force=True)
        result = split_set(args[0], options, output=args[1])
        found = {"groups": result.groups, "groupedRows": result.grouped_rows}
    else:
        raise SystemExit(f"unknown child operation {operation!r}")
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "found": found, "rss": peak_rss_bytes()}))
    return 0


def run_child(*args: str | Path) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", *map(str, args)]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{completed.stderr}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(description="Benchmark blueprint dedupe and split.")
    parser.add_argument("--rows", type=int, nargs="+", default=list(DEFAULT_ROWS), metavar="N")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="blueprint-bench-hygiene-") as folder:
        for size in sorted(set(args.rows)):
            for kind in args.kinds:
                path = Path(folder) / f"{kind}-{size}.jsonl"
                progress(f"{size:,} {kind} rows: write")
                run_child("write", kind, str(size), path)
                for operation in OPERATIONS:
                    progress(f"{size:,} {kind} rows: {operation}")
                    extra = [Path(folder) / "split.jsonl"] if operation == "split" else []
                    raw = run_child(operation, path, *extra)
                    results.append(
                        {
                            "rows": size,
                            "kind": kind,
                            "operation": operation,
                            "seconds": raw["seconds"],
                            "rows_per_second": size / raw["seconds"],
                            "peak_rss_mib": raw["rss"] / MIB,
                            "found": raw["found"],
                        }
                    )
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    heading = ("rows", "kind", "operation", "seconds", "rows/s", "RSS MiB")
    print("{:>8}  {:<10} {:<13} {:>8} {:>8} {:>8}".format(*heading))
    for item in results:
        print(
            f"{item['rows']:>8,}  {item['kind']:<10} {item['operation']:<13}"
            f" {item['seconds']:>8.1f} {item['rows_per_second']:>8,.0f}"
            f" {item['peak_rss_mib']:>8.1f}  {item['found']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
