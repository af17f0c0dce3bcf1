"""The judge-validation report for people: a text summary, Markdown, and one HTML page.

The HTML page is self-contained: its styles are inline and its plots (a confusion matrix as
a heat map, agreement and kappa as bars with their confidence intervals) are SVG drawn here,
so it opens offline and needs no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from blueprint.reports.judging import family_label

#: the plots' palette: enough contrast for text on every shade (WCAG AA)
_INK: Final = "#1b1f24"
_ACCENT: Final = "#0b5cad"
_MUTED: Final = "#57606a"
_PASS: Final = "#1a7f37"
_FAIL: Final = "#b42318"
_NEUTRAL: Final = "#57606a"


def number(value: float | None, signed: bool = False) -> str:
    """A statistic as the pages show it: three decimals, or "undefined"."""
    if value is None:
        return "undefined"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def interval(ci: Sequence[float] | None, signed: bool = False) -> str:
    if not ci:
        return "no interval"
    return f"[{number(ci[0], signed)}, {number(ci[1], signed)}]"


def statistic_lines(entry: Mapping[str, Any]) -> list[str]:
    """One line per statistic of a family (or the overall sample)."""
    lines = [
        f"agreement {number(entry['agreement']['value'])} {interval(entry['agreement']['ci'])}",
        f"kappa{' (quadratic-weighted)' if entry['kappa']['weights'] else ''}"
        f" {number(entry['kappa']['value'])} {interval(entry['kappa']['ci'])}",
    ]
    alpha = entry.get("alpha")
    if alpha is not None:
        lines.append(
            f"alpha among {len(alpha['raters'])} human raters ({alpha['level']})"
            f" {number(alpha['value'])} {interval(alpha['ci'])}"
        )
    bias = entry["bias"]
    lines.append(
        f"bias {number(bias['value'], signed=True)} {interval(bias['ci'], signed=True)}"
        f" ({bias['direction']}: judge mean {number(bias['judgeMean'])},"
        f" human mean {number(bias['humanMean'])})"
    )
    return lines


def render_text(report: Mapping[str, Any]) -> str:
    """The summary printed when no output file is named."""
    scale = report["scale"]
    raters = report["raters"]
    lines = [
        f"judge validation of {report['set']} from {report['labels']}"
        f" ({scale['kind']}, {len(raters)} human rater(s): {', '.join(raters)})"
    ]
    for entry in report["families"]:
        lines.append(
            f"family {family_label(entry['family'])}: {entry['labelled']} of {entry['rows']}"
            f" row(s) labelled, {entry['required']} needed: {entry['verdict']}"
        )
        lines += [f"  {line}" for line in statistic_lines(entry)]
        lines += [f"  - {reason}" for reason in entry["reasons"]]
    overall = report["overall"]
    lines.append(f"overall: {overall['labelled']} labelled case(s)")
    lines += [f"  {line}" for line in statistic_lines(overall)]
    for entry in report["unlabelledFamilies"]:
        lines.append(
            f"not labelled: family {family_label(entry['family'])}"
            f" ({entry['judgeRows']} llm-judge row(s))"
        )
    if report["notJudgeRows"]:
        lines.append(f"labelled but not graded by llm-judge: {', '.join(report['notJudgeRows'])}")
    lines.append(f"verdict: {report['verdict']}")
    return "\n".join(lines) + "\n"


# --- SVG plots ------------------------------------------------------------------------------


def confusion_svg(confusion: Mapping[str, Any], title: str) -> Markup:
    """The confusion matrix as a heat map: human labels in rows, the judge's in columns."""
    labels: list[str] = confusion["labels"]
    matrix: list[list[int]] = confusion["matrix"]
    cell = 44 if len(labels) <= 5 else 30
    left, top = 70, 50
    size = cell * len(labels)
    width, height = left + size + 10, top + size + 10
    peak = max((value for row in matrix for value in row), default=0) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" aria-labelledby="t-{escape(title)}">',
        f'<title id="t-{escape(title)}">{escape(title)}</title>',
        f'<text x="{left + size / 2}" y="14" text-anchor="middle" fill="{_MUTED}"'
        ' font-size="12">judge</text>',
        f'<text x="12" y="{top + size / 2}" text-anchor="middle" fill="{_MUTED}" font-size="12"'
        f' transform="rotate(-90 12 {top + size / 2})">human</text>',
    ]
    for index, label in enumerate(labels):
        middle = index * cell + cell / 2
        parts.append(
            f'<text x="{left + middle}" y="{top - 8}" text-anchor="middle" fill="{_INK}"'
            f' font-size="12">{escape(label)}</text>'
        )
        parts.append(
            f'<text x="{left - 8}" y="{top + middle + 4}" text-anchor="end" fill="{_INK}"'
            f' font-size="12">{escape(label)}</text>'
        )
    for row, values in enumerate(matrix):
        for column, value in enumerate(values):
            share = value / peak
            # light to dark blue; text turns white where the cell is dark
            shade = (
                f"rgb({int(235 - 190 * share)},{int(242 - 150 * share)},{int(250 - 77 * share)})"
            )
            ink = "#ffffff" if share > 0.55 else _INK
            x, y = left + column * cell, top + row * cell
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{shade}"'
                f' stroke="#ffffff"/>'
                f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" text-anchor="middle"'
                f' fill="{ink}" font-size="13">{value}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def bars_svg(
    rows: Sequence[tuple[str, float | None, Sequence[float] | None, float | None]], title: str
) -> Markup:
    """Horizontal bars on a 0-1 axis with a whisker for each interval and a tick for each
    threshold: ``(label, value, interval, threshold)`` per bar (kappa below 0 is drawn at 0;
    a bar with no threshold is drawn in a neutral colour, without a tick)."""
    # The labels are right-aligned against the axis: the margin grows with the longest (at
    # about 7 px a character at 12 px) so a long family id is not cut off at the left edge.
    longest = max((len(label) for label, *_ in rows), default=0)
    left, scale_width, bar, gap = max(170, 16 + 7 * longest), 300, 16, 14
    height = 30 + len(rows) * (bar + gap)
    width = left + scale_width + 70
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" aria-labelledby="b-{escape(title)}">',
        f'<title id="b-{escape(title)}">{escape(title)}</title>',
    ]
    for tick in (0, 0.5, 1):
        x = left + tick * scale_width
        parts.append(
            f'<line x1="{x}" y1="18" x2="{x}" y2="{height - 6}" stroke="#d0d7de"/>'
            f'<text x="{x}" y="12" text-anchor="middle" fill="{_MUTED}" font-size="11">'
            f"{tick}</text>"
        )

    def at(value: float) -> float:
        return left + max(0.0, min(1.0, value)) * scale_width

    for index, (label, value, ci, threshold) in enumerate(rows):
        y = 24 + index * (bar + gap)
        if threshold is None:
            colour = _NEUTRAL
        else:
            colour = _PASS if value is not None and value >= threshold else _FAIL
        parts.append(
            f'<text x="{left - 8}" y="{y + bar - 4}" text-anchor="end" fill="{_INK}"'
            f' font-size="12">{escape(label)}</text>'
        )
        if value is not None:
            parts.append(
                f'<rect x="{left}" y="{y}" width="{at(value) - left}" height="{bar}"'
                f' fill="{colour}" opacity="0.85"/>'
            )
        if ci:
            low, high = at(ci[0]), at(ci[1])
            middle = y + bar / 2
            parts.append(
                f'<line x1="{low}" y1="{middle}" x2="{high}" y2="{middle}" stroke="{_INK}"'
                f' stroke-width="1.5"/><line x1="{low}" y1="{y + 3}" x2="{low}"'
                f' y2="{y + bar - 3}" stroke="{_INK}"/><line x1="{high}" y1="{y + 3}"'
                f' x2="{high}" y2="{y + bar - 3}" stroke="{_INK}"/>'
            )
        if threshold is not None:
            mark = at(threshold)
            parts.append(
                f'<line x1="{mark}" y1="{y - 3}" x2="{mark}" y2="{y + bar + 3}"'
                f' stroke="{_ACCENT}" stroke-width="2" stroke-dasharray="3 2"/>'
            )
        parts.append(
            f'<text x="{left + scale_width + 8}" y="{y + bar - 4}" fill="{_INK}"'
            f' font-size="12">{escape(number(value))}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _plots(report: Mapping[str, Any]) -> dict[str, Any]:
    thresholds = report["thresholds"]
    rows: list[tuple[str, float | None, Sequence[float] | None, float]] = []
    for entry in report["families"]:
        label = family_label(entry["family"])
        rows.append(
            (
                f"{label} agreement",
                entry["agreement"]["value"],
                entry["agreement"]["ci"],
                thresholds["minAgreement"],
            )
        )
        rows.append(
            (
                f"{label} kappa",
                entry["kappa"]["value"],
                entry["kappa"]["ci"],
                thresholds["minKappa"],
            )
        )
    return {
        "bars": bars_svg(rows, "Agreement and kappa per case family, with intervals"),
        "confusion": {
            index: confusion_svg(
                entry["confusion"], f"Confusion matrix of {family_label(entry['family'])}"
            )
            for index, entry in enumerate(report["families"])
        },
    }


def _environment(autoescape: bool) -> Environment:
    environment = Environment(
        loader=PackageLoader("blueprint.reports", "templates"),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=autoescape,
    )
    environment.filters.update(
        number=number, interval=interval, family=family_label, lines=statistic_lines
    )
    return environment


def render_markdown(report: Mapping[str, Any]) -> str:
    template = _environment(autoescape=False).get_template("judge-report.md.j2")
    return template.render(report=report, cell=_markdown_cell)


def render_html(report: Mapping[str, Any]) -> str:
    template = _environment(autoescape=True).get_template("judge-report.html.j2")
    return template.render(report=report, plots=_plots(report))


def _markdown_cell(value: Any) -> str:
    """Text from the labels or the set, safe in a Markdown table cell."""
    text = str(value)
    for special in ("\\", "|", "*", "_", "`", "<", ">", "[", "]"):
        text = text.replace(special, "\\" + special)
    return text.replace("\n", " ")
