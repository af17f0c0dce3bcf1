"""blueprint check: every configured set validated, round-tripped and compared with its exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated
from xml.etree import ElementTree

import typer
from rich.table import Table

from blueprint.cli._common import (
    AllowPath,
    ConfigOption,
    Quiet,
    ReportKind,
    boundary,
    err,
    escape,
    jobs_option,
    out,
    print_listing,
)
from blueprint.cli.findings import print_findings, statistics_table
from blueprint.cli.validate import StatisticsOption
from blueprint.core.errors import UsageError
from blueprint.project.check import CheckReport, check_sets
from blueprint.project.config import load_project
from blueprint.project.discovery import FoundSet, expand, project_sets, select
from blueprint.reports.writers import (
    github_annotation,
    github_command,
    junit_document,
    validation_suite,
    xml_text,
)
from blueprint.validation.parallel import default_jobs

_STATUS = {
    "passed": "[green]passed[/]",
    "failed": "[bold red]failed[/]",
    "skipped": "[dim]skipped[/]",
}


@boundary
def check_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[PATH...]",
            help="Check only the configured sets at or under these paths (all when none).",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    report: Annotated[
        ReportKind,
        typer.Option(
            "--report",
            help="text (findings and a summary table), json, junit (XML) or github"
            " (workflow annotations), all on stdout.",
        ),
    ] = ReportKind.text,
    statistics: StatisticsOption = False,
    jobs: Annotated[
        int,
        jobs_option("Check this many sets at once, in separate processes (0: one per core)."),
    ] = 0,
    allow_path: AllowPath = None,
    quiet: Quiet = False,
) -> None:
    """Check the project's golden sets: validation, round-trips and committed exports.

    The sets and what is asked of them come from the configuration. Without one, the paths
    given (files, folders, globs) are validated and round-tripped through the canonical
    formats. Exit 0 when every set passes, 1 when any fails, 2 for a broken configuration.
    """
    project = load_project(config)
    compare_with: list[FoundSet] = []
    if project.path is None:
        if not paths:
            raise UsageError(
                "no configuration found (blueprint.toml, or [tool.blueprint] in"
                " pyproject.toml) and no paths given: name the sets to check"
            )
        discovery = expand(paths)
    else:
        discovery = project_sets(project)
        if paths:
            # the sets named are checked; their inputs are still compared with all the others
            compare_with = discovery.sets
            discovery = select(discovery, paths)
    result = check_sets(project, discovery, jobs=jobs or default_jobs(), compare_with=compare_with)
    for note in result.notes:
        err.print(f"[dim]note:[/] {escape(note)}")
    if report is ReportKind.json:
        typer.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    elif report is ReportKind.junit:
        typer.echo(render_check_junit(result))
    elif report is ReportKind.github:
        text = render_check_github(result)
        if text:
            typer.echo(text)
    else:
        _print_text(result, statistics)
    _print_verdict(result, paths)
    raise typer.Exit(0 if result.passed else 1)


def _print_text(result: CheckReport, statistics: bool) -> None:
    if statistics:
        stats = result.statistics()
        if stats:
            print_listing(statistics_table(stats))
    else:
        for outcome in result.sets:
            if outcome.report is not None:
                print_findings(out, outcome.report)
    for outcome in result.sets:
        for step in outcome.steps:
            if step.status == "failed" and step.problems:
                out.print(f"{escape(str(outcome.path))}: [bold red]{escape(step.name)}[/] failed")
                for problem in step.problems:
                    out.print(f"    {escape(problem)}", soft_wrap=True)
    if not result.sets:
        return
    table = Table(title="blueprint check", title_justify="left")
    table.add_column("set", no_wrap=True)
    table.add_column("format", no_wrap=True)
    table.add_column("rows", justify="right", no_wrap=True)
    table.add_column("step", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("details")
    for outcome in result.sets:
        rows = str(outcome.report.rows) if outcome.report is not None else ""
        for number, step in enumerate(outcome.steps):
            first = number == 0
            table.add_row(
                escape(str(outcome.path)) if first else "",
                (outcome.format or "") if first else "",
                rows if first else "",
                escape(step.name),
                _STATUS[step.status],
                escape(step.summary),
                end_section=number == len(outcome.steps) - 1,
            )
    print_listing(table)


def _print_verdict(result: CheckReport, paths: list[Path] | None) -> None:
    failed = sum(1 for outcome in result.sets if not outcome.passed)
    if not result.sets:
        where = "among the given paths" if paths else "in the configuration"
        err.print(f"no golden set to check {where}")
        return
    verdict = "[bold green]passed[/]" if result.passed else "[bold red]failed[/]"
    err.print(
        f"{verdict}: {len(result.sets)} set(s) checked, {len(result.sets) - failed} passed,"
        f" {failed} failed"
    )


def render_check_github(report: CheckReport) -> str:
    """Annotations for every finding of every set, and one for each failed step."""
    lines = []
    for outcome in report.sets:
        source = str(outcome.path)
        if outcome.report is not None:
            lines += [github_annotation(source, issue) for issue in outcome.report.issues]
        for step in outcome.steps:
            if step.status == "failed" and (step.name != "validate" or step.problems):
                message = "\n".join([step.summary, *step.problems]).strip()
                lines.append(
                    github_command("error", source, f"blueprint check: {step.name}", message)
                )
    return "\n".join(lines)


def render_check_junit(report: CheckReport) -> str:
    """A test suite per set: a test case per row, and one per step (round-trips, exports)."""
    suites = []
    for outcome in report.sets:
        source = str(outcome.path)
        if outcome.report is not None:
            suite = validation_suite(outcome.report, source)
        else:
            suite = ElementTree.Element(
                "testsuite", name=xml_text(source), tests="0", failures="0", errors="0"
            )
            suite.set("skipped", "0")
        for step in outcome.steps:
            if step.name == "validate" and outcome.report is not None:
                continue  # the rows' own test cases say it
            case = ElementTree.SubElement(
                suite, "testcase", classname=xml_text(source), name=xml_text(step.name)
            )
            text = xml_text("\n".join([step.summary, *step.problems]))
            if step.status == "failed":
                failure = ElementTree.SubElement(
                    case, "failure", type="blueprint-check", message=xml_text(step.summary)
                )
                failure.text = text
                suite.set("failures", str(int(suite.get("failures", "0")) + 1))
            elif step.status == "skipped":
                ElementTree.SubElement(case, "skipped", message=xml_text(step.summary))
                suite.set("skipped", str(int(suite.get("skipped", "0")) + 1))
            suite.set("tests", str(int(suite.get("tests", "0")) + 1))
        suites.append(suite)
    return junit_document("blueprint check", suites)
