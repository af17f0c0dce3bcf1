"""The jinja2 environment every Markdown page Blueprint renders is made with."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined


def markdown_environment() -> Environment:
    """Templates from ``blueprint/templates``, strict about undefined names, not escaped
    (Markdown is not HTML; each template escapes what it must)."""
    return Environment(
        loader=PackageLoader("blueprint.reports", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
