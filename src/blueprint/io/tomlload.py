"""TOML read within the limits, as JSON and YAML are.

``tomllib`` reads nested arrays and inline tables by recursion, and a dotted key's parts with
work that grows with the square of their number: a document of a few hundred kilobytes
nested 100,000 deep ends in a RecursionError, or in memory running out. Before it parses
anything, a scan of the text counts how deep its brackets and dotted keys nest (outside
strings and comments) and refuses a document deeper than ``max_depth``; after, the values
read are checked again, exactly.
"""

from __future__ import annotations

import functools
import re
import tomllib
from typing import Any, Final

from blueprint.io import limits

#: what the depth scan stops at: brackets, the dots of dotted keys, what ends a key (or
#: starts the next one), and what opens a string or a comment
_MARK: Final = re.compile("[][{}#\"'.=,\n]")
#: levels of brackets the quick look takes away, a pass over them each, before it leaves
#: the text to the exact scan
_PASSES: Final = 32
#: bytes.translate's tables that keep only the brackets, all of them square
_SQUARE: Final = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS: Final = bytes(sorted(set(range(256)) - set(b"[]{}")))


#: how deep TOML may nest whatever ``max_depth`` says: ``tomllib`` recurses a few frames a
#: level, and Python's recursion limit stops it well before this; a dotted key this long
#: already costs it a million steps
PARSER_REACH: Final = 1000


class TomlError(ValueError):
    """A TOML document that cannot be read: broken, or beyond a limit. ``line`` and
    ``column`` (1-based) where known; ``reason`` without them."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        where = f" (at line {line}, column {column})" if line is not None else ""
        super().__init__(reason + where)
        self.reason = reason
        self.line = line
        self.column = column


def loads(text: str) -> dict[str, Any]:
    """The document ``text`` holds. TOMLDecodeError (a ValueError) for broken TOML, as
    ``tomllib`` raises it; :class:`TomlError` for one nested deeper than ``max_depth``."""
    depth = min(limits.current().max_depth, PARSER_REACH)
    too_deep = f"values nested deeper than {depth} levels"
    if depth < PARSER_REACH:
        too_deep += f" ({limits.hint('max_depth')})"
    place = nesting_overflow(text, depth)
    if place is not None:
        line = text.count("\n", 0, place) + 1
        raise TomlError(too_deep, line, place - (text.rfind("\n", 0, place) + 1) + 1)
    try:
        document = tomllib.loads(text)
    except RecursionError:  # a max_depth raised beyond what the parser's recursion reaches
        raise TomlError(too_deep) from None
    if _depth_over(document, depth):
        raise TomlError(too_deep)
    return document


def nesting_overflow(text: str, max_depth: int) -> int | None:
    """The offset where the text first nests deeper than ``max_depth``, outside strings and
    comments, or None: a ``[`` or ``{`` inside others, or the ``.`` of a dotted key
    (``a.b.c = 1`` nests two levels below ``a``). A table header (``[a]``, ``[[a.b]]``) counts
    as brackets too, which adds at most two levels at the top; the one dot of a float or a
    time in a value may count a level it does not nest. This scan keeps the parsers from
    recursing (or, for a long dotted key, working) without end; the exact depth is checked
    on the document read."""
    if _plainly_shallow(text, max_depth):
        return None
    depth = 0
    dots = 0  # the dots since the last place a key can start
    at = 0
    end = len(text)
    while at < end:
        found = _MARK.search(text, at)
        if found is None:
            return None
        at = found.start()
        char = text[at]
        if char == ".":
            dots += 1
            if depth + dots - 1 > max_depth:
                return at
        elif char in "\"'":
            at = _string_end(text, at)
            continue
        elif char == "#":
            newline = text.find("\n", at)
            at = end if newline < 0 else newline
            continue
        else:
            dots = 0
            if char in "[{":
                depth += 1
                if depth > max_depth:
                    return at
            elif char in "]}":
                depth = max(0, depth - 1)
        at += 1
    return None


def _plainly_shallow(text: str, max_depth: int) -> bool:
    """Whether the text cannot nest deeper than ``max_depth`` even if its strings and
    comments counted: its brackets never more than that many open at once, and no line with
    as many dots between one ``=`` and the next. What this cannot tell is scanned exactly."""
    if _dots(max_depth).search(text) is not None:
        return False
    # the brackets alone, then their innermost pairs taken away a level at a time: what
    # nesting the pairs had, plus what is left open
    brackets = text.encode("utf-8", "surrogatepass").translate(_SQUARE, _NOT_BRACKETS)
    levels = 0
    while b"[]" in brackets:
        levels += 1
        if levels > min(max_depth, _PASSES):
            return False  # deep, or nearly: the exact scan says (it takes one pass)
        brackets = brackets.replace(b"[]", b"")
    return levels + brackets.count(b"[") <= max_depth


@functools.cache
def _dots(count: int) -> re.Pattern[str]:
    return re.compile(r"\.(?:[^.=\n]*\.){" + str(max(count - 1, 0)) + "}")


def _string_end(text: str, start: int) -> int:
    """The offset just past the string that opens at ``start`` (the end of the text, or of
    the line, for one left open: tomllib says what is wrong with it)."""
    quote = text[start]
    if text.startswith(quote * 3, start):
        close = text.find(quote * 3, start + 3)
        if close < 0:
            return len(text)
        close += 3
        while close < len(text) and text[close] == quote:  # up to two quotes end the text
            close += 1
        return close
    at = start + 1
    while at < len(text):
        char = text[at]
        if char == quote or char == "\n":
            return at + 1
        if char == "\\" and quote == '"':
            at += 2
            continue
        at += 1
    return at


def _depth_over(document: Any, max_depth: int) -> bool:
    """Whether a read document nests tables and arrays deeper than ``max_depth``."""
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children: Any = current.values()
        elif isinstance(current, list):
            children = current
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
