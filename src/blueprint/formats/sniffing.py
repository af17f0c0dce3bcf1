"""Telling formats apart by content: what the first bytes of a file show of its structure.

Several formats share an extension (``.json`` is a Blueprint document, DeepEval goldens, an
array of LangSmith examples...). A codec claims a file only when its content fits; when none
fits, the error lists what each codec looked for. These helpers read just enough of the
first bytes to answer: the top-level keys of a JSON object, the keys of the first element of
a JSON array or the first line of a JSON Lines file, and the header of a CSV file.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

BOM: Final = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Fit:
    """Whether a file's content fits a format, and if not, what was looked for."""

    ok: bool
    why: str = ""

    @classmethod
    def yes(cls) -> Fit:
        return cls(True)

    @classmethod
    def no(cls, why: str) -> Fit:
        return cls(False, why)


def text_of(head: bytes) -> str:
    return head.removeprefix(BOM).decode("utf-8", errors="replace")


def first_line_object(head: bytes) -> Any:
    """The first non-blank line of a JSON Lines head, decoded, or None."""
    for line in head.removeprefix(BOM).split(b"\n"):
        if line.strip():
            try:
                return json.loads(line)
            except (ValueError, RecursionError):
                return None
    return None


#: the keys under which a record of each format holds its answer (or its checks, or its
#: chat): a record with one of these and none of the named format's own is another format's
#: record, whatever else could read it. Two shapes Blueprint does not read are here as well:
#: a chat fine-tuning file's ``messages``, a hosted OpenAI Evals data file's ``item``.
ANSWER_MARKS: Final[dict[str, frozenset[str]]] = {
    "openai-evals": frozenset({"ideal", "criteria"}),
    "inspect": frozenset({"target"}),
    "deepeval": frozenset({"expected_output", "expected_tools", "expected_outcome", "turns"}),
    "braintrust": frozenset({"expected"}),
    "langsmith": frozenset({"inputs", "outputs"}),
    "promptfoo": frozenset({"vars", "assert"}),
    "a chat fine-tuning file": frozenset({"messages"}),
    "a hosted OpenAI Evals data file": frozenset({"item"}),
}


def foreign_marks(keys: set[str], own: str) -> Fit:
    """Whether a record with ``keys`` may be the named format ``own``'s: not when it holds
    another format's answer key (``ideal`` in a file named as DeepEval goldens) and none of
    the format's own."""
    if keys & ANSWER_MARKS.get(own, frozenset()):
        return Fit.yes()
    found = [
        f"{', '.join(sorted(keys & marks))} ({name})"
        for name, marks in ANSWER_MARKS.items()
        if name != own and keys & marks
    ]
    if not found:
        return Fit.yes()
    mine = ", ".join(sorted(ANSWER_MARKS.get(own, ())))
    return Fit.no(
        f"the records hold {'; '.join(found)}, and none of {own}'s own ({mine}):"
        f" {own} would not read them"
    )


def first_record_complete(head: bytes) -> bool:
    """Whether the first bytes hold the whole first record: its line (JSON Lines, CSV, a
    pretty-printed document) or, in a JSON array, its first element."""
    text = text_of(head)
    start = _skip_blank(text, 0)
    if start < len(text) and text[start] == "[":
        item = _skip_blank(text, start + 1)
        return _skip_value(text, item) < len(text)
    return "\n" in text[start:]


#: what ends or nests a value: a string's quote, brackets, and (outside any bracket) a comma
#: or a blank; inside a string only its quote and the escape matter
_NESTED: Final = re.compile(r'["\[\]{}]')
_TOP: Final = re.compile(r'["\[\]{},\n\r\t ]')
_IN_STRING: Final = re.compile(r'[\\"]')


def _skip_value(text: str, at: int) -> int:
    """The index just after the JSON value starting at ``at`` (or len(text) if cut off).

    It jumps from one structural character to the next with regular expressions, so a head
    of megabytes is outlined at the speed of a scan, not of a Python loop per character.
    """
    depth = 0
    index = at
    end = len(text)
    while index < end:
        found = (_TOP if depth == 0 else _NESTED).search(text, index)
        if found is None:
            return end
        index = found.start()
        char = text[index]
        if char == '"':
            index = _skip_string(text, index + 1)
            if depth == 0 or index >= end:
                return index
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth <= 0:
                return index + 1
        else:  # a comma or a blank ends a value outside any bracket
            return index
        index += 1
    return end


def _skip_string(text: str, index: int) -> int:
    """The index just after the closing quote of a string whose content starts at ``index``."""
    while True:
        found = _IN_STRING.search(text, index)
        if found is None:
            return len(text)
        if text[found.start()] == "\\":
            index = found.start() + 2
            continue
        return found.start() + 1


def object_keys(text: str, at: int = 0) -> list[str] | None:
    """The keys of the JSON object starting at ``at`` (its first non-blank character), read
    as far as the text goes; None when no object starts there."""
    decoder = json.JSONDecoder()
    index = _skip_blank(text, at)
    if index >= len(text) or text[index] != "{":
        return None
    index += 1
    keys: list[str] = []
    while True:
        index = _skip_blank(text, index)
        if index >= len(text) or text[index] == "}":
            return keys
        if text[index] == ",":
            index += 1
            continue
        if text[index] != '"':
            return keys
        try:
            key, index = decoder.raw_decode(text, index)
        except ValueError:
            return keys
        keys.append(str(key))
        index = _skip_blank(text, index)
        if index >= len(text) or text[index] != ":":
            return keys
        index = _skip_value(text, _skip_blank(text, index + 1))


def top_level_value(head: bytes, name: str) -> Any:
    """The value of the key ``name`` of the top-level JSON object in the first bytes, when
    the object has it and the value is whole there; None otherwise."""
    text = text_of(head)
    decoder = json.JSONDecoder()
    index = _skip_blank(text, 0)
    if index >= len(text) or text[index] != "{":
        return None
    index += 1
    while True:
        index = _skip_blank(text, index)
        if index >= len(text) or text[index] == "}":
            return None
        if text[index] == ",":
            index += 1
            continue
        if text[index] != '"':
            return None
        try:
            key, index = decoder.raw_decode(text, index)
        except ValueError:
            return None
        index = _skip_blank(text, index)
        if index >= len(text) or text[index] != ":":
            return None
        start = _skip_blank(text, index + 1)
        index = _skip_value(text, start)
        if key == name:
            try:
                return json.loads(text[start:index])
            except (ValueError, RecursionError):
                return None


def _skip_blank(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


@dataclass(frozen=True)
class JsonHead:
    """The outline of a JSON document's first bytes."""

    #: "object", "array" or "other"
    kind: str
    #: the keys of the top-level object, or of the array's first element (when an object)
    keys: tuple[str, ...] = ()
    #: the first element of an array, decoded, when it fits in the head
    first: Any = None


@functools.lru_cache(maxsize=4)
def json_head(head: bytes) -> JsonHead:
    """The outline of a head; kept for the next caller, since every format that reads the
    same extension outlines the same bytes (treat ``first`` as read-only)."""
    text = text_of(head)
    start = _skip_blank(text, 0)
    if start >= len(text):
        return JsonHead("other")
    if text[start] == "{":
        return JsonHead("object", tuple(object_keys(text, start) or ()))
    if text[start] == "[":
        item = _skip_blank(text, start + 1)
        keys = object_keys(text, item) or ()
        first = None
        end = _skip_value(text, item)
        try:
            first = json.loads(text[item:end])
        except (ValueError, RecursionError):
            first = None
        return JsonHead("array", tuple(keys), first)
    return JsonHead("other")


#: the columns promptfoo's CSV reader gives a meaning of its own (every other column is a
#: var): no other format's CSV has them
_PROMPTFOO_COLUMNS: Final = frozenset(
    {"__description", "__prefix", "__suffix", "__metric", "__threshold", "__providerOutput"}
)
_PROMPTFOO_PREFIXES: Final = ("__expected", "__metadata", "__config:")


def promptfoo_columns(columns: list[str]) -> bool:
    """Whether a CSV header has a column only promptfoo's tests files have (``__expected``,
    ``__expected2``, ``__description``, ``__metadata:topic``...)."""
    return any(
        column in _PROMPTFOO_COLUMNS or column.startswith(_PROMPTFOO_PREFIXES) for column in columns
    )


#: fields only a record Braintrust's server stored has: its exports (the UI's JSON download,
#: the API's fetch) carry them, no other format's records do
BRAINTRUST_STORED: Final = frozenset(
    {
        "_xact_id",
        "_pagination_key",
        "span_id",
        "root_span_id",
        "span_parents",
        "is_root",
        "facets",
        "classifications",
        "audit_data",
    }
)


def csv_header(head: bytes, separator: str = ",") -> list[str]:
    """The column names of a CSV file's first line (as the csv module reads them)."""
    text = text_of(head)
    lines = text.splitlines()[:1] or [""]
    try:
        return [cell.strip() for cell in next(csv.reader(lines, delimiter=separator), [])]
    except csv.Error:
        return []


#: what else a spreadsheet may put between the cells of a file it saves as "CSV" (Excel uses
#: ';' where the comma is the decimal mark), as messages name it
OTHER_SEPARATORS: Final = {";": "';' (a semicolon)", "\t": "a tab"}


def header_separator(head: bytes, fits: Callable[[list[str]], bool]) -> str | None:
    """The separator other than a comma with which the first line's columns ``fit``, when
    with commas they do not: a file saved with the wrong separator. None otherwise."""
    if fits(csv_header(head)):
        return None
    for separator in OTHER_SEPARATORS:
        columns = csv_header(head, separator)
        if len(columns) > 1 and fits(columns):
            return separator
    return None
