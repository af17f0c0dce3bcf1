"""How one JSON value is written in one CSV cell, and read back exactly.

The rules, in full (docs/csv-encoding.md shows examples):

* An empty cell means the field is absent.
* A cell that is valid JSON is read as that JSON value: ``1`` is a number, ``"1"`` (with the
  quotes) is a string, ``null`` is null, ``""`` is the empty string, ``{"a": 1}`` an object.
* Any other cell is read as literal text: ``What is the refund window?`` is a string.
* So the writer leaves a string bare unless it would be misread: when it is empty, when it
  would parse as JSON (``1``, ``true``, ``[x]``...), when it begins with a character a
  spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return), or
  when pandas' ``read_csv`` would take it for a missing value (``NA``, ``N/A``, ``None``,
  ``NaN``...), it is written as a JSON string instead. A bare ``NA`` written by hand still
  reads as the string ``NA``.
* List fields of the case profile (``unacceptableBehavior``, ``evaluationCriteria``,
  ``linkedConcerns``) are written ``first|second|third``. A literal ``|`` inside an item is
  ``\\|`` and a literal backslash is ``\\\\``; spaces around items are ignored on reading. A list
  that this cannot say exactly (an empty list, items with surrounding spaces, a single empty
  item...) is written as a JSON array, which is read back as one.
"""

from __future__ import annotations

from typing import Any, Final

from blueprint import jsonvalues

#: first characters that can begin a JSON text (after optional whitespace)
_JSON_START: Final = frozenset('"[{-0123456789tfn')
#: first characters that make spreadsheets evaluate a cell as a formula
_FORMULA_START: Final = frozenset("=+-@\t\r")
#: cell texts pandas' read_csv takes for a missing value by default (its STR_NA_VALUES, but
#: for the empty string, which is an absent field here anyway); a string that is one of them
#: is written quoted, so pandas reads it as text rather than NaN
PANDAS_MISSING: Final = frozenset(
    {
        *("#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND"),
        *("1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"),
    }
)


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


def _parse_json(text: str) -> tuple[bool, Any]:
    stripped = text.lstrip(" \t\n\r")
    if not stripped or stripped[0] not in _JSON_START:
        return False, None
    try:
        return True, jsonvalues.loads(text)
    except jsonvalues.JSONError:
        return False, None


def _bare_string_ok(text: str) -> bool:
    return (
        bool(text)
        and text[0] not in _FORMULA_START
        and text not in PANDAS_MISSING
        and not _parse_json(text)[0]
    )


def encode_cell(value: Any) -> str:
    """The cell text for a value (never called for an absent field)."""
    if isinstance(value, str) and _bare_string_ok(value):
        return value
    return jsonvalues.dumps_text(value)


def decode_cell(text: str) -> Any:
    """The value a cell holds, or ABSENT for an empty cell."""
    if text == "":
        return ABSENT
    parsed, value = _parse_json(text)
    return value if parsed else text


def _escape_item(item: str) -> str:
    return item.replace("\\", "\\\\").replace("|", "\\|")


def encode_list_cell(value: Any) -> str:
    """The cell text for a list field: pipe-separated where that is exact, else JSON."""
    if (
        isinstance(value, list)
        and value
        and all(isinstance(item, str) and item == item.strip() for item in value)
        and value != [""]
    ):
        text = "|".join(_escape_item(item) for item in value)
        if _bare_string_ok(text):
            return text
    return jsonvalues.dumps_text(value)


def _split_items(text: str) -> list[str]:
    items: list[str] = []
    current: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char == "\\" and text[position + 1 : position + 2] in ("\\", "|"):
            current.append(text[position + 1])
            position += 2
            continue
        if char == "|":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
        position += 1
    items.append("".join(current))
    return items


def decode_list_cell(text: str) -> Any:
    """The value of a list-field cell, or ABSENT for an empty cell."""
    if text == "":
        return ABSENT
    parsed, value = _parse_json(text)
    if parsed:
        return value
    return [item.strip() for item in _split_items(text)]
