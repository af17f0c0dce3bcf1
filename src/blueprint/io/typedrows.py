"""The validator's fast path: JSON rows decoded straight into typed rows (``core.typed``).

msgspec parses a line and checks it against the structures generated from the published row
schema in one pass, in C. A line is taken this way only when the result is exactly what the
exact reader (:func:`blueprint.io.jsonvalues.loads`) would give and the schema would accept;
any other line (bad JSON, a repeated key, a value nested too deep, a row the schema refuses)
goes to that reader and to the validator's full explanation, so every finding stays the same.

What msgspec does not check is checked on the bytes:

- repeated keys (msgspec keeps the last one): the typed row is written back, and either the
  bytes are the line's own (Blueprint writes rows in their schema order, without spaces) or it
  writes as many colons as the line holds and the line escapes none (see ``jsonvalues``);
- the order of the row's keys, which a typed row gives in the schema's order: a line that
  holds them in another is left to the exact reader, so that a conversion keeps its order;
- nesting: a line with more brackets than ``max_depth`` (or than orjson, the exact reader's
  parser, nests) is left to the exact reader;
- long numbers: msgspec reads integers of any size exactly; a line long enough to hold a
  number over ``max_number_digits`` is searched for one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec

from blueprint.core import typed
from blueprint.io import jsonvalues, limits

#: bytes that can belong to a number's digits, mapped to "0"; every other byte to " "
_NUMBER_BYTES_AS_ZEROS: Final = bytes(
    ord("0") if chr(byte) in "0123456789.eE+-" else ord(" ") for byte in range(256)
)
#: the start of an escaped colon (\u003a): the one way a line can hold fewer colons than the
#: value it decodes to
_ESCAPED_COLON: Final = b"\\u003"
#: what a line that does not fit raises (msgspec's errors are ValueErrors; no ``case`` in
#: ``metadata`` is a KeyError)
_DECODE_FAILURES: Final = (ValueError, TypeError, KeyError, RecursionError)


def is_typed_row(value: Any) -> bool:
    """Whether a row's value is a typed row: only :func:`row_reader` makes structures, and
    no JSON value is one."""
    return isinstance(value, msgspec.Struct)


def row_data(row: Any) -> dict[str, Any]:
    """A typed row as the JSON value it was decoded from (keys in the schema's order)."""
    data = {"id": row.id, "input": row.input}
    if row.expected is not msgspec.UNSET:
        data["expected"] = row.expected
    data["metadata"] = row.metadata
    return data


def row_reader(bounds: limits.Limits | None = None) -> Callable[[bytes], Any]:
    """``loads`` for rows: a line the typed structures take exactly comes back as a typed row,
    any other as :func:`jsonvalues.loads` reads it (or its :class:`jsonvalues.JSONError`)."""
    bounds = bounds or limits.current()
    exact = jsonvalues.reader(bounds)
    types = typed.row_types()
    decode = msgspec.json.Decoder(types.row).decode
    encode = msgspec.json.Encoder().encode
    convert = msgspec.convert
    open_fields = types.open_fields
    # past orjson's own nesting limit the exact reader decides, whatever max_depth allows
    max_depth = min(bounds.max_depth, _EXACT_READERS_DEPTH)
    max_digits = bounds.max_number_digits
    long_number = b"0" * (max_digits + 1)

    def read(line: bytes) -> Any:
        try:
            row = decode(line)
            for attribute, kind in open_fields:
                convert(getattr(row, attribute), kind)
        except _DECODE_FAILURES:
            return exact(line)
        if line.count(b"{") + line.count(b"[") > max_depth or (
            len(line) > max_digits and long_number in line.translate(_NUMBER_BYTES_AS_ZEROS)
        ):
            return exact(line)
        written = encode(row)
        if line.startswith(written) and not line[len(written) :].strip():
            return row  # the line's own bytes: Blueprint's layout, no key repeated
        if (
            _ESCAPED_COLON in line
            or written.count(b":") != line.count(b":")
            or list(_top_level_keys(line)) != list(row_data(row))
        ):
            return exact(line)
        return row

    return read


#: the nesting orjson (the exact reader's parser) refuses past; a line with more brackets
#: is left to it
_EXACT_READERS_DEPTH: Final = 1000


#: a line's object with its keys in the line's order and its values left undecoded: a row
#: whose keys stand in another order than the schema's is read by the exact reader, so that a
#: conversion writes them in the order they came
_top_level_keys: Final = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
