"""blueprint grade's reports of a run of several trials: each row's verdict in each trial,
and the trials' figures by oracle type and case family. A run of one trial shows none of it."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

from blueprint.grading.report import GradeReport
from blueprint.grading.trials import LETTERS, RowTrials, TrialRun

#: how each letter of a row's trials reads
LEGEND = ", ".join(f"{letter} {verdict}" for verdict, letter in LETTERS.items())
#: how a row's own verdict is decided over its trials
RULE = "a row passes only when every scored trial passes (pass^n)"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def row_note(trials: RowTrials, k: int) -> str:
    """A row's trials on its line: ``[trials PFP, 2/3 pass, pass@2 1.00, pass^2 0.33]``, the
    k figures only where k is neither 1 nor the row's n."""
    n = trials.scored
    parts = [f"trials {trials.letters()}", f"{trials.passed}/{n} pass" if n else "none scored"]
    if n and k not in (1, n):
        parts += [
            f"pass@{k} {_number(trials.pass_at(k))}",
            f"pass^{k} {_number(trials.pass_hat(k))}",
        ]
    return f" [{', '.join(parts)}]"


def _group(figures: dict[str, Any], k: int) -> str:
    if not figures["rows"]:
        return "no row scored in any trial"
    at = str(k)
    return (
        f"share passed {_share(figures['sharePassed'])}, pass@1 {_share(figures['passAt']['1'])},"
        f" pass@{k} {_share(figures['passAt'][at])}, pass^{k} {_share(figures['passHat'][at])}"
        f" ({figures['rows']} row(s) scored; {figures['rowsAt'][at]} with {k} or more"
        " scored trials)"
    )


def text_lines(graded: GradeReport, summary: dict[str, Any]) -> list[str]:
    """The summary's lines about the trials (none for a run of one trial)."""
    run = graded.trials
    if run is None:
        return []
    labels = ", ".join(label.label for label in run.labels)
    lines = [
        f"{run.count} trials ({labels}), each row's verdict in each as a letter ({LEGEND}); {RULE}"
    ]
    for title, key in (("by oracle type", "byOracleType"), ("by case family", "byCaseFamily")):
        lines.append(
            f"trials {title} (means over rows, each row weighing the same; scored trials only,"
            " starter examples apart):"
        )
        for name, group in summary[key].items():
            lines.append(f"  {name}: {_group(group['trials'], run.k)}")
    return lines


def markdown_lines(graded: GradeReport, summary: dict[str, Any], cell: Any) -> list[str]:
    """The markdown report's tables of the trials' figures (none for one trial)."""
    run = graded.trials
    if run is None:
        return []
    k = run.k
    labels = ", ".join(label.label for label in run.labels)
    lines = [
        f"{run.count} trials ({cell(labels)}); {RULE}. Figures are means over rows, each row"
        " weighing the same, over each row's scored trials; starter examples apart.",
        "",
    ]
    for title, key in (("Oracle type", "byOracleType"), ("Case family", "byCaseFamily")):
        lines += [
            f"| {title} | rows scored | share passed | pass@1 | pass@{k} | pass^{k} |"
            f" rows with {k}+ scored trials |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, group in summary[key].items():
            figures = group["trials"]
            lines.append(
                f"| {cell(name)} | {figures['rows']} | {_share(figures['sharePassed'])} |"
                f" {_share(figures['passAt']['1'])} | {_share(figures['passAt'][str(k)])} |"
                f" {_share(figures['passHat'][str(k)])} | {figures['rowsAt'][str(k)]} |"
            )
        lines.append("")
    return lines


def markdown_cell(trials: RowTrials | None) -> str:
    """A row's trials in the markdown row table: ``PFP (2/3)``."""
    if trials is None:
        return ""
    return f"`{trials.letters()}` ({trials.passed}/{trials.scored})"


def junit_suite(suite: ElementTree.Element, run: TrialRun | None) -> None:
    """The trials of the run as the suite's properties."""
    if run is None:
        return
    properties = ElementTree.SubElement(suite, "properties")
    ElementTree.SubElement(properties, "property", name="trials", value=str(run.count))
    ElementTree.SubElement(
        properties,
        "property",
        name="trialLabels",
        value=" ".join(label.label for label in run.labels),
    )
    ElementTree.SubElement(properties, "property", name="rule", value=RULE)


def junit_case(case: ElementTree.Element, trials: RowTrials | None, k: int) -> None:
    """A row's trials as its test case's properties."""
    if trials is None:
        return
    properties = ElementTree.SubElement(case, "properties")
    found = {
        "trials": trials.letters(),
        "scored": str(trials.scored),
        "passed": str(trials.passed),
        "sharePassed": _number(trials.share_passed),
        **{f"passAt{at}": _number(trials.pass_at(at)) for at in trials.ks(k)},
        **{f"passHat{at}": _number(trials.pass_hat(at)) for at in trials.ks(k)},
    }
    for name, value in found.items():
        ElementTree.SubElement(properties, "property", name=name, value=value)
