"""blueprint diff: compare two sets row by row, across formats."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from blueprint.cli._common import (
    FromFormat,
    Report,
    SimpleReport,
    boundary,
    err,
    print_json,
    value_of,
)
from blueprint.diff import ABSENT, Change, SetDiff, diff_files
from blueprint.jsonvalues import dumps_text


@boundary
def diff_command(
    left: Annotated[Path, typer.Argument(help="The set before.", show_default=False)],
    right: Annotated[Path, typer.Argument(help="The set after.", show_default=False)],
    source_format: FromFormat = None,
    ignore_order: Annotated[
        bool, typer.Option("--ignore-order", help="Do not count a change of row order.")
    ] = False,
    report: Report = SimpleReport.text,
) -> None:
    """Show rows added, removed and changed (by id), and changed set-level fields.

    Exit 0 when the sets are identical, 1 when they differ.
    """
    fmt = value_of(source_format)
    result = diff_files(left, right, left_format=fmt, right_format=fmt)
    if ignore_order:
        result.order_changed = False
    if report is SimpleReport.json:
        print_json(result.to_json())
    print_diff(result)
    raise typer.Exit(0 if result.identical else 1)


def _show(value: Any) -> str:
    text = "(absent)" if value is ABSENT else dumps_text(value)
    return escape(text if len(text) <= 80 else text[:77] + "...")


def _transition(change: Change) -> str:
    return f"{_show(change.before)} -> {_show(change.after)}"


def print_diff(result: SetDiff) -> None:
    """A set diff for people, on stderr (diff, and the dry run of every edit command)."""
    for change in result.header:
        err.print(f"[yellow]~ set[/] {escape(change.path)}: {_transition(change)}")
    for row_id in result.removed:
        err.print(f"[red]- row[/] {escape(row_id)}")
    for row_id in result.added:
        err.print(f"[green]+ row[/] {escape(row_id)}")
    for row in result.changed:
        err.print(f"[yellow]~ row[/] {escape(row.id)}")
        for change in row.changes:
            err.print(f"    {escape(change.path)} ({change.kind}): {_transition(change)}")
    if result.order_changed:
        err.print("[yellow]~ order[/] the shared rows are in a different order")
    for note in result.not_compared:
        err.print(f"[dim]note:[/] {escape(note)}")
    if result.identical:
        err.print("[bold green]identical[/]")
    else:
        err.print(
            f"[bold]different[/]: {len(result.added)} added, {len(result.removed)} removed,"
            f" {len(result.changed)} changed row(s), {len(result.header)} set-level change(s)"
        )
