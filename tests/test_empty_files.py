"""One rule in every format: a file that holds nothing, or only whitespace, is not a set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import data_rows
from blueprint.core.errors import ParseError
from blueprint.formats import FOLDER, REGISTRY, resolve_codec
from blueprint.formats.setfile import set_file_for
from blueprint.validation.validate import validate_file

runner = CliRunner()

READ_FORMS = [
    (codec.name, extension)
    for codec in REGISTRY.values()
    if codec.can_read
    for extension in codec.read_extensions
    if extension != FOLDER
]
NOTHING = ["", "   ", "\n\n", " \t\r\n", "\ufeff", "\ufeff  \n"]


@pytest.mark.parametrize(("name", "extension"), READ_FORMS, ids=lambda item: str(item))
@pytest.mark.parametrize("content", NOTHING, ids=repr)
def test_an_empty_file_is_not_a_set_in_any_format(
    tmp_path: Path, name: str, extension: str, content: str
) -> None:
    path = tmp_path / f"set{extension}"
    path.write_text(content, encoding="utf-8")
    for format_name in (name, None):
        with pytest.raises(ParseError) as caught:
            resolve_codec(path, format_name, reading=True)
        assert caught.value.path == path and "empty" in caught.value.reason
    report = validate_file(path, format=name)
    assert report.unreadable and [issue.code for issue in report.issues] == ["parse"]


@pytest.mark.parametrize(
    "command",
    [["validate"], ["convert", "{dir}/out.json"], ["roundtrip", "--via", "csv"], ["dedupe"]],
)
def test_commands_refuse_an_empty_file_naming_it(tmp_path: Path, command: list[str]) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text("\n", encoding="utf-8")
    args = [command[0], str(path), *(part.format(dir=tmp_path) for part in command[1:])]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "set.jsonl" in result.output and "empty" in result.output
    assert not (tmp_path / "out.json").exists()


def test_an_empty_data_file_beside_its_set_file_is_a_set_of_no_rows(tmp_path: Path) -> None:
    # (a CSV data file needs its header row even then: the CSV reader says so)
    path = tmp_path / "set.jsonl"
    path.write_text("", encoding="utf-8")
    set_file_for(path).write_text(json.dumps({"name": "empty"}), encoding="utf-8")
    codec = resolve_codec(path, None, reading=True)
    assert codec.name == "jsonl"
    assert list(data_rows(codec.open(path))) == []
