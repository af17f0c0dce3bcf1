"""pandas interop: rows and issues as DataFrames."""

from __future__ import annotations

from pathlib import Path

from blueprint import convert, issues_frame, rows_frame, validate_file
from conftest import EXAMPLES, FIXTURES, document, row, write_json


def test_rows_frame_flattens_like_the_csv_layout() -> None:
    frame = rows_frame(FIXTURES / "awkward" / "awkward.csv")
    assert len(frame) == 9
    assert {"id", "input", "expected", "case.oracleType", "metadata.note"} <= set(frame.columns)
    first = frame.iloc[0]
    assert first["case.unacceptableBehavior"] == [
        "splits a | b",
        "drops the \\ backslash",
        " padded ",
    ]
    assert frame.set_index("id").loc["ref-number-vs-string", "expected"] == 1
    assert frame.groupby("case.oracleType").size()["acceptable-set"] == 2


def test_issues_frame() -> None:
    frame = issues_frame(validate_file(EXAMPLES / "broken.json"))
    assert list(frame.columns) == [
        "code",
        "severity",
        "rowIndex",
        "rowId",
        "path",
        "line",
        "message",
    ]
    assert set(frame["code"]) >= {"inadmissible-evaluator", "case-id-mismatch", "omitted-field"}
    empty = issues_frame(validate_file(EXAMPLES / "support-refunds.json"))
    assert len(empty) == 0 and "code" in empty.columns


def test_rows_frame_keeps_strings_pandas_would_take_for_missing(tmp_path: Path) -> None:
    texts = ["NA", "N/A", "None", "null", "NaN", ""]
    rows = [row(f"r{n}", expected=text, scenario=text) for n, text in enumerate(texts)]
    target = tmp_path / "set.csv"
    convert(write_json(tmp_path / "set.json", document(*rows)), target)
    frame = rows_frame(target)
    assert frame["expected"].tolist() == texts
    assert frame["case.scenario"].tolist() == texts
