"""Where the data Blueprint ships is found: inside the installed package, or in a checkout."""

from __future__ import annotations

from pathlib import Path
from typing import Final

#: the ``blueprint`` package folder
PACKAGE: Final = Path(__file__).resolve().parents[1]


def shipped_folders(name: str) -> tuple[Path, Path]:
    """The two places a shipped folder (``packs``, ``exporters``, ``schemas``) may be, in the
    order they are tried: the wheel's copy (``blueprint/_NAME``), then a source checkout's
    top-level ``NAME/``."""
    return PACKAGE / f"_{name}", PACKAGE.parents[1] / name
