"""Spreadsheet formula injection: CSV cells and headers a spreadsheet would run are warned of,
or, with --spreadsheet-safe, written as text and reported as changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from blueprint.cli import app
from blueprint.convert import data_rows
from blueprint.core.errors import LossyExportRefused
from blueprint.formats import REGISTRY, WriteOptions
from conftest import row

HEADER = {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}
PAYLOAD = "=cmd|' /C calc'!A0"
SAFE_JSON = ("--spreadsheet-safe", "--report", "json")
runner = CliRunner()


def _rows() -> list[dict[str, Any]]:
    return [
        row("a", expected="-3"),  # text a spreadsheet reads as the number -3: a value
        {**row("b"), "input": "=1+1"},
        {**row("c"), "input": "@SUM(A1:A9)"},
        {**row("d"), "input": "What is the refund window?"},
    ]


def _jsonl(folder: Path, rows: list[dict[str, Any]]) -> Path:
    source = folder / "set.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return source


def test_canonical_csv_cells_are_never_formulas_so_nothing_is_reported(tmp_path: Path) -> None:
    result = REGISTRY["csv"].write(HEADER, iter(_rows()), tmp_path / "s.csv", WriteOptions())
    assert result.findings == [] and result.lossy == []
    text = (tmp_path / "s.csv").read_text(encoding="utf-8")
    assert '"""=1+1"""' in text  # a JSON string, which a spreadsheet shows as text


def test_a_row_key_that_becomes_a_formula_header_is_reported_at_line_1(tmp_path: Path) -> None:
    rows = [{**row("a"), PAYLOAD: "x"}, row("b")]
    result = REGISTRY["csv"].write(HEADER, iter(rows), tmp_path / "s.csv", WriteOptions())
    assert [(f.code, f.line, f.row_index) for f in result.findings] == [
        ("spreadsheet-formula", 1, None)
    ]
    assert PAYLOAD in result.findings[0].message


def test_spreadsheet_safe_quotes_the_header_and_reports_the_rows_changed(tmp_path: Path) -> None:
    rows = [{**row("a"), PAYLOAD: "x"}, row("b")]
    target = tmp_path / "s.csv"
    options = WriteOptions(spreadsheet_safe=True)
    result = REGISTRY["csv"].write(HEADER, iter(rows), target, options)
    assert result.findings == []
    assert [(item.field, item.row_ids) for item in result.lossy] == [(PAYLOAD, ("a",))]
    first_line = target.read_text(encoding="utf-8").splitlines()[0]
    assert first_line.endswith(",'" + PAYLOAD)
    back = list(data_rows(REGISTRY["csv"].open(target)))
    assert back[0]["'" + PAYLOAD] == "x" and PAYLOAD not in back[0]


def test_a_strict_write_refuses_a_change_spreadsheet_safe_would_make(tmp_path: Path) -> None:
    rows = [{**row("a"), PAYLOAD: "x"}]
    with pytest.raises(LossyExportRefused):
        REGISTRY["csv"].write(
            HEADER, iter(rows), tmp_path / "s.csv", WriteOptions(spreadsheet_safe=True, strict=True)
        )
    assert not (tmp_path / "s.csv").exists()


def test_inspect_csv_reports_each_formula_cell_by_row_and_column(tmp_path: Path) -> None:
    result = REGISTRY["inspect"].write(HEADER, iter(_rows()), tmp_path / "s.csv", WriteOptions())
    found = [(f.code, f.row_index, f.row_id, f.path) for f in result.findings]
    assert found == [
        ("spreadsheet-formula", 1, "b", "$.rows[1].input"),
        ("spreadsheet-formula", 2, "c", "$.rows[2].input"),
    ]
    assert all("'input'" in f.message for f in result.findings)


def test_inspect_csv_spreadsheet_safe_writes_text_and_reads_back_quoted(tmp_path: Path) -> None:
    target = tmp_path / "s.csv"
    options = WriteOptions(spreadsheet_safe=True)
    result = REGISTRY["inspect"].write(HEADER, iter(_rows()), target, options)
    assert result.findings == []
    changed = [item for item in result.lossy if "spreadsheet" in item.reason]
    assert [(item.field, item.row_ids, item.kind) for item in changed] == [
        ("input", ("b", "c"), "dropped")
    ]
    inputs = {r["id"]: r["input"] for r in data_rows(REGISTRY["inspect"].open(target))}
    assert inputs["b"] == "'=1+1" and inputs["c"] == "'@SUM(A1:A9)"
    assert inputs["d"] == "What is the refund window?"


def test_convert_warns_and_spreadsheet_safe_reports_the_change(tmp_path: Path) -> None:
    source = _jsonl(tmp_path, _rows())
    target = tmp_path / "out.csv"
    plain = runner.invoke(
        app, ["convert", str(source), str(target), "--to", "inspect", "--report", "json"]
    )
    assert plain.exit_code == 0, plain.output
    report = json.loads(plain.stdout)
    assert [f["rowId"] for f in report["findings"]] == ["b", "c"]
    safe = runner.invoke(
        app,
        [*("convert", str(source), str(target), "--to", "inspect", "--force"), *SAFE_JSON],
    )
    assert safe.exit_code == 0, safe.output
    report = json.loads(safe.stdout)
    assert report["findings"] == []
    changed = [item["field"] for item in report["lossy"] if item["rowIds"] == ["b", "c"]]
    assert changed == ["input"]


def test_new_accepts_spreadsheet_safe(tmp_path: Path) -> None:
    target = tmp_path / "new.csv"
    result = runner.invoke(
        app, ["new", "customer-support", "-o", str(target), "--spreadsheet-safe"]
    )
    assert result.exit_code == 0, result.output
    assert target.is_file()
