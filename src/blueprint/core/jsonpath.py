"""JSON paths (``$.rows[3].metadata.case.evaluator``) for issue locations."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

_IDENTIFIER: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def join(base: str, parts: Iterable[str | int]) -> str:
    """Extend a JSON path with keys and indexes."""
    path = base
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _IDENTIFIER.match(part):
            path += f".{part}"
        else:
            escaped = part.replace("\\", "\\\\").replace("'", "\\'")
            path += f"['{escaped}']"
    return path


def row_path(index: int, *parts: str | int) -> str:
    return join(f"$.rows[{index}]", parts)
