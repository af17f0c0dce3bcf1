"""What every edit command shares: --from, --dry-run, and telling what a rewrite did."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, get_args

import typer

from blueprint.authoring.editing import EditOptions, Rewrite
from blueprint.cli._common import (
    FormatName,
    SimpleReport,
    err,
    escape,
    print_json,
    print_write_findings,
    value_of,
)
from blueprint.cli.diff import print_diff
from blueprint.core.model import SEVERITIES, BlastRadius, Reversibility

ReversibilityName = StrEnum(  # type: ignore[misc]
    "ReversibilityName", [(name, name) for name in get_args(Reversibility)]
)
BlastRadiusName = StrEnum(  # type: ignore[misc]
    "BlastRadiusName", [(name, name) for name in get_args(BlastRadius)]
)
SeverityName = StrEnum("SeverityName", [(name, name) for name in SEVERITIES])  # type: ignore[misc]

DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Show the diff the edit would make and write nothing (exit 0, or 1 if refused).",
    ),
]
SetFormat = Annotated[
    FormatName | None,
    typer.Option("--from", help="Format of the set file (default: from its extension)."),
]


def edit_options(source_format: FormatName | None, dry_run: bool) -> EditOptions:
    return EditOptions(format=value_of(source_format), dry_run=dry_run)


def did(dry_run: bool, done: str, would: str) -> str:
    """The verb for what an edit did, or in a dry run would do."""
    return would if dry_run else done


def print_notes(notes: list[str]) -> None:
    for note in notes:
        err.print(f"[yellow]note:[/] {escape(note)}")


def print_rewrite(written: Rewrite | None) -> None:
    """What the rewrite did, or, in a dry run, the diff it would make (stderr)."""
    if written is None:
        return
    if written.dry_run:
        if written.diff is not None:
            print_diff(written.diff)
        for path in written.created:
            err.print(f"would create {escape(str(path))}")
        err.print(f"[bold]dry run:[/] nothing written; {escape(str(written.path))} is unchanged")
        return
    files = " and ".join(escape(str(path)) for path in written.files)
    err.print(f"wrote {files} ({written.rows} rows)")
    print_write_findings(written.findings)


def finish(outcome: Any, report: SimpleReport) -> None:
    """Machine output for --report json: the outcome's JSON on stdout."""
    if report is SimpleReport.json:
        print_json(outcome.to_json())
