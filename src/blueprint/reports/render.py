"""A set rendered for the people who review it: one self-contained HTML page, or Markdown.

The page holds everything inline (CSS and SVG; no script, font or image is fetched), is
autoescaped (a row holding ``<script>`` shows as text), and marks every starter row as an
example with a badge and words, never by colour alone. Every count on it carries a
``data-key`` attribute: the JSON path of the same number in ``blueprint summary --report
json``, so a test (or a person) can check the page against the summary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from markupsafe import Markup

from blueprint.core.errors import UsageError
from blueprint.core.version import package_version
from blueprint.io.atomic import AtomicOutputs
from blueprint.reports.risk import BLAST_RADII, MEANINGS, NOT_STATED, REVERSIBILITY, RiskMatrix
from blueprint.reports.summary import NONE, SetSummary

if TYPE_CHECKING:
    from jinja2 import Environment

#: the output an extension means
PAGE_KINDS: Final[dict[str, str]] = {
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
}

#: the colours of the provenance bar, each with a pattern so that colour is not the only cue
_GROUP_STYLE: Final = {
    "gold": ("#1f6f43", "gold (authored, observed or sampled)"),
    "starter": ("#8a5a00", "starter examples, not validated gold"),
    "imported": ("#3d4f9f", "imported, not yet reviewed"),
}


def _key(*parts: Any) -> Markup:
    """A data-key attribute: the JSON path of a count in the summary's JSON report."""
    return Markup(' data-key="{}"').format(json.dumps(list(parts)))


def _html_environment() -> Environment:
    # jinja2 is imported by the commands that render, not at start-up
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    environment = Environment(
        loader=PackageLoader("blueprint.reports", "templates"),
        undefined=StrictUndefined,
        autoescape=select_autoescape(["html", "html.j2"], default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["key"] = _key
    return environment


# Markdown: every ASCII punctuation character that Markdown or inline HTML acts on is
# backslash-escaped (CommonMark allows it before any of them), so a row holding "<script>" or
# "*bold*" reads as the characters it holds
_MARKDOWN_ACTIVE: Final = re.compile(r"([\\`*_\[\]<>#|~&])")


def _md(value: Any) -> str:
    if value is None:
        return "—"
    text = " ".join(str(value).split())
    return _MARKDOWN_ACTIVE.sub(r"\\\1", text)


def _markdown() -> Environment:
    from blueprint.reports.templating import markdown_environment

    environment = markdown_environment()
    environment.filters["md"] = _md
    return environment


def _context(summary: SetSummary, *, with_rows: bool) -> dict[str, Any]:
    total = summary.rows or 1
    bars = []
    offset = 0.0
    for group, (colour, label) in _GROUP_STYLE.items():
        count = summary.by_group.get(group, 0)
        width = 100.0 * count / total
        bars.append(
            {
                "group": group,
                "label": label,
                "count": count,
                "colour": colour,
                "x": round(offset, 3),
                "width": round(width, 3),
            }
        )
        offset += width
    return {
        "s": summary,
        "data": summary.to_json(),
        "with_rows": with_rows,
        "bars": bars,
        "reversibility": [*REVERSIBILITY, NOT_STATED],
        "radii": [*BLAST_RADII, NOT_STATED],
        "meanings": MEANINGS,
        "unset": NONE,
        "version": package_version(),
    }


def render_html(summary: SetSummary) -> str:
    """The blueprint page: one self-contained HTML document."""
    template = _html_environment().get_template("blueprint.html.j2")
    return template.render(**_context(summary, with_rows=True))


def render_markdown(summary: SetSummary, *, with_rows: bool = True) -> str:
    """The blueprint in GitHub-flavoured Markdown; ``with_rows`` adds each family's rows."""
    template = _markdown().get_template("blueprint.md.j2")
    return template.render(**_context(summary, with_rows=with_rows))


def render_risk_markdown(matrix: RiskMatrix, source: str) -> str:
    template = _markdown().get_template("risk.md.j2")
    return template.render(
        risk=matrix,
        source=source,
        reversibility=[*REVERSIBILITY, NOT_STATED],
        radii=[*BLAST_RADII, NOT_STATED],
        meanings=MEANINGS,
    )


def page_kind(path: Path) -> str:
    kind = PAGE_KINDS.get(path.suffix.lower())
    if kind is None:
        known = ", ".join(PAGE_KINDS)
        raise UsageError(
            f"{path}: render writes HTML or Markdown, named by the extension ({known})"
        )
    return kind


def write_page(summary: SetSummary, path: Path, *, force: bool = False) -> str:
    """Write the page the extension of ``path`` names, atomically; returns its kind."""
    kind = page_kind(path)
    text = render_html(summary) if kind == "html" else render_markdown(summary)
    with AtomicOutputs([path], force=force) as outputs:
        outputs.open(path, "wb").write(text.encode("utf-8"))
    return kind
