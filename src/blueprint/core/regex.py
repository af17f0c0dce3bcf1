"""The regular expressions of a ``regex`` check: JavaScript's, run the same way in Python.

A check's pattern is written in ECMAScript's RegExp syntax without the ``u`` flag, the
dialect promptfoo, omk and every JavaScript runner read, with the flags ``i``, ``m`` and
``s``. Blueprint grades it with Python's ``re`` after a translation that gives the pattern
JavaScript's meaning where the two read the same text differently:

- ``$`` is the end of the text (Python's also matches before a final line end), and with
  ``m`` the end of any line; ``^`` with ``m`` starts any line; a line ends at ``\\n``,
  ``\\r``, U+2028 or U+2029 (Python knows only ``\\n``);
- ``.`` matches no line end of those four, unless ``s`` is given;
- ``\\d``, ``\\w`` and ``\\b`` are ASCII (Python's are Unicode), ``\\s`` is JavaScript's
  white space (with U+FEFF, without U+001C..U+001F and U+0085).

A pattern that uses what only one of the two has, or what they read differently with no
translation (named groups, inline flags, ``\\A``, atomic groups, possessive quantifiers,
backreferences, octal escapes...), is refused with the reason: :func:`compile_regex`
raises :class:`RegexError`, and ``blueprint validate`` reports it before anything runs.
"""

from __future__ import annotations

import functools
import re
from typing import Final

#: JavaScript's line terminators, which ``^``, ``$`` (with ``m``) and ``.`` stop at
_LINE_ENDS: Final = "\\n\\r\\u2028\\u2029"
_DIGIT: Final = "0-9"
_WORD: Final = "A-Za-z0-9_"
#: JavaScript's \s: WhiteSpace and LineTerminator of ECMA-262
_SPACE: Final = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
_CLASS_ESCAPES: Final = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_BOUNDARY: Final = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_BOUNDARY: Final = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
#: escapes both read as the same single character or class, kept as written
_SAME_ESCAPES: Final = frozenset("tnrfv") | frozenset("^$\\.*+?()[]{}|/-")
_FLAGS: Final = {"i": re.IGNORECASE, "m": 0, "s": 0}


class RegexError(ValueError):
    """A pattern the dialect does not have, or that Python would read otherwise."""


@functools.lru_cache(maxsize=1024)
def compile_regex(pattern: str, flags: str = "") -> re.Pattern[str]:
    """The pattern as Python reads JavaScript's, ready for ``search``; raises
    :class:`RegexError` naming what is wrong."""
    unknown = sorted(set(flags) - set(_FLAGS))
    if unknown:
        raise RegexError(f"unknown flag(s) {''.join(unknown)!r}: the flags are i, m and s")
    translated = _translate(pattern, multiline="m" in flags, dotall="s" in flags)
    try:
        return re.compile(translated, re.IGNORECASE if "i" in flags else 0)
    except (re.error, OverflowError, RecursionError) as error:
        raise RegexError(f"not a regular expression: {error}") from None


def regex_problem(pattern: str, flags: str = "") -> str | None:
    """Why a pattern cannot be a check's (None when it can)."""
    try:
        compile_regex(pattern, flags)
    except RegexError as error:
        return str(error)
    return None


def _translate(pattern: str, *, multiline: bool, dotall: bool) -> str:
    out: list[str] = []
    position = 0
    end = len(pattern)
    while position < end:
        char = pattern[position]
        if char == "\\":
            text, position = _escape(pattern, position, in_class=False)
            out.append(text)
            continue
        if char == "[":
            text, position = _char_class(pattern, position)
            out.append(text)
            continue
        if char == "(":
            out.append(_group_opening(pattern, position))
            position += 1
            continue
        if char == "{" and pattern.startswith("{,", position):
            raise RegexError(
                f"'{{,' at {position}: JavaScript reads it as text and Python as a count"
            )
        if char in "*+?}" and _possessive(pattern, position):
            raise RegexError(f"a possessive quantifier at {position + 1}: JavaScript has none")
        if char == "$":
            out.append(f"(?=[{_LINE_ENDS}]|\\Z)" if multiline else "\\Z")
        elif char == "^":
            out.append(f"(?:(?<=[{_LINE_ENDS}])|\\A)" if multiline else "\\A")
        elif char == ".":
            out.append("(?s:.)" if dotall else f"[^{_LINE_ENDS}]")
        else:
            out.append(char)
        position += 1
    return "".join(out)


def _possessive(pattern: str, position: int) -> bool:
    """Whether the quantifier at ``position`` is followed by ``+`` (possessive in Python,
    an error in JavaScript): ``a*+``, ``a++``, ``a?+``, ``a{2}+``."""
    if not pattern.startswith("+", position + 1):
        return False
    if pattern[position] == "}":  # only a count's brace: a lone } is text in both
        return re.search(r"\{\d+(,\d*)?\}$", pattern[: position + 1]) is not None
    return True


def _group_opening(pattern: str, position: int) -> str:
    rest = pattern[position + 1 : position + 4]
    if not rest.startswith("?"):
        return "("
    if rest.startswith(("?:", "?=", "?!", "?<=", "?<!")):
        return "("
    if rest.startswith("?<"):
        raise RegexError(f"a named group at {position}: Python has none of JavaScript's; use (...)")
    what = {
        "?P": "a named group (Python's spelling); use (...)",
        "?#": "a comment group",
        "?>": "an atomic group",
        "?(": "a conditional group",
    }.get(rest[:2], "an inline flag; use the flags i, m, s")
    raise RegexError(f"{what} at {position}: JavaScript has none")


def _escape(pattern: str, position: int, *, in_class: bool) -> tuple[str, int]:
    """The Python text for the escape at ``position`` and where the next token starts."""
    if position + 1 >= len(pattern):
        raise RegexError("the pattern ends with a lone backslash")
    letter = pattern[position + 1]
    after = position + 2
    if letter in _CLASS_ESCAPES:
        body = _CLASS_ESCAPES[letter]
        return (body if in_class else f"[{body}]"), after
    if letter in "DWS":
        if in_class:
            raise RegexError(
                f"\\{letter} inside [...] at {position}: write the characters it excludes"
            )
        return f"[^{_CLASS_ESCAPES[letter.lower()]}]", after
    if letter in "bB":
        if in_class:
            return ("\\x08" if letter == "b" else "B"), after  # \b in a class is a backspace
        return (_BOUNDARY if letter == "b" else _NOT_BOUNDARY), after
    if letter in _SAME_ESCAPES:
        return pattern[position:after], after
    if letter == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", pattern[after : after + 2]):
        return pattern[position : after + 2], after + 2
    if letter == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", pattern[after : after + 4]):
        return pattern[position : after + 4], after + 4
    if letter == "0" and not pattern[after : after + 1].isdigit():
        return "\\x00", after
    if letter.isdigit():
        raise RegexError(
            f"\\{letter} at {position}: backreferences and octal escapes read differently"
        )
    if letter == "c" and pattern[after : after + 1].isalpha():
        return f"\\x{ord(pattern[after]) % 32:02x}", after + 1
    if letter.isalnum():
        raise RegexError(f"\\{letter} at {position}: the two dialects read it differently")
    return re.escape(letter), after  # an escaped punctuation mark is that mark


def _char_class(pattern: str, position: int) -> tuple[str, int]:
    """A ``[...]`` class, its escapes translated; JavaScript's ``[]`` and ``[^]`` kept."""
    out = ["["]
    index = position + 1
    if pattern.startswith("^", index):
        out.append("^")
        index += 1
    if pattern.startswith("]", index):  # [] matches nothing, [^] anything, in JavaScript
        return ("(?!)" if out == ["["] else "(?s:.)"), index + 1
    while index < len(pattern):
        char = pattern[index]
        if char == "]":
            out.append("]")
            return "".join(out), index + 1
        if char == "\\":
            text, index = _escape(pattern, index, in_class=True)
            out.append(text)
            continue
        if char == "[":
            out.append("\\[")  # JavaScript's [ in a class is a [; Python warns of sets
        elif char in "&~|-" and pattern.startswith(char * 2, index):
            raise RegexError(f"{char * 2} inside [...] at {index}: Python may read set operations")
        else:
            out.append(char)
        index += 1
    raise RegexError(f"the [ at {position} is never closed")
