"""blueprint convert and blueprint roundtrip: move a set between formats, and prove the loss."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from blueprint.cli._common import (
    AllowPath,
    Clean,
    Force,
    FormatName,
    FromFormat,
    IncludeHumanReview,
    InputFile,
    LlmJudge,
    Quiet,
    Report,
    SimpleReport,
    SpreadsheetSafe,
    Strict,
    ToFormat,
    boundary,
    err,
    escape,
    print_export,
    print_json,
    value_of,
)
from blueprint.convert import ConvertOptions, RoundtripResult, convert, roundtrip
from blueprint.core.errors import UsageError


class Graders(StrEnum):
    vendor = "vendor"
    blueprint = "blueprint"


@boundary
def convert_command(
    source: InputFile,
    target: Annotated[
        Path | None, typer.Argument(help="The file to write.", show_default=False)
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="The file to write (instead of TARGET).")
    ] = None,
    source_format: FromFormat = None,
    target_format: ToFormat = None,
    force: Force = False,
    strict: Strict = False,
    include_human_review: IncludeHumanReview = False,
    llm_judge: LlmJudge = False,
    spreadsheet_safe: SpreadsheetSafe = False,
    clean: Clean = False,
    graders: Annotated[
        Graders,
        typer.Option(
            "--graders",
            help="Who grades the export: vendor (the runner's stock graders) or blueprint"
            " (the runner with Blueprint's scorer: promptfoo, deepeval, langsmith, braintrust,"
            " inspect, openai-evals), which"
            " leaves only judge rows weakened.",
        ),
    ] = Graders.vendor,
    allow_invalid: Annotated[
        bool,
        typer.Option(
            "--allow-invalid",
            help="Write the set even if it is not valid (the command still exits 1).",
        ),
    ] = False,
    data_format: Annotated[
        str | None,
        typer.Option(
            "--data-format",
            help="The data files of a format that writes a folder: jsonl (default) or parquet"
            " (huggingface).",
            show_default=False,
        ),
    ] = None,
    report: Report = SimpleReport.text,
    allow_path: AllowPath = None,
    quiet: Quiet = False,
) -> None:
    """Convert a set to another format; every dropped field, left-out row and weakened rule
    is reported.

    The set is validated on its way through: an invalid set is not written (exit 1) unless
    --allow-invalid is given, and then the command still exits 1.
    """
    if (target is None) == (output is None):
        raise UsageError("give the output file either as TARGET or with -o/--output, once")
    destination = target if target is not None else output
    assert destination is not None
    options = ConvertOptions(
        value_of(source_format),
        value_of(target_format),
        force=force,
        strict=strict,
        include_human_review=include_human_review,
        llm_judge=llm_judge,
        allow_invalid=allow_invalid,
        spreadsheet_safe=spreadsheet_safe,
        data_format=data_format,
        clean=clean,
        graders=graders.value,
    )
    result = convert(source, destination, options)
    for note in result.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
    print_export(result.export)
    if not result.valid:
        counts = result.report.counts() if result.report else {}
        err.print(
            f"[bold red]written, but the set is not valid[/] ({counts.get('error', 0)} error(s));"
            " run blueprint validate on it"
        )
    if report is SimpleReport.json:
        export = result.export.to_json()
        print_json(
            {
                "source": str(source),
                "sourceFormat": result.source_format,
                "valid": result.valid,
                **export,
                # the conversion's notes and the export's, both (the export's key held only its own)
                "notes": [*result.notes, *export["notes"]],
                # where each record of a vendor source went: a row, a merge or a refusal
                "records": result.records.to_json() if result.records else None,
            }
        )
    if not result.valid:
        raise typer.Exit(1)


@boundary
def roundtrip_command(
    file: InputFile,
    via: Annotated[FormatName, typer.Option("--via", help="The format to go through.")],
    source_format: FromFormat = None,
    clean: Clean = False,
    report: Report = SimpleReport.text,
    allow_path: AllowPath = None,
    quiet: Quiet = False,
) -> None:
    """Export a set through a format, read it back, and compare declared with actual loss.

    Exit 0 when the loss is exactly what the export declared, 1 otherwise.
    """
    result = roundtrip(file, via.value, source_format=value_of(source_format), clean=clean)
    if report is SimpleReport.json:
        print_json(_roundtrip_json(result))
    _print_roundtrip(result)
    raise typer.Exit(0 if result.exact else 1)


def _roundtrip_json(result: RoundtripResult) -> dict[str, object]:
    return {
        "via": result.via,
        "exact": result.exact,
        "declared": [lossy.to_json() for lossy in result.export.lossy],
        "undeclared": [{"row": row, "path": path} for row, path in result.undeclared],
        "unobserved": [{"row": row, "field": name} for row, name in result.unobserved],
        "vendorChanges": result.vendor_changes,
        "diff": result.diff.to_json(),
    }


def _print_roundtrip(result: RoundtripResult) -> None:
    declared = result.export.lossy
    if declared:
        err.print(f"declared lost by {result.via}:")
        for lossy in declared:
            where = "set-level field" if lossy.scope == "set" else f"{lossy.count} row(s)"
            err.print(f"  {lossy.kind} {escape(lossy.field)} ({where}): {escape(lossy.reason)}")
    else:
        err.print(f"declared lost by {result.via}: nothing")
    for row, path in result.undeclared:
        err.print(f"[red]lost but not declared:[/] {escape(row)}: {escape(path)}")
    for row, name in result.unobserved:
        err.print(f"[red]declared but not lost:[/] {escape(row)}: {escape(name)}")
    if result.vendor_changes is not None:
        for change in result.vendor_changes:
            err.print(f"[red]changed for {result.via}:[/] {escape(change)}")
        if not result.vendor_changes:
            err.print(f"{result.via} reads back the same records it was given")
    if result.exact:
        err.print(f"[bold green]exact[/]: what {result.via} loses is what it declares")
    else:
        err.print(f"[bold red]not exact[/]: {result.via} lost something other than it declared")
