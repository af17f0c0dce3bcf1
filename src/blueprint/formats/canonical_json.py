"""Blueprint JSON: the whole set as one document, set-level fields first, then ``rows``.

A JSON document has to be parsed whole, so this reader holds the file in memory; use JSONL
for sets too large for that. Row line numbers are worked out only when an issue needs one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from blueprint import jsonvalues
from blueprint.atomic import AtomicOutputs
from blueprint.errors import ParseError
from blueprint.formats._io import read_text
from blueprint.formats.base import ExportResult, SetSource, SourceRow, UnreadableRow, WriteOptions
from blueprint.formats.sniffing import Fit, json_head, top_level_value
from blueprint.issues import make_issue


class JsonCodec:
    name: ClassVar[str] = "json"
    title: ClassVar[str] = "Blueprint JSON document"
    extensions: ClassVar[tuple[str, ...]] = (".json",)
    read_extensions: ClassVar[tuple[str, ...]] = (".json",)
    write_forms: ClassVar[dict[str, str]] = {".json": "json"}
    refused_forms: ClassVar[dict[str, str]] = {}
    lossless: ClassVar[bool] = True
    can_read: ClassVar[bool] = True
    can_write: ClassVar[bool] = True

    def open(self, path: Path) -> SetSource:
        text = read_text(path)
        try:
            document = jsonvalues.loads(text)
        except jsonvalues.JSONError as error:
            raise ParseError(path, error.reason, line=error.line, column=error.column) from None
        notes = []
        if not isinstance(document, dict):
            notes.append(
                make_issue(
                    "schema",
                    path="$",
                    reason="a Blueprint JSON document is one object holding the set-level"
                    f" fields and rows, not {jsonvalues.json_type(document)}",
                )
            )
        header = (
            {key: value for key, value in document.items() if key != "rows"}
            if isinstance(document, dict)
            else None
        )
        if not isinstance(document, dict):
            document = {"rows": []}
        rows = document.get("rows", [])
        if "rows" not in document:
            notes.append(
                make_issue("schema", path="$.rows", reason="required field rows is missing")
            )
        elif not isinstance(rows, list):
            notes.append(
                make_issue(
                    "schema",
                    path="$.rows",
                    reason=f"rows must be an array, not {jsonvalues.json_type(rows)}",
                )
            )
            rows = []
        source = SetSource(
            path=path,
            format=self.name,
            header=header,
            rows=_iterate(rows),
            notes=notes,
            header_origin="the document",
        )

        del text  # a large document should not stay in memory twice; lines re-read it

        @cache
        def lines() -> list[int]:
            try:
                return row_start_lines(read_text(path))
            except (ParseError, OSError):  # the file changed or vanished since it was read
                return []

        def line_of(index: int) -> int | None:
            found = lines()
            return found[index] if index < len(found) else None

        source.line_of = line_of
        return source

    def write(
        self,
        header: dict[str, Any],
        rows: Iterable[Any],
        path: Path,
        options: WriteOptions,
    ) -> ExportResult:
        count = 0
        with AtomicOutputs([path], force=options.force, follow_links=options.in_place) as outputs:
            handle = outputs.open(path, "wb")
            handle.write(b"{\n")
            for key, value in header.items():
                encoded = _indented(jsonvalues.dumps(value, indent=True), 2)
                handle.write(b"  " + jsonvalues.dumps(key) + b": " + encoded + b",\n")
            handle.write(b'  "rows": [')
            for row in rows:
                handle.write(b"\n    " if count == 0 else b",\n    ")
                handle.write(_indented(jsonvalues.dumps(row, indent=True), 4))
                count += 1
            handle.write(b"\n  ]\n}\n" if count else b"]\n}\n")
        return ExportResult(format=self.name, files=[path], rows=count)

    def sniff(self, path: Path, head: bytes) -> Fit:
        outline = json_head(head)
        if outline.kind == "object":
            keys = set(outline.keys)
            version = top_level_value(head, "schemaVersion")
            if (
                "rows" not in keys
                and isinstance(version, str)
                and not version.startswith("blueprint.")
            ):
                # another tool's versioned document (an omk sample set), not a Blueprint set
                return Fit.no(f"a Blueprint set's schemaVersion is blueprint.*, not {version!r}")
            if keys & {"rows", "schemaVersion"} or keys <= _SET_KEYS:
                return Fit.yes()
            return Fit.no("a Blueprint set is one JSON object with schemaVersion, name and rows")
        if outline.kind == "array":
            first = outline.first
            metadata = first.get("metadata") if isinstance(first, dict) else None
            if isinstance(metadata, dict) and isinstance(metadata.get("case"), dict):
                return Fit.yes()  # rows without their document: the reader says what is wrong
            return Fit.no("a Blueprint set is one JSON object, not an array")
        return Fit.yes()  # not JSON at all: the reader says where it breaks


_SET_KEYS = frozenset(
    {"schemaVersion", "name", "version", "description", "taskFamily", "caseFamilies", "rows"}
    | {"extensions", "judgeValidation"}
)


def _iterate(rows: list[Any]) -> Iterator[SourceRow | UnreadableRow]:
    for index, value in enumerate(rows):
        yield SourceRow(index=index, line=None, data=value)


def _indented(encoded: bytes, spaces: int) -> bytes:
    # JSON strings never hold a raw newline, so every newline here is layout
    return encoded.replace(b"\n", b"\n" + b" " * spaces)


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+')


def row_start_lines(text: str, key_name: str = "rows") -> list[int]:
    """The 1-based line on which each element of the top-level ``rows`` array (or of the
    array under ``key_name``) starts.

    ``text`` must already be known to be valid JSON.
    """
    stack: list[str] = []
    last_string = ""
    key = ""
    in_rows = False
    expect_value = False
    offsets: list[int] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        depth = len(stack)
        if in_rows and depth == 2 and expect_value and token not in ("]", ","):
            offsets.append(match.start())
            expect_value = False
        if token in ("{", "["):
            if token == "[" and depth == 1 and key == key_name:
                in_rows, expect_value, offsets = True, True, []
            stack.append(token)
        elif token in ("}", "]"):
            stack.pop()
            if in_rows and len(stack) == 1:
                in_rows = False
        elif token == ",":
            if in_rows and depth == 2:
                expect_value = True
            if depth == 1:
                key = ""
        elif token == ":":
            if depth == 1:
                key = last_string
        elif token.startswith('"') and depth == 1:
            last_string = token[1:-1]
    lines = []
    line, position = 1, 0
    for offset in offsets:
        line += text.count("\n", position, offset)
        position = offset
        lines.append(line)
    return lines
