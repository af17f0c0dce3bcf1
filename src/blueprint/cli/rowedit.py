"""blueprint edit: change a row's fields by path, the write the studio makes as a command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from blueprint.authoring.rowedit import REMOVED, FieldChange, edit_row, field_path
from blueprint.cli._common import Report, SimpleReport, boundary, err, escape
from blueprint.cli._editing import (
    DryRun,
    SetFormat,
    did,
    edit_options,
    finish,
    print_notes,
    print_rewrite,
)
from blueprint.core.errors import UsageError
from blueprint.io import jsonvalues


def _split(option: str, given: str) -> tuple[tuple[str, ...], str]:
    path, sep, value = given.partition("=")
    if not sep:
        raise UsageError(f"{option} {given!r}: write PATH=VALUE (e.g. metadata.case.severity=...)")
    return field_path(path), value


def changes_from_options(
    json_values: list[str], texts: list[str], removed: list[str]
) -> list[FieldChange]:
    """The changes the options name, in the order: --set, --text, then --unset."""
    changes: list[FieldChange] = []
    for given in json_values:
        path, value = _split("--set", given)
        try:
            changes.append(FieldChange(path, jsonvalues.loads(value)))
        except ValueError as error:
            raise UsageError(
                f"--set {'.'.join(path)}: the value is not JSON ({error}); use --text for"
                " plain text"
            ) from None
    for given in texts:
        path, value = _split("--text", given)
        changes.append(FieldChange(path, value))
    changes.extend(FieldChange(field_path(given), REMOVED) for given in removed)
    seen: set[tuple[str, ...]] = set()
    for change in changes:
        if change.path in seen:
            raise UsageError(f"{change.dotted} is changed twice; name each field once")
        seen.add(change.path)
    return changes


@boundary
def edit_command(
    set_file: Annotated[Path, typer.Argument(metavar="SET", help="The set file to edit.")],
    row_id: Annotated[str, typer.Argument(metavar="ROW", help="The id of the row.")],
    json_values: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="PATH=JSON",
            help="Set a field to a JSON value: --set 'expected={\"refund\": 20}'.",
        ),
    ] = None,
    texts: Annotated[
        list[str] | None,
        typer.Option(
            "--text",
            metavar="PATH=TEXT",
            help="Set a field to plain text: --text metadata.case.scenario='A late parcel'.",
        ),
    ] = None,
    removed: Annotated[
        list[str] | None,
        typer.Option("--unset", metavar="PATH", help="Remove a field."),
    ] = None,
    expect: Annotated[
        str | None,
        typer.Option(
            "--expect",
            metavar="VERSION",
            help="Refuse (exit 1) unless the row is still this version (--report json shows"
            " it as versionAfter).",
        ),
    ] = None,
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Change a row's fields by path: input, expected, metadata.case.*, metadata.*.

    Paths are dotted (metadata.case.expectedBehavior). Exit 1, with the file unchanged, when
    the row is missing, a path runs through a value that is not an object, or --expect names
    another version of the row.
    """
    changes = changes_from_options(json_values or [], texts or [], removed or [])
    outcome = edit_row(
        set_file,
        row_id,
        changes,
        expected_version=expect,
        options=edit_options(source_format, dry_run),
    )
    print_notes(outcome.notes)
    if outcome.changed:
        verb = did(dry_run, "changed", "would change")
        err.print(f"{verb} {escape(row_id)}: {escape(', '.join(outcome.changed))}")
    else:
        err.print(
            f"{escape(row_id)} already has those values; {escape(str(set_file))} is unchanged"
        )
    print_rewrite(outcome.written)
    finish(outcome, report)
