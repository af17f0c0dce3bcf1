"""The bounds every reader keeps to, so that no input can make Blueprint hang or exhaust memory.

Each limit has a default that real golden sets stay far inside. A user with an unusual set
raises one with an environment variable (``BLUEPRINT_MAX_DEPTH=512``) or in the project
configuration's ``[limits]`` table; readers ask :func:`current` when they start, and a value
past a limit is refused with a message naming the file, the line and the limit to raise.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from typing import Final

from blueprint.core.errors import UsageError


@dataclass(frozen=True)
class Limits:
    """How far a reader may go. ``0`` for the size limits means no limit."""

    #: arrays and objects nested in one value (JSON, YAML, TOML alike)
    max_depth: int = 128
    #: bytes in one file Blueprint reads (0: no limit; sets of 10^7 rows are many GB)
    max_file_bytes: int = 0
    #: rows in one set (0: no limit)
    max_rows: int = 0
    #: bytes in one CSV cell or one JSONL line
    max_cell_bytes: int = 64 * 1024 * 1024
    #: nodes a YAML document may expand to once its aliases are followed; an alias bomb of a
    #: few hundred bytes would otherwise expand to billions
    max_alias_nodes: int = 1_000_000
    #: files one promptfoo configuration may pull in through ``file://`` references and
    #: includes, counted after following every include
    max_included_files: int = 10_000
    #: digits in one number; longer ones are refused rather than rounded or turned into text
    max_number_digits: int = 4300


#: environment variable for each limit: BLUEPRINT_MAX_DEPTH, BLUEPRINT_MAX_FILE_BYTES, ...
ENV_PREFIX: Final = "BLUEPRINT_"

_overrides: dict[str, int] = {}
_VARIABLES: Final = tuple(ENV_PREFIX + item.name.upper() for item in fields(Limits))
#: the limits last worked out, with what they were worked out from (readers ask often)
_last: tuple[tuple[object, ...], Limits] | None = None


def names() -> list[str]:
    """The limits, by their configuration key (``max-depth``)."""
    return [item.name.replace("_", "-") for item in fields(Limits)]


def _from_environment() -> dict[str, int]:
    found: dict[str, int] = {}
    for item in fields(Limits):
        variable = ENV_PREFIX + item.name.upper()
        text = os.environ.get(variable)
        if text is None or not text.strip():
            continue
        found[item.name] = _parse(text, variable)
    return found


def _parse(text: str, where: str) -> int:
    try:
        value = int(text.strip().replace("_", ""))
    except ValueError:
        raise UsageError(f"{where}: a limit is a whole number, not {text!r}") from None
    if value < 0:
        raise UsageError(f"{where}: a limit cannot be negative ({value})")
    return value


def current() -> Limits:
    """The limits in force: defaults, then the project configuration, then the environment."""
    global _last
    environ = os.environ
    key = (tuple(_overrides.items()), *[environ.get(name) for name in _VARIABLES])
    if _last is not None and _last[0] == key:
        return _last[1]
    found = replace(Limits(), **{**_overrides, **_from_environment()})
    _last = (key, found)
    return found


def configure(values: Mapping[str, int], *, where: str = "limits") -> None:
    """Set limits for this process (the project configuration's ``[limits]`` table).

    Keys are the configuration names (``max-depth``) or the field names (``max_depth``).
    """
    known = {item.name for item in fields(Limits)}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in known:
            raise UsageError(f"{where}: unknown limit {key!r}; known limits: {', '.join(names())}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"{where}.{key}: a limit is a whole number of zero or more")
        _overrides[name] = value


@contextmanager
def overridden(**values: int) -> Iterator[Limits]:
    """Limits changed for the duration of a block (tests, and library callers)."""
    saved = dict(_overrides)
    try:
        configure(values)
        yield current()
    finally:
        _overrides.clear()
        _overrides.update(saved)


def exceeded(name: str, value: int) -> bool:
    """Whether ``value`` passes the limit ``name`` (a size limit of 0 is no limit)."""
    limit: int = getattr(current(), name)
    return limit != 0 and value > limit


def hint(name: str) -> str:
    """How a user raises a limit, for the end of a refusal message."""
    return (
        f"raise it with {ENV_PREFIX}{name.upper()} or `{name.replace('_', '-')}`"
        " in the configuration's [limits] table"
    )
