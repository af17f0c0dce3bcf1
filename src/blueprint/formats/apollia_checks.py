"""apollia-os regex assertions as Blueprint checks, and checks as regex assertions.

apollia-os matches a ``regex`` assertion with Rust's regex crate, anywhere in the channel it
names; a ``regex`` check is JavaScript's dialect (docs/grading.md) matched anywhere in the
output's text. The two read many patterns the same and some differently: Rust's ``\\d``,
``\\w``, ``\\s`` and ``\\b`` are Unicode, its ``.`` stops only at ``\\n``, its classes nest
(``[a[b]]``, ``&&``, ``--``, ``~~``), and its ``(?i)`` folds case by Unicode's rules. So a
pattern crosses only when it is built from what both read alike (literals, the escapes of
punctuation, ``\\n``, ``\\t``, ``\\r``, ``^`` and ``$`` without a multi-line flag, groups,
``(?:...)``, alternation, the quantifiers ``* + ? {n} {n,} {n,m}`` and their lazy forms,
classes of literals and ranges), with ``.`` written as the set of characters it stands for
in the other dialect and JavaScript's ASCII ``\\d`` and ``\\w`` as Rust classes. Anything
else is not translated: the assertion is kept as written, or the check reported weakened.

The literal patterns of a reference answer or an acceptable set (``^text$``,
``^(?:a|b)$``) are read and written here too.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

from blueprint.core.regex import regex_problem
from blueprint.io import jsonvalues

Dialect = Literal["rust", "js"]

#: what Rust's regex::escape escapes: every character with a meaning in a pattern
_META: Final = frozenset("\\.+*?()|[]{}^$#&-~")
#: characters that mean something unescaped (the others of _META are literal outside classes)
_SPECIAL: Final = frozenset("\\.+*?()|[]{}^$")
_ESCAPED_CONTROLS: Final = {"n": "\n", "t": "\t", "r": "\r"}
#: escapes both dialects read as the same character
_COMMON_ESCAPES: Final = frozenset("\\.+*?()|[]{}^$ntr")
#: JavaScript's ASCII classes, as the ranges Rust reads the same
_JS_CLASSES: Final = {"d": "0-9", "w": "0-9A-Za-z_"}
_QUANTIFIER: Final = re.compile(r"\{(\d+)(,(\d*))?\}")
#: what ``.`` stands for in each dialect, written in the other
_DOT_AS_JS: Final = "[^\\n]"
_DOT_AS_RUST: Final = "[^\\n\\r\\x{2028}\\x{2029}]"


def escape(text: str) -> str:
    """Text as a Rust regex that matches it literally (as regex::escape does)."""
    return "".join("\\" + char if char in _META else char for char in text)


def exact_pattern(text: str) -> str:
    """A pattern matching exactly ``text``: ``^`` and ``$`` are the start and end of the
    whole result in Rust's regex (no multi-line flag), so nothing may come before or after."""
    return f"^{escape(text)}$"


def any_of_pattern(texts: list[str]) -> str:
    """A pattern matching exactly one of ``texts``."""
    return "^(?:" + "|".join(escape(text) for text in texts) + ")$"


def _literal(body: str) -> str | None:
    """The text a pattern body matches when it is a plain literal, else None."""
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            following = body[index + 1 : index + 2]
            if following in _META and following:
                out.append(following)
            elif following in _ESCAPED_CONTROLS:
                out.append(_ESCAPED_CONTROLS[following])
            else:
                return None
            index += 2
        elif char in _SPECIAL:
            return None
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _alternatives(body: str) -> list[str] | None:
    """The literal alternatives of ``(?:a|b|...)``, else None."""
    if not (body.startswith("(?:") and body.endswith(")")):
        return None
    inner = body[3:-1]
    parts: list[str] = []
    start = index = 0
    while index < len(inner):
        if inner[index] == "\\":
            index += 2
            continue
        if inner[index] == "|":
            parts.append(inner[start:index])
            start = index + 1
        index += 1
    parts.append(inner[start:])
    texts = [_literal(part) for part in parts]
    return None if any(text is None for text in texts) else [t for t in texts if t is not None]


def answer_of(pattern: str) -> tuple[str, Any] | None:
    """What an anchored literal pattern says the answer is: ("reference-answer", text) for
    ``^text$``, ("acceptable-set", [texts]) for ``^(?:a|b)$``; None for any other pattern."""
    if len(pattern) < 2 or not pattern.startswith("^") or not pattern.endswith("$"):
        return None
    body = pattern[1:-1]
    texts = _alternatives(body)
    if texts is not None:
        return "acceptable-set", texts
    text = _literal(body)
    return None if text is None else ("reference-answer", text)


def as_text(value: Any) -> str:
    """A value as the text a run's result would show: itself, or its JSON text."""
    return value if isinstance(value, str) else jsonvalues.dumps_text(value)


# --- patterns from one dialect to the other -----------------------------------------------------


def translate(pattern: str, source: Dialect, *, dotall: bool = False) -> str | None:
    """``pattern`` in the other dialect, meaning the same, or None when it uses anything the
    two read differently (or that this translation does not know). ``dotall``: JavaScript's
    ``s`` flag, for a pattern from JavaScript."""
    out: list[str] = []
    index, end = 0, len(pattern)
    while index < end:
        char = pattern[index]
        if char == "\\":
            text = _escape(pattern[index + 1 : index + 2], source, in_class=False)
            if text is None:
                return None
            out.append(text)
            index += 2
        elif char == "[":
            found = _char_class(pattern, index, source)
            if found is None:
                return None
            text, index = found
            out.append(text)
        elif char == ".":
            out.append(_DOT_AS_JS if source == "rust" else "(?s:.)" if dotall else _DOT_AS_RUST)
            index += 1
        elif char == "(":
            if pattern.startswith("(?", index) and not pattern.startswith("(?:", index):
                return None  # named groups, inline flags, look-around: not shared
            out.append(char)
            index += 1
        elif char == "{":
            match = _QUANTIFIER.match(pattern, index)
            if match is None or not out or out[-1] in ("(", "|", "^"):
                return None
            out.append(match.group(0))
            index = match.end()
        elif char in "]}":
            return None  # literal in JavaScript, refused or literal in Rust: not written so
        else:
            out.append(char)
            index += 1
    translated = "".join(out)
    if source == "rust" and regex_problem(translated) is not None:
        return None
    return translated


def _escape(following: str, source: Dialect, *, in_class: bool) -> str | None:
    if following in _COMMON_ESCAPES and following:
        return "\\" + following
    if source == "rust" and following in ("#", "&", "~", "-"):
        return "\\-" if following == "-" and in_class else following
    if source == "js" and following == "-":
        return "\\-"
    if source == "js" and following in _JS_CLASSES:
        ranges = _JS_CLASSES[following]
        return ranges if in_class else f"[{ranges}]"
    if source == "js" and following in ("D", "W") and not in_class:
        return f"[^{_JS_CLASSES[following.lower()]}]"
    return None


def _char_class(pattern: str, start: int, source: Dialect) -> tuple[str, int] | None:
    """A class ``[...]`` from ``start``, translated, and where it ends; None when the two
    dialects read it differently (nested classes, set operations, a leading ``]``)."""
    index = start + 1
    out = ["["]
    if pattern.startswith("^", index):
        out.append("^")
        index += 1
    if pattern.startswith("]", index):
        return None  # an empty class in JavaScript, a literal ] in Rust
    while index < len(pattern):
        char = pattern[index]
        if char == "]":
            return "".join(out) + "]", index + 1
        if char == "[" or pattern.startswith(("&&", "--", "~~"), index):
            return None
        if char == "\\":
            following = pattern[index + 1 : index + 2]
            text = _escape(following, source, in_class=True)
            beside = out[-1] == "-" or pattern.startswith("-", index + 2)
            if text is None or (following in _JS_CLASSES and beside):
                return None  # JavaScript reads [\w-x] as three things, Rust as a range
            out.append(text)
            index += 2
            continue
        out.append("\\" + char if source == "js" and char in "&~" else char)
        index += 1
    return None


# --- checks as regex assertions on the result ---------------------------------------------------


def check_patterns(check: Any) -> list[str] | None:
    """The Rust patterns whose matching every one of, on the run's result, is the check; None
    when the check has no such form (a flag other than s, a normalisation, not, any of
    anything but texts...)."""
    if not isinstance(check, dict):
        return None
    kind = check.get("type")
    if check.get("normalize"):
        return None
    if kind == "regex" and isinstance(check.get("pattern"), str):
        flags = check.get("flags") or ""
        if set(flags) - {"s"} or regex_problem(check["pattern"], flags) is not None:
            return None
        pattern = translate(check["pattern"], "js", dotall="s" in flags)
        return None if pattern is None else [pattern]
    value = check.get("value")
    if kind == "equals" and isinstance(value, str):
        return [exact_pattern(value)]
    if kind in ("contains", "starts-with", "ends-with") and isinstance(value, str):
        before = "^" if kind == "starts-with" else ""
        after = "$" if kind == "ends-with" else ""
        return [before + escape(value) + after]
    values = check.get("values")
    texts = values if isinstance(values, list) and values else None
    if texts is not None and all(isinstance(text, str) for text in texts):
        if kind == "contains-all":
            return [escape(text) for text in texts]
        if kind == "contains-any":
            return ["(?:" + "|".join(escape(text) for text in texts) + ")"]
    if kind == "all" and isinstance(check.get("checks"), list) and check["checks"]:
        parts = [check_patterns(part) for part in check["checks"]]
        return None if any(p is None for p in parts) else [x for p in parts if p for x in p]
    return None


def regex_check(pattern: Any) -> dict[str, Any] | None:
    """The ``regex`` check an apollia-os pattern on the result is, when it reads the same in
    Blueprint's dialect; None otherwise."""
    if not isinstance(pattern, str):
        return None
    translated = translate(pattern, "rust")
    return None if translated is None else {"type": "regex", "pattern": translated}


def result_patterns(check: Any) -> tuple[list[str], bool]:
    """The patterns on the result a check is written as, and whether they are the whole
    check: all of several checks gives the patterns of those that have them."""
    whole = check_patterns(check)
    if whole is not None:
        return whole, True
    parts = check.get("checks") if isinstance(check, dict) and check.get("type") == "all" else []
    found = [check_patterns(part) for part in parts or []]
    return [pattern for patterns in found if patterns for pattern in patterns], False
