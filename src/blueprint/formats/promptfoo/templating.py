"""Keeping text literal through promptfoo's template handling (Nunjucks, vars, file loading)."""

from __future__ import annotations

import re
from typing import Any, Final

from blueprint.io import jsonvalues

# promptfoo renders var values and assertion values with Nunjucks, substitutes {{name}} for
# known vars before that, and loads strings that start with file:// or package:. A "{" that
# opens a tag is therefore written as the expression {{ "{" }}, which renders back to "{" and
# leaves nothing for the substitution to find; the "#" of a stray comment closer "#}" (an
# error for Nunjucks) is written {{ "#" }}; a leading file:// or package: gets an empty
# expression in front. Rendering gives back exactly the original text.

_SPECIAL: Final = re.compile(r"\{(?=[{%#])|#(?=\})")
_BRACE: Final = '{{ "{" }}'
_HASH: Final = '{{ "#" }}'
_ESCAPED: Final = re.compile(re.escape(_BRACE) + "|" + re.escape(_HASH))
_LOADED_PREFIXES: Final = ("file://", "package:")
_GUARD: Final = '{{ "" }}'
_TEMPLATE: Final = re.compile(r"\{[{%#]")


def literal(text: str) -> str:
    """Text that promptfoo's template handling turns back into exactly ``text``."""
    escaped = _SPECIAL.sub(lambda match: _BRACE if match.group() == "{" else _HASH, text)
    if escaped.startswith(_LOADED_PREFIXES):
        escaped = _GUARD + escaped
    return escaped


def unliteral(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    # one pass, left to right, so text that happens to read {{ "#" }} stays as it was
    return _ESCAPED.sub(
        lambda match: "{" if match.group() == _BRACE else "#", value.removeprefix(_GUARD)
    )


def risky(value: Any) -> bool:
    """Whether promptfoo would load a string somewhere inside the value as a file or package."""
    if isinstance(value, str):
        return value.startswith(_LOADED_PREFIXES)
    if not isinstance(value, dict | list):
        return False
    # a string that starts so is, in JSON, a quote and the prefix; the JSON text without one
    # (nearly every value) is answered by one search, without a walk through the value
    try:
        encoded = jsonvalues.dumps(value)
    except ValueError:
        return _risky_inside(value)
    return any(mark in encoded for mark in _LOADED_MARKS) and _risky_inside(value)


_LOADED_MARKS: Final = tuple(b'"' + prefix.encode() for prefix in _LOADED_PREFIXES)


def _risky_inside(value: Any) -> bool:
    if isinstance(value, str):
        return value.startswith(_LOADED_PREFIXES)
    if isinstance(value, dict):
        return any(_risky_inside(key) or _risky_inside(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_risky_inside(item) for item in value)
    return False
