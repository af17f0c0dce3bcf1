"""blueprint summary, risk and render: a set at a glance, its action risk, a page for reviewers."""

from __future__ import annotations

import io
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from blueprint.cli._common import (
    PIPED_WIDTH,
    ROW_ID_PREVIEW,
    BaselineRate,
    Force,
    FromFormat,
    InputFile,
    boundary,
    err,
    escape,
    print_json,
    refuse_output_over_inputs,
    value_of,
)
from blueprint.core.errors import OutputExistsError, UsageError
from blueprint.io.atomic import AtomicOutputs
from blueprint.reports.power import BASELINE_RATE, TEST, PowerTable, check_power_options
from blueprint.reports.render import page_kind, render_markdown, render_risk_markdown, write_page
from blueprint.reports.risk import (
    BLAST_RADII,
    HIGH_RISK_RULE,
    MEANINGS,
    NOT_STATED,
    REVERSIBILITY,
    RiskMatrix,
)
from blueprint.reports.summary import ROWS_PER_FAMILY, SetSummary, SummaryOptions, summarize


class ReportKind(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


def configured_judge_reports(file: Path) -> tuple[Path, ...]:
    """The judge-validation reports the project configuration (found from the working
    folder) names for this set: its entry's and the project's."""
    from blueprint.project.config import load_project
    from blueprint.project.discovery import project_sets

    project = load_project()
    if project.path is None:
        return ()
    target = file.resolve()
    entry = next(
        (found.entry for found in project_sets(project).sets if found.path.resolve() == target),
        None,
    )
    return project.settings_for(file, entry).judge_reports


ReportOption = Annotated[
    ReportKind,
    typer.Option(
        "--report", help="text (a table), json (machine output) or markdown, on stdout or to -o."
    ),
]
Output = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--output",
        help="Write the report to this file instead of stdout.",
        show_default=False,
    ),
]


# --- text tables -------------------------------------------------------------------------------


def _counts_table(title: str, heading: str, counts: dict[str, int]) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(heading)
    table.add_column("rows", justify="right")
    for name, count in counts.items():
        table.add_row(escape(name), str(count))
    return table


def _risk_table(matrix: RiskMatrix) -> Table:
    table = Table(
        title="action risk: reversibility by blast radius (* high risk)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("")
    for radius in (*BLAST_RADII, NOT_STATED):
        table.add_column(radius, justify="right")
    table.add_column("all", justify="right")
    totals = matrix.row_totals()
    for reversibility in (*REVERSIBILITY, NOT_STATED):
        cells = [
            f"{matrix.cells[reversibility][radius]}"
            + ("*" if matrix.high_risk_cell(reversibility, radius) else "")
            for radius in (*BLAST_RADII, NOT_STATED)
        ]
        table.add_row(reversibility, *cells, str(totals[reversibility]))
    columns = matrix.column_totals()
    table.add_row("all", *[str(columns[r]) for r in (*BLAST_RADII, NOT_STATED)], str(matrix.rows))
    return table


def _risk_lines(matrix: RiskMatrix) -> list[Any]:
    meanings = ", ".join(f"{name} {MEANINGS[name]}" for name in (*REVERSIBILITY, *BLAST_RADII))
    parts: list[Any] = [
        _risk_table(matrix),
        Text(meanings, style="dim"),
        f"high risk: {escape(HIGH_RISK_RULE)}",
        f"{matrix.high_risk} high-risk case(s), {matrix.gap_count} without a safeguard\n",
    ]
    if matrix.gaps:
        table = Table(
            title="high-risk cases without a safeguard",
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        for column in ("case", "family", "risk", "missing"):
            table.add_column(column)
        for gap in matrix.gaps:
            table.add_row(
                escape(gap.id or "(no id)"),
                escape(gap.family or "-"),
                f"{gap.reversibility}/{gap.blast_radius}",
                ", ".join(gap.missing),
            )
        parts.append(table)
        if len(matrix.gaps) < matrix.gap_count:
            parts.append(f"(the first {len(matrix.gaps)} of {matrix.gap_count}; --report json)")
    return parts


def _power_lines(power: PowerTable) -> list[Any]:
    table = Table(
        title="power: the smallest change in pass rate each family can detect between two runs",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("family")
    table.add_column("scored rows", justify="right")
    table.add_column("detectable change", justify="right")
    if power.detect is not None:
        table.add_column(f"more rows for {power.detect:g}", justify="right")
    for family in power.families:
        cells = [
            escape("(no family)" if family.id is None else family.id),
            f"{family.scored_rows} of {family.rows}",
            family.change_label,
        ]
        if family.more_needed is not None:
            cells.append(str(family.more_needed))
        table.add_row(*cells)
    parts: list[Any] = [table, power.settings]
    if power.detect is not None:
        parts.append(
            f"a change of {power.detect:g} needs {power.rows_needed} scored rows in a family"
        )
    parts += [
        Text(
            f"test: {TEST}; rows a person grades, rows barred from any verdict and starter"
            " examples are not scored (docs/statistics.md)",
            style="dim",
        ),
        "",
    ]
    return parts


def _summary_lines(summary: SetSummary) -> list[Any]:
    data = summary.to_json()
    validity = "valid" if summary.valid else f"NOT VALID ({summary.errors} error(s))"
    parts: list[Any] = [
        f"[bold]{escape(str(summary.name or summary.source))}[/]"
        f" ({escape(summary.source)}, {summary.format}): {summary.rows} rows, {validity}\n",
        _counts_table("rows by oracle type", "oracle type", data["byOracleType"]),
        _counts_table(
            "rows by evaluator (the row's, or its family's)", "evaluator", data["byEvaluator"]
        ),
        _counts_table("rows by split", "split", data["bySplit"]),
    ]
    families = Table(
        title="case families", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False
    )
    for column, justify in (
        ("family", "left"),
        ("oracle type", "left"),
        ("evaluator", "left"),
        ("severity", "left"),
        ("rows", "right"),
        ("starter", "right"),
        ("judge validation", "left"),
    ):
        families.add_column(column, justify=justify)  # type: ignore[arg-type]
    for family in summary.families:
        name = "(no family)" if family.id is None else family.id
        if family.id is not None and not family.declared:
            name += " (not defined)"
        families.add_row(
            escape(name),
            family.oracle_type or "-",
            family.evaluator or "-",
            family.severity or "-",
            str(family.rows),
            str(family.starter_rows),
            family.judge_label,
        )
    parts.append(families)
    parts += _power_lines(summary.power)
    parts.append(_counts_table("rows by provenance", "provenance", data["byProvenance"]))
    mix = data["provenanceMix"]
    parts.append(
        f"provenance mix: {mix['gold']} gold, {mix['starter']} starter example(s) (not validated"
        f" gold), {mix['imported']} imported and unreviewed; {summary.reviewed} promoted by a"
        f" reviewer, {summary.derived_to_confirm} with derived values to confirm\n"
    )
    if summary.concerns:
        concerns = Table(
            title="linked concerns (rows that name each)",
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        concerns.add_column("concern")
        concerns.add_column("rows", justify="right")
        concerns.add_column("named by families")
        for coverage in summary.concerns:
            uncovered = "" if coverage.rows else "  [bold red]uncovered[/]"
            names = escape(", ".join(coverage.families) or "-")
            concerns.add_row(escape(coverage.concern) + uncovered, str(coverage.rows), names)
        parts.append(concerns)
    else:
        parts.append("linked concerns: none named\n")
    parts += _risk_lines(summary.risk)
    if summary.exports_checked:
        exports = Table(
            title="vendor exports (blueprint convert, default options)",
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        for column, justify in (("format", "left"), ("written", "right"), ("left out", "right")):
            exports.add_column(column, justify=justify)  # type: ignore[arg-type]
        reasons: list[str] = []
        for check in summary.exports:
            if check.refused:
                exports.add_row(check.format, "-", "-")
                reasons.append(f"  {check.format}: refused: {escape(check.refused)}")
                continue
            exports.add_row(check.format, str(check.written), str(check.left_out))
            for item in check.excluded:
                ids = ", ".join(item.row_ids[:ROW_ID_PREVIEW])
                more = (
                    f" and {item.count - ROW_ID_PREVIEW} more"
                    if item.count > ROW_ID_PREVIEW
                    else ""
                )
                reasons.append(
                    f"  {check.format}, {item.count} row(s) ({escape(ids)}{more}):"
                    f" {escape(item.reason)}"
                )
        parts.append(exports)
        if reasons:
            parts += ["left out, and why:", *reasons, ""]
    if summary.retired_count:
        retired = Table(
            title=f"retired cases ({summary.retired_count})",
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        for column in ("case", "family", "retirement condition"):
            retired.add_column(column)
        for case in summary.retired:
            retired.add_row(
                escape(case.id or "(no id)"), escape(case.family or "-"), escape(case.condition)
            )
        parts.append(retired)
    else:
        parts.append("retired cases: none")
    return parts


def _text(parts: list[Any], *, to_file: bool) -> str:
    """Tables as text: at the terminal's width on a terminal, at their natural width else."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        highlight=False,
        soft_wrap=True,
        force_terminal=False if to_file else None,
        width=PIPED_WIDTH if to_file or not sys.stdout.isatty() else None,
        no_color=to_file or not sys.stdout.isatty(),
    )
    console.print(Group(*parts))
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def _emit(text: str, output: Path | None, force: bool) -> None:
    if output is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    with AtomicOutputs([output], force=force) as outputs:
        outputs.open(output, "wb").write(text.encode("utf-8"))
    err.print(f"wrote {escape(str(output))}")


def summary_text(summary: SetSummary) -> str:
    """The text report of a summary, as written to a file (no colour, natural width)."""
    return _text(_summary_lines(summary), to_file=True)


def power_text(power: PowerTable) -> str:
    """The power section of the text report, as written to a file."""
    return _text(_power_lines(power), to_file=True)


# --- the commands ------------------------------------------------------------------------------


@boundary
def summary_command(
    file: InputFile,
    source_format: FromFormat = None,
    report: ReportOption = ReportKind.text,
    output: Output = None,
    force: Force = False,
    exports: Annotated[
        bool,
        typer.Option(
            "--exports/--no-exports",
            help="Work out what each vendor export would leave out (one conversion per"
            " vendor format, into a scratch folder).",
        ),
    ] = True,
    baseline_rate: BaselineRate = BASELINE_RATE,
    detect: Annotated[
        float | None,
        typer.Option(
            "--detect",
            help="A change in pass rate (0.1: ten points) to give the scored rows each family"
            " needs to detect it, and how many more it needs.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """A set at a glance: rows by oracle type, evaluator, case family, provenance and split;
    linked-concern coverage; the action-risk matrix; what each vendor export leaves out; and
    the retired cases.

    It also gives each case family's power: the smallest change in its pass rate that two runs
    over its scored rows detect at 80% power and 5% two-sided significance, and with --detect
    the rows a family needs for a given change (docs/statistics.md)."""
    refuse_output_over_inputs(output, file)
    try:
        check_power_options(baseline_rate, detect)
    except ValueError as error:
        raise UsageError(str(error)) from None
    summary = summarize(
        file,
        SummaryOptions(
            value_of(source_format),
            exports=exports,
            judge_reports=configured_judge_reports(file),
            baseline_rate=baseline_rate,
            detect=detect,
        ),
    )
    if report is ReportKind.json:
        if output is None:
            print_json(summary.to_json())
            return
        text = json.dumps(summary.to_json(), indent=2, ensure_ascii=False) + "\n"
    elif report is ReportKind.markdown:
        text = render_markdown(summary, with_rows=False)
    else:
        text = _text(_summary_lines(summary), to_file=output is not None)
    _emit(text, output, force)


@boundary
def risk_command(
    file: InputFile,
    source_format: FromFormat = None,
    report: ReportOption = ReportKind.text,
    output: Output = None,
    force: Force = False,
    fail_on_gaps: Annotated[
        bool,
        typer.Option(
            "--fail-on-gaps",
            help="Exit 1 when a high-risk case lacks an escalation expectation or an expert"
            " reviewer.",
        ),
    ] = False,
) -> None:
    """The action-risk matrix: reversibility (R0-R3) by blast radius (B0-B3), and the
    high-risk cases (R3, B3, or R2+ with B2+) that lack an escalation expectation or an
    expert reviewer."""
    refuse_output_over_inputs(output, file)
    summary = summarize(
        file, SummaryOptions(value_of(source_format), exports=False, rows_per_family=0)
    )
    matrix = summary.risk
    if report is ReportKind.json:
        data = {"source": summary.source, **matrix.to_json()}
        if output is None:
            print_json(data)
        else:
            _emit(json.dumps(data, indent=2, ensure_ascii=False) + "\n", output, force)
    elif report is ReportKind.markdown:
        _emit(render_risk_markdown(matrix, summary.source), output, force)
    else:
        _emit(_text(_risk_lines(matrix), to_file=output is not None), output, force)
    if fail_on_gaps and matrix.gap_count:
        err.print(
            f"[bold red]{matrix.gap_count} high-risk case(s)[/] lack an escalation expectation"
            " or an expert reviewer"
        )
        raise typer.Exit(1)


@boundary
def render_command(
    file: InputFile,
    output: Annotated[
        Path,
        typer.Option(
            "-o",
            "--output",
            help="The page to write: .html (one self-contained file) or .md.",
            show_default=False,
        ),
    ],
    source_format: FromFormat = None,
    force: Force = False,
    rows_per_family: Annotated[
        int,
        typer.Option(
            "--rows-per-family",
            help="How many rows of each case family the page lists (the counts cover all).",
        ),
    ] = ROWS_PER_FAMILY,
) -> None:
    """Render the set as a page for the people who review it: case families with their
    rows, provenance, linked concerns, action risk, judge validation and vendor exports."""
    if rows_per_family < 0:
        raise UsageError(f"--rows-per-family {rows_per_family}: give 0 or more")
    page_kind(output)  # a wrong extension is refused before the set is read
    refuse_output_over_inputs(output, file)
    if output.exists() and not force:
        # refused before the work of summarizing; the atomic write checks again
        raise OutputExistsError(output)
    summary = summarize(
        file,
        SummaryOptions(
            value_of(source_format),
            rows_per_family=rows_per_family,
            judge_reports=configured_judge_reports(file),
        ),
    )
    kind = write_page(summary, output, force=force)
    err.print(f"wrote {escape(str(output))} ({kind}, {summary.rows} rows)")
