"""TOML files written back as their authors wrote them.

An apollia-os suite read into a set keeps its text in the set. Writing the set back edits the
parsed document with tomlkit, a round-trip TOML library, instead of writing it anew: every
task and top-level key that is unchanged keeps its text, comments and layout; an edited task
has only its changed keys written again; a removed task takes its lines, and the comment
lines above it, along (but for the first task, whose comments belong to the file's top);
new tasks go at the end.

Tasks are matched by their ``id``. When the file's tasks cannot be matched that way (ids
missing or repeated, tasks reordered, a new task before an old one), ``None`` tells the
caller to write the file anew.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Array, InlineTable, Table, Whitespace

from blueprint.formats.native import same
from blueprint.io import limits, tomlload


def rewrite(
    text: str,
    list_key: str,
    records: list[dict[str, Any]],
    head: dict[str, Any],
    table_of: Callable[[dict[str, Any]], Table],
    value_of: Callable[[Any], Any],
) -> str | None:
    """``text`` edited to hold ``records`` as its array of tables ``list_key`` and the
    top-level values of ``head`` (``table_of`` writes a new table, ``value_of`` a new
    value); None when the file's tasks cannot be matched to the records by id."""
    if tomlload.nesting_overflow(text, limits.current().max_depth) is not None:
        return None  # tomlkit would recurse as deep: written anew instead
    try:
        document = tomlkit.parse(text)
    except (TOMLKitError, RecursionError):
        return None
    tables = document.get(list_key)
    if not isinstance(tables, AoT) or not records:
        return None
    old_ids = [table.get("id") for table in tables]
    ids = [record.get("id") for record in records]
    if not _unique_names(old_ids) or not _unique_names(ids):
        return None
    staying = [name for name in old_ids if name in set(ids)]
    # the tasks kept stay in their order, and new ones come after them
    if not staying or ids[: len(staying)] != staying:
        return None
    for index in reversed(range(len(old_ids))):
        if old_ids[index] not in set(ids):
            _remove(document, tables, index)
    for table, record in zip(tables, records, strict=False):
        if not same(table.unwrap(), record):
            _edit(table, record, value_of)
    for record in records[len(staying) :]:
        tables.append(_new_table(tables, record, table_of, value_of))
    for key, value in head.items():
        if key not in document or not same(document[key].unwrap(), value):
            document[key] = value_of(value)
    for key in [key for key in document if key != list_key and key not in head]:
        del document[key]
    edited = tomlkit.dumps(document)
    # the one check that the edit said what it was meant to: it reads back as the records
    try:
        return edited if same(tomllib.loads(edited), {**head, list_key: records}) else None
    except (tomllib.TOMLDecodeError, TypeError, ValueError):
        return None  # a TOML date or time, which no record of a set holds


def _unique_names(names: list[Any]) -> bool:
    return all(isinstance(name, str) for name in names) and len(set(names)) == len(names)


def _edit(table: Table, record: dict[str, Any], value_of: Callable[[Any], Any]) -> None:
    """A task's table with the keys that changed written again, the rest as they were."""
    for key in [key for key in table if key not in record]:
        del table[key]
    for key, value in record.items():
        if key in table and same(table[key].unwrap(), value):
            continue
        old = table.get(key)
        table[key] = _like(old, value, value_of)


def _like(old: Any, value: Any, value_of: Callable[[Any], Any]) -> Any:
    """A new value written as the one it replaces was: a list of tables on several lines
    stays so, each table inline, in the old list's indentation."""
    if (
        isinstance(old, Array)
        and isinstance(value, list)
        and value
        and all(isinstance(item, dict) for item in value)
    ):
        written = old.as_string()
        lines = written.splitlines()
        if len(lines) > 1:
            indent = lines[1][: len(lines[1]) - len(lines[1].lstrip())] or "  "
            array = tomlkit.array()
            for item in value:
                inline: InlineTable = tomlkit.inline_table()
                inline.update({name: value_of(part) for name, part in item.items()})
                array.add_line(inline, indent=indent)
            array.add_line(indent="")
            return array
    return value_of(value)


def _new_table(
    tables: AoT,
    record: dict[str, Any],
    table_of: Callable[[dict[str, Any]], Table],
    value_of: Callable[[Any], Any],
) -> Table:
    """A new table written as the file's first one is (its lists of tables inline, or
    not), after a blank line."""
    table = table_of(record)
    model = tables[0]
    for key in list(table):
        if isinstance(model.get(key), Array):
            table[key] = _like(model[key], record[key], value_of)
    body = tables[-1].value.body
    if not body or not isinstance(body[-1][1], Whitespace) or "\n\n" not in body[-1][1].s:
        tables[-1].add(tomlkit.nl())
    return table


def _trailing(body: list[tuple[Any, Any]]) -> int:
    """Where the comment and blank lines at the end of a table's body start: in tomlkit
    they belong to it, though they stand above the next table's header."""
    index = len(body)
    while index > 0 and body[index - 1][0] is None:
        index -= 1
    return index


def _tail(table: Table) -> list[tuple[Any, Any]]:
    """The body whose end holds the lines below a table: its own, or that of the last
    sub-table it ends with (``[[tasks.assertions]]``), where tomlkit puts them."""
    body: list[tuple[Any, Any]] = table.value.body
    while body and body[-1][0] is not None:
        last = body[-1][1]
        if isinstance(last, AoT) and last.body:
            body = last.body[-1].value.body
        elif isinstance(last, Table) and not last.is_super_table():
            body = last.value.body
        else:
            break
    return body


def _remove(document: Container, tables: AoT, index: int) -> None:
    """Remove a table of the array with the comment lines above its header (which tomlkit
    keeps at the end of the table before it); those above the next header stay."""
    below = _tail(tables[index])
    carried = below[_trailing(below) :]
    if index > 0:
        above = _tail(tables[index - 1])
        above[_trailing(above) :] = carried
    del tables[index]
