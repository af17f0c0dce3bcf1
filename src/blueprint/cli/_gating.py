"""How ``blueprint grade`` shows a comparison with a baseline run and the gates: text lines for
a terminal, Markdown for a pull-request comment, JUnit test cases and GitHub annotations."""

from __future__ import annotations

from collections.abc import Sequence
from xml.etree import ElementTree

from blueprint.grading.compare import Comparison, GroupComparison
from blueprint.grading.gates import GateFailure
from blueprint.reports.writers import github_command

#: how many rows of one change the text and Markdown name before "and N more"
_SHOWN = 20


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _difference(group: GroupComparison) -> str:
    if group.difference is None:
        return "-"
    if group.interval is None:
        return f"{group.difference:+.1%}"
    low, high = group.interval
    return f"{group.difference:+.1%} [{low:+.1%}, {high:+.1%}]"


def _names(ids: Sequence[str]) -> str:
    more = f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else ""
    return ", ".join(ids[:_SHOWN]) + more


def comparison_lines(comparison: Comparison) -> list[str]:
    """The comparison in a few lines: what changed, then each group's paired difference."""
    counts = comparison.counts()
    lines = [
        "against the baseline run (rows paired on id; starter examples apart):",
        "  "
        + ", ".join(f"{counts[name]} {name}" for name in counts if counts[name])
        + ("" if any(counts.values()) else "no rows"),
    ]
    for change in ("pass->fail", "fail->pass", "new-only", "baseline-only"):
        ids = [row.id for row in comparison.rows_with(change)]
        if ids:
            lines.append(f"  {change}: {_names(ids)}")
    confidence = f"{comparison.confidence:.0%}"
    for title, groups in (
        ("by oracle type", comparison.by_oracle_type),
        ("by case family", comparison.by_case_family),
    ):
        lines.append(f"  {title} (paired difference, {confidence} interval; McNemar's p):")
        for name, group in groups.items():
            if not group.paired:
                lines.append(f"    {name}: no row scored in both runs")
                continue
            p = "-" if group.mcnemar_p is None else f"{group.mcnemar_p:.3g}"
            mark = "  DROPPED" if group.dropped else ""
            lines.append(
                f"    {name}: {_percent(group.baseline_rate)} -> {_percent(group.new_rate)}"
                f" {_difference(group)} over {group.paired} row(s), p {p}{mark}"
            )
    return lines


def gate_lines(failures: Sequence[GateFailure]) -> list[str]:
    if not failures:
        return ["gates: all pass"]
    return [
        f"gate failed: {failure.gate} ({failure.subject}): {failure.reason}" for failure in failures
    ]


def comparison_markdown(comparison: Comparison | None, failures: Sequence[GateFailure]) -> str:
    """A section for a pull-request comment: the gates, then the paired differences."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["## Gates", ""]
    if failures:
        lines += ["| gate | about | why |", "|---|---|---|"]
        lines += [
            f"| {failure.gate} | {cell(failure.subject)} | {cell(failure.reason)} |"
            for failure in failures
        ]
    else:
        lines.append("Every gate passes.")
    if comparison is not None:
        counts = comparison.counts()
        lines += [
            "",
            "## Against the baseline run",
            "",
            ", ".join(f"{counts[name]} {name}" for name in counts if counts[name]) or "no rows",
            "",
        ]
        worse = [row.id for row in comparison.rows_with("pass->fail")]
        if worse:
            lines += [f"Pass to fail: {cell(_names(worse))}", ""]
        confidence = f"{comparison.confidence:.0%}"
        for title, groups in (
            ("Oracle type", comparison.by_oracle_type),
            ("Case family", comparison.by_case_family),
        ):
            lines += [
                f"| {title} | paired rows | baseline | new | difference ({confidence}) |"
                " pass→fail | fail→pass | McNemar p |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for name, group in groups.items():
                p = "-" if group.mcnemar_p is None else f"{group.mcnemar_p:.3g}"
                lines.append(
                    f"| {cell(name)} | {group.paired} | {_percent(group.baseline_rate)} |"
                    f" {_percent(group.new_rate)} | {_difference(group)} |"
                    f" {group.pass_to_fail} | {group.fail_to_pass} | {p} |"
                )
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def add_gate_cases(suite: ElementTree.Element, failures: Sequence[GateFailure]) -> int:
    """One failed test case a failed gate, in the JUnit suite; how many were added."""
    for failure in failures:
        case = ElementTree.SubElement(
            suite, "testcase", name=f"{failure.gate}: {failure.subject}", classname="gates"
        )
        ElementTree.SubElement(case, "failure", message=failure.reason, type=failure.gate)
    return len(failures)


def gate_annotations(source: str, failures: Sequence[GateFailure]) -> list[str]:
    """A GitHub workflow error annotation a failed gate, on the set."""
    return [
        github_command("error", source, f"blueprint grade: {failure.gate}", failure.reason)
        for failure in failures
    ]
