"""Fast, exact JSON encoding and decoding shared by every format.

orjson does the work; the standard library takes over where orjson is not exact (integers
beyond 64 bits, which orjson reads as rounded floats and refuses to write), so no valid JSON
number is ever rounded. NaN and Infinity are not JSON and are refused on both paths.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson


class JSONError(ValueError):
    """Not valid JSON; carries the 1-based line and column of the problem."""

    def __init__(self, reason: str, line: int, column: int) -> None:
        self.reason = reason
        self.line = line
        self.column = column
        super().__init__(f"{reason} (line {line}, column {column})")


#: how deeply arrays and objects may nest; deeper data is refused when read, so that every
#: later step (writing, diffing) can handle whatever was read
MAX_DEPTH: Final = 128


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text} is too large to represent")
    return value


# orjson reads integers beyond 64 bits as floats, silently rounding them. Texts with a long run
# of digits (rare: long ids, big numbers) go through the standard library, which is exact.
_LONG_DIGITS_TEXT: Final = re.compile(r"\d{16}")
_LONG_DIGITS_BYTES: Final = re.compile(rb"\d{16}")


def loads(data: bytes | str) -> Any:
    """Decode one JSON document; raises :class:`JSONError` with line and column."""
    pattern = _LONG_DIGITS_BYTES if isinstance(data, bytes) else _LONG_DIGITS_TEXT
    exact = bool(pattern.search(data))  # type: ignore[arg-type]
    if exact:
        value = _exact_loads(data)
    else:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as error:
            raise JSONError(error.msg, error.lineno, error.colno) from None
    if exact or _openings(data) > MAX_DEPTH:
        problem = _inspect(value, strings=exact)
        if problem:
            raise JSONError(problem, 1, 1)
    return value


def _openings(data: bytes | str) -> int:
    """How many arrays and objects a text could open at most (a cheap bound on its depth)."""
    if isinstance(data, bytes):
        return data.count(b"[") + data.count(b"{")
    return data.count("[") + data.count("{")


def _exact_loads(data: bytes | str) -> Any:
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as error:
        raise JSONError(error.msg, error.lineno, error.colno) from None
    except RecursionError:
        raise JSONError(f"values nested deeper than {MAX_DEPTH} levels", 1, 1) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise JSONError(str(error), 1, 1) from None


def _inspect(value: Any, *, strings: bool) -> str | None:
    """Why a decoded value is unacceptable (too deep, or a lone surrogate), or None."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children: Any = current.values()
            if strings:
                children = [*current, *children]
        elif isinstance(current, list):
            children = current
        else:
            if strings and isinstance(current, str):
                try:
                    current.encode("utf-8")
                except UnicodeEncodeError:
                    return "a string holds a lone surrogate (\\ud800-\\udfff), which is not text"
            continue
        if depth >= MAX_DEPTH:
            return f"values nested deeper than {MAX_DEPTH} levels"
        stack.extend((child, depth + 1) for child in children)
    return None


def dumps(value: Any, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """Encode a JSON value as UTF-8 bytes without escaping non-ASCII characters."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(value, option=option)
    except TypeError:
        pass  # beyond orjson's reach: integers over 64 bits, or very deep nesting
    try:
        text = json.dumps(
            value,
            ensure_ascii=False,
            allow_nan=False,
            indent=2 if indent else None,
            separators=None if indent else (",", ":"),
            sort_keys=sort_keys,
        )
    except RecursionError:
        raise ValueError(
            f"values nested deeper than {MAX_DEPTH} levels cannot be written"
        ) from None
    return text.encode("utf-8")


def dumps_text(value: Any, *, indent: bool = False, sort_keys: bool = False) -> str:
    return dumps(value, indent=indent, sort_keys=sort_keys).decode("utf-8")


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
