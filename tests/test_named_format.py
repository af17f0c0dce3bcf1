"""A format named with --from is still checked against the content: a vendor format whose own
sniffing says the file is not of it refuses the file (exit 2) rather than import empty rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.core.errors import UnknownFormatError
from blueprint.formats import REGISTRY, resolve_codec
from conftest import FIXTURES

NATIVE = FIXTURES / "native"
runner = CliRunner()

#: an OpenAI Evals registry sample per line, and a chat fine-tuning file
EVALS_LINES = [
    {"input": [{"role": "user", "content": "What is 2+2?"}], "ideal": "4"},
    {"input": [{"role": "user", "content": "What is 3+3?"}], "ideal": "6"},
]
CHAT_LINES = [
    {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
    {"messages": [{"role": "user", "content": "bye"}, {"role": "assistant", "content": "ciao"}]},
]


def _lines(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _native_sets() -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for folder in sorted(NATIVE.iterdir()):
        codec = REGISTRY[folder.name]
        if folder.name == "huggingface":
            found += [
                (path, folder.name)
                for path in sorted(folder.rglob("*"))
                if path.is_dir() and (path / "README.md").is_file()
            ]
            continue
        for path in sorted(folder.rglob("*")):
            if (
                path.is_file()
                and path.suffix.lower() in codec.read_extensions
                and not path.name.endswith(".set.json")
            ):
                found.append((path, folder.name))
    return found


@pytest.mark.parametrize("fmt", ["promptfoo", "deepeval", "braintrust"])
@pytest.mark.parametrize(("records", "fits"), [(EVALS_LINES, "openai-evals"), (CHAT_LINES, None)])
def test_a_file_of_another_format_is_refused(
    tmp_path: Path, fmt: str, records: list[dict[str, object]], fits: str | None
) -> None:
    source = _lines(tmp_path / "samples.jsonl", records)
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["convert", str(source), str(out), "--from", fmt])
    assert result.exit_code == 2
    assert not out.exists()
    with pytest.raises(UnknownFormatError) as refused:
        resolve_codec(source, fmt, reading=True)
    message = str(refused.value)
    if fits is not None:
        assert fits in message
    else:
        assert "openai-evals" not in message


@pytest.mark.parametrize(
    "command",
    [["validate"], ["convert", "OUT"], ["diff", "SAME"], ["roundtrip"]],
)
def test_every_command_that_reads_refuses(tmp_path: Path, command: list[str]) -> None:
    source = _lines(tmp_path / "samples.jsonl", EVALS_LINES)
    args = [str(tmp_path / "out.json") if arg == "OUT" else arg for arg in command[1:]]
    args = [str(source) if arg == "SAME" else arg for arg in args]
    result = runner.invoke(app, [command[0], str(source), *args, "--from", "promptfoo"])
    assert result.exit_code == 2


def test_the_format_the_file_fits_still_reads_it(tmp_path: Path) -> None:
    source = _lines(tmp_path / "samples.jsonl", EVALS_LINES)
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["convert", str(source), str(out), "--from", "openai-evals"])
    assert result.exit_code == 0
    assert len(json.loads(out.read_text(encoding="utf-8"))["rows"]) == 2


def test_a_canonical_format_named_is_left_to_the_validator(tmp_path: Path) -> None:
    source = _lines(tmp_path / "samples.jsonl", EVALS_LINES)
    result = runner.invoke(app, ["validate", str(source), "--from", "jsonl"])
    assert result.exit_code == 1  # invalid rows, each finding named, as before


def test_a_first_record_cut_off_in_the_head_is_not_refused(tmp_path: Path) -> None:
    # sniffing cannot tell from a partial first record: the named reader decides
    source = tmp_path / "samples.json"
    source.write_text('[{"vars": {"q": "' + "x" * 10, encoding="utf-8")
    assert resolve_codec(source, "promptfoo", reading=True).name == "promptfoo"


@pytest.mark.parametrize(
    ("path", "fmt"),
    _native_sets(),
    ids=lambda value: value.relative_to(NATIVE).as_posix() if isinstance(value, Path) else value,
)
def test_every_native_fixture_reads_with_its_own_from(path: Path, fmt: str) -> None:
    # a file beside the sets (a cards file, a JSON Schema) may be unreadable as a set, but
    # never refused as another format's
    assert resolve_codec(path, fmt, reading=True).name == fmt
