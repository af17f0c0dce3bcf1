"""Blueprint JSON: the whole set as one document, set-level fields first, then ``rows``.

A document is read a row at a time (its ``rows`` array streamed, see ``_outline``), so memory
does not grow with the set; one laid out unusually (no rows array of objects) is decoded whole.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Final, NoReturn

from blueprint.core.errors import ParseError
from blueprint.core.issues import make_issue
from blueprint.formats._io import BOM, read_text, require_file, require_within_size
from blueprint.formats.base import ExportResult, SetSource, SourceRow, UnreadableRow, WriteOptions
from blueprint.formats.sniffing import Fit, json_head, top_level_value
from blueprint.io import jsonvalues, limits
from blueprint.io.atomic import AtomicOutputs
from blueprint.io.places import RowPlaces


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
        return self._open(path, typed=False)

    def open_typed(self, path: Path) -> SetSource:
        """:meth:`open`, with the streamed rows that fit the published row schema decoded
        straight into typed rows (the validator's fast path, :mod:`blueprint.io.typedrows`)."""
        return self._open(path, typed=True)

    def _open(self, path: Path, *, typed: bool) -> SetSource:
        outline = _outline(path)
        if outline is None:
            return self._open_whole(path)
        with outline:
            try:
                skeleton = jsonvalues.loads(bytes(outline.skeleton))
            except jsonvalues.JSONError as error:
                line, column = outline.place_in_document(error.line, error.column)
                raise ParseError(path, error.reason, line=line, column=column) from None
            outline.skeleton = bytearray()  # decoded: its bytes are not needed again
        elements = skeleton.get("rows") if isinstance(skeleton, dict) else None
        if (
            not isinstance(elements, list)
            or sum(map(_is_placeholder, elements)) + outline.elided != len(outline.places)
            or not outline.places
        ):
            # an unusual layout (no rows array of objects, or a row that is the number 0):
            # read whole, exactly as ever
            return self._open_whole(path)
        header = {key: value for key, value in skeleton.items() if key != "rows"}
        del skeleton
        # rows that are not objects or arrays (wrong, but rows all the same) stood as they are;
        # the rows left out of the skeleton follow its first element (see _scan)
        scalars = {
            index + (outline.elided if index else 0): value
            for index, value in enumerate(elements)
            if not _is_placeholder(value)
        }
        count = len(elements) + outline.elided
        del elements
        return SetSource(
            path=path,
            format=self.name,
            header=header,
            rows=_streamed_rows(path, outline, count, scalars, typed=typed),
            header_origin="the document",
            line_of=_line_finder(path),  # rows carry their lines; this is for callers that ask
            row_places=None if scalars else outline.places,
        )

    def _open_whole(self, path: Path) -> SetSource:
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
        source.line_of = _line_finder(path)
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


# --- streaming the rows array -------------------------------------------------------------------
#
# A set of a million rows is a JSON document of a gigabyte or more, and decoded whole it takes
# ten times that. So the document is read twice, row by row, through a memory map whose pages
# are let go as the reading passes them: first to find where each element of the top-level
# ``rows`` array starts and ends (brackets outside strings are all that takes) and to build the
# *skeleton*, the document with each such row replaced by ``0`` (a place found in it is mapped
# back to the document's line and column through the rows' places); then, once the skeleton
# has been decoded (which checks everything between the rows and gives the set-level fields,
# wherever they stand), to decode the rows one at a time. In the usual layout (the rows array
# opens on its first row, and only a comma and white space stand between two rows) the rows
# after the first, with the commas before them, are left out of the skeleton altogether
# (checked as they are found, and counted): the skeleton is then the size of the set-level
# fields, however many rows there are, rather than a few bytes a row decoded into a list.

#: everything up to the next bracket or quote, strings included whole
_SPAN: Final = re.compile(rb'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*')
#: the key just before a top-level array: only ``"rows"`` spelled plainly is streamed
_ROWS_KEY: Final = re.compile(rb'(?<=[{,\s])"rows"\s*:\s*\Z')
#: documents from this size on are streamed (every one: a bad row is then the same finding
#: whatever the document's size); smaller ones would be decoded whole
STREAMED_FROM_BYTES = 0
#: how much of the file is read before the pages behind are let go
_WINDOW: Final = 8 << 20
_OPENING: Final = {ord("{"): ord("}"), ord("["): ord("]")}
_QUOTE: Final = ord('"')
#: what stands between two rows that the skeleton can leave out: one comma, in JSON's white space
_BETWEEN_ROWS: Final = re.compile(rb"[ \t\n\r]*,[ \t\n\r]*")
_WHITE_SPACE: Final = re.compile(rb"[ \t\n\r]*")


class _Outline:
    """Where the rows of a document start and end, and the document without them."""

    def __init__(self, mapped: mmap.mmap, start: int) -> None:
        self.mapped = mapped
        #: where the skeleton's first byte stands in the document (after a byte order mark)
        self.start = start
        self.skeleton = bytearray()
        self.places = RowPlaces()
        #: the rows after the first left out of the skeleton, with what stands before each
        #: (rows 1 to ``elided`` of the places: see _scan)
        self.elided = 0

    def __enter__(self) -> _Outline:
        return self

    def place_in_document(self, line: int, column: int) -> tuple[int, int]:
        """The document's line and column of a place in the skeleton (a finding while the
        skeleton was decoded): each row stood there as one ``0``, so what follows a row
        stood further up and left than in the document."""
        skeleton = self.skeleton
        line_start = 0
        for _ in range(line - 1):
            line_start = skeleton.index(b"\n", line_start) + 1
        # ``position`` counts the bytes of the rows before it as the document has them
        position = previous_end = self.start + line_start + column - 1
        for index, (start, end) in enumerate(self.places):
            if 0 < index <= self.elided:  # left out with what stood before it: no byte here
                if previous_end > position:
                    break
                position += end - previous_end
            elif start >= position:  # the place is before this row
                break
            else:
                position += (end - start) - 1  # the row stood as one byte
            previous_end = end
        return self.line_and_column(position)

    def line_and_column(self, position: int) -> tuple[int, int]:
        """The 1-based line and (byte) column of an offset of the document, counted a window
        at a time; a byte order mark is not counted, as the whole document's reading leaves
        it out."""
        mapped = self.mapped
        line = 1 + sum(
            mapped[start : min(start + _WINDOW, position)].count(b"\n")
            for start in range(0, position, _WINDOW)
        )
        line_start = mapped.rfind(b"\n", 0, position) + 1
        return line, position - max(line_start, self.start) + 1

    def __exit__(self, *exc: object) -> None:
        _release(self.mapped, 0, len(self.mapped))


def _release(mapped: mmap.mmap, start: int, end: int) -> None:
    """Let the pages of ``mapped[start:end]`` go: read again, they come back from the file."""
    start -= start % mmap.PAGESIZE
    if end > start and hasattr(mmap, "MADV_DONTNEED"):
        mapped.madvise(mmap.MADV_DONTNEED, start, end - start)


def _outline(path: Path) -> _Outline | None:
    """The rows' places and the skeleton; None for a file to read whole (small, empty, not
    an object: the whole-document reader says what is wrong with it)."""
    require_file(path)
    require_within_size(path)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if not size or size < STREAMED_FROM_BYTES:
                return None  # empty (nothing to map), or small enough to read whole
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    start = len(BOM) if mapped[: len(BOM)] == BOM else 0
    if not mapped[start : start + 4096].lstrip().startswith(b"{"):
        return None
    outline = _Outline(mapped, start)
    try:
        _scan(path, outline, start)
    except ParseError:
        _release(mapped, 0, len(mapped))
        raise
    return outline


def _scan(path: Path, outline: _Outline, position: int) -> None:
    mapped, size = outline.mapped, len(outline.mapped)
    closers = bytearray()  # the bracket each open array or object waits for
    rows_depth = -1  # the depth of the rows array's elements while inside it, else -1
    copied = position  # the skeleton holds the document up to here
    layouts = _Layouts()
    released = 0
    rows_open = -1  # where the streamed rows array opens
    # whether the next row may be left out of the skeleton (see the comment above _SPAN):
    # only in the first rows array, and only while every row so far was in the usual layout
    eliding = False
    left_out = False  # whether the row being read is left out
    while True:
        position = _SPAN.match(mapped, position).end()  # type: ignore[union-attr]
        if position - released > _WINDOW:
            _release(mapped, released, position - _WINDOW // 2)
            released = position - _WINDOW // 2
        if position >= size:
            break
        byte = mapped[position]
        depth = len(closers)
        in_row = 0 < rows_depth < depth
        if byte == _QUOTE:
            _refuse(path, outline, copied, position, "a string is not closed", in_row)
        if byte in _OPENING:
            if depth == rows_depth:
                if not outline.places:  # the first row: the usual layout opens on it
                    eliding = _WHITE_SPACE.fullmatch(mapped, rows_open + 1, position) is not None
                    left_out = False
                else:
                    left_out = eliding and (
                        _BETWEEN_ROWS.fullmatch(mapped, copied, position) is not None
                    )
                    eliding = left_out
                if not left_out:
                    outline.skeleton += mapped[copied:position]
                outline.places.start(position)
                end = _row_end(mapped, position, layouts)
                if end is not None:  # the whole row at once (see _row_end)
                    _row_read(outline, end, left_out)
                    copied = position = end
                    continue
            elif depth == 1 and byte == ord("[") and rows_depth < 0:
                tail = bytes(outline.skeleton[-256:]) + mapped[copied:position]
                if _ROWS_KEY.search(tail):
                    rows_depth = 2
                    rows_open = position
            closers.append(_OPENING[byte])
        else:
            if not closers or closers[-1] != byte:
                _refuse(path, outline, copied, position, f"unexpected {chr(byte)!r}", in_row)
            closers.pop()
            if depth - 1 == rows_depth:
                end = position + 1
                _row_read(outline, end, left_out)
                copied = end
            elif depth - 1 == rows_depth - 1:
                rows_depth = -1
                eliding = False  # a second rows array (a repeated key) is copied whole
        position += 1
    if closers:
        in_row = 0 < rows_depth < len(closers)
        _refuse(path, outline, copied, size, "the document ends before its brackets close", in_row)
    outline.skeleton += mapped[copied:size]


def _row_read(outline: _Outline, end: int, left_out: bool) -> None:
    outline.places.end(end)
    if left_out:
        outline.elided += 1
    else:
        outline.skeleton += b"0"


class _Layouts:
    """The row layouts still worth guessing in one document: a guess that fails once is not
    tried again there, so a document of another layout costs one failed guess, not one a
    row (a guess reads ahead, to the end of a line or to a closing brace)."""

    __slots__ = ("indented", "line")

    def __init__(self) -> None:
        self.line = True
        self.indented = True


#: how far back an indented row's line may start (its indentation, at most)
_MOST_INDENT: Final = 256


def _row_end(mapped: mmap.mmap, start: int, layouts: _Layouts) -> int | None:
    """Where the row opening at ``start`` ends, found without walking its brackets one by
    one, for the two layouts writers use: one row a line, and rows indented, closing on a
    line of their own at the indentation they opened at. The place is a guess that decoding
    confirms: a text that decodes as one JSON value from ``{`` to its last ``}`` is exactly
    one object, so that brace closes the row. Otherwise (another layout, or a row the strict
    reader refuses), None: the walk decides, as it does for everything else."""
    closing = b"}" if mapped[start] == ord("{") else b"]"
    line_start = mapped.rfind(b"\n", max(0, start - _MOST_INDENT), start) + 1
    indent = mapped[line_start:start] if line_start else None
    if layouts.indented and indent is not None and not indent.strip(b" \t"):
        body = mapped.find(b"\n", start) + 1  # the row's first line holds only its opening
        if body and not mapped[start + 1 : body].strip():
            found = mapped.find(b"\n" + indent + closing, body - 1)
            end = found + 1 + len(indent) + 1
            if found >= 0 and _one_value(mapped, start, end):
                return end
            layouts.indented = False
            return None
    if layouts.line:
        line_end = mapped.find(b"\n", start)
        row_line = mapped[start : line_end if line_end >= 0 else len(mapped)].rstrip(b" \t\r,")
        if row_line.endswith(closing):
            end = start + len(row_line)
            if _one_value(mapped, start, end):
                return end
            layouts.line = False
    return None


def _one_value(mapped: mmap.mmap, start: int, end: int) -> bool:
    try:
        _skimmer()(mapped[start:end])
    except (ValueError, RecursionError):  # msgspec's DecodeError and ValidationError
        return False
    return True


@cache
def _skimmer() -> Callable[[bytes], Any]:
    """A decoder that reads an object or an array through to its end without building its
    values: the layout's guess needs the text's structure (where it ends), not its values,
    which the row's own decoding checks (a third of the cost of decoding it)."""
    import msgspec

    class _Skimmed(msgspec.Struct):  # an object, every key skipped
        pass

    return msgspec.json.Decoder(_Skimmed | list[msgspec.Raw]).decode


def _refuse(
    path: Path, outline: _Outline, copied: int, position: int, reason: str, in_row: bool
) -> NoReturn:
    """Refuse the document for what the scan found at ``position``. A syntax error before it
    that the scan does not look for (a missing value or comma) comes first, as reading the
    whole document would say: outside a row (whose own errors are for the row's decoding),
    the skeleton up to here is parsed to find one."""
    line, column = outline.line_and_column(position)
    if not in_row:
        outline.skeleton += outline.mapped[copied:position]
        error = jsonvalues.syntax_error(bytes(outline.skeleton))
        if error is not None:
            earlier = outline.place_in_document(error.line, error.column)
            if earlier < (line, column):
                (line, column), reason = earlier, error.reason
    raise ParseError(path, reason, line=line, column=column)


def _is_placeholder(element: Any) -> bool:
    return type(element) is int and element == 0


def row_reader(bounds: limits.Limits, *, typed: bool = False) -> Callable[[bytes], Any]:
    """``loads`` for one row of a document: a row sits two levels down in the document, whose
    depth the limit counts. With ``typed``, rows that fit the published row schema come as
    typed rows (:mod:`blueprint.io.typedrows`)."""
    within = replace(bounds, max_depth=max(bounds.max_depth - 2, 0))
    if not typed:
        return jsonvalues.reader(within)
    from blueprint.io import typedrows  # msgspec: imported only by what validates rows

    return typedrows.row_reader(within)


def _streamed_rows(
    path: Path, outline: _Outline, count: int, scalars: dict[int, Any], *, typed: bool
) -> Iterator[SourceRow | UnreadableRow]:
    bounds = limits.current()
    loads = row_reader(bounds, typed=typed)
    mapped, places = outline.mapped, iter(outline.places)
    line, counted, released = 1, 0, 0
    line_start = outline.start  # where the line the last row started on starts
    with outline:
        for index in range(count):
            if bounds.max_rows and index >= bounds.max_rows:
                yield UnreadableRow(
                    index,
                    None,
                    None,
                    f"the set has more than {bounds.max_rows} rows, the limit"
                    f" ({limits.hint('max_rows')}); the rest was not read",
                )
                return
            if index in scalars:
                yield SourceRow(index=index, line=None, data=scalars[index])
                continue
            start, end = next(places)
            gap = mapped[counted:start]
            newlines = gap.count(b"\n")
            if newlines:
                line += newlines
                line_start = counted + gap.rfind(b"\n") + 1
            counted = start
            data = mapped[start:end]
            if end - released > _WINDOW:
                # half a window stays behind the row, as behind the scan: a page read maps
                # its neighbours too, before it as well as after (the kernel's fault-around),
                # and those behind a release that ended at the row would stay for good
                released_to = max(released, start - _WINDOW // 2)
                _release(mapped, released, released_to)
                released = released_to
            try:
                yield SourceRow(index=index, line=line, data=loads(data))
            except jsonvalues.JSONError as error:
                column = error.column
                if error.line == 1:  # counted from where the row's line starts, found on
                    column += start - line_start  # the way (not searched back for each row)
                yield UnreadableRow(index, line + error.line - 1, column, error.reason)


def _line_finder(path: Path) -> Callable[[int], int | None]:
    """The line of a row by its index, worked out (reading the file again) on first use."""

    @cache
    def lines() -> list[int]:
        try:
            return row_start_lines(read_text(path))
        except (ParseError, OSError):  # the file changed or vanished since it was read
            return []

    def line_of(index: int) -> int | None:
        found = lines()
        return found[index] if index < len(found) else None

    return line_of


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


#: everything up to the next bracket or quote, strings included whole (``_SPAN``, for text)
_TEXT_SPAN: Final = re.compile(r'[^"\[\]{}]*(?:"[^"\\]*(?:\\.[^"\\]*)*"[^"\[\]{}]*)*')
_KEY_BEFORE: Final = r'"{}"\s*:\s*\Z'


def element_lines(text: str, count: int, key: str | None = None) -> list[int | None]:
    """The 1-based line each of the ``count`` elements of a document's array starts on: the
    document itself when it is an array, else the array under its top-level ``key``.

    Only brackets are looked at (strings are skipped whole), several times faster than
    reading every token: that finds the elements that are objects and arrays. An array that
    holds other values too (a record that is a number, wrongly) is read again token by
    token. Every line is None for a document of another shape. ``text`` must be valid JSON.
    """
    match, size = _TEXT_SPAN.match, len(text)
    key_before = re.compile(_KEY_BEFORE.format(re.escape(key))) if key is not None else None
    depth, inside, position = 0, -1, 0  # ``inside``: the depth of the array's elements
    offsets: list[int] = []
    while True:
        end = match(text, position).end()  # type: ignore[union-attr]
        if end >= size:
            break
        bracket = text[end]
        if bracket in "[{":
            if depth == inside:
                offsets.append(end)
            elif inside < 0 and bracket == "[" and depth == (0 if key_before is None else 1):
                # the key is looked for just before the bracket, where it stands
                found = key_before is None or key_before.search(text, max(0, end - 256), end)
                inside = depth + 1 if found else inside
            depth += 1
        else:
            depth -= 1
            if depth == inside - 1:
                break  # the array closed: nothing after it is an element
        position = end + 1
    if len(offsets) != count:
        offsets = _element_offsets(text, key)
        if len(offsets) != count:
            return [None] * count
    lines: list[int | None] = []
    line, counted = 1, 0
    for offset in offsets:
        line += text.count("\n", counted, offset)
        counted = offset
        lines.append(line)
    return lines


def _element_offsets(text: str, key: str | None) -> list[int]:
    """Where each element of the array :func:`element_lines` reads starts, whatever its
    values, found token by token."""
    depth, inside, expecting = 0, -1, False
    naming, last_string = "", ""  # the top-level key whose value is being read
    offsets: list[int] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if depth == inside and expecting and token not in ("]", ","):
            offsets.append(match.start())
            expecting = False
        if token in ("[", "{"):
            wanted = depth == 0 if key is None else depth == 1 and naming == key
            if inside < 0 and token == "[" and wanted:
                inside, expecting = depth + 1, True
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
            if depth == inside - 1:
                break
        elif token == ",":
            expecting = expecting or depth == inside
            naming = "" if depth == 1 else naming
        elif token == ":" and depth == 1:
            naming = last_string
        elif token.startswith('"') and depth == 1:
            last_string = token[1:-1]
    return offsets
