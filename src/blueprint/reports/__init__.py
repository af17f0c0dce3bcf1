"""What Blueprint tells people about a set: summary, risk, the rendered blueprint, judge
reports, PR reviews and the findings' report formats. May import ``project`` and below."""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Final

#: the public names of the old ``blueprint.reports`` module
_WRITERS: Final = frozenset(
    {
        "json_pieces",
        "render_github",
        "render_json",
        "render_junit",
        "render_junit_many",
        "validation_suite",
        "github_annotation",
        "github_command",
    }
)


def __getattr__(name: str) -> Any:
    # ``blueprint.reports`` was the module of the findings' report formats, now
    # ``blueprint.reports.writers``: its names still resolve here for one release
    if name not in _WRITERS:
        raise AttributeError(f"module 'blueprint.reports' has no attribute {name!r}")
    warnings.warn(
        f"blueprint.reports.{name} has moved to blueprint.reports.writers.{name}; the old path "
        "goes in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("blueprint.reports.writers"), name)
