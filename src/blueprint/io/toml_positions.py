"""Where each key and each array element of a TOML document starts, for error messages.

``tomllib`` parses a document into values and keeps no positions, so a reader that checks
the values against a schema cannot say on which line a bad key is. This module walks the
text of a document that ``tomllib`` has already accepted, and records the line and column
of every key and every array element by its path: ``("tasks", 1, "assertions", 0, "on")``
for the ``on`` key of the first assertion of the second task, whether the document writes
them as ``[[tasks]]`` / ``[[tasks.assertions]]`` tables or inline (``tasks = [{...}]``).

It reads only structure (keys, tables, arrays, inline tables) and skips over values; it
never decides whether a document is valid, which is ``tomllib``'s job.
"""

from __future__ import annotations

import bisect
import contextlib
import tomllib
from typing import Final

#: a path inside a document: table keys and array indexes
KeyPath = tuple[str | int, ...]

_BARE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_BLANK: Final = " \t"


class _Walker:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.found: dict[KeyPath, int] = {}
        #: arrays of tables seen so far, by path, with how many tables each has
        self.arrays: dict[KeyPath, int] = {}

    # --- characters ------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> str:
        index = self.at + ahead
        return self.text[index] if index < len(self.text) else ""

    def skip_blank(self) -> None:
        while self.peek() and self.peek() in _BLANK:
            self.at += 1

    def skip_comment(self) -> None:
        if self.peek() == "#":
            while self.peek() and self.peek() != "\n":
                self.at += 1

    def skip_space(self) -> None:
        """Blanks, newlines and comments (between array elements)."""
        while True:
            self.skip_blank()
            self.skip_comment()
            if self.peek() in ("\n", "\r"):
                self.at += 1
                continue
            return

    def record(self, path: KeyPath) -> None:
        self.found.setdefault(path, self.at)

    # --- strings and keys ------------------------------------------------------------------

    def string(self) -> str:
        """Skip a string of any of the four kinds; returns its source text."""
        start = self.at
        quote = self.peek()
        if self.text.startswith(quote * 3, self.at):
            self.at += 3
            while self.peek():
                if quote == '"' and self.peek() == "\\":
                    self.at += 2
                    continue
                if self.text.startswith(quote * 3, self.at):
                    self.at += 3
                    extra = 0
                    while self.peek() == quote and extra < 2:  # up to two quotes end the text
                        self.at += 1
                        extra += 1
                    break
                self.at += 1
            return self.text[start : self.at]
        self.at += 1
        while self.peek() and self.peek() != quote:
            if quote == '"' and self.peek() == "\\":
                self.at += 1
            self.at += 1
        self.at += 1
        return self.text[start : self.at]

    def key(self) -> tuple[list[str], int]:
        """A dotted key, and where it starts."""
        self.skip_blank()
        start = self.at
        parts: list[str] = []
        while True:
            self.skip_blank()
            if self.peek() in ('"', "'"):
                parts.append(tomllib.loads(f"k = {self.string()}")["k"])
            else:
                begin = self.at
                while self.peek() and self.peek() in _BARE:
                    self.at += 1
                if self.at == begin:
                    raise ValueError("no key here")
                parts.append(self.text[begin : self.at])
            self.skip_blank()
            if self.peek() != ".":
                return parts, start
            self.at += 1

    # --- values ----------------------------------------------------------------------------

    def value(self, path: KeyPath) -> None:
        char = self.peek()
        if char in ('"', "'"):
            self.string()
        elif char == "[":
            self.at += 1
            index = 0
            while True:
                self.skip_space()
                if self.peek() == "]" or not self.peek():
                    self.at += 1
                    return
                self.record((*path, index))
                self.value((*path, index))
                index += 1
                self.skip_space()
                if self.peek() == ",":
                    self.at += 1
        elif char == "{":
            self.at += 1
            while True:
                self.skip_space()
                if self.peek() == "}" or not self.peek():
                    self.at += 1
                    return
                if self.peek() == ",":
                    self.at += 1
                    continue
                self.key_value(path)
        else:  # a number, boolean or date: up to the next delimiter
            while self.peek() and self.peek() not in ",]}\n\r#":
                self.at += 1

    def key_value(self, table: KeyPath) -> None:
        parts, start = self.key()
        for end in range(1, len(parts) + 1):
            self.found.setdefault((*table, *parts[:end]), start)
        self.skip_blank()
        if self.peek() != "=":
            raise ValueError("no = after a key")
        self.at += 1
        self.skip_blank()
        self.value((*table, *parts))

    # --- the document ----------------------------------------------------------------------

    def header(self) -> KeyPath:
        """A [table] or [[array of tables]] header; returns the table's path."""
        start = self.at
        many = self.text.startswith("[[", self.at)
        self.at += 2 if many else 1
        parts, _ = self.key()
        self.skip_blank()
        self.at += 2 if many else 1
        resolved: list[str | int] = []
        for number, part in enumerate(parts):
            resolved.append(part)
            here = tuple(resolved)
            self.found.setdefault(here, start)
            if number < len(parts) - 1 and here in self.arrays:
                resolved.append(self.arrays[here] - 1)  # the array's latest table
        path = tuple(resolved)
        if many:
            count = self.arrays.get(path, 0)
            self.arrays[path] = count + 1
            path = (*path, count)
            self.found.setdefault(path, start)
        return path

    def document(self) -> None:
        table: KeyPath = ()
        while self.peek():
            self.skip_space()
            if not self.peek():
                return
            if self.peek() == "[":
                table = self.header()
            else:
                self.key_value(table)
            self.skip_blank()
            self.skip_comment()


class Positions:
    """The line and column (1-based) of each key and array element of a TOML document."""

    def __init__(self, text: str) -> None:
        walker = _Walker(text)
        # positions are a courtesy: what was found before a surprise stays usable
        with contextlib.suppress(ValueError, IndexError, tomllib.TOMLDecodeError):
            walker.document()
        self._offsets = walker.found
        self._lines = [index for index, char in enumerate(text) if char == "\n"]

    def of(self, path: KeyPath) -> tuple[int | None, int | None]:
        """Where ``path`` starts; for a path the document does not hold (a missing key), where
        its nearest enclosing table or element starts; (None, None) when nothing encloses it."""
        for end in range(len(path), 0, -1):
            offset = self._offsets.get(path[:end])
            if offset is not None:
                line = bisect.bisect_left(self._lines, offset)
                start = self._lines[line - 1] + 1 if line else 0
                return line + 1, offset - start + 1
        return None, None

    def line(self, path: KeyPath) -> int | None:
        return self.of(path)[0]
