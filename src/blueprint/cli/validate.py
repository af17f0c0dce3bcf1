"""blueprint validate: check a set against the published schema and the rules."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from blueprint.cli._common import FromFormat, InputFile, ReportKind, boundary, err, value_of
from blueprint.issues import ValidationReport
from blueprint.reports import render_github, render_json, render_junit
from blueprint.validate import ValidationOptions, validate_file


class FailOn(StrEnum):
    error = "error"
    warning = "warning"


_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
TEXT_LIMIT = 500


def _codes(values: list[str]) -> frozenset[str]:
    return frozenset(code.strip() for value in values for code in value.split(",") if code.strip())


@boundary
def validate_command(
    file: InputFile,
    source_format: FromFormat = None,
    report: Annotated[
        ReportKind,
        typer.Option(
            "--report",
            help="text (a table on stderr), json (stdout), junit (XML on stdout) or github"
            " (workflow annotations on stdout).",
        ),
    ] = ReportKind.text,
    select: Annotated[
        list[str],
        typer.Option("--select", help="Report only these codes (repeat or comma-separate)."),
    ] = [],  # noqa: B006 - typer reads the default, never mutates it
    ignore: Annotated[
        list[str],
        typer.Option("--ignore", help="Do not report these codes (repeat or comma-separate)."),
    ] = [],  # noqa: B006
    fail_on: Annotated[
        FailOn,
        typer.Option("--fail-on", help="Exit 1 on errors only (default), or on warnings too."),
    ] = FailOn.error,
) -> None:
    """Validate a set: schema, admissibility and every rule, in one pass.

    Exit 0 when valid, 1 when the set has errors, 2 when the file cannot be read.
    """
    options = ValidationOptions(select=_codes(select), ignore=_codes(ignore))
    result = validate_file(file, format=value_of(source_format), options=options)
    if report is ReportKind.json:
        typer.echo(render_json(result))
    elif report is ReportKind.junit:
        typer.echo(render_junit(result))
    elif report is ReportKind.github:
        text = render_github(result)
        if text:
            typer.echo(text)
    else:
        _print_table(result)
    _print_summary(result)
    if result.unreadable:
        raise typer.Exit(2)
    failing = result.counts()["error"] + (
        result.counts()["warning"] if fail_on is FailOn.warning else 0
    )
    raise typer.Exit(1 if failing else 0)


def _print_table(result: ValidationReport) -> None:
    if not result.issues:
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
    table.add_column("line", justify="right", no_wrap=True)
    table.add_column("row", overflow="fold", max_width=24)
    table.add_column("code", no_wrap=True)
    table.add_column("finding", overflow="fold", ratio=1)
    for issue in result.issues[:TEXT_LIMIT]:
        if issue.row_id is not None:
            row = issue.row_id
        else:
            row = f"#{issue.row_index}" if issue.row_index is not None else "(set)"
        style = _STYLE[issue.severity]
        table.add_row(
            str(issue.line) if issue.line is not None else "",
            escape(row),
            f"[{style}]{issue.code}[/]",
            f"{escape(issue.message)}\n[dim]{escape(issue.path)}[/]",
        )
    err.print(table)
    hidden = len(result.issues) - TEXT_LIMIT
    if hidden > 0:
        err.print(f"... and {hidden} more issue(s); --report json lists them all")


def _print_summary(result: ValidationReport) -> None:
    counts = result.counts()
    verdict = (
        "[bold red]unreadable[/]"
        if result.unreadable
        else ("[bold green]valid[/]" if result.valid else "[bold red]invalid[/]")
    )
    err.print(
        f"{verdict}: {escape(result.source)} ({result.format}, {result.rows} rows):"
        f" {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info"
    )
