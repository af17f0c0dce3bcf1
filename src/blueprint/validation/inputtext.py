"""The normalised text of a row's input, the key and the shingles that duplicate checks compare.

An input is a string, an object of named inputs, or a list of chat messages. Each becomes one
canonical text (object keys sorted, one ``role: content`` line per message), which is then
normalised: Unicode NFKC, case folded, punctuation turned into spaces (except between two
digits, so ``3.5`` and ``35`` stay apart), whitespace collapsed. Two inputs whose normalised
texts are equal are exact duplicates. Near-duplicates are compared by the Jaccard similarity of
their shingles: the words and the pairs of adjacent words of the normalised text.

Nothing here imports datasketch: the validator uses the exact key on every row.
"""

from __future__ import annotations

import itertools
import re
import string
import unicodedata
import zlib
from array import array
from collections.abc import Collection
from functools import cache
from typing import Any, Final

from blueprint.io.firstseen import bytes_key
from blueprint.io.jsonvalues import dumps_text

#: inputs with fewer words than this are compared exactly only: at that length one changed
#: word makes another question ("refund order 12" is not "refund order 13")
MIN_WORDS_FOR_NEAR: Final = 4

#: the roles whose messages set up a conversation rather than pose the case; near-duplicates
#: leave them out, because one shared system prompt would make every chat row look alike
_SETUP_ROLES: Final = frozenset({"system", "developer"})

# one punctuation character at a time (not symbols such as $ + = <): the ASCII ones, and,
# in other texts, anything neither a word character nor a space (the category decides)
_ASCII_PUNCTUATION: Final = re.compile(
    "["
    + re.escape("".join(c for c in string.punctuation if unicodedata.category(c)[0] == "P"))
    + "]"
)
_NOT_WORD: Final = re.compile(r"[^\w\s]|_")


def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("role"), str) and "content" in item


def is_chat(value: Any) -> bool:
    """Whether an input is a list of chat messages ``{role, content}``."""
    return isinstance(value, list) and bool(value) and all(_is_message(item) for item in value)


def _content_text(content: Any) -> str:
    # a content list holds parts: text parts by their text, others (images) as JSON
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else _canonical(part)
            for part in content
        )
    return _canonical(content)


def _message_text(message: dict[str, Any]) -> str:
    content = message["content"]
    said = f"{message['role']}: {content if type(content) is str else _content_text(content)}"
    if len(message) == 2:  # role and content alone
        return said
    # tool calls and names make two messages with the same words different messages
    lines = [said]
    lines.extend(
        f"{key}: {_canonical(message[key])}"
        for key in sorted(message)
        if key not in ("role", "content")
    )
    return "\n".join(lines)


def _canonical(value: Any) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    if is_chat(value):
        return "\n".join([_message_text(message) for message in value])
    if isinstance(value, dict):
        return "\n".join(
            [
                f"{key}: {item if type(item := value[key]) is str else _canonical(item)}"
                for key in sorted(value)
            ]
        )
    if isinstance(value, list):
        return "\n".join([_canonical(item) for item in value])
    if isinstance(value, str):  # a str subclass
        return str(value)
    return dumps_text(value)


def canonical_text(value: Any, *, near: bool = False) -> str:
    """The text of an input before normalisation; with ``near``, chat set-up messages
    (system, developer) are left out when the conversation has any other message."""
    if near and is_chat(value):
        posed = [message for message in value if message["role"] not in _SETUP_ROLES]
        if posed:
            value = posed
    return _canonical(value)


def _kept(text: str, start: int, char: str) -> bool:
    """Whether punctuation belongs to a number: between two digits (3.5, 1,000, 10:30,
    2024-06-01), or a sign or point that starts one (-5, .5)."""
    return _keeps(char, text[start - 1] if start else "", text[start + 1 : start + 2])


def _keeps(char: str, before: str, after: str) -> bool:
    """:func:`_kept` for punctuation ``char`` between ``before`` and ``after`` ("" at an end)."""
    if not after.isdecimal():
        return False
    if before.isdecimal():
        return True
    return char in "-." and not (before.isalnum() or before in ("_", ".", ","))


def _ascii_replacement(match: re.Match[str]) -> str:
    char = match.group()
    return char if _kept(match.string, match.start(), char) else " "


def _replacement(match: re.Match[str]) -> str:
    char = match.group()
    if unicodedata.category(char)[0] != "P":
        return char  # a symbol ($, +, =, an emoji) means something
    return char if _kept(match.string, match.start(), char) else " "


def _not_kept(punctuation: str) -> re.Pattern[str]:
    """One of ``punctuation`` that does not belong to a number (see ``_kept``): the same
    decision as ``_kept``, made by the regular expression engine instead of a call per match.
    After the character: no digit follows, or the one before is no digit and the character is
    no sign or point that starts a number (``\\d`` is ``isdecimal``, ``\\w`` ``isalnum`` or _)."""
    members = "[" + re.escape(punctuation) + "]"
    return re.compile(rf"{members}(?:(?!\d)|(?<!\d.)(?:(?<![-.])|(?<=[\w.,].)))")


#: a character beyond the Basic Multilingual Plane (searching is faster than ``max``)
_BEYOND_BMP: Final = re.compile("[\U00010000-\U0010ffff]")


@cache
def _bmp_not_kept() -> re.Pattern[str]:
    # every punctuation character of the Basic Multilingual Plane that _NOT_WORD finds;
    # built on first use (a few milliseconds), as texts beyond it take the slower way
    return _not_kept(
        "".join(
            char
            for char in map(chr, range(0x10000))
            if unicodedata.category(char)[0] == "P" and _NOT_WORD.fullmatch(char)
        )
    )


def normalize(text: str) -> str:
    """NFKC, case folded, punctuation-only differences removed, whitespace collapsed.

    A text that is nothing but punctuation keeps it ("?" is not "!").
    """
    return normalized_bytes(text).decode("utf-8", "surrogatepass")


def normalized_bytes(text: str) -> bytes:
    """:func:`normalize`, as UTF-8 bytes (what the duplicate key hashes).

    Most texts take one pass of C-level byte operations: folded, the text is encoded, every
    ASCII punctuation byte becomes a space in one ``bytes.translate``, and only the places
    where punctuation meets a digit or a non-ASCII character are looked at one by one (UTF-8
    never puts an ASCII byte inside another character). A text holding punctuation or white
    space beyond ASCII takes the regular expressions.
    """
    if text.isascii():  # NFKC leaves ASCII alone, and folding it is lowering it
        folded = text.lower()
    else:
        # case folding can undo NFKC (a folded letter may compose again), hence NFKC twice
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        if not _only_ascii_punctuation(folded):
            return _normalized_by_expression(folded).encode("utf-8", "surrogatepass")
    raw = folded.encode("utf-8", "surrogatepass")
    stripped = b" ".join(_without_punctuation(raw).split())
    return stripped or " ".join(folded.split()).encode("utf-8", "surrogatepass")


def _only_ascii_punctuation(folded: str) -> bool:
    """Whether the punctuation and white space of a folded text are all ASCII."""
    for match in _beyond_ascii_special().finditer(folded):
        char = match.group()
        if char < "\U00010000" or unicodedata.category(char)[0] == "P":
            return False
    return True


def _without_punctuation(raw: bytes) -> bytes:
    """The UTF-8 text ``raw`` with its ASCII punctuation turned into spaces, but for what
    belongs to a number (see ``_kept``)."""
    stripped = raw.translate(_PUNCTUATION_AS_SPACE)
    classes = raw.translate(_BYTE_CLASSES)
    if b"pd" not in classes and b"pu" not in classes:
        return stripped  # no punctuation is followed by a digit or a character beyond ASCII
    kept = bytearray(stripped)
    at = classes.find(b"pd")
    while at >= 0:  # punctuation before an ASCII digit
        before = classes[at - 1] if at else _OTHER
        if before == _NON_ASCII:
            keeps = _keeps(chr(raw[at]), _char_before(raw, at), "0")
        else:
            keeps = before == _DIGIT or (
                raw[at] in b"-." and before not in b"da" and (not at or raw[at - 1] not in b"_.,")
            )
        if keeps:
            kept[at] = raw[at]
        at = classes.find(b"pd", at + 1)
    at = classes.find(b"pu")
    while at >= 0:  # punctuation before a character beyond ASCII: kept before a digit only
        after = _char_at(raw, at + 1)
        if after.isdecimal() and _keeps(chr(raw[at]), _char_before(raw, at), after):
            kept[at] = raw[at]
        at = classes.find(b"pu", at + 1)
    return bytes(kept)


def _char_at(raw: bytes, start: int) -> str:
    """The character of UTF-8 text ``raw`` that starts at byte ``start``."""
    lead = raw[start]
    size = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return raw[start : start + size].decode("utf-8", "surrogatepass")


def _char_before(raw: bytes, end: int) -> str:
    """The character of UTF-8 text ``raw`` that ends before byte ``end`` ("" at the start)."""
    start = end - 1
    while start > 0 and 0x80 <= raw[start] < 0xC0:  # back over continuation bytes
        start -= 1
    return raw[max(start, 0) : end].decode("utf-8", "surrogatepass")


# the class of each byte for _without_punctuation: a digit, a letter (or _, which \w counts),
# ASCII punctuation, a byte of a non-ASCII character, or anything else
_DIGIT: Final = ord("d")
_NON_ASCII: Final = ord("u")
_OTHER: Final = ord("x")
_WORD_CLASSES: Final = b"da"


def _byte_class(byte: int) -> int:
    char = chr(byte)
    if byte >= 0x80:
        return _NON_ASCII
    if char.isdecimal():
        return _DIGIT
    if char == "_":  # punctuation, but a word character to the rule about signs
        return ord("p")
    if char.isalpha():
        return ord("a")
    return ord("p") if unicodedata.category(char)[0] == "P" else ord("x")


_BYTE_CLASSES: Final = bytes(_byte_class(byte) for byte in range(256))
#: ASCII punctuation to a space; the ASCII separators \x1c-\x1f too, which ``str.split``
#: counts as white space and ``bytes.split`` does not
_PUNCTUATION_AS_SPACE: Final = bytes(
    ord(" ") if _BYTE_CLASSES[byte] == ord("p") or 0x1C <= byte <= 0x1F else byte
    for byte in range(256)
)


@cache
def _beyond_ascii_special() -> re.Pattern[str]:
    # white space and punctuation beyond ASCII in the Basic Multilingual Plane (as _NOT_WORD
    # finds it), and every character beyond it, whose category is looked up one by one
    return re.compile(
        "["
        + re.escape(
            "".join(
                char
                for char in map(chr, range(0x80, 0x10000))
                if char.isspace()
                or (unicodedata.category(char)[0] == "P" and _NOT_WORD.fullmatch(char))
            )
        )
        + "\U00010000-\U0010ffff]"
    )


def _normalized_by_expression(folded: str) -> str:
    """The punctuation of a folded text beyond ASCII, decided by the regular expressions."""
    if _BEYOND_BMP.search(folded) is None:
        stripped = " ".join(_bmp_not_kept().sub(" ", folded).split())
    else:
        stripped = " ".join(_NOT_WORD.sub(_replacement, folded).split())
    return stripped or " ".join(folded.split())


def normalize_by_character(text: str) -> str:
    """:func:`normalize`, deciding each punctuation character by a call: the reference that
    the faster expressions of :func:`normalize` are tested against."""
    if text.isascii():
        folded = text.lower()
        stripped = " ".join(_ASCII_PUNCTUATION.sub(_ascii_replacement, folded).split())
    else:
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
        stripped = " ".join(_NOT_WORD.sub(_replacement, folded).split())
    return stripped or " ".join(folded.split())


def comparable_text(value: Any, *, near: bool = False) -> str | None:
    """The normalised canonical text of an input; None when there is nothing to compare
    (no input, null, an empty string or container)."""
    text = normalize(canonical_text(value, near=near))
    return text or None


def input_key(value: Any) -> int | None:
    """The exact-duplicate key of an input (the :func:`text_key` of its comparable text);
    None when it has nothing to compare."""
    normal = normalized_bytes(canonical_text(value))
    return bytes_key(normal) if normal else None


def shingles(words: list[str]) -> set[str]:
    """The words and the pairs of adjacent words: order counts a little, one word a lot."""
    found = set(words)
    found.update(f"{first} {second}" for first, second in itertools.pairwise(words))
    return found


def shingle_hashes(words: list[str]) -> array[int]:
    """The shingles as sorted, distinct 32-bit hashes: compact to keep, and exact to compare
    (two distinct shingles of two inputs share a hash about once in four billion pairs)."""
    # CRC-32 is fast and stable across runs; MinHash mixes its bits again before permuting
    return array(
        "I",
        sorted(
            {zlib.crc32(shingle.encode("utf-8", "surrogatepass")) for shingle in shingles(words)}
        ),
    )


def jaccard(first: set[int], second: Collection[int]) -> float:
    """The Jaccard similarity of two sets of shingle hashes (``second`` holds distinct ones)."""
    if not first and not second:
        return 1.0
    shared = len(first.intersection(second))
    return shared / (len(first) + len(second) - shared)


def split_of(row: Any) -> str | None:
    """The split a raw row says it belongs to (``metadata.split``), when it is a string."""
    metadata = row.get("metadata") if isinstance(row, dict) else None
    split = metadata.get("split") if isinstance(metadata, dict) else None
    return split if isinstance(split, str) else None
