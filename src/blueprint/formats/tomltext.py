"""TOML key-value lines written directly, byte for byte as tomlkit writes them.

tomlkit builds a document model item by item and renders it, some ten times the cost of
writing the text: an export of many tables writes the plain ones here, and leaves anything
else (a key that needs quotes, a float, a date, an inline table or array) to tomlkit, whose
text is the reference (the tests hold the two to the same bytes).
"""

from __future__ import annotations

import re
from typing import Any, Final

_BARE_KEY: Final = re.compile(r"[A-Za-z0-9_-]+")
#: a basic string's escapes: the short ones where TOML 1.0 has one, \uXXXX for the other
#: control characters (ESC too: \e is TOML 1.1 only), and the quote and backslash
_BASIC_ESCAPES: Final = {
    **{code: f"\\u{code:04x}" for code in [*range(0x20), 0x7F]},
    **{
        ord(char): escape
        for char, escape in zip("\b\t\n\f\r", ("\\b", "\\t", "\\n", "\\f", "\\r"), strict=True)
    },
    ord('"'): '\\"',
    ord("\\"): "\\\\",
}
#: a multi-line basic string's: the same but for the line breaks, and no lone quote
_MULTILINE_ESCAPES: Final = {
    code: escape
    for code, escape in _BASIC_ESCAPES.items()
    if code not in (ord("\n"), ord("\r"), ord('"'))
}


def key_value(key: str, value: Any) -> str | None:
    """``key = value`` as tomlkit writes it, or None where tomlkit should. Text with a line
    break and no carriage return is a multi-line string, as the writers ask tomlkit for it
    (``tomlkit.string(text, multiline=True)``); other text a basic string."""
    if type(key) is not str or _BARE_KEY.fullmatch(key) is None:
        return None
    kind = type(value)
    if kind is str:
        if "\n" in value and "\r" not in value:
            text = value.translate(_MULTILINE_ESCAPES).replace('"""', '""\\"')
            if text[:1] == "\n":  # one right after the opening quotes is not part of the text
                text = "\n" + text
            return f'{key} = """{text}"""'
        return f'{key} = "{value.translate(_BASIC_ESCAPES)}"'
    if kind is bool:
        return f"{key} = {'true' if value else 'false'}"
    if kind is int:
        return f"{key} = {value}"
    return None
