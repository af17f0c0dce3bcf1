"""Throughput and peak-memory benchmark for writing, validating and converting canonical sets.

Run by hand from the repository root::

    /work/venv/bin/python benchmarks/bench_core.py                 # 1,000 / 10,000 / 100,000 rows
    /work/venv/bin/python benchmarks/bench_core.py --rows 500 5000 --repeat 3
    /work/venv/bin/python benchmarks/bench_core.py --json > results.json

Every measured operation runs in a fresh child process (this same script, called with
``--child``), so the peak resident set size each child reports belongs to that operation
alone. Times cover only the operation itself, not interpreter start-up or imports; the
``baseline`` row is a child that imports Blueprint and does nothing else.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

DEFAULT_ROWS = (1_000, 10_000, 100_000)
SCHEMA_VERSION = "blueprint.eval-set/v1"
HEADER: dict[str, Any] = {"schemaVersion": SCHEMA_VERSION, "name": "bench"}
FORMATS = ("jsonl", "json", "csv")
CONVERSIONS = (("jsonl", "csv"), ("csv", "jsonl"), ("jsonl", "json"))
SEED = 20240601
MIB = 1024 * 1024


# --- synthetic rows ---------------------------------------------------------------------------

_PRODUCTS = (
    "blender",
    "kettle",
    "table lamp",
    "set of six glasses",
    "linen duvet cover",
    "cast-iron pan",
    "Teekanne für Kräutertee",
    "café crème cups ☕",
    "咖啡杯套装",
    "ёлочная гирлянда",
    "manta de lã",
    "bath towel set",
)
_CUSTOMERS = ("Zoë", "Łukasz", "Ngozi", "Siddharth", "美咲", "Aleksandr", "Mª José", "Oğuz")
_LOCALES = ("en-GB", "de-DE", "fr-FR", "zh-CN", "ru-RU", "pt-BR", "tr-TR", "hi-IN")
_CHANNELS = ("chat", "email", "phone transcript", "app review")
_CURRENCIES = ("EUR", "GBP", "USD")
_PROVENANCES = ("expert-authored", "observed-incident", "production-sample")
_MOODS = (
    "This is the THIRD time I'm writing.",
    "I've been waiting two weeks and nobody answers.",
    "Your chat bot already hung up on me once. 😤",
    "I am honestly losing patience here.",
    "Ça fait deux semaines que j'attends.",
)


def _order(index: int, rng: random.Random) -> str:
    # the row number makes every order number, and so every input, unique
    return f"A-{index:07d}-{rng.randrange(100, 999)}"


def _trace(index: int, rng: random.Random) -> dict[str, Any]:
    """Free-form metadata nested a few levels, as production samples carry it."""
    return {
        "channel": rng.choice(_CHANNELS),
        "locale": rng.choice(_LOCALES),
        "ticket": {
            "number": 500_000 + index,
            "tags": rng.sample(["refund", "late", "damaged", "vip", "repeat", "légal"], 2),
            "sla": {"hours": rng.choice([4, 24, 72]), "breached": rng.random() < 0.1},
        },
        "sampledAt": f"2026-{1 + index % 12:02d}-{1 + index % 28:02d}",
    }


def _case(
    row_id: str, oracle_type: str, evaluator: str, family: str, **extra: Any
) -> dict[str, Any]:
    return {
        "caseId": row_id,
        "oracleType": oracle_type,
        "provenance": extra.pop("provenance"),
        "evaluator": evaluator,
        "caseFamily": family,
        **extra,
    }


def make_row(index: int, rng: random.Random) -> dict[str, Any]:
    """One valid canonical row shaped like those in examples/support-refunds.json.

    The oracle type cycles through all six, so every set mixes plain strings, nested objects,
    chat transcripts and tool-call or final-state checks; ids, numbers and phrasing vary.
    """
    row_id = f"row-{index:07d}"
    product = rng.choice(_PRODUCTS)
    customer = rng.choice(_CUSTOMERS)
    order = _order(index, rng)
    currency = rng.choice(_CURRENCIES)
    amount = f"{rng.randrange(5, 400)}.{rng.randrange(100):02d}"
    days = rng.randrange(1, 90)
    provenance = rng.choice(_PROVENANCES)
    kind = index % 6

    if kind == 0:
        return {
            "id": row_id,
            "input": f"Hi, {customer} again: how many days do I have to return a {product}"
            f" bought online? ({order})",
            "expected": "You can return online purchases within 30 days of delivery.",
            "metadata": {
                "trace": _trace(index, rng),
                "case": _case(
                    row_id,
                    "reference-answer",
                    "exact-or-programmatic",
                    "policy-lookup",
                    provenance=provenance,
                    expectedBehavior="Quotes the 30-day window from the published returns"
                    " policy, counted from delivery, without adding conditions the policy"
                    f" does not state (case {index}).",
                    passLogic="exact match after trimming whitespace",
                    linkedConcerns=["policy-drift"],
                    version=str(1 + index % 3),
                ),
                "source": f"returns-policy-v{1 + index % 9}",
            },
        }
    if kind == 1:
        eligible = days <= 30
        return {
            "id": row_id,
            "input": f"{customer} here: I bought this {product} {days} days ago (order {order})"
            " and I don't want it anymore. Refund?",
            "expected": {
                "acceptable": ["eligible", "eligible: within the 30-day window"]
                if eligible
                else ["not eligible", "not eligible: outside the 30-day window", "ineligible"]
            },
            "metadata": {
                "trace": _trace(index, rng),
                "case": _case(
                    row_id,
                    "acceptable-set",
                    "exact-or-programmatic",
                    "refund-eligibility",
                    provenance=provenance,
                    expectedBehavior=f"Decides eligibility from the {days}-day age of the"
                    " order against the 30-day window. Any listed phrasing is correct.",
                    passLogic="normalized reply equals one member of the set",
                ),
            },
        }
    if kind == 2:
        return {
            "id": row_id,
            "input": [
                {
                    "role": "system",
                    "content": "You are the support assistant for an online homeware shop.",
                },
                {
                    "role": "user",
                    "content": f"{rng.choice(_MOODS)} Where is my refund for the {product}"
                    f" on order {order}?!",
                },
            ],
            "metadata": {
                "trace": _trace(index, rng),
                "case": _case(
                    row_id,
                    "rubric",
                    "rubric-human",
                    "tone-under-pressure",
                    provenance=provenance,
                    expectedBehavior="Acknowledges the frustration, gives the refund's real"
                    " status, and commits to a concrete next step with a date.",
                    evaluationCriteria=[
                        "acknowledges that this is a repeat contact",
                        "states the refund status without hedging",
                        "names a concrete next step and when it happens",
                        "does not blame the customer or another team",
                    ],
                    unacceptableBehavior=["asks the customer to repeat details already given"],
                    passLogic="all four criteria met",
                ),
            },
        }
    if kind == 3:
        return {
            "id": row_id,
            "input": {
                "message": f"My {product} arrived cracked, order {order}. I'd like my money back.",
                "order": {
                    "id": order,
                    "total": float(amount),
                    "currency": currency,
                    "deliveredDaysAgo": days % 14,
                },
            },
            "expected": {
                "calls": [
                    {"name": "get_order", "arguments": {"order_id": order}},
                    {
                        "name": "issue_refund",
                        "arguments": {
                            "order_id": order,
                            "amount": amount,
                            "currency": currency,
                            "method": "original",
                        },
                    },
                ],
                "order": "exact",
                "forbidden": [{"name": "issue_store_credit"}],
            },
            "metadata": {
                "trace": _trace(index, rng),
                "case": _case(
                    row_id,
                    "expected-tool-calls",
                    "trajectory-or-state-check",
                    "refund-actions",
                    provenance=provenance,
                    expectedBehavior="Looks the order up, then refunds the full amount to the"
                    " original payment method; never refunds before the lookup.",
                    reversibility="R2",
                    blastRadius="B0",
                    toolActionExpectation=f"get_order({order}) then issue_refund({order},"
                    f" {amount} {currency}, original method)",
                    linkedConcerns=["unauthorized-refund", "wrong-amount"],
                ),
            },
        }
    if kind == 4:
        return {
            "id": row_id,
            "input": {
                "message": f"Please refund order {order}, the {product} never arrived.",
                "order": {
                    "id": order,
                    "total": float(amount),
                    "currency": currency,
                    "carrierStatus": "lost",
                },
            },
            "expected": {
                "checks": [
                    {
                        "kind": "record",
                        "description": f"order {order} has status refunded",
                        "query": f"SELECT status FROM orders WHERE id = '{order}'",
                        "equals": "refunded",
                    },
                    {
                        "kind": "record",
                        "description": f"exactly one refund row for {order}",
                        "query": f"SELECT count(*) FROM refunds WHERE order_id = '{order}'",
                        "equals": 1,
                    },
                    {
                        "kind": "command",
                        "run": "pytest tests/test_no_store_credit.py -q",
                        "exitCode": 0,
                    },
                ]
            },
            "metadata": {
                "trace": _trace(index, rng),
                "case": _case(
                    row_id,
                    "expected-final-state",
                    "trajectory-or-state-check",
                    "ledger-state",
                    provenance=provenance,
                    expectedBehavior=f"After the run the order is marked refunded, exactly one"
                    f" refund of {amount} {currency} exists, and no store credit was created.",
                    reversibility="R2",
                    blastRadius="B0",
                ),
            },
        }
    return {
        "id": row_id,
        "input": f"If you don't refund my {product} today I'm calling my bank, {customer}."
        f" ({order})",
        "metadata": {
            "trace": _trace(index, rng),
            "case": _case(
                row_id,
                "expected-behavior-only",
                "human-expert",
                "escalation-judgement",
                provenance=provenance,
                expectedBehavior="Stays calm, does not promise an outcome it cannot authorise,"
                " and hands the case to the disputes team with the order history attached.",
                reviewerExpertise="payments disputes lead who knows the chargeback process",
                escalationExpectation="hand-off to disputes within the same conversation",
            ),
        },
    }


def generate_rows(count: int, seed: int = SEED) -> Iterator[dict[str, Any]]:
    """``count`` rows, produced one at a time and the same for the same seed."""
    rng = random.Random(seed)
    for index in range(count):
        yield make_row(index, rng)


# --- the child: one operation per process ----------------------------------------------------


def peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def child_main(argv: Sequence[str]) -> int:
    """Run one operation and print one JSON line: seconds, rows, issues, peak RSS."""
    # Every child imports the same modules before it starts the clock, so the baseline
    # child's peak RSS is the floor every other measurement stands on.
    from blueprint.convert import ConvertOptions, convert
    from blueprint.formats import REGISTRY, WriteOptions
    from blueprint.validation.validate import validate_file

    operation, *args = argv
    issues: int | None = None
    started = time.perf_counter()
    if operation == "baseline":
        rows = 0
    elif operation == "generate":
        rows = int(args[0])
        collections.deque(generate_rows(rows), maxlen=0)
    elif operation == "write":
        fmt, count, path = args
        result = REGISTRY[fmt].write(
            HEADER, generate_rows(int(count)), Path(path), WriteOptions(force=True)
        )
        rows = result.rows
    elif operation == "validate":
        report = validate_file(Path(args[0]))
        rows, issues = report.rows, len(report.issues)
    elif operation == "convert":
        source, target = args
        rows = convert(Path(source), Path(target), ConvertOptions(force=True)).export.rows
    else:
        raise SystemExit(f"unknown child operation {operation!r}")
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "rows": rows, "issues": issues, "rss": peak_rss_bytes()}))
    return 0


# --- the parent: run the children and report ----------------------------------------------


@dataclass
class Measurement:
    size: int  # rows in the set
    format: str
    operation: str
    seconds: float
    rows: int  # rows the operation handled
    peak_rss_mib: float
    file_mib: float | None = None
    issues: int | None = None

    @property
    def rows_per_second(self) -> float | None:
        return self.rows / self.seconds if self.rows and self.seconds > 0 else None


def run_child(operation: str, *args: str | int | Path, repeat: int = 1) -> dict[str, Any]:
    """Run one operation ``repeat`` times in fresh processes: best time, highest peak RSS."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        command = [sys.executable, str(Path(__file__).resolve()), "--child", operation]
        completed = subprocess.run(
            [*command, *map(str, args)], capture_output=True, text=True, check=False
        )
        if completed.returncode != 0:
            raise RuntimeError(
                f"child {operation} {' '.join(map(str, args))} failed"
                f" (exit {completed.returncode}):\n{completed.stderr}"
            )
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        if best is None:
            best = result
        else:
            best["seconds"] = min(best["seconds"], result["seconds"])
            best["rss"] = max(best["rss"], result["rss"])
    assert best is not None
    return best


def file_mib(path: Path) -> float:
    return path.stat().st_size / MIB


def remove_set(path: Path) -> None:
    """Delete a data file and the set file that may sit beside it."""
    path.unlink(missing_ok=True)
    path.with_name(path.name + ".set.json").unlink(missing_ok=True)


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def bench_size(size: int, folder: Path, repeat: int) -> list[Measurement]:
    results: list[Measurement] = []

    def record(fmt: str, operation: str, raw: dict[str, Any], path: Path | None) -> None:
        results.append(
            Measurement(
                size=size,
                format=fmt,
                operation=operation,
                seconds=raw["seconds"],
                rows=raw["rows"],
                peak_rss_mib=raw["rss"] / MIB,
                file_mib=file_mib(path) if path is not None else None,
                issues=raw["issues"],
            )
        )

    progress(f"{size:,} rows: generate")
    record("-", "generate", run_child("generate", size, repeat=repeat), None)

    paths = {fmt: folder / f"bench-{size}.{fmt}" for fmt in FORMATS}
    for fmt, path in paths.items():
        progress(f"{size:,} rows: write {fmt}")
        record(fmt, "write", run_child("write", fmt, size, path, repeat=repeat), path)

    for fmt, path in paths.items():
        progress(f"{size:,} rows: validate {fmt}")
        raw = run_child("validate", path, repeat=repeat)
        if raw["rows"] != size or raw["issues"]:
            progress(
                f"  warning: {path.name} validated {raw['rows']} rows with {raw['issues']} issues"
                f" (expected {size} rows, no issues)"
            )
        record(fmt, "validate", raw, path)

    for source_fmt, target_fmt in CONVERSIONS:
        source = paths[source_fmt]
        target = folder / f"converted-{size}.{target_fmt}"
        progress(f"{size:,} rows: convert {source_fmt} -> {target_fmt}")
        raw = run_child("convert", source, target, repeat=repeat)
        record(f"{source_fmt}->{target_fmt}", "convert", raw, source)
        remove_set(target)

    for path in paths.values():
        remove_set(path)
    return results


def memory_growth(results: list[Measurement]) -> list[dict[str, Any]]:
    """Per format and operation: how peak RSS grew between the smallest and largest set."""
    groups: dict[tuple[str, str], list[Measurement]] = {}
    for item in results:
        if item.operation != "baseline":
            groups.setdefault((item.format, item.operation), []).append(item)
    growth = []
    for (fmt, operation), items in groups.items():
        small = min(items, key=lambda m: m.size)
        large = max(items, key=lambda m: m.size)
        if large.size == small.size:
            continue
        grown_mib = large.peak_rss_mib - small.peak_rss_mib
        growth.append(
            {
                "format": fmt,
                "operation": operation,
                "from_rows": small.size,
                "to_rows": large.size,
                "grown_mib": grown_mib,
                "bytes_per_row": grown_mib * MIB / (large.size - small.size),
            }
        )
    return growth


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(results: list[Measurement], baseline_mib: float) -> None:
    headers = ("rows", "format", "operation", "seconds", "rows/s", "file MiB", "peak RSS MiB")
    lines = [
        (
            f"{item.size:,}",
            item.format,
            item.operation,
            f"{item.seconds:.3f}",
            _fmt(item.rows_per_second, ",.0f"),
            _fmt(item.file_mib, ".1f"),
            f"{item.peak_rss_mib:.1f} ({item.peak_rss_mib - baseline_mib:+.1f})",
        )
        for item in results
    ]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    left = {1, 2}  # text columns; numbers are right-aligned

    def render(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(width) if i in left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )

    print(render(headers))
    print("  ".join("-" * width for width in widths))
    for line in lines:
        print(render(line))
    print(
        "\npeak RSS is the whole child process; in brackets, the difference from the"
        f" baseline of {baseline_mib:.1f} MiB"
    )


def print_growth(growth: list[dict[str, Any]]) -> None:
    if not growth:
        return
    print("\npeak RSS growth from the smallest to the largest set:")
    for item in growth:
        label = f"{item['format']} {item['operation']}"
        print(
            f"  {label:<22} {item['grown_mib']:+8.1f} MiB"
            f" ({item['from_rows']:,} -> {item['to_rows']:,} rows,"
            f" {item['bytes_per_row']:,.0f} bytes/row)"
        )


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark writing, validating and converting Blueprint sets.",
    )
    parser.add_argument(
        "--rows",
        type=int,
        nargs="+",
        default=list(DEFAULT_ROWS),
        metavar="N",
        help="set sizes to measure (default: %(default)s)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="R",
        help="run each operation R times; report the best time and the highest peak RSS",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the results as JSON instead of a table"
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="make the temporary folder for the set files here (default: the system temp dir)",
    )
    args = parser.parse_args(argv)
    if any(size < 1 for size in args.rows) or args.repeat < 1:
        parser.error("--rows and --repeat take positive integers")
    return args


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    args = parse_args(argv)
    started = time.perf_counter()
    baseline = run_child("baseline", repeat=args.repeat)
    baseline_mib = baseline["rss"] / MIB
    results: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="blueprint-bench-", dir=args.workdir) as folder:
        for size in sorted(set(args.rows)):
            results.extend(bench_size(size, Path(folder), args.repeat))
    growth = memory_growth(results)
    progress(f"done in {time.perf_counter() - started:.1f}s")

    if args.json:
        document = {
            "python": sys.version.split()[0],
            "platform": sys.platform,
            "repeat": args.repeat,
            "baseline_rss_mib": baseline_mib,
            "results": [
                {**asdict(item), "rows_per_second": item.rows_per_second} for item in results
            ],
            "memory_growth": growth,
        }
        print(json.dumps(document, indent=2))
    else:
        print(f"baseline (import blueprint only): peak RSS {baseline_mib:.1f} MiB\n")
        print_table(results, baseline_mib)
        print_growth(growth)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
