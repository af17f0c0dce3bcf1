"""Peak memory of the streaming commands as a set grows, measured by GNU time.

Run by hand from the repository root (GNU time is ``/usr/bin/time``; Debian's package
``time``)::

    python benchmarks/memory.py                          # 100,000 and 1,000,000 rows
    python benchmarks/memory.py --rows 100000 1000000 10000000 --workdir /big/disk
    python benchmarks/memory.py --json > memory.json

The set is ``jobs.rows_with_repeats`` (the benchmark's rows, with an input repeated every
hundred rows and an id every five hundred) in JSON Lines with its set file. Every sixth row
has a pass logic its row does not declare, so one process and the pool both report findings
on a sixth of the rows: the report's memory is measured, not only the reading. Each command
runs as a user runs it (``python -m blueprint ...``), its output to ``/dev/null`` or a file
in the work folder, under ``/usr/bin/time -f %M``: the peak resident set of the command's
process, or of a worker process of its pool if one peaked higher (Linux gives GNU time the
largest of a process and the children it waited for; ``jobs.py`` reports the pool's parent
alone).

The table gives each command's peak at each size and its growth from the smallest size to
each larger one; the target is at most 10 MiB from 100,000 to 1,000,000 rows and under
120 MiB at 10,000,000. A 10,000,000-row set takes some 10 GB of disk, and each command on it
several minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import HEADER
from jobs import rows_with_repeats
from run import mutated_copy
from trials import result

MIB = 1024 * 1024
GNU_TIME = "/usr/bin/time"

#: name -> the command's arguments after ``python -m blueprint``; SET is the set's path,
#: RESULTS a results file for it (a result for each id, right 70% of the time), CHANGED a
#: copy of the set with every hundredth row changed, INVALID a copy with an error on every
#: row (its caseId is not its id), COMMITTED that changed copy in a git repository whose
#: last commit holds the set as it was, OUT a file in the work folder named after the command
COMMANDS: dict[str, list[str]] = {
    "validate -j 1": ["validate", "SET", "--report", "json", "-q", "-j", "1"],
    "validate -j 2": ["validate", "SET", "--report", "json", "-q", "-j", "2"],
    "validate --report text": ["validate", "SET", "-q", "-j", "1"],
    "convert -> json": ["convert", "SET", "OUT.json", "--force", "--allow-invalid"],
    "convert -> csv": ["convert", "SET", "OUT.csv", "--force", "--allow-invalid"],
    "convert -> jsonl": ["convert", "SET", "OUT.jsonl", "--force", "--allow-invalid"],
    "convert -> promptfoo": [
        "convert",
        "SET",
        "OUT.yaml",
        "--to",
        "promptfoo",
        "--force",
        "--allow-invalid",
    ],
    "summary": ["summary", "SET"],
    "grade -j 1": ["grade", "SET", "RESULTS", "-j", "1"],
    "grade -j 1 --report json": ["grade", "SET", "RESULTS", "-j", "1", "--report", "json"],
    "grade -j 2": ["grade", "SET", "RESULTS", "-j", "2"],
    "grade -j 1 --baseline": ["grade", "SET", "RESULTS", "-j", "1", "--baseline", "RESULTS"],
    "grade -j 1 --report html": ["grade", "SET", "RESULTS", "-j", "1", "--report", "html"],
    "grade -j 1 (every row invalid)": ["grade", "INVALID", "RESULTS", "-j", "1"],
    "diff (1% changed)": ["diff", "SET", "CHANGED"],
    "diff (1% changed) --report json": ["diff", "SET", "CHANGED", "--report", "json"],
    "diff --against HEAD (1% changed)": ["diff", "--against", "HEAD", "COMMITTED"],
}


def measure(command: list[str], path: Path, folder: Path, name: str) -> dict[str, Any]:
    """Run one command under GNU time: its peak RSS in bytes, wall seconds, exit code."""
    stem = folder / name.replace(" ", "_").replace(">", "").replace("-", "")
    named = {
        "SET": str(path),
        "RESULTS": str(folder / "results.jsonl"),
        "CHANGED": str(folder / "changed.jsonl"),
        "INVALID": str(folder / "invalid.jsonl"),
        "COMMITTED": str(folder / "repository" / "set.jsonl"),
    }
    arguments = [
        named.get(word, str(stem) + word[3:] if word.startswith("OUT") else word)
        for word in command
    ]
    figures = folder / "time.txt"
    timed = [GNU_TIME, "-f", "%M %e", "-o", str(figures), sys.executable, "-m", "blueprint"]
    with Path(os.devnull).open("wb") as sink:
        done = subprocess.run(
            [*timed, *arguments],
            stdout=sink,
            stderr=subprocess.PIPE,
            check=False,
        )
    if done.returncode not in (0, 1):  # 1: the set has findings, as it should
        raise RuntimeError(f"{name} failed (exit {done.returncode}):\n{done.stderr.decode()}")
    kib, seconds = figures.read_text().split()[-2:]
    for written in folder.glob(stem.name + "*"):
        written.unlink()
    return {"rss": int(kib) * 1024, "seconds": float(seconds)}


def write_results(rows: int, path: Path) -> None:
    """A result for each id of the set's rows (a repeated id's first row), 70% right."""
    rng = random.Random(rows)
    seen: set[str] = set()
    with path.open("w", encoding="utf-8") as handle:
        for row in rows_with_repeats(rows):
            if row["id"] not in seen:
                seen.add(row["id"])
                handle.write(json.dumps(result(row, None, rng), ensure_ascii=False) + "\n")


def committed(path: Path, repository: Path) -> None:
    """A git repository holding the set at ``path`` in its one commit, and in its working
    tree a copy with every hundredth row changed."""
    shutil.rmtree(repository, ignore_errors=True)
    repository.mkdir()
    target = repository / path.name
    shutil.copyfile(path, target)
    sidecar = path.with_name(path.name + ".set.json")
    if sidecar.exists():
        shutil.copyfile(sidecar, target.with_name(sidecar.name))

    def git(*arguments: str) -> None:
        subprocess.run(["git", *arguments], cwd=repository, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    identity = ["-c", "user.name=benchmark", "-c", "user.email=benchmark@localhost"]
    git(*identity, "commit", "-qm", "the set")
    mutated_copy(path, target)


def _mismatched(rows: int) -> Iterator[dict[str, Any]]:
    """The set's rows, each with a caseId that is not its id: an error on every row."""
    for row in rows_with_repeats(rows):
        row["metadata"]["case"]["caseId"] = "other-" + row["id"]
        yield row


def run(sizes: Sequence[int], names: Sequence[str], folder: Path) -> list[dict[str, Any]]:
    from blueprint.formats import REGISTRY, WriteOptions

    measured = []
    for rows in sorted(sizes):
        path = folder / "set.jsonl"
        print(f"writing {rows:,} rows", file=sys.stderr)
        REGISTRY["jsonl"].write(HEADER, rows_with_repeats(rows), path, WriteOptions(force=True))
        if any("RESULTS" in COMMANDS[name] for name in names):
            write_results(rows, folder / "results.jsonl")
        if any("CHANGED" in COMMANDS[name] for name in names):
            mutated_copy(path, folder / "changed.jsonl")
        if any("COMMITTED" in COMMANDS[name] for name in names):
            committed(path, folder / "repository")
        if any("INVALID" in COMMANDS[name] for name in names):
            invalid = folder / "invalid.jsonl"
            REGISTRY["jsonl"].write(HEADER, _mismatched(rows), invalid, WriteOptions(force=True))
        for name in names:
            print(f"  {name}", file=sys.stderr)
            measured.append(
                {"command": name, "rows": rows, **measure(COMMANDS[name], path, folder, name)}
            )
        path.unlink()
        (folder / "invalid.jsonl").unlink(missing_ok=True)
        shutil.rmtree(folder / "repository", ignore_errors=True)
    return measured


def print_table(measured: list[dict[str, Any]]) -> None:
    sizes = sorted({found["rows"] for found in measured})
    names = list(dict.fromkeys(found["command"] for found in measured))
    peak = {(found["command"], found["rows"]): found["rss"] / MIB for found in measured}
    head = [f"{rows:,} rows: MiB" for rows in sizes] + [f"growth to {rows:,}" for rows in sizes[1:]]
    print("| command | " + " | ".join(head) + " |")
    print("|---|" + "--:|" * len(head))
    for name in names:
        cells = [f"{peak[name, rows]:.1f}" for rows in sizes]
        cells += [f"{peak[name, rows] - peak[name, sizes[0]]:+.1f}" for rows in sizes[1:]]
        print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--only", nargs="+", choices=list(COMMANDS), default=list(COMMANDS))
    parser.add_argument("--json", action="store_true", help="print JSON, not a table")
    parser.add_argument("--workdir", type=Path, default=None, help="where the set is written")
    args = parser.parse_args(argv)
    if shutil.which(GNU_TIME) is None:
        parser.error(f"GNU time is needed at {GNU_TIME} (Debian: apt install time)")
    if any(rows < 1 for rows in args.rows):
        parser.error("--rows: give whole numbers of rows, 1 or more")
    with tempfile.TemporaryDirectory(dir=args.workdir) as folder:
        measured = run(args.rows, args.only, Path(folder))
    if args.json:
        print(json.dumps(measured, indent=2))
    else:
        print_table(measured)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
