"""How long Blueprint Studio takes from ``blueprint studio SET`` to its first page of rows.

Run from the repository root (``pip install -e .``)::

    python benchmarks/bench_studio.py                    # 50,000 rows, JSON Lines and JSON
    python benchmarks/bench_studio.py --rows 10000 50000 100000

For each size it writes the benchmark set (``bench_core.generate_rows``), starts the studio as
a user does (a process of its own, any free port), and measures the wall time until the first
page of rows has been served, which includes start-up, reading and validating every row once,
and rendering. It then times the pages a reviewer opens next (a row, the editor) and a live
check of an edited row (the validator over the whole set with the row replaced), and reads the
server's peak memory (``VmHWM``) before stopping it.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import HEADER, generate_rows

ADDRESS = re.compile(r"Blueprint Studio on (http://\S+)")


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=600) as response:
        return response.read().decode()


def _timed(action: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def measure(path: Path) -> dict[str, Any]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "blueprint", "studio", str(path), "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    try:
        url = None
        for line in process.stderr:
            found = ADDRESS.search(line)
            if found:
                url = found.group(1)
                break
        if url is None:
            raise RuntimeError(f"the studio did not start for {path}")
        page = _get(url + "sets/1/rows")
        first_page = time.perf_counter() - started
        row_id = re.search(r'href="/sets/1/rows/([^"?/]+)\?', page)
        assert row_id is not None
        row_url = f"{url}sets/1/rows/{row_id.group(1)}"
        row_seconds, _ = _timed(lambda: _get(row_url))
        editor_seconds, editor = _timed(lambda: _get(f"{url}sets/1/edit/{row_id.group(1)}"))
        hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', editor))
        body = urlencode({**hidden, "f.metadata.case.scenario": "edited for the benchmark"})
        check_url = f"{url}sets/1/check/{row_id.group(1)}"
        request = urllib.request.Request(check_url, data=body.encode(), method="POST")
        check_seconds, _ = _timed(lambda: urllib.request.urlopen(request, timeout=600).read())
        status = Path(f"/proc/{process.pid}/status")
        peak = None
        if status.exists():
            found = re.search(r"VmHWM:\s+(\d+) kB", status.read_text())
            peak = int(found.group(1)) / 1024 if found else None
        return {
            "firstPageSeconds": round(first_page, 3),
            "rowPageSeconds": round(row_seconds, 3),
            "editorSeconds": round(editor_seconds, 3),
            "liveCheckSeconds": round(check_seconds, 3),
            "peakRssMiB": None if peak is None else round(peak, 1),
        }
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[50_000])
    parser.add_argument("--formats", nargs="+", default=["jsonl", "json"])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    options = parser.parse_args(argv)

    from blueprint.formats import REGISTRY, WriteOptions

    results = []
    with tempfile.TemporaryDirectory(prefix="bench-studio-") as folder:
        for rows in options.rows:
            for fmt in options.formats:
                path = Path(folder) / f"set-{rows}.{fmt}"
                REGISTRY[fmt].write(HEADER, generate_rows(rows), path, WriteOptions(force=True))
                print(f"measuring {rows:,} rows of {fmt}", file=sys.stderr, flush=True)
                results.append({"rows": rows, "format": fmt, **measure(path)})
    if options.json:
        print(json.dumps(results, indent=2))
        return 0
    print(
        "| rows | format | first page (s) | row page (s) | editor (s) | live check (s) | peak MiB |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|")
    for item in results:
        print(
            f"| {item['rows']:,} | {item['format']} | {item['firstPageSeconds']:.2f}"
            f" | {item['rowPageSeconds']:.3f} | {item['editorSeconds']:.3f}"
            f" | {item['liveCheckSeconds']:.2f} | {item['peakRssMiB']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
