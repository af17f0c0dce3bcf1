"""blueprint validate: check sets against the published schema and the rules."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from blueprint.cli._common import (
    AllowPath,
    Engine,
    EngineName,
    FromFormat,
    Quiet,
    ReportKind,
    Scheduler,
    boundary,
    dask_engine,
    err,
    escape,
    jobs_option,
    out,
    print_listing,
    refuse_engine_misuse,
    value_of,
)
from blueprint.cli.findings import print_findings, statistics_table, summary_line
from blueprint.core.errors import AmbiguousFormatError, UnknownFormatError, UsageError
from blueprint.core.issues import ValidationReport, code_statistics
from blueprint.project.discovery import expand
from blueprint.reports.writers import json_pieces, render_github, render_junit, render_junit_many
from blueprint.validation.stream import ValidationOptions, resolve_codes
from blueprint.validation.validate import unreadable_report, validate_file, validate_shards


class FailOn(StrEnum):
    error = "error"
    warning = "warning"


def codes_option(values: list[str]) -> frozenset[str]:
    """Codes from repeatable, comma-separated options: codes, word prefixes or ALL."""
    return resolve_codes(code for value in values for code in value.split(","))


SelectOption = Annotated[
    list[str],
    typer.Option(
        "--select",
        help="Report only these codes (repeat or comma-separate; a prefix such as 'case'"
        " or ALL selects several).",
    ),
]
IgnoreOption = Annotated[
    list[str],
    typer.Option("--ignore", help="Do not report these codes (codes or prefixes, as --select)."),
]
FailOnOption = Annotated[
    FailOn,
    typer.Option("--fail-on", help="Exit 1 on errors only (default), or on warnings too."),
]
StatisticsOption = Annotated[
    bool,
    typer.Option(
        "--statistics", help="Count the findings by code instead of listing them (text report)."
    ),
]


@boundary
def validate_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH...",
            help="Set files, folders (every set in them) or globs.",
            show_default=False,
        ),
    ],
    source_format: FromFormat = None,
    report: Annotated[
        ReportKind,
        typer.Option(
            "--report",
            help="text (findings on stdout, verdicts on stderr), json, junit (XML) or github"
            " (workflow annotations), all on stdout.",
        ),
    ] = ReportKind.text,
    select: SelectOption = [],  # noqa: B006 - typer reads the default, never mutates it
    ignore: IgnoreOption = [],  # noqa: B006
    fail_on: FailOnOption = FailOn.error,
    statistics: StatisticsOption = False,
    jobs: Annotated[
        int,
        jobs_option(
            "Processes to validate a large JSON Lines or JSON file with (0: one per"
            " core; files under 32 MiB always use one)."
        ),
    ] = 0,
    shards: Annotated[
        bool,
        typer.Option(
            "--shards",
            help="The paths are the shards of one set: JSON Lines and Parquet files, folders"
            " of them or globs, read in name order as one set.",
        ),
    ] = False,
    engine: Engine = EngineName.local,
    scheduler: Scheduler = None,
    allow_path: AllowPath = None,
    quiet: Quiet = False,
) -> None:
    """Validate sets: schema, admissibility and every rule, in one pass over each file.

    One file named gives its report; several files, folders or globs give one report per
    file; with --shards, they are one set and give one report. Exit 0 when all are valid, 1
    when any has errors (or warnings, with --fail-on warning), 2 when any cannot be read.
    """
    options = ValidationOptions(
        select=codes_option(select),
        ignore=codes_option(ignore),
        row_ids=report is ReportKind.junit,  # the one report with a line per row
    )
    refuse_engine_misuse(engine, scheduler, shards)
    if shards and source_format is not None:
        raise UsageError("--shards reads the paths as one set in shards: leave out --from")
    if shards:
        single = True
        results = [_validated_shards(paths, options, jobs, engine, scheduler)]
    elif value_of(source_format) == "shards":  # each path a set in shards, not sets to find
        single = len(paths) == 1
        results = [validate_shards([path], options=options, jobs=jobs) for path in paths]
    else:
        found = expand(paths, format=value_of(source_format))
        for note in found.notes:
            err.print(f"[dim]note:[/] {escape(note)}")
        single = len(paths) == 1 and len(found.sets) == 1 and found.sets[0].path == Path(paths[0])
        results = [
            _validated(item.path, value_of(source_format), options, alone=single, jobs=jobs)
            for item in found.sets
        ]
    warning_fails = fail_on is FailOn.warning
    if report is ReportKind.json:
        if single:  # streamed: a broken file's findings can run to hundreds of thousands
            for piece in json_pieces(results[0]):
                typer.echo(piece, nl=False)
            typer.echo()
        else:
            typer.echo(_many_json(results, warning_fails))
    elif report is ReportKind.junit:
        typer.echo(render_junit(results[0]) if single else render_junit_many(results))
    elif report is ReportKind.github:
        text = "\n".join(filter(None, (render_github(result) for result in results)))
        if text:
            typer.echo(text)
    elif statistics:
        stats = code_statistics(results)
        if stats:
            print_listing(statistics_table(stats))
    else:
        for result in results:
            print_findings(out, result)
    for result in results:
        err.print(summary_line(result, fail_on_warning=warning_fails))
    if not results:
        err.print("no golden set found in the given paths")
    elif len(results) > 1:
        failed = sum(1 for result in results if _fails(result, warning_fails))
        err.print(
            f"{len(results)} file(s) validated: {len(results) - failed} passed, {failed} failed"
        )
    if any(result.unreadable for result in results):
        raise typer.Exit(2)
    raise typer.Exit(1 if any(_fails(result, warning_fails) for result in results) else 0)


def _validated(
    path: Path, format_name: str | None, options: ValidationOptions, *, alone: bool, jobs: int
) -> ValidationReport:
    """One file's report. A file whose format cannot be told stops a run over that file
    alone (exit 2, as any usage error); among several, it is reported unreadable and the
    others are still validated."""
    try:
        return validate_file(path, format=format_name, options=options, jobs=jobs)
    except (UnknownFormatError, AmbiguousFormatError) as error:
        if alone:
            raise
        return unreadable_report(path, format_name or "a golden set", str(error), options)


def _validated_shards(
    paths: list[Path],
    options: ValidationOptions,
    jobs: int,
    engine: EngineName,
    scheduler: str | None,
) -> ValidationReport:
    """The report on one set of shards, read by this machine's processes or on Dask."""
    if engine is EngineName.local:
        return validate_shards(paths, options=options, jobs=jobs)
    with dask_engine(jobs, scheduler) as cluster:
        return validate_shards(paths, options=options, engine=cluster)


def _fails(result: ValidationReport, warning_fails: bool) -> bool:
    counts = result.counts()
    return bool(result.unreadable or counts["error"] or (warning_fails and counts["warning"]))


def _many_json(results: list[ValidationReport], warning_fails: bool) -> str:
    totals = {"error": 0, "warning": 0, "info": 0}
    for result in results:
        for severity, count in result.counts().items():
            totals[severity] += count
    document: dict[str, Any] = {
        "valid": all(result.valid for result in results),
        "passed": not any(_fails(result, warning_fails) for result in results),
        "files": len(results),
        "rows": sum(result.rows for result in results),
        "counts": totals,
        "reports": [result.to_json() for result in results],
        "statistics": [stat.to_json() for stat in code_statistics(results)],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)
