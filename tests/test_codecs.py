"""Contract tests over the format registry: every codec inherits these.

For each readable and writable codec: a set written and read back is identical (for lossless
codecs), the shared fixture stored in that format reads as the canonical fixture, outputs are
never half-written or overwritten without force, and the extension picks the codec.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from blueprint.convert import ConvertOptions, convert, data_rows
from blueprint.core.errors import OutputExistsError
from blueprint.formats import REGISTRY, WriteOptions, resolve_codec
from blueprint.io import jsonvalues
from conftest import FIXTURES, document, row
from strategies import eval_sets

CODECS = [codec for codec in REGISTRY.values() if codec.can_read and codec.can_write]
LOSSLESS = [codec for codec in CODECS if codec.lossless]


def canonical(value: Any) -> bytes:
    return jsonvalues.dumps(value, sort_keys=True)


def write_and_read(codec: Any, doc: dict[str, Any], folder: Path) -> tuple[Any, list[Any]]:
    target = folder / f"set{codec.extensions[0]}"
    header = {k: v for k, v in doc.items() if k != "rows"}
    codec.write(header, iter(doc["rows"]), target, WriteOptions(force=True))
    source = codec.open(target)
    return source.header, list(data_rows(source))


@pytest.mark.parametrize("codec", LOSSLESS, ids=lambda c: c.name)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=eval_sets())
def test_lossless_round_trip(codec: Any, doc: dict[str, Any], tmp_path: Path) -> None:
    header, rows = write_and_read(codec, doc, tmp_path)
    assert canonical(rows) == canonical(doc["rows"])
    assert canonical(header) == canonical({k: v for k, v in doc.items() if k != "rows"})


@pytest.mark.parametrize(
    "chain",
    list(itertools.permutations([c.name for c in LOSSLESS])),
    ids="->".join,
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=30)
@given(doc=eval_sets(max_rows=3))
def test_every_conversion_chain_is_lossless(
    chain: tuple[str, ...], doc: dict[str, Any], tmp_path: Path
) -> None:
    current = tmp_path / "start.json"
    REGISTRY["json"].write(
        {k: v for k, v in doc.items() if k != "rows"},
        iter(doc["rows"]),
        current,
        WriteOptions(force=True),
    )
    for step, name in enumerate([*chain, "json"]):
        target = tmp_path / f"step{step}{REGISTRY[name].extensions[0]}"
        convert(current, target, ConvertOptions(force=True, allow_invalid=True))
        current = target
    source = REGISTRY["json"].open(current)
    assert canonical(list(data_rows(source))) == canonical(doc["rows"])
    assert canonical(source.header) == canonical({k: v for k, v in doc.items() if k != "rows"})


@pytest.mark.parametrize("codec", LOSSLESS, ids=lambda c: c.name)
def test_shared_fixture_reads_the_same_in_every_format(codec: Any, awkward_set: dict) -> None:
    path = FIXTURES / "awkward" / f"awkward{codec.extensions[0]}"
    source = codec.open(path)
    assert canonical(list(data_rows(source))) == canonical(awkward_set["rows"])
    assert canonical(source.header) == canonical(
        {k: v for k, v in awkward_set.items() if k != "rows"}
    )


@pytest.mark.parametrize("codec", LOSSLESS, ids=lambda c: c.name)
def test_writer_reproduces_the_committed_fixture(
    codec: Any, awkward_set: dict, tmp_path: Path
) -> None:
    target = tmp_path / f"awkward{codec.extensions[0]}"
    header = {k: v for k, v in awkward_set.items() if k != "rows"}
    result = codec.write(header, iter(awkward_set["rows"]), target, WriteOptions())
    for written in result.files:
        assert written.read_bytes() == (FIXTURES / "awkward" / written.name).read_bytes()


@pytest.mark.parametrize("codec", LOSSLESS, ids=lambda c: c.name)
def test_existing_output_is_not_overwritten_without_force(codec: Any, tmp_path: Path) -> None:
    target = tmp_path / f"set{codec.extensions[0]}"
    target.write_text("keep me", encoding="utf-8")
    with pytest.raises(OutputExistsError):
        codec.write(
            {"schemaVersion": "blueprint.eval-set/v1", "name": "x"},
            iter([row("a")]),
            target,
            WriteOptions(),
        )
    assert target.read_text(encoding="utf-8") == "keep me"
    codec.write(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "x"},
        iter([row("a")]),
        target,
        WriteOptions(force=True),
    )
    assert target.read_text(encoding="utf-8") != "keep me"


@pytest.mark.parametrize("codec", LOSSLESS, ids=lambda c: c.name)
def test_failed_write_leaves_nothing_behind(codec: Any, tmp_path: Path) -> None:
    def failing_rows():
        yield row("a")
        raise RuntimeError("source broke mid-way")

    target = tmp_path / f"set{codec.extensions[0]}"
    with pytest.raises(RuntimeError):
        codec.write(
            {"schemaVersion": "blueprint.eval-set/v1", "name": "x"},
            failing_rows(),
            target,
            WriteOptions(),
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("codec", LOSSLESS, ids=lambda c: c.name)
def test_extension_selects_the_codec(codec: Any, tmp_path: Path) -> None:
    for extension in codec.extensions:
        assert resolve_codec(tmp_path / f"x{extension}", None, reading=False) is codec
        assert resolve_codec(tmp_path / f"x{extension.upper()}", None, reading=False) is codec


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_sniff_recognises_own_output_among_codecs_sharing_its_extension(
    codec: Any, tmp_path: Path
) -> None:
    source = FIXTURES / "awkward" / "awkward.json"
    target = tmp_path / f"out{codec.extensions[0]}"
    rows = list(data_rows(REGISTRY["json"].open(source)))
    codec.write(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "t"},
        iter(rows),
        target,
        # a format that holds none of these rows still writes its empty file, to be sniffed
        WriteOptions(allow_empty=True),
    )
    # a folder format (huggingface) is recognised by its folder, not by bytes
    head = target.read_bytes()[:65536] if target.is_file() else b""
    assert codec.sniff(target, head).ok
    sharing = [
        other
        for other in REGISTRY.values()
        if other is not codec and target.suffix in other.read_extensions
    ]
    assert not [other.name for other in sharing if other.sniff(target, head).ok]
    assert resolve_codec(target, None, reading=True) is codec


@pytest.mark.parametrize("codec", LOSSLESS, ids=lambda c: c.name)
def test_empty_set_round_trips(codec: Any, tmp_path: Path) -> None:
    header, rows = write_and_read(codec, document(), tmp_path)
    assert rows == []
    assert header == {"schemaVersion": "blueprint.eval-set/v1", "name": "test-set"}
