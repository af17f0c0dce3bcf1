"""Block-style YAML for JSON-like values, the same bytes LibYAML writes, without LibYAML.

promptfoo's and omk's writers used to build PyYAML nodes and hand them to LibYAML's emitter,
which calls back into Python twice for every scalar and walks the text a byte at a time: some
300 µs a test. The layout of block YAML for JSON-like values is simple enough to write
directly, so this module writes what LibYAML 0.2.5 writes for those nodes (``allow_unicode``,
``width=100``, two-space indents, every collection in block style): the same scalar styles,
quoting, escapes and line folding, decided with whole-string operations. A text with line
feeds is written as a literal block (``|``) when LibYAML can write it as one, so that code and
prose keep their lines; LibYAML is asked for the same style where it writes. Anything outside
that (a type the nodes do not hold as plain JSON, a key that would need YAML's complex
``? key`` form, a lone surrogate) makes :func:`block_yaml` return None, and the caller falls
back to LibYAML, so the output is the same either way. The tests hold this writer to
LibYAML's output, value by value.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

from blueprint.formats.cells import FloatText, IntText

#: LibYAML folds a plain or quoted scalar at a space once the line is past this column
WIDTH: Final = 100
#: LibYAML writes a mapping key of more bytes than this in the complex ``? key`` form
_SIMPLE_KEY_BYTES: Final = 128

# YAML 1.1 (PyYAML) and 1.2 (js-yaml, used by promptfoo) disagree on plain scalars such as
# 0o17 or yes; the writers quote anything that could read as a non-string in either
_AMBIGUOUS: Final = re.compile(
    r"^(?:[-+.0-9].*|~|null|true|false|yes|no|on|off|y|n|\.inf|\.nan)$", re.IGNORECASE | re.DOTALL
)
#: characters outside the Basic Multilingual Plane, which LibYAML counts as unprintable
_ASTRAL: Final = re.compile(r"[\U00010000-\U0010ffff]")
#: what LibYAML escapes in a double-quoted scalar besides the quote and the backslash: what
#: it counts as unprintable (all but \x20-\x7e, \xa0-\ud7ff and \ue000-\ufffd), the byte
#: order mark and line breaks
_ESCAPED: Final = re.compile(r"[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
_SHORT_ESCAPES: Final = {
    "\x00": "\\0",
    "\x07": "\\a",
    "\x08": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\x0b": "\\v",
    "\x0c": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}
#: first characters that keep a scalar from being plain in block context
_INDICATORS: Final = frozenset("#,[]{}&*!|>'\"%@` ")
#: texts PyYAML's resolver reads as something other than a string when plain, beyond the
#: ones _AMBIGUOUS quotes: null, the merge key and the value key
_NOT_PLAIN_STRINGS: Final = frozenset({"", "<<", "="})
_LINE_BREAKS: Final = frozenset("\n\r\x85\u2028\u2029")
_YAML11_FLOAT: Final = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)

PLAIN: Final = 0
SINGLE: Final = 1
DOUBLE: Final = 2
#: what may stand in a literal block: what LibYAML writes unescaped, and the line feed
_IN_BLOCK_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\n"
_NOT_IN_BLOCK: Final = re.compile(
    r"[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]"
)
_INDENTED_EMPTY_LINE: Final = re.compile(r"\n +(?=\n)")

#: how texts written lately are written (see _styled), by text: at most this many texts of
#: at most this length, so memory stays flat however many rows are written
_REMEMBERED: dict[str, tuple[int, str, str]] = {}
_REMEMBERED_TEXTS: Final = 4096
_REMEMBERED_LENGTH: Final = 64
#: the text of each mapping key written lately, quotes included
_KEYS: dict[str, str] = {}
_BREAKS: Final = ["\n" + " " * indent for indent in range(64)]


class _Unwritten(Exception):
    """The value holds something this writer leaves to LibYAML."""


def quoted_in_both(text: str) -> bool:
    """Whether the writers put ``text`` in double quotes whatever LibYAML would choose: it
    could read as a non-string in YAML 1.1 or 1.2, or it holds line breaks or control
    characters (YAML counts \\x85 and \\u2028 as line breaks), which double quotes escape so
    they come back exactly."""
    return _AMBIGUOUS.match(text) is not None or not text.isprintable()


def literal(text: str) -> bool:
    """Whether a text is written as a literal block: it has a line feed, and LibYAML writes
    it as one with no hint but the chomping "-" (it starts with neither a space nor a line
    break, ends in at most one line feed, has no space at the end of a line, and holds
    nothing LibYAML escapes: a line feed is its only line break, which YAML 1.1 and 1.2
    readers read alike). Any other text with line breaks is double-quoted."""
    if "\n" not in text or text[0] == " " or text[0] == "\n" or text[-1] == " ":
        return False
    if text.endswith("\n\n") or " \n" in text:
        return False
    if text.isascii():
        return not text.encode("ascii").translate(None, _IN_BLOCK_ASCII)
    return _NOT_IN_BLOCK.search(text) is None


def block_yaml(value: Any) -> str | None:
    """``value`` (a non-empty dict or list of JSON-like values) as block YAML, ending in a
    line break, exactly as LibYAML writes it; None when only LibYAML can say."""
    out: list[str] = []
    try:
        if type(value) is list and value:
            _sequence(value, 0, out, 0)
        elif type(value) is dict and value:
            _mapping(value, 0, out, 0)
        else:
            return None
    except _Unwritten:
        return None
    out.append("\n")
    return "".join(out)


def _mapping(mapping: dict[Any, Any], indent: int, out: list[str], inline: int | None) -> None:
    """A block mapping whose keys start at column ``indent``; ``inline`` is the column the
    first key follows on the current line (after "- "), or None to start on a new line."""
    breaks = _BREAKS[indent] if indent < len(_BREAKS) else "\n" + " " * indent
    lead = breaks if inline is None else " " * (indent - inline)
    keys = _KEYS
    remembered_texts = _REMEMBERED
    for key, item in mapping.items():
        # a text's subclass (a YAML date) is LibYAML's, though its text may be remembered
        text = keys.get(key) if type(key) is str else None
        if text is None:
            text = _key(key)
        if type(item) is str:  # most values: written here, without a call per value
            column = indent + len(text) + 2
            remembered = remembered_texts.get(item)
            if remembered is not None and column + len(remembered[1]) <= WIDTH + 1:
                out.append(f"{lead}{text}: {remembered[1]}")
            else:
                out.append(f"{lead}{text}: {_scalar(item, column, indent + 2)}")
        elif type(item) is dict and item:  # what _value does for these, a call sooner
            out.append(f"{lead}{text}:")
            _mapping(item, indent + 2, out, None)
        elif type(item) is list and item:  # a sequence in a mapping is not indented
            out.append(f"{lead}{text}:")
            _sequence(item, indent, out, None)
        else:
            out.append(f"{lead}{text}:")
            _value(item, indent, indent + len(text) + 1, out, True)
        lead = breaks


def _sequence(sequence: list[Any], indent: int, out: list[str], inline: int | None) -> None:
    breaks = _BREAKS[indent] if indent < len(_BREAKS) else "\n" + " " * indent
    lead = breaks if inline is None else " " * (indent - inline)
    remembered_texts = _REMEMBERED
    for item in sequence:
        if type(item) is str:
            remembered = remembered_texts.get(item)
            if remembered is not None and indent + 2 + len(remembered[1]) <= WIDTH + 1:
                out.append(f"{lead}- {remembered[1]}")
            else:
                out.append(f"{lead}- {_scalar(item, indent + 2, indent + 2)}")
        elif type(item) is dict and item:  # what _value does for it, a call sooner
            out.append(f"{lead}-")
            _mapping(item, indent + 2, out, indent + 1)
        else:
            out.append(f"{lead}-")
            _value(item, indent, indent + 1, out, False)
        lead = breaks


def _value(item: Any, indent: int, column: int, out: list[str], in_mapping: bool) -> None:
    """A node after an indicator (the ":" of its key, or the "-" of its item) that ends at
    ``column``, in a collection whose entries start at ``indent``."""
    kind = type(item)
    if kind is dict:
        if not item:
            out.append(" {}")
        else:
            _mapping(item, indent + 2, out, None if in_mapping else column)
    elif kind is list:
        if not item:
            out.append(" []")
        elif in_mapping:
            _sequence(item, indent, out, None)  # a sequence in a mapping is not indented
        else:
            _sequence(item, indent + 2, out, column)
    elif kind is bool:
        out.append(" true" if item else " false")
    elif kind is int or kind is IntText:
        out.append(" " + int.__repr__(item))
    elif item is None:
        out.append(" null")
    elif kind is float or kind is FloatText:
        out.append(" " + _float(item))
    elif kind is str:
        out.append(" " + _scalar(item, column + 1, indent + 2))
    else:
        raise _Unwritten


def _float(number: float) -> str:
    # PyYAML's representer's text for a float; written plain when it reads back as a float
    if math.isnan(number):
        return ".nan"
    if math.isinf(number):
        return ".inf" if number > 0 else "-.inf"
    text = float.__repr__(number).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    if not _YAML11_FLOAT.match(text):
        raise _Unwritten
    return text


def _key(key: Any) -> str:
    """A mapping key as LibYAML writes it as a simple key: never folded."""
    if type(key) is not str:
        raise _Unwritten
    if len(key) * 4 > _SIMPLE_KEY_BYTES and len(key.encode("utf-8", "surrogatepass")) > (
        _SIMPLE_KEY_BYTES
    ):
        raise _Unwritten
    if _LINE_BREAKS.intersection(key):
        raise _Unwritten
    written = _styled(key)[1]
    if len(_KEYS) >= _REMEMBERED_TEXTS:
        _KEYS.clear()
    _KEYS[key] = written
    return written


def _scalar(value: str, column: int, indent: int) -> str:
    """A string value starting at ``column``, folded as LibYAML folds it at ``indent``."""
    remembered = _REMEMBERED.get(value)
    if remembered is None:
        if "\n" in value and literal(value):
            return _literal(value, indent)  # never remembered: its lines depend on the indent
        remembered = _styled(value)
        if len(value) <= _REMEMBERED_LENGTH:
            if len(_REMEMBERED) >= _REMEMBERED_TEXTS:
                _REMEMBERED.clear()
            _REMEMBERED[value] = remembered
    style, written, text = remembered
    if column + len(written) <= WIDTH + 1:
        return written  # too short to reach the column where LibYAML folds
    if style == PLAIN:
        return _fold(text, column, indent, style)
    text = _fold(text, column + 1, indent, style)
    return "'" + text + "'" if style == SINGLE else '"' + text + '"'


def _literal(text: str, indent: int) -> str:
    """A literal block's indicator and lines, each line (but an empty one) at ``indent``; the
    last line break is the next line's own."""
    breaks = _BREAKS[indent] if indent < len(_BREAKS) else "\n" + " " * indent
    if text[-1] == "\n":
        head, body = "|", text[:-1]
    else:
        head, body = "|-", text
    written = breaks + body.replace("\n", breaks)
    if "\n\n" in body:  # no line is spaces alone, so these are the empty lines' indents
        written = _INDENTED_EMPTY_LINE.sub("\n", written)
    return head + written


def _styled(value: str) -> tuple[int, str, str]:
    """(style, the scalar as written unfolded, its text between the quotes)."""
    style, text = _style(value)
    if style == PLAIN:
        return style, text, text
    return style, ("'" + text + "'" if style == SINGLE else '"' + text + '"'), text


def _style(value: str) -> tuple[int, str]:
    """The style LibYAML chooses for a string (a plain scalar unless the writers quote it),
    and its text between the quotes."""
    if quoted_in_both(value) or (not value.isascii() and _ASTRAL.search(value)):
        return DOUBLE, _double(value)
    if (
        value in _NOT_PLAIN_STRINGS
        or value[0] in _INDICATORS
        or value[-1] == " "
        or value[-1] == ":"
        or ": " in value
        or " #" in value
        or (value[0] == "?" and (len(value) == 1 or value[1] == " "))
    ):
        return SINGLE, value.replace("'", "''")
    return PLAIN, value


def _double(value: str) -> str:
    plain_ascii = value.isascii()  # known without reading the text
    text = value.replace("\\", "\\\\").replace('"', '\\"')
    if _nothing_to_escape(text, plain_ascii):
        return text
    # the escapes most texts need (line breaks, tabs) by whole-string replacement, which is
    # some ten times faster than a call for each character; what is left, one call each
    for character, escaped in _SHORT_ESCAPES.items():
        if character in text:
            text = text.replace(character, escaped)
    return text if _nothing_to_escape(text, plain_ascii) else _ESCAPED.sub(_escape, text)


def _nothing_to_escape(text: str, plain_ascii: bool) -> bool:
    # ASCII text has only its control characters to escape, which str.isprintable finds
    # faster than the expression; elsewhere the two part ways (a no-break space)
    return text.isprintable() if plain_ascii else _ESCAPED.search(text) is None


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    short = _SHORT_ESCAPES.get(character)
    if short is not None:
        return short
    point = ord(character)
    if 0xD800 <= point <= 0xDFFF:
        raise _Unwritten  # a lone surrogate has no UTF-8: LibYAML's caller refuses it
    if point <= 0xFF:
        return f"\\x{point:02X}"
    return f"\\u{point:04X}" if point <= 0xFFFF else f"\\U{point:08X}"


def _fold(text: str, column: int, indent: int, style: int) -> str:
    """``text`` (a scalar's written characters, without quotes, its first at ``column``)
    broken into lines as LibYAML breaks it: at the first single space (not the first or last
    character, nor followed by a space, except in double quotes) that comes once the line is
    past WIDTH; the next line starts at ``indent``, and in double quotes a space that would
    start it is escaped."""
    pieces = []
    start = 0  # where the current line's part of the text begins
    base = column  # the column of text[start]
    last = len(text) - 1
    breaks = "\n" + " " * indent
    at = max(start, WIDTH + 1 - base + start)
    while True:
        at = text.find(" ", at)
        if at < 0 or at >= last:
            break
        if at == 0 or text[at - 1] == " " or (style != DOUBLE and text[at + 1] == " "):
            at += 1
            continue
        pieces.append(text[start:at])
        pieces.append(breaks)
        start = at + 1
        base = indent
        if style == DOUBLE and text[start] == " ":
            pieces.append("\\")
            base += 1
        at = max(start, WIDTH + 1 - base + start)
    pieces.append(text[start:])
    return "".join(pieces)
