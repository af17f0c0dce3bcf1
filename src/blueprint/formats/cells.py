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
* A number keeps the text its cell had: `` 42``, ``1e5``, ``1.10`` and ``-0`` are read as
  numbers that remember their text (:class:`IntText`, :class:`FloatText`), so a file written
  by hand comes back from an edit as it was; a number changed or made anew is written the
  canonical way.
* List fields of the case profile (``unacceptableBehavior``, ``evaluationCriteria``,
  ``linkedConcerns``) are written ``first|second|third``. A literal ``|`` inside an item is
  ``\\|`` and a literal backslash is ``\\\\``; spaces around items are ignored on reading. A list
  that this cannot say exactly (an empty list, items with surrounding spaces, a single empty
  item...) is written as a JSON array, which is read back as one.
* A cell that is JSON Blueprint will not read (a number with more digits than
  ``max_number_digits``, a string holding a lone surrogate, values nested too deep) raises
  :class:`CellError`, never turning into text.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any, Final

import orjson

from blueprint.io import jsonvalues, limits

#: first characters that can begin a JSON text (after optional whitespace)
_JSON_START: Final = frozenset('"[{-0123456789tfn')
#: JSON's whitespace, allowed around a value
_JSON_SPACE: Final = " \t\n\r"
#: first characters of a cell that may hold JSON; a cell beginning otherwise is its own text
MAY_BE_JSON: Final = _JSON_START | frozenset(_JSON_SPACE)
#: first characters that make spreadsheets evaluate a cell as a formula (OWASP's list)
FORMULA_START: Final = frozenset("=+-@\t\r")
#: cell texts pandas' read_csv takes for a missing value by default (its STR_NA_VALUES, but
#: for the empty string, which is an absent field here anyway); a string that is one of them
#: is written quoted, so pandas reads it as text rather than NaN
PANDAS_MISSING: Final = frozenset(
    {
        *("#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND"),
        *("1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"),
    }
)
#: first characters of a string that may have to be written as a JSON string
_NEEDS_A_LOOK: Final = MAY_BE_JSON | FORMULA_START
#: a JSON number, with the whitespace JSON allows around it
_NUMBER: Final = re.compile(r"[ \t\n\r]*(-?)(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?[ \t\n\r]*")
_LITERALS: Final[dict[str, Any]] = {"true": True, "false": False, "null": None}
#: bytes.translate table marking ASCII digits as 0 and every other byte as 1, and the run of
#: marks that says a number is long enough for orjson to round it (an integer past 64 bits);
#: this finds such a run several times faster than a regular expression
_DIGIT_MARKS: Final = bytes(0 if 0x30 <= byte <= 0x39 else 1 for byte in range(256))
_LONG_DIGIT_RUN: Final = b"\0" * 16
#: in a list cell: an escaped backslash or pipe, or a pipe between items
_ESCAPE_OR_PIPE: Final = re.compile(r"\\([\\|])|\|")


class CellError(ValueError):
    """A cell that holds JSON Blueprint refuses to read, rather than take it for text."""


class IntText(int):
    """An integer read from a cell whose text is not the canonical one (`` 42``, ``-0``); the
    CSV writer writes that text back. Arithmetic on it gives a plain ``int``."""

    text: str

    def __new__(cls, value: int, text: str) -> IntText:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[int, str]:  # type: ignore[override]
        return (int(self), self.text)

    def __repr__(self) -> str:
        return int.__repr__(self)


class FloatText(float):
    """A number with a fraction or an exponent read from a cell whose text is not the
    canonical one (``1e5``, ``1.10``); the CSV writer writes that text back."""

    text: str

    def __new__(cls, value: float, text: str) -> FloatText:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]
        return (float(self), self.text)

    def __repr__(self) -> str:
        return float.__repr__(self)


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
#: what :func:`_json_value` returns for a text that is not JSON
_NOT_JSON: Final = object()


def _digit_limit(max_digits: int | None) -> int:
    return limits.current().max_number_digits if max_digits is None else max_digits


def _too_many_digits(digits: int, limit: int) -> CellError:
    return CellError(
        f"a number of {digits} digits is longer than max-number-digits allows ({limit}),"
        f" and is refused rather than rounded or read as text; {limits.hint('max_number_digits')}"
    )


def _number(text: str, match: re.Match[str], max_digits: int | None) -> int | float:
    sign, whole, fraction, exponent = match.groups()
    digits = len(whole) + (len(fraction) - 1 if fraction else 0)
    limit = _digit_limit(max_digits)
    if limit and digits > limit:
        raise _too_many_digits(digits, limit)
    if fraction is None and exponent is None:
        try:
            integer = int(text)
        except ValueError:  # past Python's own digit limit for int(str), raised by the user
            integer = int(Decimal(text.strip(_JSON_SPACE)))
        canonical = len(text) == len(sign) + len(whole) and text != "-0"
        return integer if canonical else IntText(integer, text)
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise CellError(f"the number {text.strip(_JSON_SPACE)} is too large to represent")
    return value if jsonvalues.dumps_text(value) == text else FloatText(value, text)


def _json_value(text: str, max_digits: int | None) -> Any:
    """The JSON value a (non-empty) text holds, or _NOT_JSON; CellError for JSON refused."""
    first = text[0]
    if first in _JSON_SPACE:
        stripped = text.lstrip(_JSON_SPACE)
        if not stripped:
            return _NOT_JSON
        first = stripped[0]
    if first not in _JSON_START:
        return _NOT_JSON
    if first in "tfn":
        return _LITERALS.get(text.strip(_JSON_SPACE), _NOT_JSON)
    if first != '"' and first != "[" and first != "{":  # a digit or a minus sign
        match = _NUMBER.fullmatch(text)
        return _NOT_JSON if match is None else _number(text, match, max_digits)
    try:
        value = _loads(text)
    except jsonvalues.JSONError as error:
        _refuse_if_json(text, error, max_digits)
        return _NOT_JSON
    limit = _digit_limit(max_digits)
    if limit and len(text) > limit and re.search(rf"\d{{{limit + 1}}}", text):
        longest = _longest_integer(value)
        if longest > limit:
            raise _too_many_digits(longest, limit)
    return value


def _loads(text: str) -> Any:
    """jsonvalues.loads, with orjson called directly for the common text it is exact for
    (no long run of digits, not possibly too deep), which saves most of the cost of a cell."""
    data = text.encode("utf-8", "surrogatepass")
    if data.count(b"[") + data.count(
        b"{"
    ) <= jsonvalues.MAX_DEPTH and _LONG_DIGIT_RUN not in data.translate(_DIGIT_MARKS):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise jsonvalues.JSONError(error.msg, error.lineno, error.colno) from None
    return jsonvalues.loads(text)


def _refuse_if_json(text: str, error: jsonvalues.JSONError, max_digits: int | None) -> None:
    """Raise CellError when a text jsonvalues refused is JSON all the same: then it is data
    Blueprint will not read (a lone surrogate, too deep, too many digits), not plain text."""
    try:
        json.loads(text, parse_constant=_not_a_constant)
    except RecursionError:
        raise CellError(error.reason) from None
    except ValueError as refused:
        if "Exceeds the limit" in str(refused) and "digits" in str(refused):
            digits = max((len(run) for run in re.findall(r"\d+", text)), default=0)
            raise _too_many_digits(digits, min(_digit_limit(max_digits) or digits, 4300)) from None
        return  # not JSON: the cell is text
    if "surrogate" in error.reason:
        raise CellError("a string holds a lone surrogate (\\ud800-\\udfff), which is not text")
    raise CellError(error.reason)


def _not_a_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _longest_integer(value: Any) -> int:
    """The digits of the longest integer inside a decoded value."""
    longest = 0
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
        elif isinstance(current, int) and not isinstance(current, bool):
            longest = max(longest, len(str(abs(current))))
    return longest


def is_number_text(text: str) -> bool:
    """Whether a cell text reads as a number (``-3``, `` 1e5``): a value, not a formula."""
    return _NUMBER.fullmatch(text) is not None


def formula_like(text: str) -> bool:
    """Whether a spreadsheet would evaluate this cell text as a formula: it begins with one
    of OWASP's formula characters and is not a number (``-3`` is a value)."""
    return bool(text) and text[0] in FORMULA_START and _NUMBER.fullmatch(text) is None


def neutralised(text: str) -> str:
    """The cell text a spreadsheet shows as text instead of running it (OWASP's recipe: a
    leading single quote); the quote is part of the value from then on."""
    return "'" + text


def _bare_string_ok(text: str) -> bool:
    if not text or text[0] in FORMULA_START or text in PANDAS_MISSING:
        return False
    try:
        return _json_value(text, 0) is _NOT_JSON
    except CellError:
        return False  # JSON that would be refused on reading: written as a JSON string


def encode_cell(value: Any) -> str:
    """The cell text for a value (never called for an absent field)."""
    if isinstance(value, str):
        if value and value[0] not in _NEEDS_A_LOOK and value not in PANDAS_MISSING:
            return value  # most strings: nothing they begin with could misread them
        if _bare_string_ok(value):
            return value
    elif isinstance(value, (IntText, FloatText)):
        return value.text
    return jsonvalues.dumps_text(value)


def decode_cell(text: str, max_digits: int | None = None) -> Any:
    """The value a cell holds, or ABSENT for an empty cell.

    ``max_digits`` is the longest number accepted (None: the limit in force; 0: no limit);
    a reader looks the limit up once and passes it, since looking it up costs time.
    """
    if text == "":
        return ABSENT
    value = _json_value(text, max_digits)
    return text if value is _NOT_JSON else value


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
    if "\\" not in text:
        return text.split("|")
    items: list[str] = []
    current: list[str] = []
    last = 0
    for match in _ESCAPE_OR_PIPE.finditer(text):
        current.append(text[last : match.start()])
        escaped = match.group(1)
        if escaped is not None:
            current.append(escaped)
        else:
            items.append("".join(current))
            current = []
        last = match.end()
    current.append(text[last:])
    items.append("".join(current))
    return items


def decode_list_cell(text: str, max_digits: int | None = None) -> Any:
    """The value of a list-field cell, or ABSENT for an empty cell."""
    if text == "":
        return ABSENT
    value = _json_value(text, max_digits)
    if value is not _NOT_JSON:
        return value
    return [item.strip() for item in _split_items(text)]
