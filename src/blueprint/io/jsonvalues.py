"""Fast, exact JSON encoding and decoding shared by every format.

orjson does the work; the standard library takes over where orjson is not exact (integers
beyond 64 bits, which orjson reads as rounded floats and refuses to write), so no valid JSON
number is ever rounded. NaN and Infinity are not JSON and are refused on both paths.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

import orjson

from blueprint.io import limits


class JSONError(ValueError):
    """Not valid JSON; carries the 1-based line and column of the problem."""

    def __init__(self, reason: str, line: int, column: int) -> None:
        self.reason = reason
        self.line = line
        self.column = column
        super().__init__(f"{reason} (line {line}, column {column})")


#: how deeply arrays and objects may nest by default (``limits.current().max_depth`` decides);
#: deeper data is refused when read, so that every later step (writing, diffing) can handle
#: whatever was read
MAX_DEPTH: Final = 128


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text} is too large to represent")
    return value


# orjson reads integers beyond 64 bits as floats, silently rounding them. Texts with a long run
# of ASCII digits (rare: long ids, big numbers) go through the standard library, which is
# exact. Mapping every digit to "0" and everything else to " " and looking for sixteen zeros
# costs a tenth of a regular expression's scan.
_DIGIT_RUN: Final = b"0" * 16
_DIGITS_AS_ZEROS: Final = bytes(
    ord("0") if chr(byte).isdigit() and byte < 128 else ord(" ") for byte in range(256)
)
#: a number without a run of sixteen digits has at most fifteen before the point, fifteen after
#: and fifteen in the exponent; below that limit every text takes the exact path
_MOST_DIGITS_WITHOUT_A_RUN: Final = 45
#: the start of \\u003a, an escaped colon: the one way a decoded text can hold more colons than
#: its source (it also starts escaped digits, which are as rare)
_ESCAPES_OF_COLONS: Final = b"\\u003"


class _Bounds:
    """The limits one read keeps to, looked up once per file rather than once per value."""

    __slots__ = ("max_depth", "max_number_digits")

    def __init__(self, bounds: limits.Limits | None = None) -> None:
        bounds = bounds or limits.current()
        self.max_depth = bounds.max_depth
        self.max_number_digits = bounds.max_number_digits


def reader(bounds: limits.Limits | None = None) -> Callable[[bytes | str], Any]:
    """``loads`` bound to the limits in force now: for readers that decode many values."""
    fixed = _Bounds(bounds)

    def read(data: bytes | str) -> Any:
        return _loads(data, fixed)

    return read


def loads(data: bytes | str) -> Any:
    """Decode one JSON document; raises :class:`JSONError` with line and column.

    Duplicate keys, lone surrogates, numbers longer than ``max_number_digits`` and values
    nested deeper than ``max_depth`` are refused, with the place they occur.
    """
    return _loads(data, _Bounds())


def _loads(data: bytes | str, bounds: _Bounds) -> Any:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if bounds.max_number_digits < _MOST_DIGITS_WITHOUT_A_RUN or (
        _DIGIT_RUN in raw.translate(_DIGITS_AS_ZEROS)
    ):
        return _exact_loads(raw, bounds)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise _decode_error(raw, error) from None
    if raw.count(b"[") + raw.count(b"{") > bounds.max_depth:
        problem = _inspect(value, bounds.max_depth, strings=False)
        if problem:
            raise _located(raw, problem, bounds)
    # Every colon of a JSON text follows a key or sits inside a string; writing the decoded
    # value back keeps the strings and writes one colon per key it kept (orjson keeps the
    # last of a repeated key, silently). So, unless a colon was escaped (\u003a), the counts
    # are equal exactly when no key was dropped as a repeat.
    colons = raw.count(b":")
    if colons and (_ESCAPES_OF_COLONS in raw or _written_colons(value) != colons):
        _refuse_repeated_keys(raw)
    return value


def syntax_error(data: bytes) -> JSONError | None:
    """The first syntax error of a JSON text, where :func:`loads` reports it; None when the
    text parses (whatever else :func:`loads` would refuse in it: a repeated key, nesting past
    its bound, a number too long)."""
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as error:
        return _decode_error(data, error)
    return None


def _written_colons(value: Any) -> int:
    try:
        return orjson.dumps(value).count(b":")
    except TypeError:  # nested deeper than orjson writes: the token walk decides
        return -1


def _decode_error(raw: bytes, error: orjson.JSONDecodeError) -> JSONError:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        line_start = raw.rfind(b"\n", 0, bad.start) + 1
        return JSONError(
            f"not UTF-8 text (byte 0x{raw[bad.start]:02x})",
            raw.count(b"\n", 0, bad.start) + 1,
            bad.start - line_start + 1,
        )
    return JSONError(error.msg, error.lineno, error.colno)


def _exact_loads(raw: bytes, bounds: _Bounds) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = raw.rfind(b"\n", 0, error.start) + 1
        raise JSONError(
            f"not UTF-8 text (byte 0x{raw[error.start]:02x})",
            raw.count(b"\n", 0, error.start) + 1,
            error.start - line_start + 1,
        ) from None

    def parse_int(number: str) -> int:
        if len(number) - number.startswith("-") > bounds.max_number_digits:
            raise _Refused
        return _exact_int(number)

    def parse_float(number: str) -> float:
        if sum(char.isdigit() for char in number) > bounds.max_number_digits:
            raise _Refused
        return _finite_float(number)

    try:
        value = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_float=parse_float,
            parse_int=parse_int,
            object_pairs_hook=_unique_keys,
        )
    except json.JSONDecodeError as error:
        raise JSONError(error.msg, error.lineno, error.colno) from None
    except (RecursionError, _Refused):
        too_deep = f"values nested deeper than {bounds.max_depth} levels"
        raise _located(raw, too_deep, bounds) from None
    except ValueError as error:  # NaN, Infinity, or a number too large for a float
        raise _located(raw, str(error), bounds) from None
    problem = _inspect(value, bounds.max_depth, strings=True)
    if problem:
        raise _located(raw, problem, bounds)
    return value


class _Refused(Exception):
    """A repeated key or a number over the limit: _located finds which, and where."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Refused
    return found


def _exact_int(number: str) -> int:
    try:
        return int(number)
    except ValueError:  # past Python's own bound on digits, which max_number_digits replaces
        with _any_number_of_digits():
            return int(number)


@contextmanager
def _any_number_of_digits() -> Iterator[None]:
    saved = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(saved)


_TOKEN: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+')


def _located(raw: bytes, problem: str, bounds: _Bounds) -> JSONError:
    """The first problem in ``raw``, as an error naming its line and column.

    ``raw`` is valid JSON up to its first problem (the decoder stops there), and anything
    after it: the walk stops at the first problem it finds, and where the text stops being
    JSON before that (it can only be past the problem), the problem is placed at 1:1. Only a
    refused text comes here, so the token-by-token walk costs nothing on good data.
    """
    try:
        return _first_problem(raw, problem, bounds) or JSONError(problem, 1, 1)
    except (IndexError, ValueError):  # past the problem: not JSON any more
        return JSONError(problem, 1, 1)


def _first_problem(raw: bytes, problem: str, bounds: _Bounds) -> JSONError | None:
    depth = 0
    keys: list[set[str] | None] = []
    expect_key = False
    for match in _TOKEN.finditer(raw):
        token = match.group()
        reason = None
        if token in (b"{", b"["):
            depth += 1
            keys.append(set() if token == b"{" else None)
            expect_key = token == b"{"
            if depth > bounds.max_depth:
                reason = (
                    f"values nested deeper than {bounds.max_depth} levels"
                    f" ({limits.hint('max_depth')})"
                )
        elif token in (b"}", b"]"):
            depth -= 1
            keys.pop()
        elif token == b",":
            expect_key = bool(keys) and keys[-1] is not None
        elif token == b":":
            expect_key = False
        elif token.startswith(b'"'):
            decoded = json.loads(token)
            try:
                decoded.encode("utf-8")
            except UnicodeEncodeError:
                reason = "a string holds a lone surrogate (\\ud800-\\udfff), which is not text"
            if reason is None and expect_key and keys and keys[-1] is not None:
                if decoded in keys[-1]:
                    reason = f"the key {decoded!r} appears twice in one object"
                keys[-1].add(decoded)
        else:
            digits = sum(byte in _ASCII_DIGITS for byte in token)
            if digits > bounds.max_number_digits:
                reason = (
                    f"a number of {digits} digits is longer than the limit of"
                    f" {bounds.max_number_digits} ({limits.hint('max_number_digits')})"
                )
            elif problem and _not_finite(token):  # NaN, Infinity, 1e400: what was refused
                reason = problem
        if reason is not None:
            start = match.start()
            line_start = raw.rfind(b"\n", 0, start) + 1
            return JSONError(reason, raw.count(b"\n", 0, start) + 1, start - line_start + 1)
    return None


def _not_finite(token: bytes) -> bool:
    """Whether a number or constant token reads as no finite float (true and null do not
    read as floats at all)."""
    try:
        return not math.isfinite(float(token))
    except ValueError:
        return False


_ASCII_DIGITS: Final = frozenset(b"0123456789")


def _refuse_repeated_keys(raw: bytes) -> None:
    """Raise the error for a key that appears twice in one object, if one does."""
    error = _located(raw, "", _Bounds(limits.Limits(max_depth=10**9, max_number_digits=10**9)))
    if error.reason:
        raise error


def _inspect(value: Any, max_depth: int, *, strings: bool) -> str | None:
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
        if depth >= max_depth:
            return f"values nested deeper than {max_depth} levels"
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
        with _any_number_of_digits():  # numbers read under a raised max_number_digits
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


class Streamed:
    """A JSON array of a report that may be large (its items wait on disk): written an item
    at a time by :func:`json_pieces`, each item as ``convert`` makes it."""

    __slots__ = ("convert", "items")

    def __init__(self, items: Sequence[Any], convert: Callable[[Any], Any] | None = None) -> None:
        self.items = items
        self.convert = convert

    def __iter__(self) -> Iterator[Any]:
        convert = self.convert
        return iter(self.items) if convert is None else map(convert, self.items)

    def __len__(self) -> int:
        return len(self.items)


def json_pieces(value: Any, level: int = 0) -> Iterator[str]:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, in pieces: the items of a
    :class:`Streamed` array one at a time, so that a report of any size is written in the
    same memory."""
    pad = "\n" + "  " * (level + 1)
    if isinstance(value, dict) and value:
        for number, (key, item) in enumerate(value.items()):
            yield ("{" if number == 0 else ",") + pad + json.dumps(key, ensure_ascii=False) + ": "
            yield from json_pieces(item, level + 1)
        yield "\n" + "  " * level + "}"
    elif isinstance(value, list | Streamed) and len(value):
        streamed = isinstance(value, Streamed)
        for number, item in enumerate(value):
            yield "[" if number == 0 else ","
            if streamed:  # a report's item: its own indentation, moved to this depth
                yield pad + json.dumps(item, indent=2, ensure_ascii=False).replace("\n", pad)
            else:
                yield pad
                yield from json_pieces(item, level + 1)
        yield "\n" + "  " * level + "]"
    else:
        yield json.dumps([] if isinstance(value, Streamed) else value, ensure_ascii=False)
