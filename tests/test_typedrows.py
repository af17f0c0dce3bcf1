"""The validator's typed fast path: a line comes back typed only when the exact reader would
give the same value and the schema would accept it, and validation reports the same either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint.core.schema import accepts
from blueprint.formats.canonical_json import JsonCodec
from blueprint.formats.canonical_jsonl import JsonlCodec
from blueprint.io import jsonvalues, limits
from blueprint.io.typedrows import is_typed_row, row_reader
from blueprint.validation.checks import RowView
from blueprint.validation.validate import validate_file
from conftest import document, row
from strategies import mutated, rows


def _exact(line: bytes, bounds: limits.Limits | None = None) -> Any:
    try:
        return jsonvalues.reader(bounds)(line)
    except jsonvalues.JSONError as error:
        return ("error", error.reason, error.line, error.column)


def _typed(line: bytes, bounds: limits.Limits | None = None) -> Any:
    try:
        value = row_reader(bounds)(line)
    except jsonvalues.JSONError as error:
        return ("error", error.reason, error.line, error.column)
    if is_typed_row(value):
        return RowView.of_typed(0, value).data
    return value


def _in_order(value: Any) -> str:
    # keys in the order they stand: a conversion writes them so
    return json.dumps(value)


def _same_as_exact(line: bytes, bounds: limits.Limits | None = None) -> bool:
    """The fast path gives what the exact reader gives, keys in the same order; returns
    whether it took the line."""
    exact = _exact(line, bounds)
    assert _in_order(_typed(line, bounds)) == _in_order(exact), line
    try:
        taken = is_typed_row(row_reader(bounds)(line))
    except jsonvalues.JSONError:
        taken = False
    if taken:  # only rows the published schema accepts
        assert accepts("row.schema.json")(exact)
    return taken


#: ways a writer may lay out the same row on a line
_STYLES = [
    lambda value: orjson.dumps(value),
    lambda value: json.dumps(value).encode(),  # ", " and ": ", and \u escapes
    lambda value: json.dumps(value, ensure_ascii=False, sort_keys=True).encode(),
    lambda value: b"  " + orjson.dumps(value) + b" \r\n",
]


@settings(max_examples=200)
@given(data=st.data(), original=rows(), style=st.sampled_from(_STYLES))
def test_the_fast_path_gives_what_the_exact_reader_gives(
    data: st.DataObject, original: dict[str, Any], style: Any
) -> None:
    try:
        line = style(original)
    except (TypeError, ValueError):  # an integer beyond orjson
        line = json.dumps(original).encode()
    _same_as_exact(line)
    changed = data.draw(mutated(original))
    _same_as_exact(json.dumps(changed, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def _line(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


GOOD = row("r1", caseFamily="policy-lookup")


def test_a_blueprint_row_takes_the_fast_path() -> None:
    assert _same_as_exact(orjson.dumps(GOOD) + b"\n")
    assert _same_as_exact(_line({**GOOD, "metadata": {**GOOD["metadata"], "split": "test"}}))
    # keys in another order than the schema's: the exact reader keeps theirs
    assert not _same_as_exact(_line({"metadata": GOOD["metadata"], "input": "q", "id": "r1"}))
    assert not _same_as_exact(
        orjson.dumps({"input": "q", "id": "r1", "metadata": GOOD["metadata"]})
    )


@pytest.mark.parametrize(
    "line",
    [
        # repeated keys, at the top, in the case, in free-form metadata
        b'{"id":"r1","id":"r2","input":"q","metadata":{"case":'
        + orjson.dumps(GOOD["metadata"]["case"])
        + b"}}",
        orjson.dumps(GOOD)[:-2] + b',"caseId":"r1"}}}',
        orjson.dumps(GOOD)[:-1] + b',"trace":{"a":1,"a":2}}}',
        # a repeated key that an escaped colon elsewhere would hide from a count of colons
        orjson.dumps(GOOD)[:-1] + b',"trace":{"a\\u003ab":1,"c":1,"c":2}}}',
        # JSON that is not, or not quite
        b'{"id":"r1"',
        orjson.dumps(GOOD) + b"x",
        orjson.dumps(GOOD).replace(b'"q', b'"\\ud800'),
        orjson.dumps(GOOD).replace(b'"yes"', b"NaN"),
        orjson.dumps(GOOD).replace(b'"yes"', b"1e400"),
        b"\xef\xbb\xbf" + orjson.dumps(GOOD),
        orjson.dumps(GOOD).replace(b"question", b"\xff"),
        # rows the schema refuses
        _line({**GOOD, "extra": 1}),
        _line(row("r1", caseFamily="policy-lookup\n")),
        _line({**GOOD, "id": 1}),
        b"[]",
        b'"a row"',
    ],
)
def test_hostile_lines_read_as_the_exact_reader_reads_them(line: bytes) -> None:
    assert not _same_as_exact(line)


def test_numbers_the_exact_reader_reads_exactly_take_the_fast_path() -> None:
    for number in (b"123456789012345678901234567890", b"-0.0", b"1E2", b"-0", b"0.1"):
        assert _same_as_exact(orjson.dumps(GOOD).replace(b'"yes"', number))


def test_nesting_and_long_numbers_keep_to_the_limits() -> None:
    bounds = limits.Limits(max_depth=6, max_number_digits=20)
    deep = {**GOOD, "input": [[[[[["too deep"]]]]]]}
    assert not _same_as_exact(_line(deep), bounds)
    long_number = {**GOOD, "expected": 10**25}
    assert not _same_as_exact(_line(long_number), bounds)
    assert _same_as_exact(_line({**GOOD, "expected": 10**19}), bounds)
    assert _same_as_exact(_line(GOOD), bounds)


def test_nesting_past_the_exact_readers_own_limit_is_left_to_it() -> None:
    """orjson refuses values nested past 1024 levels whatever max_depth allows; msgspec,
    given the recursion, would read them."""
    import sys

    bounds = limits.Limits(max_depth=5000)
    line = _line({**GOOD, "input": "[" * 1100 + "]" * 1100}).replace(
        b'"' + b"[" * 1100 + b"]" * 1100 + b'"', b"[" * 1100 + b"]" * 1100
    )
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        assert not _same_as_exact(line, bounds)
    finally:
        sys.setrecursionlimit(saved)


def test_a_conversion_keeps_the_order_of_a_rows_keys(tmp_path: Path) -> None:
    from blueprint.convert import ConvertOptions, convert

    source = tmp_path / "set.jsonl"
    shuffled = {"input": "q", "expected": "yes", "metadata": GOOD["metadata"], "id": "r1"}
    source.write_bytes(orjson.dumps(shuffled) + b"\n" + orjson.dumps(row("r2")) + b"\n")
    target = tmp_path / "out.jsonl"
    convert(source, target, ConvertOptions(force=True))
    written = [json.loads(line) for line in target.read_text("utf-8").splitlines()]
    assert [list(value) for value in written] == [list(shuffled), list(row("r2"))]


SETS = Path(__file__).parent / "fixtures"


def _mixed_rows() -> list[Any]:
    bad_case = row("r3")
    bad_case["metadata"]["case"]["oracleType"] = "reference"
    return [
        GOOD,
        row("r2", "rubric", evaluationCriteria=["polite"], evaluator="llm-judge"),
        bad_case,
        {**row("r1"), "extra": True},
        row("r4", "expected-behavior-only"),
        {**row("r5"), "input": GOOD["input"]},
        row("r6", "acceptable-set", expected={"acceptable": ["a"]}, evaluator="human-expert"),
    ]


def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation without the fast path: every row through the exact reader and the schema."""
    monkeypatch.delattr(JsonlCodec, "open_typed")
    monkeypatch.delattr(JsonCodec, "open_typed")


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_report_is_the_same_with_and_without_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    path = tmp_path / f"set{suffix}"
    rows_ = _mixed_rows()
    if suffix == ".jsonl":
        lines = [_line(value) for value in rows_]
        lines.insert(3, b'{"id": "broken"')
        lines.insert(4, b'{"id":"r7","id":"r8"}')
        path.write_bytes(b"\n".join(lines) + b"\n")
    else:
        path.write_text(json.dumps(document(*rows_), indent=2), "utf-8")
    fast = validate_file(path).to_json()
    with monkeypatch.context() as patched:
        _plain(patched)
        plain = validate_file(path).to_json()
    assert fast == plain
    codes = {issue["code"] for issue in fast["issues"]}
    assert {"schema", "duplicate-id", "duplicate-input", "missing-reviewer-expertise"} <= codes
    if suffix == ".jsonl":
        assert "parse" in codes
