"""YAML files written back as their authors wrote them.

A promptfoo or omk YAML file read into a set keeps its text in the set. Writing the set back
to that format edits the text rather than writing it anew: every record and top-level key
that reads back as it is now keeps its bytes, comments and all (the ``yaml-language-server``
line editors use, a flow-style block, its quoting); an edited record has only its edited
keys written again, a new record is written in the file's own indentation, and a record that
is gone takes its lines, and the comment lines above it, with it.

New YAML is written by ruamel.yaml, a round-trip YAML library, in the indentation the file
uses. Whatever it writes is read back with the codec's own reader before it goes in; text
that does not read back as the value (a date js-yaml would see, a value ruamel.yaml would
quote differently) is written by :func:`yaml12.dump_yaml` instead, which writes what js-yaml
and PyYAML read alike.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeGuard

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.representer import RoundTripRepresenter

from blueprint.core.errors import ParseError
from blueprint.formats.native import ABSENT, same
from blueprint.formats.yaml12 import Yaml12Loader, YamlDate, date_paths, dump_yaml
from blueprint.io import jsonvalues, yamlload

_NAME: Final = Path("<kept YAML>")


@dataclass(frozen=True)
class _Style:
    """How a file indents: nested mappings, and the dash and content of sequence items,
    each counted from the column of the key that holds them."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0


@dataclass(frozen=True)
class _Item:
    """One record of the file's list: where its text runs, and where its keys are."""

    start: int
    end: int
    node: yaml.Node


class _Text:
    """A YAML file's text with its node tree: spans of values, and their lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        root = yamlload.compose(text, _NAME, loader=Yaml12Loader)
        if root is None:
            raise ParseError(_NAME, "the file holds no YAML document")
        self.root: yaml.Node = root
        self.data = yamlload.load(text, _NAME, loader=Yaml12Loader)

    def line_start(self, index: int) -> int:
        return self.text.rfind("\n", 0, index) + 1

    def line_end(self, index: int) -> int:
        """The index just after the line ``index`` is on (its newline included)."""
        if index > 0 and self.text[index - 1] == "\n":
            return index  # the end of a block scalar: already at a line's start
        found = self.text.find("\n", index)
        return len(self.text) if found < 0 else found + 1

    def content_end(self, node: yaml.Node) -> int:
        """Where the last character of a node's own content is (a block collection's end
        mark lies at the next token, past comments that follow it)."""
        while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style:
            if not node.value:
                break
            last = node.value[-1]
            node = last[1] if isinstance(node, yaml.MappingNode) else last
        return int(node.end_mark.index)

    def dash(self, item: yaml.Node) -> int:
        """The index of the ``-`` that opens a block sequence item."""
        index = int(item.start_mark.index) - 1
        while index >= 0 and self.text[index] != "-":
            index -= 1
        return index

    def items(self, sequence: yaml.SequenceNode, after: int) -> list[_Item]:
        """The spans of a block sequence's items: each from the line after the previous
        item's last line (so comment lines above an item go with it) to its own last line;
        ``after`` is where the first may start."""
        spans = []
        start = after
        for item in sequence.value:
            end = self.line_end(self.content_end(item))
            spans.append(_Item(start, end, item))
            start = end
        return spans

    def style(self) -> _Style:
        """The indentation of the first nested mapping and block sequence the file has."""
        mapping = sequence = offset = None
        stack: list[tuple[yaml.Node, int]] = [(self.root, 0)] if self.root is not None else []
        while stack and (mapping is None or sequence is None):
            node, column = stack.pop()
            if isinstance(node, yaml.MappingNode) and not node.flow_style:
                for key, value in node.value:
                    if isinstance(value, yaml.MappingNode) and value.value and not value.flow_style:
                        inner = value.value[0][0].start_mark.column
                        if mapping is None and inner > key.start_mark.column:
                            mapping = inner - key.start_mark.column
                    if (
                        isinstance(value, yaml.SequenceNode)
                        and value.value
                        and not value.flow_style
                    ):
                        first = value.value[0]
                        dash = self.dash(first)
                        dash_column = dash - self.line_start(dash)
                        if sequence is None and first.start_mark.line == self.line_of(dash):
                            offset = dash_column - key.start_mark.column
                            sequence = first.start_mark.column - key.start_mark.column
                    stack.append((value, key.start_mark.column))
            elif isinstance(node, yaml.SequenceNode) and not node.flow_style:
                stack += [(item, column) for item in node.value]
        return _Style(
            mapping or 2, sequence if sequence and sequence > 0 else 2, max(offset or 0, 0)
        )

    def line_of(self, index: int) -> int:
        return self.text.count("\n", 0, index)


# --- writing new YAML in the file's style -------------------------------------------------


class _Representer(RoundTripRepresenter):
    pass


def _represent_date(representer: RoundTripRepresenter, data: YamlDate) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:timestamp", str(data), style="")


_Representer.add_representer(YamlDate, _represent_date)


def _writer(style: _Style) -> YAML:
    writer = YAML(typ="rt")
    writer.Representer = _Representer
    writer.width = 4096  # a long text stays on its line
    writer.allow_unicode = True
    writer.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)
    return writer


def _plain(value: Any) -> Any:
    """A value as plain Python data for the writer (YamlDate kept, so it is written plain)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, str) and not isinstance(value, YamlDate):
        return str(value)
    return value


def _reads_back(text: str, value: Any) -> bool:
    try:
        again = yamlload.load(text, _NAME, loader=Yaml12Loader)
    except ParseError:
        return False
    return same(again, value) and date_paths(again) == date_paths(value)


def render(value: Any, style: _Style, column: int) -> str:
    """``value`` (a mapping or a list) as block YAML lines whose first line starts at
    ``column``, the rest indented as the file indents."""
    buffer = io.StringIO()
    _writer(style).dump(_plain(value), buffer)
    text = buffer.getvalue()
    if not _reads_back(text, value):
        text = dump_yaml(value).decode("utf-8")
    lines = text.splitlines(True)
    first = next((line for line in lines if line.strip()), "")
    shift = column - (len(first) - len(first.lstrip(" ")))
    if shift >= 0:
        return "".join(" " * shift + line if line.strip() else line for line in lines)
    return "".join(line[-shift:] if line[:-shift].isspace() else line for line in lines)


# --- the file, edited ---------------------------------------------------------------------


#: a record to write: what it reads as without Blueprint's bookkeeping, and as written
Record = tuple[dict[str, Any], dict[str, Any]]


def _as_read(item: Any, document: Any) -> Any:
    return item


def rewrite(
    text: str,
    list_key: str | None,
    records: Sequence[Record],
    head: dict[str, Any] | None,
    reading: Callable[[Any, Any], Any] = _as_read,
) -> str | None:
    """``text`` edited to hold ``records`` in its list (the top-level sequence, or the one
    under ``list_key``) and, when ``head`` is given, those top-level keys beside it.

    None when the file's shape does not allow it (a flow-style list, a list that is not
    there, no record to write), or when the edited text would not read back as the records
    (anchors and aliases, merge keys): the caller writes the file anew. ``reading(item,
    document)`` is an item as the codec reads it (promptfoo's ``$ref`` resolved).
    """
    if not records:
        return None
    fulls = [full for _, full in records]
    if _reads_as(text, list_key, fulls, head, reading):
        return text  # nothing was edited: untouched
    edited = _rewritten(text, list_key, records, head, reading)
    if edited is None:
        return None
    return edited if _reads_as(edited, list_key, fulls, head, reading) else None


def _reads_as(
    text: str,
    list_key: str | None,
    items: list[Any],
    head: dict[str, Any] | None,
    reading: Callable[[Any, Any], Any],
) -> bool:
    """Whether ``text`` reads back as ``items`` in its list and ``head`` beside it: the one
    check that an edit made in place said what it was meant to say."""
    try:
        data = yamlload.load(text, _NAME, loader=Yaml12Loader)
    except ParseError:
        return False
    if list_key is None:
        found = [data] if isinstance(data, dict) else data
    else:
        found = data.get(list_key) if isinstance(data, dict) else None
    if not isinstance(found, list) or len(found) != len(items):
        return False
    for item, wanted in zip(found, items, strict=True):
        item = reading(item, data)
        if not same(item, wanted) or date_paths(item) != date_paths(wanted):
            return False
    if head is None or list_key is None:
        return True
    beside = {key: value for key, value in data.items() if key != list_key}
    return same(beside, head) and date_paths(beside) == date_paths(head)


def _rewritten(
    text: str,
    list_key: str | None,
    records: Sequence[Record],
    head: dict[str, Any] | None,
    reading: Callable[[Any, Any], Any],
) -> str | None:
    if not records:
        return None
    try:
        source = _Text(text)
    except ParseError:
        return None
    root = source.root
    if list_key is None and isinstance(source.data, dict):
        # a file that is one record (a promptfoo test file may be): kept while unedited
        (plain, full), *others = records
        unedited = (
            not others and same(plain, full) and same(full, reading(source.data, source.data))
        )
        return text if unedited and date_paths(full) == date_paths(source.data) else None
    if list_key is None:
        sequence, data = root, source.data
        after = source.line_start(source.dash(sequence.value[0])) if _block(sequence) else 0
    else:
        if not isinstance(root, yaml.MappingNode) or root.flow_style:
            return None
        found = [(key, value) for key, value in root.value if _is(key, list_key)]
        if len(found) != 1 or not isinstance(source.data, dict):
            return None
        key, sequence = found[0]
        data = source.data.get(list_key)
        after = source.line_end(int(key.end_mark.index))
    if not _block(sequence) or not isinstance(data, list) or len(data) != len(sequence.value):
        return None
    data = [reading(item, source.data) for item in data]
    style = source.style()
    spans = source.items(sequence, after)
    dash = source.dash(sequence.value[0])
    column = dash - source.line_start(dash)
    spacer = _spacer(source, spans)
    written = []
    for plain, full, origin in _aligned(records, data):
        if origin is None:
            written.append(spacer + render([full], style, column))
        elif same(full, data[origin]) and same(plain, full):
            span = spans[origin]
            written.append(source.text[span.start : span.end])
        else:
            written.append(_edited(source, spans[origin], data[origin], full, style, column))
    body = "".join(part if part.endswith("\n") else part + "\n" for part in written)
    start, end = spans[0].start, spans[-1].end
    before, rest = source.text[:start], source.text[end:]
    if head is not None and list_key is not None:
        return _head(source, before, list_key, head, style) + body + _tail(source, rest, head)
    return before + body + rest


def document_of(text: str) -> Any:
    """What a kept text reads as (None when it no longer reads)."""
    try:
        return yamlload.load(text, _NAME, loader=Yaml12Loader)
    except ParseError:
        return None


def with_head(text: str, list_key: str, head: dict[str, Any]) -> str | None:
    """``text`` with its top-level keys other than ``list_key`` as ``head`` has them, the
    list's own text kept (None when the text is not a block mapping)."""
    try:
        source = _Text(text)
    except ParseError:
        return None
    if not isinstance(source.root, yaml.MappingNode) or source.root.flow_style:
        return None
    edited = _keys_in(source, text, 0, list_key, head, None, add=True)
    try:
        again = yamlload.load(edited, _NAME, loader=Yaml12Loader)
    except ParseError:
        return None
    if not isinstance(again, dict) or not isinstance(source.data, dict):
        return None
    beside = {key: value for key, value in again.items() if key != list_key}
    kept = same(again.get(list_key, ABSENT), source.data.get(list_key, ABSENT))
    return (
        edited if kept and same(beside, head) and date_paths(beside) == date_paths(head) else None
    )


def with_list(
    text: str,
    list_key: str,
    records: Sequence[Record],
    head: dict[str, Any],
    reading: Callable[[Any, Any], Any] = _as_read,
) -> str | None:
    """``text`` with the value of its top-level ``list_key`` written anew as the records (a
    block list in the file's indentation) and the keys beside it as ``head`` has them; the
    rest of the text, comments included, kept. For a list :func:`rewrite` cannot edit in
    place (a flow list, or a value that is no list: promptfoo's ``tests: file://...``).
    None when the text is not a block mapping holding ``list_key`` once, or the edited text
    would not read back as the records and the head."""
    if not records:
        return None
    try:
        source = _Text(text)
    except ParseError:
        return None
    root = source.root
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    found = [(key, value) for key, value in root.value if _is(key, list_key)]
    if len(found) != 1:
        return None
    key, value = found[0]
    fulls = [full for _, full in records]
    finish = source.line_end(source.content_end(value))
    edited = (
        text[: int(key.end_mark.index)]
        + _value_text(list_key, fulls, source.style(), key.start_mark.column)
        + text[finish:]
    )
    try:
        again = _Text(edited)
    except ParseError:
        return None
    edited = _keys_in(again, edited, 0, list_key, head, None, add=True)
    return edited if _reads_as(edited, list_key, fulls, head, reading) else None


#: a path in a YAML document: mapping keys (as written) and list positions
YamlPath = tuple[str | int | None, ...]

#: a plain scalar that reads as the same text wherever it stands (a path, a file:// name)
_PLAIN: Final = re.compile(r"[A-Za-z0-9_./~-][A-Za-z0-9_./~:@+=*?-]*(?<!:)")


def scalars_replaced(text: str, replacement: Callable[[YamlPath, str], str | None]) -> str | None:
    """``text`` with each text scalar that ``replacement(path, value)`` gives another value
    written as that value, in the scalar's own place and quoting where it can keep it; every
    other character kept, comments included. None when the text does not read, or the
    edited text would not read as the document with those values replaced (a value in a
    block scalar, one that carries an anchor, or one an alias shares with a place that would
    replace it otherwise)."""
    try:
        source = _Text(text)
    except ParseError:
        return None
    edits: dict[int, tuple[int, str]] = {}
    stack: list[tuple[yaml.Node, YamlPath, bool]] = [(source.root, (), False)]
    while stack:
        node, path, flow = stack.pop()
        if isinstance(node, yaml.MappingNode):
            inner = flow or bool(node.flow_style)
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                stack.append((value, (*path, name), inner))
        elif isinstance(node, yaml.SequenceNode):
            inner = flow or bool(node.flow_style)
            stack += [(item, (*path, index), inner) for index, item in enumerate(node.value)]
        elif isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
            new = replacement(path, node.value)
            start = int(node.start_mark.index)
            if new is None or new == node.value or node.style in ("|", ">"):
                continue
            if text[start : start + 1] in ("&", "!"):
                return None  # an anchor or a tag before the value: not written again
            edits[start] = (int(node.end_mark.index), _scalar(new, node.style, flow))
    edited = text
    for start in sorted(edits, reverse=True):
        end, written = edits[start]
        edited = edited[:start] + written + edited[end:]
    wanted = _replaced(source.data, (), replacement)
    again = document_of(edited) if edits else source.data
    if not same(again, wanted) or date_paths(again) != date_paths(wanted):
        return None
    return edited


def _scalar(value: str, style: str | None, flow: bool) -> str:
    """``value`` as a one-line scalar: plain where it was plain and reads back so, quoted
    as it was quoted otherwise."""
    plain = _PLAIN.fullmatch(value) and not (flow and re.search(r"[,\[\]{}]", value))
    if style is None and plain and document_of(value) == value:
        return value
    if style == "'" and "\n" not in value:
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(value, ensure_ascii=False)


def _replaced(
    value: Any, path: YamlPath, replacement: Callable[[YamlPath, str], str | None]
) -> Any:
    """A document with ``replacement`` applied to each of its text values, as
    :func:`scalars_replaced` applies it to the text."""
    if isinstance(value, dict):
        return {key: _replaced(item, (*path, str(key)), replacement) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, (*path, index), replacement) for index, item in enumerate(value)]
    if isinstance(value, str) and not isinstance(value, YamlDate):
        new = replacement(path, value)
        return value if new is None else new
    return value


def _block(node: Any) -> TypeGuard[yaml.SequenceNode]:
    return isinstance(node, yaml.SequenceNode) and not node.flow_style and bool(node.value)


def _is(node: yaml.Node, name: str) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.value == name


def _key(value: Any) -> str:
    return jsonvalues.dumps_text(value, sort_keys=True) + repr(date_paths(value))


def _aligned(
    records: Sequence[Record], originals: list[Any]
) -> list[tuple[dict[str, Any], dict[str, Any], int | None]]:
    """Each record with the original item it stands for, or None for a new one.

    A record that reads as an original item stands for it (the first unused of equal ones);
    the records left between two such, in order, stand for the items left between the same
    two (a record edited where it was); what is left over is new, or gone.
    """
    unused: dict[str, list[int]] = {}
    for index, original in enumerate(originals):
        unused.setdefault(_key(original), []).append(index)
    found: list[int | None] = []
    for plain, _ in records:
        matches = unused.get(_key(plain))
        found.append(matches.pop(0) if matches else None)
    taken = {index for index in found if index is not None}
    run: list[int] = []
    previous = -1
    for position in [*range(len(records)), len(records)]:
        anchor = found[position] if position < len(records) else len(originals)
        if position < len(records) and anchor is None:
            run.append(position)
            continue
        assert anchor is not None
        between = [i for i in range(previous + 1, anchor) if i not in taken]
        for index, original in zip(run, between, strict=False):
            found[index] = original
            taken.add(original)
        run = []
        previous = max(previous, anchor)
    return [(plain, full, origin) for (plain, full), origin in zip(records, found, strict=True)]


def _spacer(source: _Text, spans: list[_Item]) -> str:
    """What comes before a new record: a blank line where the file's records are parted so."""
    if len(spans) > 1:
        second = spans[1]
        leading = source.text[second.start : source.line_start(source.dash(second.node))]
        if leading and not leading.strip():
            return "\n"
    return ""


def _edited(
    source: _Text, span: _Item, original: Any, full: dict[str, Any], style: _Style, column: int
) -> str:
    """An item written as ``full``: the keys whose values differ from the ``original``'s
    are written again, in their place; keys it gained go after its last key; the rest keep
    their text, comments included. An item whose keys moved is written anew."""
    node = span.node
    leading = source.text[span.start : source.line_start(source.dash(node))]
    kept = [key for key in full if isinstance(original, dict) and key in original]
    if (
        not isinstance(node, yaml.MappingNode)
        or node.flow_style
        or not isinstance(original, dict)
        or kept != [key for key in original if key in full]
        or (original and next(iter(original)) not in full)
    ):
        return leading + render([full], style, column)
    text = source.text[span.start : span.end]
    keys = {
        key.value: (key, value) for key, value in node.value if isinstance(key, yaml.ScalarNode)
    }
    if set(keys) != set(original):
        return leading + render([full], style, column)
    inner = node.value[0][0].start_mark.column
    for name in reversed(list(original)):
        key, value = keys[name]
        finish = source.line_end(source.content_end(value)) - span.start
        if name not in full:
            begin = source.line_start(int(key.start_mark.index)) - span.start
            text = text[:begin] + text[finish:]
        elif not same(original[name], full[name]) or date_paths(original[name]) != date_paths(
            full[name]
        ):
            begin = int(key.end_mark.index) - span.start
            text = text[:begin] + _value_text(name, full[name], style, inner) + text[finish:]
    added = {name: value for name, value in full.items() if name not in original}
    if added:
        if not text.endswith("\n"):
            text += "\n"
        text += render(added, style, inner)
    return text


def _value_text(name: str, value: Any, style: _Style, column: int) -> str:
    """What follows a key's name in a block mapping at ``column``: its colon and value."""
    lines = render({name: value}, style, column)
    return lines[lines.index(name) + len(name) :] if name in lines else ":\n" + lines


def _head(source: _Text, before: str, list_key: str, head: dict[str, Any], style: _Style) -> str:
    """The text before the list, with top-level keys that changed written again."""
    return _keys_in(source, before, 0, list_key, head, style, add=True)


def _tail(source: _Text, rest: str, head: dict[str, Any]) -> str:
    return _keys_in(source, rest, len(source.text) - len(rest), None, head, style=None, add=False)


def _keys_in(
    source: _Text,
    part: str,
    offset: int,
    list_key: str | None,
    head: dict[str, Any],
    style: _Style | None,
    *,
    add: bool,
) -> str:
    """``part`` (the text at ``offset``) with each top-level key in it that ``head`` changes
    or leaves out written again or taken out; with ``add``, the keys ``head`` has and the
    file does not are written before ``list_key``."""
    root = source.root
    data = source.data if isinstance(source.data, dict) else {}
    style = style or source.style()
    edits: list[tuple[int, int, str]] = []
    list_line = None
    for key, value in root.value:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        start = source.line_start(int(key.start_mark.index))
        if name == list_key:
            list_line = start
            continue
        if not (offset <= start < offset + len(part)) or name is None or name not in data:
            continue
        finish = source.line_end(source.content_end(value))
        if name not in head:
            edits.append((start, finish, ""))
        elif not same(head[name], data[name]):
            edits.append((start, finish, render({name: head[name]}, style, 0)))
    if add and list_line is not None:
        new = {name: value for name, value in head.items() if name not in data}
        if new:
            edits.append((list_line, list_line, render(new, style, 0)))
    for start, finish, replacement in sorted(edits, reverse=True):
        part = part[: start - offset] + replacement + part[finish - offset :]
    return part
