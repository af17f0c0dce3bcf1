"""Time and peak memory of ``blueprint grade`` over repeated trials: one trial against many.

Run by hand from the repository root::

    python benchmarks/trials.py                               # 100,000 rows; 1 and 10 trials
    python benchmarks/trials.py --rows 20000 --trials 1 5 10 --layout files --order shuffled
    python benchmarks/trials.py --json > trials.json

The set is ``bench_core.generate_rows`` (the six oracle types in turn, about 950 bytes a row)
written as JSON Lines. For each number of trials the results are written in one of three
orders: ``set`` (trial after trial, each in the set's order), ``id`` (sorted by row id, a
row's trials together) or ``shuffled``; in one file whose results name their ``trial``, or
(``--layout files``) a file a trial. Each grading runs in a fresh child process, which
reports the time ``grade_set`` took, the part of it spent reading and grading results, and
its peak resident set size (a child grading an empty results file gives the cost of the set
alone: validating and indexing it). The cost of a result is the time spent reading and
grading results over their number. Grading 10 trials should cost the same per result as
grading one, and
its peak memory should stay far below the results' size (they are read and graded one at a
time).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import HEADER, generate_rows, peak_rss_bytes

MIB = 1024 * 1024
#: the share of results that pass (the rest fail), so every trial differs
PASSING = 0.7


def result(row: dict[str, Any], trial: int | None, rng: random.Random) -> dict[str, Any]:
    """A recorded result for a row of ``generate_rows``: right ``PASSING`` of the time."""
    kind = int(row["id"].split("-")[1]) % 6
    right = rng.random() < PASSING
    found: dict[str, Any] = {"id": row["id"]}
    if trial is not None:
        found["trial"] = trial
    if kind == 0:
        found["output"] = row["expected"] if right else "no idea"
    elif kind == 1:
        found["output"] = row["expected"]["acceptable"][0] if right else "maybe"
    elif kind == 3:
        found["toolCalls"] = row["expected"]["calls"] if right else []
    elif kind == 4:
        checks = row["expected"]["checks"]
        found["finalState"] = {
            "records": {
                checks[0]["query"]: "refunded" if right else "open",
                checks[1]["query"]: 1,
            },
            "commands": {checks[2]["run"]: 0},
        }
    else:  # a rubric or expected-behavior-only row: a person grades it
        found["output"] = "Sorry for the trouble; a colleague will call you today."
    return found


def write_results(rows: int, trials: int, order: str, layout: str, folder: Path) -> list[Path]:
    """The results of ``trials`` trials over the first ``rows`` rows, in ``order``, in one
    file or a file a trial; written as they are made (the rows are made again for each
    trial, never held)."""
    rng = random.Random(trials)
    named = layout == "one-file" and trials > 1

    def lines(trial: int) -> Iterator[str]:
        for row in generate_rows(rows):
            yield json.dumps(result(row, trial if named else None, rng), ensure_ascii=False)

    if layout == "files":
        paths = [folder / f"results-{trials}-{trial}.jsonl" for trial in range(1, trials + 1)]
        for trial, path in enumerate(paths, start=1):
            _write(path, lines(trial), order, rng)
        return paths
    path = folder / f"results-{trials}.jsonl"
    if order == "id":  # a row's trials together, rows in id order (as generate_rows makes them)
        every = zip(*(lines(trial) for trial in range(1, trials + 1)), strict=True)
        _write(path, (line for together in every for line in together), "set", rng)
    else:
        trial_after_trial = (line for trial in range(1, trials + 1) for line in lines(trial))
        _write(path, trial_after_trial, order, rng)
    return [path]


#: the buckets a shuffle spreads lines over, so that one bucket at a time is held
_BUCKETS = 16


def _write(path: Path, lines: Iterable[str], order: str, rng: random.Random) -> None:
    """Write lines as given, or shuffled through buckets on disk (each bucket shuffled in
    memory: every order is as likely, and no more than a bucket is held)."""
    if order != "shuffled":
        with path.open("w", encoding="utf-8") as handle:
            handle.writelines(line + "\n" for line in lines)
        return
    buckets = [path.with_name(f"{path.name}.{number}") for number in range(_BUCKETS)]
    handles = [bucket.open("w", encoding="utf-8") for bucket in buckets]
    for line in lines:
        handles[rng.randrange(_BUCKETS)].write(line + "\n")
    for handle in handles:
        handle.close()
    with path.open("w", encoding="utf-8") as out:
        for bucket in buckets:
            held = bucket.read_text(encoding="utf-8").splitlines(keepends=True)
            rng.shuffle(held)
            out.writelines(held)
            bucket.unlink()


def peak_memory() -> int:
    """This process's peak resident set size in bytes: Linux's VmHWM, which a process
    started by another does not inherit (``ru_maxrss`` keeps the parent's peak across
    exec), else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return peak_rss_bytes()


def child_main(argv: Sequence[str]) -> int:
    """Grade the set against the results files named; print the seconds in all and the
    seconds spent reading and grading results (each results file's read), the rows, the
    trials and the peak RSS."""
    from blueprint.grading import grade_set, streamed

    reading = 0.0
    read = streamed._Tally.read

    def timed(self: Any, file_number: int, path: Path) -> None:
        nonlocal reading
        started = time.perf_counter()
        read(self, file_number, path)
        reading += time.perf_counter() - started

    streamed._Tally.read = timed  # type: ignore[method-assign]
    set_path, *results = map(Path, argv)
    started = time.perf_counter()
    graded = grade_set(set_path, results)
    seconds = time.perf_counter() - started
    trials = graded.trials.count if graded.trials else 1
    figures = {"seconds": seconds, "reading": reading, "rows": len(graded.rows), "trials": trials}
    print(json.dumps({**figures, "rss": peak_memory()}))
    return 0


def run_child(set_path: Path, results: list[Path], repeat: int) -> dict[str, Any]:
    """Grade in ``repeat`` fresh processes: the best time, the highest peak RSS."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", set_path, *results]
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        done = subprocess.run(list(map(str, command)), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"grading failed (exit {done.returncode}):\n{done.stderr}")
        found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        if best is None:
            best = found
        else:
            best["seconds"] = min(best["seconds"], found["seconds"])
            best["reading"] = min(best["reading"], found["reading"])
            best["rss"] = max(best["rss"], found["rss"])
    assert best is not None
    return best


def measure(
    rows: int, trial_counts: Sequence[int], order: str, layout: str, folder: Path, repeat: int
) -> Iterator[dict[str, Any]]:
    set_path = folder / "set.jsonl"
    from blueprint.formats import REGISTRY, WriteOptions

    REGISTRY["jsonl"].write(HEADER, generate_rows(rows), set_path, WriteOptions(force=True))
    empty = folder / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    alone = run_child(set_path, [empty], repeat)
    yield {**alone, "trials": 0, "results": 0, "perResultMicroseconds": None}
    for trials in trial_counts:
        paths = write_results(rows, trials, order, layout, folder)
        size = sum(path.stat().st_size for path in paths)
        found = run_child(set_path, paths, repeat)
        graded = trials * rows
        per_result = found["reading"] / graded * 1e6
        yield {
            **found,
            "trials": trials,
            "results": graded,
            "resultsMiB": size / MIB,
            "perResultMicroseconds": per_result,
        }
        for path in paths:
            path.unlink()


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--trials", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--order", choices=("set", "id", "shuffled"), default="set")
    parser.add_argument("--layout", choices=("one-file", "files"), default="one-file")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=options.workdir) as folder:
        found = []
        for figures in measure(
            options.rows,
            options.trials,
            options.order,
            options.layout,
            Path(folder),
            options.repeat,
        ):
            found.append(figures)
            print(
                f"{figures['trials']:>3} trial(s), {figures['results']:>9,} results:"
                f" {figures['seconds']:7.2f} s ({figures['reading']:6.2f} s on results),"
                f" peak {figures['rss'] / MIB:6.1f} MiB"
                + (
                    f", {figures['perResultMicroseconds']:6.1f} µs a result"
                    if figures["perResultMicroseconds"] is not None
                    else " (the set alone)"
                ),
                file=sys.stderr,
                flush=True,
            )
    if options.json:
        print(json.dumps({"rows": options.rows, "order": options.order,
                          "layout": options.layout, "runs": found}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
