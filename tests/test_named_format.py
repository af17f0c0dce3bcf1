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
from conftest import EXAMPLES, FIXTURES, READ_AS_ANOTHER_FORMAT

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


@pytest.mark.parametrize("fmt", ["promptfoo", "deepeval", "braintrust", "inspect"])
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
    if path in READ_AS_ANOTHER_FORMAT:
        with pytest.raises(UnknownFormatError) as refused:
            resolve_codec(path, fmt, reading=True)
        assert f"it fits {READ_AS_ANOTHER_FORMAT[path]}" in str(refused.value)
        assert resolve_codec(path, READ_AS_ANOTHER_FORMAT[path], reading=True)
        return
    if path == NATIVE / "omk" / "schema" / "eval-sample-set.schema.json":
        with pytest.raises(UnknownFormatError, match="fits none of the formats"):
            resolve_codec(path, fmt, reading=True)  # a JSON Schema of omk's, not a sample set
        return
    assert resolve_codec(path, fmt, reading=True).name == fmt


# --- every vendor format refuses another format's content when named ------------------------

#: one record of each shape: the format whose it is (None: no format Blueprint reads)
RECORDS = {
    "ideal": ({"input": "What is 2+2?", "ideal": "4"}, "openai-evals"),
    "target": ({"input": "What is 2+2?", "target": "4"}, "inspect"),
    "expected_output": ({"input": "What is 2+2?", "expected_output": "4"}, "deepeval"),
    "inputs": ({"inputs": {"q": "What is 2+2?"}, "outputs": {"a": "4"}}, "langsmith"),
    "expected": ({"input": "What is 2+2?", "expected": "4", "tags": ["x"]}, "braintrust"),
    "messages": (CHAT_LINES[0], None),
    "item": ({"item": {"question": "What is 2+2?", "answer": "4"}}, None),
}
JSONL_READERS = ("openai-evals", "inspect", "deepeval", "langsmith", "braintrust", "promptfoo")


@pytest.mark.parametrize("shape", list(RECORDS))
@pytest.mark.parametrize("fmt", JSONL_READERS)
def test_each_jsonl_format_reads_its_own_records_and_refuses_the_others(
    tmp_path: Path, shape: str, fmt: str
) -> None:
    record, owner = RECORDS[shape]
    source = _lines(tmp_path / "records.jsonl", [record, record])
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["convert", str(source), str(out), "--from", fmt])
    if fmt == owner:
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2, (result.output, shape, fmt)
    assert not out.exists()
    if owner is not None:
        assert f"it fits {owner}" in result.output


@pytest.mark.parametrize(
    "fmt", ["inspect", "omk", "ome", "langsmith", "deepeval", "braintrust", "promptfoo"]
)
def test_a_blueprint_set_named_as_a_vendor_format_is_refused(tmp_path: Path, fmt: str) -> None:
    source = EXAMPLES / "support-refunds.json"
    result = runner.invoke(app, ["validate", str(source), "--from", fmt])
    assert result.exit_code == 2, result.output


@pytest.mark.parametrize(
    ("name", "text", "fmt", "fits"),
    [
        ("config.yaml", "prompts: ['{{q}}']\ntests:\n  - vars: {q: hi}\n", "omk", "promptfoo"),
        ("notes.yaml", "title: notes\nitems: [1, 2]\n", "omk", None),
        ("pyproject.toml", '[project]\nname = "x"\n', "apollia", None),
        ("records.json", '[{"question": "hi", "answer": "yo"}]\n', "ome", None),
        ("records.json", '[{"question": "hi", "answer": "yo"}]', "huggingface", None),
        (
            "log.json",
            '{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": []}\n',
            "inspect",
            None,
        ),
    ],
)
def test_other_content_named_as_a_file_format_is_refused(
    tmp_path: Path, name: str, text: str, fmt: str, fits: str | None
) -> None:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["convert", str(source), str(tmp_path / "out.json"), "--from", fmt])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "out.json").exists()
    if fits is not None:
        assert f"it fits {fits}" in result.output
