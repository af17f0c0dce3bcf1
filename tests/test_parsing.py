"""Malformed input: every reader names the file, line and column, and never crashes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blueprint.convert import ConvertOptions, convert
from blueprint.core.errors import ParseError, UnknownFormatError
from blueprint.formats import REGISTRY, WriteOptions, canonical_json
from blueprint.io import limits
from blueprint.validation.validate import validate_file
from conftest import document, row


def write_set(tmp_path: Path, name: str, rows: list) -> Path:
    path = tmp_path / name
    codec = REGISTRY[{".json": "json", ".jsonl": "jsonl", ".csv": "csv"}[path.suffix]]
    codec.write(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "t"}, iter(rows), path, WriteOptions()
    )
    return path


def parse_issues(path: Path) -> list[tuple]:
    report = validate_file(path)
    return [(i.row_index, i.line) for i in report.issues if i.code == "parse"]


def test_jsonl_invalid_json_on_line_7(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row(f"r{i}") for i in range(9)])
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[6] = lines[6][:-1]  # drop the closing brace
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = validate_file(path)
    assert [(i.code, i.row_index, i.line) for i in report.issues] == [("parse", 6, 7)]
    assert report.rows == 9  # the rows after the bad line were still checked


def test_jsonl_not_utf8_line(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row("a"), row("b")])
    data = path.read_bytes().replace(b'"b"', b'"\xff"', 1)
    path.write_bytes(data)
    assert parse_issues(path) == [(1, 2)]


def test_jsonl_blank_lines_and_bom(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row("a"), row("b")])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\n\n", 1))
    report = validate_file(path)
    assert report.issues == [] and report.rows == 2


def test_csv_too_many_cells(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a"), row("b"), row("c")])
    lines = path.read_bytes().split(b"\r\n")
    lines[2] += b",extra"
    path.write_bytes(b"\r\n".join(lines))
    report = validate_file(path)
    assert [(i.code, i.row_index, i.line) for i in report.issues] == [("parse", 1, 3)]
    assert report.rows == 3


def test_csv_too_few_cells(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a")])
    path.write_text(
        path.read_text(encoding="utf-8") + "b,only-two\r\n", encoding="utf-8", newline=""
    )
    assert parse_issues(path) == [(1, 3)]


def test_csv_line_numbers_count_multiline_cells(tmp_path: Path) -> None:
    first = row("a")
    first["input"] = "line1\nline2\nline3"
    second = row("b")
    second["metadata"]["case"]["caseId"] = "x"
    path = write_set(tmp_path, "set.csv", [first, second])
    report = validate_file(path)
    assert report.flatten(("code", "line")) == [("case-id-mismatch", 5)]


def test_csv_not_utf8(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a"), row("b")])
    path.write_bytes(path.read_bytes().replace(b"question for b", b"question \xe9 b"))
    assert parse_issues(path) == [(1, 3)]


def test_csv_latin1_header_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "set.csv"
    path.write_bytes(b"id,r\xe9ponse\r\n")
    with pytest.raises(ParseError) as caught:
        REGISTRY["csv"].open(path)
    assert caught.value.line == 1


@pytest.mark.parametrize(
    ("content", "reason_part"),
    [
        (b"", "empty"),
        (b"id,input,id\r\n", "twice"),
        (b"id,,input\r\n", "no name"),
    ],
)
def test_csv_bad_header(tmp_path: Path, content: bytes, reason_part: str) -> None:
    path = tmp_path / "set.csv"
    path.write_bytes(content)
    with pytest.raises(ParseError) as caught:
        REGISTRY["csv"].open(path)
    assert reason_part in caught.value.reason
    assert caught.value.line == 1


def test_csv_unclosed_quote_is_reported(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a")])
    path.write_text(
        path.read_text(encoding="utf-8") + 'b,"never closed\r\n', encoding="utf-8", newline=""
    )
    issues = parse_issues(path)
    assert len(issues) == 1 and issues[0][0] == 1


def test_csv_bom_and_blank_lines(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a"), row("b")])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b"\r\n\r\n")
    report = validate_file(path)
    assert report.issues == [] and report.rows == 2


def test_json_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text('{\n  "name": "x",\n  "rows": [1,,]\n}\n', encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        REGISTRY["json"].open(path)
    assert (caught.value.line, caught.value.column) == (3, 14)


def test_json_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_bytes(b'{"name": "x",\n "rows": ["\xff"]}')
    with pytest.raises(ParseError) as caught:
        REGISTRY["json"].open(path)
    assert caught.value.line == 2


def test_json_rejects_nan(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text('{"name": "x", "rows": [NaN]}', encoding="utf-8")
    with pytest.raises(ParseError):
        REGISTRY["json"].open(path)


def test_json_document_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(UnknownFormatError):  # an array of numbers fits no format
        validate_file(path)
    report = validate_file(path, format="json")
    assert report.flatten(("code", "path")) == [("schema", "$")]


def test_missing_file_is_a_parse_issue(tmp_path: Path) -> None:
    report = validate_file(tmp_path / "nowhere.json")
    assert report.flatten(("code",)) == [("parse",)]


def test_broken_set_file(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a")])
    (tmp_path / "set.csv.set.json").write_text('{"name": ', encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        REGISTRY["csv"].open(path)
    assert caught.value.path.name == "set.csv.set.json"


def test_convert_stops_at_an_unreadable_row_and_writes_nothing(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row("a"), row("b")])
    path.write_text(path.read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")
    target = tmp_path / "out.csv"
    with pytest.raises(ParseError) as caught:
        convert(path, target, ConvertOptions())
    assert caught.value.line == 3
    assert not target.exists() and not (tmp_path / "out.csv.set.json").exists()


def test_convert_refuses_a_structurally_broken_document(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"name": "x", "rows": {"a": 1}}), encoding="utf-8")
    with pytest.raises(ParseError):
        convert(path, tmp_path / "out.jsonl", ConvertOptions())
    assert not (tmp_path / "out.jsonl").exists()


def test_document_helper_shape() -> None:
    assert document(row("a"))["rows"][0]["id"] == "a"


def test_set_file_holding_rows_is_refused(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a")])
    (tmp_path / "set.csv.set.json").write_text('{"name": "t", "rows": []}', encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        REGISTRY["csv"].open(path)
    assert caught.value.path.name == "set.csv.set.json"


def test_set_file_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row("a")])
    (tmp_path / "set.jsonl.set.json").unlink()
    (tmp_path / "set.jsonl.set.json").mkdir()
    with pytest.raises(ParseError):
        REGISTRY["jsonl"].open(path)


def test_validate_names_the_set_file_when_it_is_broken(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.csv", [row("a")])
    (tmp_path / "set.csv.set.json").write_text("{bad", encoding="utf-8")
    report = validate_file(path)
    (issue,) = report.issues
    assert issue.code == "parse" and "set.csv.set.json" in issue.message


def test_filtering_out_parse_issues_does_not_make_a_file_readable(tmp_path: Path) -> None:
    from blueprint.validation.validate import ValidationOptions

    options = ValidationOptions(ignore=frozenset({"parse"}))
    report = validate_file(tmp_path / "missing.json", options=options)
    assert report.issues == [] and report.unreadable and not report.valid
    path = write_set(tmp_path, "set.jsonl", [row("a")])
    path.write_bytes(path.read_bytes() + b"{oops\n")
    report = validate_file(path, options=options)
    assert report.unreadable and not report.valid


# --- hostile JSON: repeated keys, lone surrogates, limits -------------------------------------


def _jsonl_with(tmp_path: Path, bad_line: str) -> Path:
    path = write_set(tmp_path, "set.jsonl", [row("a"), row("b"), row("c")])
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = bad_line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "bad_line",
    [
        '{"id": "b", "id": "x", "input": "q", "metadata": {"case": {}}}',
        '{"id": "b", "input": "\\ud800", "metadata": {"case": {}}}',
        '{"id": "1234567890123456789", "input": "\\ud800", "metadata": {"case": {}}}',
        '{"id": "b", "input": {"k": 1234567890123456789, "k": 2}, "metadata": {}}',
        '{"id": "b", "input": ' + "9" * 5000 + "}",
    ],
    ids=["repeated-key", "surrogate", "surrogate-exact", "repeated-key-exact", "long-number"],
)
def test_a_hostile_jsonl_line_is_a_parse_finding_on_its_line(tmp_path: Path, bad_line: str) -> None:
    report = validate_file(_jsonl_with(tmp_path, bad_line))
    assert [(i.code, i.row_index, i.line) for i in report.issues] == [("parse", 1, 2)]
    assert report.rows == 3


def test_a_jsonl_line_over_the_cell_limit_is_skipped_unread(tmp_path: Path) -> None:
    path = _jsonl_with(tmp_path, '{"id": "b", "input": "' + "x" * 5000 + '"}')
    with limits.overridden(max_cell_bytes=1000):
        report = validate_file(path)
    assert [(i.code, i.row_index, i.line) for i in report.issues] == [("parse", 1, 2)]
    assert "max-cell-bytes" in report.issues[0].message
    assert report.rows == 3


def test_reading_stops_past_the_row_limit(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row(f"r{i}") for i in range(5)])
    with limits.overridden(max_rows=3):
        report = validate_file(path)
    assert [(i.code, i.row_index, i.line) for i in report.issues] == [("parse", 3, 4)]
    assert "max-rows" in report.issues[0].message


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row("a")])
    with limits.overridden(max_file_bytes=10):
        report = validate_file(path)
    assert report.unreadable
    assert "max-file-bytes" in report.issues[0].message


@pytest.mark.parametrize(
    ("bad_row", "line"),
    [
        ('{"id": "b", "input": "\\ud800", "metadata": {"case": {}}}', 5),
        ('{"id": "b", "input": ' + "9" * 5000 + "}", 5),
        ('{"id": "b", "input": ' + "[" * 200 + "]" * 200 + "}", 5),
        ('{"id": "b", "input": "q", "input": "r"}', 5),
    ],
    ids=["surrogate", "long-number", "too-deep", "repeated-key"],
)
def test_a_hostile_row_of_a_json_set_names_its_line(
    tmp_path: Path, bad_row: str, line: int
) -> None:
    path = tmp_path / "set.json"
    good = json.dumps(row("a"))
    path.write_text(
        '{\n  "schemaVersion": "blueprint.eval-set/v1",\n  "name": "t",\n  "rows": [\n'
        f"{bad_row},\n{good}\n  ]\n}}\n",
        encoding="utf-8",
    )
    report = validate_file(path)
    assert report.unreadable
    assert [(i.code, i.line) for i in report.issues] == [("parse", line)]


def test_a_second_rows_key_is_refused_not_read_last_wins(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    rows = ",\n".join(json.dumps(row(f"r{i}")) for i in range(8))
    path.write_text(
        '{"schemaVersion": "blueprint.eval-set/v1", "name": "t",\n'
        f'"rows": [\n{rows}\n],\n"rows": []\n}}\n',
        encoding="utf-8",
    )
    report = validate_file(path)
    assert report.unreadable
    assert [(i.code, i.line) for i in report.issues] == [("parse", 12)]
    assert "'rows'" in report.issues[0].message
    with pytest.raises(ParseError):
        REGISTRY["json"].open(path)


@pytest.mark.parametrize("indent", [None, 2])
def test_a_repeated_key_after_the_rows_names_its_column_in_the_document(
    tmp_path: Path, indent: int | None
) -> None:
    # the rows stand as ``0`` while the set-level fields are decoded: the column of what
    # follows them on their last line is the document's, not that stand-in's
    text = json.dumps(
        {"schemaVersion": "blueprint.eval-set/v1", "name": "t", "rows": [row("a"), row("bé")]},
        indent=indent,
        ensure_ascii=False,
    )
    text = text[: text.rindex("]") + 1] + ', "name": "u"}'
    path = tmp_path / "set.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        REGISTRY["json"].open(path)
    last = text.encode("utf-8").rindex(b'"name"')
    line_start = text.encode("utf-8").rfind(b"\n", 0, last) + 1
    assert (caught.value.line, caught.value.column) == (
        text.count("\n") + 1,
        last - line_start + 1,
    )


def test_a_set_file_with_a_repeated_key_is_refused(tmp_path: Path) -> None:
    path = write_set(tmp_path, "set.jsonl", [row("a")])
    (tmp_path / "set.jsonl.set.json").write_text(
        '{"schemaVersion": "blueprint.eval-set/v1",\n "name": "t",\n "name": "u"}', encoding="utf-8"
    )
    with pytest.raises(ParseError) as caught:
        REGISTRY["jsonl"].open(path)
    assert caught.value.path.name == "set.jsonl.set.json"
    assert caught.value.line == 3


# --- a large JSON document is streamed: the same findings as reading it whole ------------------


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical_json, "STREAMED_FROM_BYTES", 0)


def _document_text(rows: list[str], *, after: str = "") -> str:
    return (
        '{\n  "schemaVersion": "blueprint.eval-set/v1",\n  "name": "t",\n'
        '  "caseFamilies": [],\n  "rows": [\n' + ",\n".join(rows) + f"\n  ]{after}\n}}\n"
    )


@pytest.mark.usefixtures("streamed")
def test_a_streamed_document_reports_each_bad_row_and_checks_the_rest(tmp_path: Path) -> None:
    rows = [json.dumps(row("a"), indent=2), json.dumps(row("a")), '"not a row"', "[1, 2]"]
    rows.append('{"id": "b", "input": "\\ud800"}')
    rows.append('{"id": "c", "input": {"k": 1, "k": 2}}')
    rows.append(json.dumps(row("d", caseFamily="elsewhere")))
    path = tmp_path / "set.json"
    path.write_text(_document_text(rows, after=',\n  "description": "after the rows"'), "utf-8")
    stream = validate_file(path)
    assert stream.rows == 7
    assert [(i.row_index, i.line) for i in stream.issues if i.code == "parse"] == [
        (4, 22),
        (5, 23),
    ]
    assert ("unknown-case-family", 6, 24) in [(i.code, i.row_index, i.line) for i in stream.issues]
    assert ("duplicate-id", 1, 19) in [(i.code, i.row_index, i.line) for i in stream.issues]


@pytest.mark.usefixtures("streamed")
def test_a_clean_streamed_document_matches_the_whole_reading(tmp_path: Path) -> None:
    rows = [json.dumps(row(f"r{n}", caseFamily="f"), indent=2) for n in range(5)]
    path = tmp_path / "set.json"
    path.write_text(
        _document_text(rows).replace('"caseFamilies": []', '"caseFamilies": [{"id": "g"}]'),
        encoding="utf-8",
    )
    source = REGISTRY["json"].open(path)
    assert source.header is not None and source.header["caseFamilies"] == [{"id": "g"}]
    read = list(source.rows)
    streamed_report = validate_file(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(canonical_json, "STREAMED_FROM_BYTES", 1 << 40)
        whole = validate_file(path)
    fields = ("code", "row_index", "path", "line", "message")
    assert streamed_report.flatten(fields) == whole.flatten(fields)
    assert whole.issues  # every row names a family the set does not define
    assert [item.line for item in read] == [6 + 14 * n for n in range(5)]
    assert [item.data for item in read] == json.loads(path.read_text("utf-8"))["rows"]


@pytest.mark.usefixtures("streamed")
@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"name": "t", "rows": [{"id": "a"}, {"id": "b"]}', 1),  # a bracket that does not match
        ('{"name": "t",\n"rows": [{"id": "a"}\n {"id": "b"}]}', 3),  # no comma between rows
        ('{"name": "t",\n"rows": [{"id": "a"}],\n"rows": []}', 3),  # a second rows key
        ('{"name": "t", "rows": [{"id": "a"}', 1),  # never closed
        ('{"name": "t",\n"rows": [{"id": "a\\"}]}', 2),  # a string never closed
    ],
)
def test_a_broken_streamed_document_is_refused_with_its_line(
    tmp_path: Path, text: str, line: int
) -> None:
    path = tmp_path / "set.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        REGISTRY["json"].open(path)
    assert caught.value.line == line


@pytest.mark.usefixtures("streamed")
@pytest.mark.parametrize("odd_row", ["0", "0.0", "false", "[]", "{}", '"0"'])
def test_rows_that_look_like_the_placeholder_read_as_themselves(
    tmp_path: Path, odd_row: str
) -> None:
    path = tmp_path / "set.json"
    path.write_text(_document_text([json.dumps(row("a")), odd_row, json.dumps(row("b"))]), "utf-8")
    assert [item.data for item in REGISTRY["json"].open(path).rows] == [
        row("a"),
        json.loads(odd_row),
        row("b"),
    ]


def _outline_of(path: Path) -> tuple[list[int], list[int], bytes]:
    outline = canonical_json._outline(path)
    assert outline is not None
    with outline:
        places = list(outline.places)
        return [start for start, _ in places], [end for _, end in places], bytes(outline.skeleton)


ROW_TEXTS = st.lists(
    st.builds(
        lambda n, text, nested: {"id": f"r{n}", "input": text, "metadata": {"deep": nested}},
        st.integers(0, 99),
        st.text(alphabet=st.sampled_from('ab{}[]",:\\\n é'), max_size=12),
        st.recursive(
            st.none() | st.integers() | st.text(max_size=3),
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
            max_leaves=6,
        ),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(
    rows=ROW_TEXTS,
    layout=st.sampled_from(
        ["indent2", "indent4", "tabs", "line", "indented-lines", "pairs", "compact", "misindented"]
    ),
)
def test_finding_whole_rows_at_once_gives_the_outline_of_walking_every_bracket(
    tmp_path_factory: pytest.TempPathFactory, rows: list[dict[str, Any]], layout: str
) -> None:
    document: dict[str, Any] = {"schemaVersion": "blueprint.eval-set/v1", "name": "t", "rows": rows}
    if layout == "indent2":
        text = json.dumps(document, indent=2, ensure_ascii=False)
    elif layout == "indent4":
        text = json.dumps(document, indent=4)
    elif layout == "tabs":
        text = json.dumps(document, indent="\t")
    elif layout == "line":
        text = '{"name": "t", "rows": [\n' + ",\n".join(json.dumps(r) for r in rows) + "\n]}"
    elif layout == "indented-lines":  # one row a line, indented
        text = '{"name": "t", "rows": [\n  ' + ",\n  ".join(json.dumps(r) for r in rows) + "\n]}"
    elif layout == "pairs":  # two rows a line
        texts = [json.dumps(r) for r in rows]
        pairs = [", ".join(texts[i : i + 2]) for i in range(0, len(texts), 2)]
        text = '{"name": "t", "rows": [\n' + ",\n".join(pairs) + "\n]}"
    elif layout == "compact":
        text = json.dumps(document, separators=(",", ":"))
    else:  # a nested value closing at the rows' own indentation: the guess is wrong there
        text = json.dumps(document, indent=2).replace("\n      }", "\n    }")
    path = tmp_path_factory.mktemp("outline") / "set.json"
    path.write_text(text, encoding="utf-8")
    fast = _outline_of(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(canonical_json, "_row_end", lambda mapped, start, layouts: None)
        walked = _outline_of(path)
    assert fast == walked


def test_a_layout_guessed_wrong_is_not_guessed_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a document on one line: the first guess reads to its end and fails; guessing again for
    # every row would read the rest of the document each time
    rows = [{"id": f"r{n}", "input": "q"} for n in range(500)]
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"name": "t", "rows": rows}), encoding="utf-8")
    decoded: list[int] = []
    one_value = canonical_json._one_value

    def counted(mapped: Any, start: int, end: int) -> bool:
        decoded.append(end - start)
        return one_value(mapped, start, end)

    monkeypatch.setattr(canonical_json, "_one_value", counted)
    starts, _, _ = _outline_of(path)
    assert len(starts) == 500
    assert len(decoded) == 1


def test_the_skeleton_of_the_usual_layout_does_not_grow_with_the_rows(tmp_path: Path) -> None:
    sizes = []
    for count in (2, 2000):
        path = tmp_path / f"set{count}.json"
        document = {"name": "t", "rows": [row(f"r{n}") for n in range(count)], "after": 1}
        path.write_text(json.dumps(document, indent=2), encoding="utf-8")
        outline = canonical_json._outline(path)
        assert outline is not None
        with outline:
            assert (len(outline.places), outline.elided) == (count, count - 1)
            sizes.append(len(outline.skeleton))
    assert sizes[0] == sizes[1]


@pytest.mark.usefixtures("streamed")
def test_rows_after_those_left_out_of_the_skeleton_keep_their_places(tmp_path: Path) -> None:
    texts = [json.dumps(row(f"r{n}")) for n in range(4)]
    path = tmp_path / "set.json"
    # two rows in the usual layout, then a scalar row, which the skeleton keeps
    path.write_text(
        '{"name": "t", "rows": [' + ", ".join(texts[:3]) + ', 5, "x", ' + texts[3] + "]}",
        encoding="utf-8",
    )
    read = [item.data for item in REGISTRY["json"].open(path).rows]
    assert read == [row("r0"), row("r1"), row("r2"), 5, "x", row("r3")]


#: what may stand between two rows: the usual comma and white space, or a row the skeleton
#: keeps (a scalar), or something that is not JSON at all
_GAPS = st.sampled_from([",", ", ", ",\n  ", "\n ,\t", ", 5, ", ', "x",\n', ",,", " ", ", }"])
_OPENINGS = st.sampled_from(["", "\n    ", "7, ", " null ,"])
#: how the rows array ends: closed, closed twice, or the document ends inside it
_CLOSINGS = st.sampled_from(["\n ]", "\n ]]", "", ",", "\n ] ]"])
_TAILS = st.sampled_from(
    ["", ', "description": "d"', ',\n "name": "u"', ', "x": }', ',\n"rows": [{"id": "z"}]', "}"]
)


@settings(max_examples=300, deadline=None)
@given(
    count=st.integers(1, 6),
    gaps=st.lists(_GAPS, min_size=5, max_size=5),
    opening=_OPENINGS,
    closing=_CLOSINGS,
    tail=_TAILS,
    indent=st.sampled_from([None, 2]),
    bom=st.booleans(),
    repeated_name=st.booleans(),
)
def test_a_streamed_document_reads_as_the_whole_document_does(
    tmp_path_factory: pytest.TempPathFactory,
    count: int,
    gaps: list[str],
    opening: str,
    closing: str,
    tail: str,
    indent: int | None,
    bom: bool,
    repeated_name: bool,
) -> None:
    # whatever stands between the rows, and whatever follows them: the same rows and
    # set-level fields, or the same error at the same line and column of the document
    texts = [json.dumps(row(f"r{n}", input=f"q{n} é"), indent=indent) for n in range(count)]
    rows = texts[0] + "".join(gap + text for gap, text in zip(gaps, texts[1:], strict=False))
    text = '{"schemaVersion": "blueprint.eval-set/v1",\n "name": "t",\n'
    text += ' "name": "t",\n' if repeated_name else ""
    text += ' "rows": [' + opening + rows + closing + tail + "\n}\n"
    path = tmp_path_factory.mktemp("streamed") / "set.json"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))

    def read() -> tuple[Any, ...]:
        try:
            source = REGISTRY["json"].open(path)
            return ("read", source.header, [(item.index, item.data) for item in source.rows])
        except ParseError as error:
            return ("refused", error.line, error.column)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(canonical_json, "STREAMED_FROM_BYTES", 0)
        streamed = read()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(canonical_json, "STREAMED_FROM_BYTES", 1 << 40)
        whole = read()
    assert streamed == whole


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ('{"name": "a", "name": "b", "rows": [{}, {}]}}', (1, 45)),  # not the repeated key
        ('{"name": "a",\n"rows": [{"a": 1},, {"b": 2} }', (2, 19)),  # the comma, not the }
        ('\ufeff{"rows": [\n{}\n]]}', (3, 2)),  # a byte order mark is not a column
    ],
)
def test_a_refused_document_names_the_error_reading_it_whole_names(
    tmp_path: Path, text: str, place: tuple[int, int]
) -> None:
    path = tmp_path / "set.json"
    path.write_text(text, encoding="utf-8")
    for streamed_from in (0, 1 << 40):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(canonical_json, "STREAMED_FROM_BYTES", streamed_from)
            with pytest.raises(ParseError) as caught:
                REGISTRY["json"].open(path)
        assert (caught.value.line, caught.value.column) == place


@pytest.mark.usefixtures("streamed")
def test_only_a_rows_key_spelled_plainly_is_streamed(tmp_path: Path) -> None:
    # a key that ends in an escaped quote and "rows" is another key
    path = tmp_path / "set.json"
    path.write_text('{"x\\"rows": [{"a": 1}, {"b": 2}], "rows": [0]}', encoding="utf-8")
    source = REGISTRY["json"].open(path)
    assert source.header == {'x"rows': [{"a": 1}, {"b": 2}]}
    assert [item.data for item in source.rows] == [0]
