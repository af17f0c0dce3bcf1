"""Conversion and round-trips through the library API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest

from blueprint.convert import ConvertOptions, convert, roundtrip
from blueprint.core.errors import (
    AmbiguousFormatError,
    OutputError,
    OutputExistsError,
    UnknownFormatError,
    UsageError,
)
from blueprint.diff import diff_files
from blueprint.formats import REGISTRY
from blueprint.formats.base import ExportResult, LossyField
from blueprint.formats.vendor import exporting
from conftest import FIXTURES, document, row, write_json


def test_convert_picks_formats_from_extensions(tmp_path: Path) -> None:
    source = FIXTURES / "awkward" / "awkward.json"
    result = convert(source, tmp_path / "out.csv", ConvertOptions())
    assert result.source_format == "json"
    assert result.export.format == "csv"
    assert [p.name for p in result.export.files] == ["out.csv", "out.csv.set.json"]
    assert result.export.rows == 9
    assert result.export.lossy == []
    assert diff_files(source, tmp_path / "out.csv").identical


def test_explicit_formats_override_extensions(tmp_path: Path) -> None:
    source = tmp_path / "data.txt"
    source.write_bytes((FIXTURES / "awkward" / "awkward.json").read_bytes())
    result = convert(source, tmp_path / "out.dat", ConvertOptions("json", "jsonl"))
    assert result.export.format == "jsonl"
    assert diff_files(
        source, tmp_path / "out.dat", left_format="json", right_format="jsonl"
    ).identical


def test_unknown_extension_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(UnknownFormatError):
        convert(FIXTURES / "awkward" / "awkward.json", tmp_path / "out.xlsx", ConvertOptions())


def test_no_overwrite_without_force(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    convert(FIXTURES / "awkward" / "awkward.json", target, ConvertOptions())
    with pytest.raises(OutputExistsError):
        convert(FIXTURES / "awkward" / "awkward.json", target, ConvertOptions())
    convert(FIXTURES / "awkward" / "awkward.json", target, ConvertOptions(force=True))


def test_missing_set_file_gets_a_name_and_a_note(tmp_path: Path) -> None:
    source = tmp_path / "hand-made.jsonl"
    source.write_text(json.dumps(row("a")) + "\n", encoding="utf-8")
    result = convert(source, tmp_path / "out.json", ConvertOptions())
    assert result.notes and "hand-made" in result.notes[0]
    header = REGISTRY["json"].open(tmp_path / "out.json").header
    assert header == {"schemaVersion": "blueprint.eval-set/v1", "name": "hand-made"}


@pytest.mark.parametrize("via", ["json", "jsonl", "csv"])
def test_roundtrip_through_canonical_formats_is_exact(via: str) -> None:
    result = roundtrip(FIXTURES / "awkward" / "awkward.json", via)
    assert result.exact
    assert result.diff.identical


def test_roundtrip_compares_declared_and_actual_loss(tmp_path: Path, monkeypatch) -> None:
    """A codec that drops a field and says so is exact; one that stays silent is not."""
    codec = REGISTRY["jsonl"]
    real_write = codec.write

    def dropping_write(header, rows, path, options, declare: bool):
        kept = []
        had = []
        for data in rows:
            if "scenario" in data["metadata"]["case"]:
                had.append(data["id"])
                data = {
                    **data,
                    "metadata": {
                        **data["metadata"],
                        "case": {
                            k: v for k, v in data["metadata"]["case"].items() if k != "scenario"
                        },
                    },
                }
            kept.append(data)
        result: ExportResult = real_write(header, iter(kept), path, options)
        if declare:
            result.lossy.append(LossyField("metadata.case.scenario", "no place for it", tuple(had)))
        return result

    doc = write_json(tmp_path / "set.json", document(row("a", scenario="s"), row("b")))
    monkeypatch.setattr(codec, "write", lambda *a: dropping_write(*a, declare=True), raising=False)
    assert roundtrip(doc, "jsonl").exact
    monkeypatch.setattr(codec, "write", lambda *a: dropping_write(*a, declare=False), raising=False)
    silent = roundtrip(doc, "jsonl")
    assert not silent.exact
    assert silent.undeclared == [("a", "metadata.case.scenario")]

    def overclaiming(*args):
        result = real_write(*args)
        result.lossy.append(LossyField("metadata.case.actor", "claims a loss", ("b",)))
        return result

    monkeypatch.setattr(codec, "write", overclaiming, raising=False)
    claimed = roundtrip(doc, "jsonl")
    assert claimed.unobserved == [("b", "metadata.case.actor")]


def test_ambiguous_extension_needs_content_or_a_name(tmp_path: Path, monkeypatch) -> None:
    from blueprint import formats
    from blueprint.formats.sniffing import Fit

    class OtherJson:
        name = "other"
        title = "another JSON format"
        extensions = (".json",)
        read_extensions = (".json",)
        write_forms: ClassVar[dict[str, str]] = {".json": "json"}
        refused_forms: ClassVar[dict[str, str]] = {}
        lossless = False
        can_read = True
        can_write = True

        def sniff(self, path: Path, head: bytes) -> Fit:
            return Fit(b'"other"' in head, "no other key")

    monkeypatch.setitem(formats.REGISTRY, "other", OtherJson())
    ours = FIXTURES / "awkward" / "awkward.json"
    assert formats.resolve_codec(ours, None, reading=True).name == "json"
    theirs = tmp_path / "theirs.json"
    theirs.write_text('{"other": 1}', encoding="utf-8")
    assert formats.resolve_codec(theirs, None, reading=True).name == "other"
    # an empty object fits only the canonical format
    neither = tmp_path / "plain.json"
    neither.write_text("{}", encoding="utf-8")
    assert formats.resolve_codec(neither, None, reading=True).name == "json"
    # content that fits nothing is refused, with what each format looked for
    nothing = tmp_path / "nothing.json"
    nothing.write_text('[{"input": "q", "ideal": "a"}]', encoding="utf-8")
    with pytest.raises(UnknownFormatError) as refused:
        formats.resolve_codec(nothing, None, reading=True)
    assert "deepeval:" in str(refused.value) and "other:" in str(refused.value)
    both = tmp_path / "both.json"
    both.write_text('{"schemaVersion": "blueprint.eval-set/v1", "other": 1}', encoding="utf-8")
    with pytest.raises(AmbiguousFormatError) as caught:
        formats.resolve_codec(both, None, reading=True)
    assert caught.value.candidates == ["json", "other"]
    # writing to a shared extension means the canonical format
    assert formats.resolve_codec(tmp_path / "out.json", None, reading=False).name == "json"


def test_an_extension_that_hides_the_format_gets_a_note(tmp_path: Path) -> None:
    result = convert(
        FIXTURES / "awkward" / "awkward.json",
        tmp_path / "out.txt",
        ConvertOptions(target_format="csv"),
    )
    assert any("--from csv" in note for note in result.notes)


def test_convert_never_exits_0_on_a_set_validate_rejects(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from blueprint.cli import app

    broken = Path(__file__).parent.parent / "examples" / "broken.json"
    runner = CliRunner()
    target = tmp_path / "out.jsonl"
    refused = runner.invoke(app, ["convert", str(broken), str(target)])
    assert refused.exit_code == 1 and not target.exists()
    assert "inadmissible-evaluator" in refused.stderr
    written = runner.invoke(
        app, ["convert", str(broken), str(target), "--allow-invalid", "--report", "json"]
    )
    assert written.exit_code == 1 and target.exists()
    assert json.loads(written.stdout)["valid"] is False
    assert runner.invoke(app, ["validate", str(target)]).exit_code == 1


def test_retrieval_context_reaches_promptfoo_as_vars(tmp_path: Path) -> None:
    import yaml

    data = row("rag")
    data["metadata"]["retrieval_context"] = ["Returns are free within 30 days."]
    data["metadata"]["context"] = ["policy v3"]
    source = write_json(tmp_path / "s.json", document(data))
    convert(source, tmp_path / "tests.yaml", ConvertOptions(target_format="promptfoo"))
    (test,) = yaml.safe_load((tmp_path / "tests.yaml").read_text(encoding="utf-8"))
    assert test["vars"]["retrieval_context"] == ["Returns are free within 30 days."]
    assert test["vars"]["context"] == ["policy v3"]
    assert test["options"]["disableVarExpansion"] is True  # one test, not one per item
    back = convert(tmp_path / "tests.yaml", tmp_path / "back.json", ConvertOptions())
    assert back.valid
    (restored,) = json.loads((tmp_path / "back.json").read_text(encoding="utf-8"))["rows"]
    assert restored == data


@pytest.mark.parametrize("target", ["in.jsonl", "in.jsonl.set.json"])
def test_an_output_that_is_the_input_or_its_set_file_is_refused(tmp_path: Path, target) -> None:
    source = tmp_path / "in.jsonl"
    convert(FIXTURES / "awkward" / "awkward.json", source)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    with pytest.raises(UsageError):
        convert(source, tmp_path / target, ConvertOptions(force=True))
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_force_never_replaces_a_device() -> None:
    with pytest.raises(OutputError):
        convert(
            FIXTURES / "awkward" / "awkward.json",
            Path("/dev/null"),
            ConvertOptions(target_format="csv", force=True),
        )
    assert Path("/dev/null").is_char_device()


def test_a_vendor_export_checks_again_only_rows_the_validator_did_not_accept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[object] = []
    check = exporting._require_valid
    monkeypatch.setattr(
        exporting,
        "_require_valid",
        lambda data, *rest: (checked.append(data["id"]), check(data, *rest)),
    )
    rows = [row("a"), row("b"), row("c")]
    source = write_json(tmp_path / "set.json", document(*rows))
    convert(source, tmp_path / "out.jsonl", ConvertOptions(target_format="deepeval"))
    assert checked == []
    # once a row breaks the schema, it and every row after it are checked, and the export
    # stops at the broken one as an export of unchecked rows would
    del rows[1]["metadata"]["case"]["oracleType"]
    source = write_json(tmp_path / "broken.json", document(*rows))
    with pytest.raises(exporting.InvalidRowForExport):
        convert(source, tmp_path / "out2.jsonl", ConvertOptions(target_format="deepeval"))
    assert checked == ["b"]
