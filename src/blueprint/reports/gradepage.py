"""``blueprint grade --report html``: one self-contained page of a grade report, with each
oracle type's and case family's pass rate and interval drawn as inline SVG (nothing fetched,
no script)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from blueprint.reports.judgepages import bars_svg


def _rate(group: Mapping[str, Any]) -> float | None:
    scored = group.get("pass", 0) + group.get("fail", 0)
    return group["pass"] / scored if scored else None


def _shown_rate(group: Mapping[str, Any]) -> str:
    rate = _rate(group)
    return "-" if rate is None else f"{rate:.0%}"


def _shown_interval(group: Mapping[str, Any]) -> str:
    interval = group.get("interval")
    if not interval:
        return ""
    return f"{interval['low']:.0%} to {interval['high']:.0%} ({interval['method']})"


def _shown_bound(group: Mapping[str, Any]) -> str:
    bound = group.get("failureBound")
    return "" if bound is None else f"{bound:.1%}"


def _plot(groups: Mapping[str, Mapping[str, Any]], title: str) -> Any:
    rows = []
    for name, group in groups.items():
        interval = group.get("interval")
        low_high = (interval["low"], interval["high"]) if interval else None
        rows.append((name, _rate(group), low_high, None))
    return bars_svg(rows, title)


def render_html(report: Mapping[str, Any], name: str, confidence: float) -> str:
    """The page of a grade report's JSON (:meth:`GradeReport.to_json`)."""
    environment = Environment(
        loader=PackageLoader("blueprint.reports", "templates"),
        undefined=StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    summary = report["summary"]
    groups = [
        (
            title,
            key,
            _plot(summary[key], f"Pass rate by {title}, with {confidence:.0%} intervals"),
        )
        for title, key in (("oracle type", "byOracleType"), ("case family", "byCaseFamily"))
    ]
    return environment.get_template("grade-report.html.j2").render(
        name=name,
        summary=summary,
        gates=report["gates"],
        confidence=f"{confidence:.0%}",
        groups=groups,
        rate=_shown_rate,
        interval=_shown_interval,
        bound=_shown_bound,
    )
