"""Blueprint's speed and memory next to the yardsticks, on the same generated sets, in one run.

Run from the repository root, with the bench extra installed (``pip install -e ".[bench]"``)::

    python benchmarks/run.py                                # a quick size (2,000 rows)
    python benchmarks/run.py --rows 10000 100000 1000000
    python benchmarks/run.py --rows 100000 --json > results.json
    python benchmarks/run.py --only convert                 # the measurements whose name has it

For every size it generates a canonical set (``bench_core.generate_rows``: all six oracle
types, unicode, nested metadata, unique inputs), writes it as JSON Lines, JSON and CSV, and
measures, each in a child process of its own:

- the yardsticks: ``orjson.loads`` per line of the JSON Lines file (the floor every ratio is
  against), per-row ``jsonschema`` with the published row schema, jsonschema-rs (the row
  schema alone, no cross-field checks) and pandas for the canonical conversions;
- ``blueprint validate`` of each canonical form, ``blueprint convert`` to every canonical
  form and to every vendor format ``blueprint formats`` lists, ``blueprint diff`` of the set
  against a copy with 1% of its rows changed, and the start-up of ``blueprint --help`` and of
  validating an 8-row file.

A child measures the CPU time of its work (``time.process_time``; start-up and imports not
counted, except for the start-up rows, which are the whole process); the parent takes the
child's peak RSS from ``os.wait4``. ``x parse`` is the operation's rows per second over the
floor's: 0.3 means a third of the speed of just parsing the JSON Lines.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import HEADER, MIB, generate_rows

ROOT = Path(__file__).resolve().parent.parent
ROW_SCHEMA = ROOT / "schemas" / "row.schema.json"
EXAMPLE = ROOT / "examples" / "support-refunds.json"
DEFAULT_ROWS = (2_000,)
#: the share of rows the right-hand side of the diff changes
DIFF_CHANGED = 0.01


# --- the child: one measurement per process ---------------------------------------------------


def _cli(arguments: list[str]) -> int:
    """Run the command line in this process, its output thrown away; the exit code."""
    from blueprint.cli import app

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            code = app(arguments, standalone_mode=False)
        except SystemExit as stop:
            code = stop.code
    return code if isinstance(code, int) else 0


def _lines(path: Path) -> int:
    import orjson

    count = 0
    with path.open("rb") as handle:
        for line in handle:
            if line.strip():
                orjson.loads(line)
                count += 1
    return count


def _jsonschema(path: Path) -> int:
    import jsonschema
    import orjson

    validator = jsonschema.Draft202012Validator(json.loads(ROW_SCHEMA.read_text("utf-8")))
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            errors = list(validator.iter_errors(orjson.loads(line)))
            if errors:
                raise SystemExit(f"row schema: {errors[0].message}")
            count += 1
    return count


def _jsonschema_rs(path: Path) -> int:
    import jsonschema_rs
    import orjson

    validator = jsonschema_rs.validator_for(json.loads(ROW_SCHEMA.read_text("utf-8")))
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            if not validator.is_valid(orjson.loads(line)):
                raise SystemExit("row schema: a row is not valid")
            count += 1
    return count


def _csv_reader(path: Path) -> int:
    import csv

    with path.open(newline="", encoding="utf-8") as handle:
        return sum(1 for _ in csv.reader(handle)) - 1  # less the header


def _pandas(source: Path, target: Path) -> int:
    import pandas as pd

    if source.suffix == ".csv":
        frame = pd.read_csv(source, dtype=str, keep_default_na=False)
    else:
        frame = pd.read_json(source, lines=True, dtype=False)
    if target.suffix == ".csv":
        frame.to_csv(target, index=False)
    else:
        frame.to_json(target, orient="records", lines=target.suffix == ".jsonl", force_ascii=False)
    return len(frame)


def mutated_copy(source: Path, target: Path) -> int:
    """A copy of a JSON Lines set with every hundredth row changed, for the diff."""
    import orjson

    step = round(1 / DIFF_CHANGED)
    count = 0
    with source.open("rb") as reading, target.open("wb") as writing:
        for number, line in enumerate(reading):
            if number % step == 0:
                row = orjson.loads(line)
                row["metadata"]["case"]["expectedBehavior"] += " (revised)"
                line = orjson.dumps(row) + b"\n"
            writing.write(line)
            count += 1
    sidecar = source.with_name(source.name + ".set.json")
    if sidecar.exists():
        shutil.copyfile(sidecar, target.with_name(target.name + ".set.json"))
    return count


def _results(source: Path, target: Path) -> int:
    """Recorded results for every row of a JSON Lines set, each meeting its row's oracle."""
    import orjson

    count = 0
    with source.open("rb") as reading, target.open("wb") as writing:
        for line in reading:
            row = orjson.loads(line)
            if not isinstance(row, dict) or "id" not in row:
                continue  # the set file's header record
            expected = row.get("expected")
            result: dict[str, Any] = {"id": row["id"], "output": "an answer"}
            if isinstance(expected, dict) and "calls" in expected:
                result["toolCalls"] = expected["calls"]
            elif isinstance(expected, dict) and "checks" in expected:
                checks = expected["checks"]
                result["finalState"] = {
                    "files": [c["path"] for c in checks if c["kind"] == "file_exists"],
                    "commands": {c["run"]: c["exitCode"] for c in checks if c["kind"] == "command"},
                    "records": {
                        c["description"]: c.get("equals") for c in checks if c["kind"] == "record"
                    },
                }
            elif isinstance(expected, dict) and "acceptable" in expected:
                result["output"] = expected["acceptable"][-1]
            elif isinstance(expected, dict) and "graded" in expected:
                result["output"] = expected["graded"][0]["value"]
            elif expected is not None:
                result["output"] = expected
            writing.write(orjson.dumps(result) + b"\n")
            count += 1
    return count


def _write(fmt: str, size: int, path: Path) -> int:
    from blueprint.formats import REGISTRY, WriteOptions

    return REGISTRY[fmt].write(HEADER, generate_rows(size), path, WriteOptions(force=True)).rows


def _baseline() -> int:
    # what every Blueprint measurement imports before its work; its peak RSS is the floor the
    # memory per row is counted from
    import blueprint.cli
    import blueprint.convert
    import blueprint.diff
    import blueprint.validation.validate

    del blueprint
    return 0


def _baseline_diff() -> int:
    # diff also loads deepdiff, which brings numpy and pandas: some 70 MiB before any row
    _baseline()
    import deepdiff

    del deepdiff
    return 0


CHILD_OPERATIONS: dict[str, Callable[..., Any]] = {
    "baseline": lambda: _baseline(),
    "baseline-diff": lambda: _baseline_diff(),
    "write": lambda fmt, size, path: _write(fmt, int(size), Path(path)),
    "mutate": lambda source, target: mutated_copy(Path(source), Path(target)),
    "results": lambda source, target: _results(Path(source), Path(target)),
    "parse": lambda path: _lines(Path(path)),
    "jsonschema": lambda path: _jsonschema(Path(path)),
    "jsonschema-rs": lambda path: _jsonschema_rs(Path(path)),
    "pandas": lambda source, target: _pandas(Path(source), Path(target)),
    "csv-reader": lambda path: _csv_reader(Path(path)),
    "cli": lambda *arguments: _cli(list(arguments)),
    "vendor-targets": lambda: _vendor_targets(),
}


def child_main(argv: Sequence[str]) -> int:
    operation, *args = argv
    # imports happen before the clock starts, so only the work is timed
    if operation == "cli":
        import blueprint.cli  # noqa: F401
    started, clock = time.process_time(), time.perf_counter()
    result = CHILD_OPERATIONS[operation](*args)
    cpu, wall = time.process_time() - started, time.perf_counter() - clock
    print(json.dumps({"cpu": cpu, "wall": wall, "result": result}))
    return 0


# --- the parent ----------------------------------------------------------------------------


@dataclass
class Measurement:
    rows: int
    name: str
    kind: str  # "floor", "yardstick", "blueprint", "pool", "start-up"
    cpu_seconds: float
    peak_rss_mib: float
    exit_code: int | None = None
    #: elapsed time of the work; for the pool row the one figure that counts its workers
    wall_seconds: float | None = None
    rows_per_second: float | None = None
    of_parse: float | None = None
    kib_per_row: float | None = None


def run_child(
    arguments: Sequence[str], *, whole: bool = False
) -> tuple[float, int, Any, float | None]:
    """(CPU seconds, peak RSS bytes, result, wall seconds) of one child; ``whole`` times the
    whole process (and gives no wall time)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", *arguments]
    if whole:
        command = list(arguments)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    output = process.stdout.read()
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss if sys.platform == "darwin" else usage.ru_maxrss * 1024
    if whole:
        return usage.ru_utime + usage.ru_stime, peak, process.returncode, None
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} failed:\n{errors.decode(errors='replace')}")
    report = json.loads(output.decode().strip().splitlines()[-1])
    return report["cpu"], peak, report["result"], report["wall"]


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _vendor_targets() -> list[tuple[str, str]]:
    """(format, file name) for every vendor format that writes, in its first form."""
    from blueprint.formats import REGISTRY

    targets = []
    for codec in REGISTRY.values():
        if codec.lossless or not codec.can_write:
            continue
        forms = [form for form in codec.write_forms if form] or [""]
        targets.append((codec.name, f"out-{codec.name}{forms[0]}"))
    return targets


def vendor_targets() -> list[tuple[str, str]]:
    # asked of a child: the parent stays small, since a child's peak RSS counts the parent's
    # pages it was forked with
    _, _, targets, _ = run_child(["vendor-targets"])
    return [(fmt, name) for fmt, name in targets]


class Bench:
    def __init__(self, folder: Path, only: str | None, start_up_runs: int) -> None:
        self.folder = folder
        self.only = only
        self.start_up_runs = start_up_runs
        self.results: list[Measurement] = []
        #: the file each vendor export writes, by measurement (its extension sets its target)
        self.outputs: dict[str, str] = {}
        self.baseline_rss = 0
        self.diff_baseline_rss = 0

    def wanted(self, name: str) -> bool:
        return self.only is None or self.only in name

    def measure(self, size: int, name: str, kind: str, arguments: Sequence[str]) -> None:
        if not self.wanted(name) and kind != "floor":  # every ratio needs the floor
            return
        progress(f"{size:,} rows: {name}")
        cpu, peak, result, wall = run_child(arguments)
        self.results.append(
            Measurement(
                size,
                name,
                kind,
                cpu,
                peak / MIB,
                result if kind in ("blueprint", "pool") else None,
                wall,
            )
        )

    def size(self, size: int) -> None:
        folder = self.folder / str(size)
        folder.mkdir()
        sources = {fmt: folder / f"set.{fmt}" for fmt in ("jsonl", "json", "csv")}
        progress(f"{size:,} rows: writing the set")
        for fmt, path in sources.items():
            run_child(["write", fmt, str(size), str(path)])
        jsonl = str(sources["jsonl"])

        self.measure(size, "orjson parse (floor)", "floor", ["parse", jsonl])
        self.measure(size, "jsonschema row schema", "yardstick", ["jsonschema", jsonl])
        self.measure(size, "jsonschema-rs row schema", "yardstick", ["jsonschema-rs", jsonl])
        self.measure(
            size, "csv.reader (CSV floor)", "yardstick", ["csv-reader", str(sources["csv"])]
        )
        for source, target in (("jsonl", "csv"), ("csv", "jsonl"), ("jsonl", "json")):
            self.measure(
                size,
                f"pandas {source} -> {target}",
                "yardstick",
                ["pandas", str(sources[source]), str(folder / f"pandas.{target}")],
            )
        for fmt, path in sources.items():
            self.measure(
                size, f"validate {fmt}", "blueprint", ["cli", "validate", "--jobs", "1", str(path)]
            )
        # the pool: its workers' CPU is not the child's, so its wall time is the figure to read
        jobs = str(max(2, os.cpu_count() or 1))
        for fmt in ("jsonl", "json"):
            self.measure(
                size,
                f"validate {fmt}, {jobs} processes",
                "pool",
                ["cli", "validate", "--jobs", jobs, str(sources[fmt])],
            )
        for source, target in (("jsonl", "json"), ("jsonl", "csv"), ("csv", "jsonl")):
            out = folder / f"out.{target}"
            self.measure(
                size,
                f"convert {source} -> {target}",
                "blueprint",
                ["cli", "convert", str(sources[source]), str(out), "--force"],
            )
        self.measure(
            size,
            "convert json -> jsonl",
            "blueprint",
            ["cli", "convert", str(sources["json"]), str(folder / "out-2.jsonl"), "--force"],
        )
        for fmt, name in vendor_targets():
            self.outputs[f"convert jsonl -> {fmt}"] = name
            self.measure(
                size,
                f"convert jsonl -> {fmt}",
                "blueprint",
                ["cli", "convert", jsonl, str(folder / name), "--to", fmt, "--force"],
            )
        if self.wanted("grade"):
            recorded = folder / "results.jsonl"
            run_child(["results", jsonl, str(recorded)])
            self.measure(
                size,
                "grade jsonl (a result a row)",
                "blueprint",
                ["cli", "grade", jsonl, str(recorded)],
            )
        if self.wanted("diff"):
            changed = folder / "changed.jsonl"
            run_child(["mutate", jsonl, str(changed)])
            self.measure(
                size, "diff jsonl (1% changed)", "blueprint", ["cli", "diff", jsonl, str(changed)]
            )
        shutil.rmtree(folder)
        self.derive(size)

    def derive(self, size: int) -> None:
        floor = next((m for m in self.results if m.rows == size and m.kind == "floor"), None)
        for item in self.results:
            if item.rows != size or item.kind == "start-up":
                continue
            # the pool's work is done in its workers: its speed is its wall time's
            spent = item.wall_seconds if item.kind == "pool" else item.cpu_seconds
            if spent:
                item.rows_per_second = size / spent
                if floor is not None:
                    item.of_parse = floor.cpu_seconds / spent
            diff = item.name.startswith("diff")
            baseline = self.diff_baseline_rss if diff else self.baseline_rss
            grown = item.peak_rss_mib * MIB - baseline
            item.kib_per_row = max(grown, 0) / size / (2 if diff else 1) / 1024

    def start_up(self) -> None:
        blueprint = [sys.executable, "-m", "blueprint"]
        floor = [sys.executable, "-c", "import typer, pydantic, jsonschema"]
        for name, command in (
            ("start-up floor: import typer, pydantic, jsonschema", floor),
            ("start-up: blueprint --help", [*blueprint, "--help"]),
            ("start-up: blueprint validate (8 rows)", [*blueprint, "validate", str(EXAMPLE)]),
        ):
            if not self.wanted(name):
                continue
            progress(name)
            # the best of several: start-up is short enough for noise to matter
            runs = [run_child(command, whole=True) for _ in range(self.start_up_runs)]
            cpu = min(run[0] for run in runs)
            peak = max(run[1] for run in runs)
            self.results.append(Measurement(8, name, "start-up", cpu, peak / MIB, runs[0][2]))


# --- the targets ---------------------------------------------------------------------------

#: peak RSS no Blueprint measurement may reach, at any size
MAX_PEAK_MIB: Final = 120
#: the least share of the floor's speed (orjson, one row at a time) each canonical
#: conversion keeps
CANONICAL_CONVERSIONS: Final = (
    "convert jsonl -> json",
    "convert jsonl -> csv",
    "convert csv -> jsonl",
    "convert json -> jsonl",
)
#: vendor exports: a JSON or JSON Lines output, and a document format (YAML, TOML)
VENDOR_SHARE: Final = 0.15
DOCUMENT_SHARE: Final = 0.05
DOCUMENT_SUFFIXES: Final = (".yaml", ".yml", ".toml")
#: the floors below the goals above, one process: the least a row pass may keep of the
#: floor's speed (JSON Lines, a JSON document, a conversion to JSON or JSON Lines) and how
#: much faster the pool must be on an idle 2-core machine (wall time)
FLOOR_VALIDATE_JSONL: Final = 0.16
FLOOR_VALIDATE_JSON: Final = 0.12
FLOOR_JSON_OUTPUT: Final = 0.12
FLOOR_POOL_SPEED_UP: Final = 1.7
#: the least set size the pool's speed-up is judged at (its file is then some 95 MB)
POOL_SPEED_UP_ROWS: Final = 100_000
JSON_SUFFIXES: Final = (".json", ".jsonl")


@dataclass
class Target:
    size: int
    name: str
    #: the measured figure and the least (or, for memory, the most) it may be
    measured: float | None
    wanted: float
    at_most: bool = False

    @property
    def met(self) -> bool | None:
        if self.measured is None:
            return None
        return self.measured <= self.wanted if self.at_most else self.measured >= self.wanted


def targets(results: list[Measurement], outputs: dict[str, str]) -> list[Target]:
    """Each target the issue of record sets (one process, ratios within one run)."""
    found: list[Target] = []
    for size in sorted({item.rows for item in results if item.kind != "start-up"}):
        by_name = {item.name: item for item in results if item.rows == size}
        found += _size_targets(size, by_name, outputs)
    return found


def _size_targets(
    size: int, by_name: dict[str, Measurement], outputs: dict[str, str]
) -> list[Target]:
    found: list[Target] = []

    def speed_ratio(name: str, reference: str) -> float | None:
        item, base = by_name.get(name), by_name.get(reference)
        if item is None or base is None or not item.cpu_seconds or not base.cpu_seconds:
            return None
        return base.cpu_seconds / item.cpu_seconds

    def add(name: str, measured: float | None, wanted: float, at_most: bool = False) -> None:
        if measured is not None:
            found.append(Target(size, name, measured, wanted, at_most))

    floor = "orjson parse (floor)"
    add("validate jsonl, x orjson parse", speed_ratio("validate jsonl", floor), 0.25)
    add(
        "validate jsonl, x per-row jsonschema",
        speed_ratio("validate jsonl", "jsonschema row schema"),
        15,
    )
    add(
        "validate jsonl, x jsonschema-rs",
        speed_ratio("validate jsonl", "jsonschema-rs row schema"),
        1 / 3,
    )
    add("validate csv, x csv.reader", speed_ratio("validate csv", "csv.reader (CSV floor)"), 0.15)
    add("validate json, x orjson parse", speed_ratio("validate json", floor), 0.2)
    for name in CANONICAL_CONVERSIONS:
        add(f"{name}, x orjson parse", speed_ratio(name, floor), 0.2)
    add(
        "validate jsonl, x orjson parse (floor)",
        speed_ratio("validate jsonl", floor),
        FLOOR_VALIDATE_JSONL,
    )
    add(
        "validate json, x orjson parse (floor)",
        speed_ratio("validate json", floor),
        FLOOR_VALIDATE_JSON,
    )
    one, pool = by_name.get("validate jsonl"), by_name.get("validate jsonl, 2 processes")
    # below some 35,000 rows (32 MiB) the file is validated in one process whatever --jobs
    if (
        size >= POOL_SPEED_UP_ROWS
        and one is not None
        and pool is not None
        and one.wall_seconds
        and pool.wall_seconds
    ):
        add(
            "validate jsonl, 2 processes, x 1 process (wall)",
            one.wall_seconds / pool.wall_seconds,
            FLOOR_POOL_SPEED_UP,
        )
    # an export that refuses the set (ome keeps no row of it) wrote nothing to judge
    written = {
        name: output
        for name, output in outputs.items()
        if name in by_name and by_name[name].exit_code in (None, 0)
    }
    for name, output in written.items():
        share = DOCUMENT_SHARE if output.endswith(DOCUMENT_SUFFIXES) else VENDOR_SHARE
        add(f"{name}, x orjson parse", speed_ratio(name, floor), share)
    # the floor for every conversion whose output is JSON or JSON Lines, canonical or not
    canonical_outputs = {
        name: name.rsplit(" ", 1)[-1] for name in CANONICAL_CONVERSIONS if name in by_name
    }
    for name, output in {**canonical_outputs, **written}.items():
        if output.endswith(JSON_SUFFIXES) or output in ("json", "jsonl"):
            add(f"{name}, x orjson parse (floor)", speed_ratio(name, floor), FLOOR_JSON_OUTPUT)
    # a writer's own cost: what converting costs beyond converting to JSON (the same reading
    # and validation, and a writer of next to nothing), against what validating a row costs
    base, validate = by_name.get("convert jsonl -> json"), by_name.get("validate jsonl")
    if base is not None and validate is not None and base.cpu_seconds and validate.cpu_seconds:
        for name in ["convert jsonl -> csv", *written]:
            item = by_name.get(name)
            if item is not None and item.cpu_seconds:
                add(
                    f"{name}, writer µs a row (<= validate's)",
                    (item.cpu_seconds - base.cpu_seconds) / size * 1e6,
                    validate.cpu_seconds / size * 1e6,
                    at_most=True,
                )
    for item in by_name.values():
        # the streaming commands (diff holds an index of both sets)
        streams = ("validate", "convert", "grade")
        if item.kind in ("blueprint", "pool") and item.name.startswith(streams):
            add(f"{item.name}, peak RSS MiB", item.peak_rss_mib, MAX_PEAK_MIB, at_most=True)
    return found


def print_targets(found: list[Target]) -> None:
    if not found:
        return
    print("\ntargets")
    width = max(len(target.name) for target in found)
    for target in found:
        sign = "<=" if target.at_most else ">="
        verdict = "met" if target.met else "NOT MET"
        print(
            f"{target.size:>10,}  {target.name.ljust(width)}  {target.measured:8.3f}"
            f"  ({sign} {target.wanted:.3g})  {verdict}"
        )


def _cell(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(results: list[Measurement], baseline_mib: float, diff_baseline_mib: float) -> None:
    if not results:
        print("nothing measured")
        return
    headers = (
        "rows",
        "measurement",
        "CPU s",
        "wall s",
        "rows/s",
        "x parse",
        "peak RSS MiB",
        "KiB/row",
    )
    lines = [
        (
            f"{item.rows:,}" if item.kind != "start-up" else "-",
            item.name,
            f"{item.cpu_seconds:.3f}",
            _cell(item.wall_seconds, ".3f"),
            _cell(item.rows_per_second, ",.0f"),
            _cell(item.of_parse, ".3f"),
            f"{item.peak_rss_mib:.1f}",
            _cell(item.kib_per_row, ".2f"),
        )
        for item in results
    ]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]

    def render(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(width) if i == 1 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )

    print(render(headers))
    print("  ".join("-" * width for width in widths))
    for line in lines:
        print(render(line))
    print(
        f"\nKiB/row: peak RSS above the {baseline_mib:.1f} MiB of a child that only imports"
        f" Blueprint ({diff_baseline_mib:.1f} MiB with deepdiff, for diff), per row (and side,"
        " for diff)"
    )


def machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpus": os.cpu_count(),
        "cpu": model,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows",
        type=int,
        nargs="+",
        default=list(DEFAULT_ROWS),
        metavar="N",
        help="set sizes (default: %(default)s)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--only", metavar="TEXT", help="only the measurements naming TEXT")
    parser.add_argument("--workdir", type=Path, help="where the temporary sets go")
    parser.add_argument(
        "--start-up-runs",
        type=int,
        default=5,
        metavar="R",
        help="runs of each start-up measurement, the best kept (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if any(size < 1 for size in args.rows) or args.start_up_runs < 1:
        parser.error("--rows and --start-up-runs take positive integers")
    return args


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    args = parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="blueprint-bench-", dir=args.workdir) as folder:
        bench = Bench(Path(folder), args.only, args.start_up_runs)
        _, bench.baseline_rss, _, _ = run_child(["baseline"])
        _, bench.diff_baseline_rss, _, _ = run_child(["baseline-diff"])
        for size in sorted(set(args.rows)):
            bench.size(size)
        bench.start_up()
    progress(f"done in {time.perf_counter() - started:.0f} s")
    baseline_mib = bench.baseline_rss / MIB
    if args.json:
        document = {
            "machine": machine(),
            "baseline_rss_mib": baseline_mib,
            "diff_baseline_rss_mib": bench.diff_baseline_rss / MIB,
            "results": [asdict(item) for item in bench.results],
            "targets": [
                {**asdict(target), "met": target.met}
                for target in targets(bench.results, bench.outputs)
            ],
        }
        print(json.dumps(document, indent=2))
    else:
        info = machine()
        print(f"{info['cpus']} CPUs, {info['cpu']}, Python {info['python']}\n")
        print_table(bench.results, baseline_mib, bench.diff_baseline_rss / MIB)
        print_targets(targets(bench.results, bench.outputs))
    failed = [m.name for m in bench.results if m.exit_code not in (None, 0, 1)]
    if failed:
        progress(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
