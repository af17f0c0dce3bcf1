"""Fuzzing every importer: arbitrary bytes and mutated valid files give a set or a clean error.

Never an uncaught exception, never a hang: each example runs under an alarm. The budget is
bounded and set by ``BLUEPRINT_FUZZ_EXAMPLES`` (examples per format and strategy; CI raises it).
A failure prints the input that caused it, so it can become a regression test.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blueprint.convert import ConvertOptions, convert
from blueprint.core.errors import BlueprintError
from blueprint.formats import REGISTRY
from blueprint.validation.validate import validate_file

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "support-refunds.json"
NATIVE = Path(__file__).parent / "fixtures" / "native"
EXAMPLES = int(os.environ.get("BLUEPRINT_FUZZ_EXAMPLES", "40"))
#: seconds one example may take before it counts as a hang
ALARM = 10

READERS = [name for name, codec in REGISTRY.items() if codec.can_read and name != "huggingface"]

#: fragments that tend to break parsers: structure, escapes, YAML anchors and tags, numbers
#: at the edge of precision, surrogates, CSV quoting, file references
TOKENS = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b",",
    b":",
    b"\n",
    b"\r\n",
    b"\x00",
    b"\\",
    b'"\\ud800"',
    b"\\udc00",
    b"&a ",
    b"*a",
    b"<<: *a",
    b"!!python/object:os.system",
    b"!!binary",
    b"? ",
    b"- ",
    b"---\n",
    b"...\n",
    b".nan",
    b".inf",
    b"1e400",
    b"-0",
    b"9" * 40,
    b"9" * 5000,
    b"[" * 300,
    b"null",
    b"true",
    b'""',
    b'"|"',
    b"|",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xc3",
    b"file:///etc/passwd",
    b"file://../../x.yaml",
    b"https://example.invalid/x.json",
    b'"id"',
    b'"rows"',
    b'"metadata"',
    b"case.oracleType",
    b"=cmd|' /C calc'!A0",
    b"\t",
    b"'",
    b"#",
    b"%YAML 1.1\n",
]


class Hang(Exception):
    """An example ran past its alarm."""


@contextmanager
def alarm(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: object) -> None:
        raise Hang(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _seed_files(name: str, folder: Path) -> list[tuple[str, bytes]]:
    """Valid files of a format, with their extensions: the bundled example exported to it,
    and the public fixtures."""
    codec = REGISTRY[name]
    seeds: list[tuple[str, bytes]] = []
    if name == "shards":  # read, not written: a shard of each kind
        return _shard_seeds(folder)
    for extension in codec.read_extensions:
        target = folder / f"{name}-seed{extension}"
        try:
            convert(EXAMPLE, target, ConvertOptions(target_format=name, force=True))
        except BlueprintError:
            continue  # a form this format does not write
        if target.is_file():
            seeds.append((extension, target.read_bytes()))
    for path in sorted((NATIVE / name).rglob("*")) if (NATIVE / name).is_dir() else []:
        if path.is_file() and path.suffix in codec.read_extensions and path.stat().st_size < 64_000:
            seeds.append((path.suffix, path.read_bytes()))
    return seeds


def _shard_seeds(folder: Path) -> list[tuple[str, bytes]]:
    """The bundled example as a JSON Lines shard, and its ids and inputs as a Parquet one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = folder / "shards-seed.jsonl"
    convert(EXAMPLE, lines, ConvertOptions(target_format="jsonl", force=True))
    rows = [json.loads(line) for line in lines.read_text("utf-8").splitlines()]
    table = pa.table(
        {"id": [row["id"] for row in rows], "input": [json.dumps(row["input"]) for row in rows]}
    )
    parquet = folder / "shards-seed.parquet"
    pq.write_table(table, parquet, row_group_size=3)
    return [(".jsonl", lines.read_bytes()), (".parquet", parquet.read_bytes())]


@pytest.fixture(scope="module")
def seeds() -> Iterator[dict[str, list[tuple[str, bytes]]]]:
    folder = Path(tempfile.mkdtemp(prefix="blueprint-fuzz-seeds-"))
    try:
        yield {name: _seed_files(name, folder) for name in READERS}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _mutate(data: bytes, operations: list[tuple[int, int, int]]) -> bytes:
    """Apply (kind, position, argument) edits: insert a token, delete a span, repeat a span,
    flip a byte."""
    buffer = bytearray(data)
    for kind, position, argument in operations:
        at = position % (len(buffer) + 1)
        if kind == 0:
            buffer[at:at] = TOKENS[argument % len(TOKENS)]
        elif kind == 1:
            del buffer[at : at + 1 + argument % 64]
        elif kind == 2:
            buffer[at:at] = buffer[at : at + 1 + argument % 128]
        elif buffer:
            buffer[at % len(buffer)] ^= 1 << (argument % 8)
    return bytes(buffer)


def _read_extensions(name: str) -> tuple[str, ...]:
    """The extensions of files a format reads; a set in shards (no extension of its own, it
    is named) reads one file of each kind of shard just as well."""
    if name == "shards":
        return (".jsonl", ".parquet")
    return REGISTRY[name].read_extensions


def _exercise(name: str, extension: str, data: bytes, folder: Path) -> None:
    """Read a file as the format: validation, then (when it reads) a conversion and a re-read.

    Only a BlueprintError may escape; anything else, or a hang, fails the test."""
    path = folder / f"input{extension}"
    path.write_bytes(data)
    for stale in folder.glob("out*"):
        if stale.is_dir():
            shutil.rmtree(stale)
        else:
            stale.unlink()
    try:
        with alarm(ALARM):
            report = validate_file(path, format=name)
            if report.unreadable:
                return
            out = folder / "out.jsonl"
            convert(path, out, ConvertOptions(source_format=name, allow_invalid=True))
            validate_file(out, format="jsonl")
    except BlueprintError:
        pass  # a clean refusal naming the file is a correct answer


#: every fuzz test's budget: no deadline (an alarm catches hangs) and no example database, so
#: a run is bounded by EXAMPLES alone
FUZZED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

operation = st.tuples(st.integers(0, 3), st.integers(0, 1 << 20), st.integers(0, 1 << 10))


@pytest.mark.parametrize("name", READERS)
def test_arbitrary_bytes_give_a_set_or_a_clean_error(name: str, tmp_path: Path) -> None:
    extensions = _read_extensions(name)

    @FUZZED
    @given(data=st.binary(max_size=2048), which=st.integers(0, len(extensions) - 1))
    def run(data: bytes, which: int) -> None:
        _exercise(name, extensions[which], data, tmp_path)

    run()


@pytest.mark.parametrize("name", READERS)
def test_mutated_valid_files_give_a_set_or_a_clean_error(
    name: str, seeds: dict[str, list[tuple[str, bytes]]], tmp_path: Path
) -> None:
    files = seeds[name]
    assert files, f"no seed files for {name}"

    @FUZZED
    @given(
        seed=st.integers(0, len(files) - 1),
        operations=st.lists(operation, min_size=1, max_size=6),
    )
    def run(seed: int, operations: list[tuple[int, int, int]]) -> None:
        extension, data = files[seed]
        _exercise(name, extension, _mutate(data, operations), tmp_path)

    run()


@pytest.fixture(scope="module")
def dataset_folder() -> Iterator[Path]:
    """The bundled example as a Hugging Face dataset folder (card and data file)."""
    folder = Path(tempfile.mkdtemp(prefix="blueprint-fuzz-hf-"))
    try:
        convert(EXAMPLE, folder / "seed", ConvertOptions(target_format="huggingface"))
        yield folder / "seed"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_mutated_dataset_folders_give_a_set_or_a_clean_error(
    dataset_folder: Path, tmp_path: Path
) -> None:
    files = sorted(path.relative_to(dataset_folder) for path in dataset_folder.rglob("*.*"))
    assert files

    @FUZZED
    @given(
        which=st.integers(0, len(files) - 1),
        operations=st.lists(operation, min_size=1, max_size=6),
    )
    def run(which: int, operations: list[tuple[int, int, int]]) -> None:
        folder = tmp_path / "input"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(dataset_folder, folder)
        target = folder / files[which]
        target.write_bytes(_mutate(target.read_bytes(), operations))
        try:
            with alarm(ALARM):
                report = validate_file(folder, format="huggingface")
                if not report.unreadable:
                    convert(
                        folder,
                        tmp_path / "out.jsonl",
                        ConvertOptions(source_format="huggingface", allow_invalid=True, force=True),
                    )
        except BlueprintError:
            pass

    run()
