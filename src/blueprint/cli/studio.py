"""blueprint studio: the local web app for reviewing rows and labelling judge verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from blueprint.cli._common import ConfigOption, boundary, err, escape
from blueprint.core.errors import UsageError
from blueprint.project.config import load_project
from blueprint.project.discovery import expand, project_sets


@boundary
def studio_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[PATH...]",
            help="Sets, folders or globs (default: the sets the project configuration lists).",
            show_default=False,
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="The address to listen on; beyond loopback every request needs the printed token.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="The port (0: any free one).")
    ] = 8765,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the studio in the web browser.")
    ] = False,
    judge_results: Annotated[
        Path | None,
        typer.Option(
            "--judge-results",
            help="Judge results to label for the first set: CSV or JSON Lines with caseId,"
            " output and judge, or promptfoo's results file.",
            show_default=False,
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Where the labels go (default: RESULTS.labels.csv beside the results); an"
            " existing labels file is taken up again.",
            show_default=False,
        ),
    ] = None,
    scale: Annotated[
        str | None,
        typer.Option(
            "--scale", help="The score range LOW-HIGH of scored labels.", show_default=False
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Review rows, promote starter rows and label judge verdicts in a local web app.

    Serves on 127.0.0.1 until Ctrl+C (exit 130, as for any command a signal stops). Writes
    go through the same edit path as the edit commands; nothing is committed for you. Exit 2
    when a set or the judge results cannot be read, or the port is taken.
    """
    from blueprint.reports.judging import Thresholds, parse_scale
    from blueprint.studio.server import StudioOptions, serve

    if not host.strip():
        raise UsageError("--host is empty: name an address, such as 127.0.0.1")
    project = load_project(config)
    found = expand(paths) if paths else project_sets(project)
    for note in found.notes:
        err.print(f"[dim]note:[/] {escape(note)}")
    sets = [item.path for item in found.sets]
    missing = [path for path in sets if not path.exists()]
    if missing:
        raise UsageError(f"{missing[0]}: no such file or folder")
    if not sets:
        raise UsageError(
            "no sets to serve: name set files or folders, or list sets in blueprint.toml"
        )
    if judge_results is not None and len(sets) > 1:
        err.print(f"[dim]note:[/] the judge results are labelled for {escape(str(sets[0]))}")
    thresholds = Thresholds(**project.config.judge_thresholds.given())
    options = StudioOptions(
        sets=sets,
        host=host,
        port=port,
        judge_results=judge_results,
        labels=labels,
        scale=parse_scale(scale) if scale is not None else None,
        thresholds=thresholds,
        root=Path.cwd(),
    )

    def progress(path: Path, rows: int) -> None:
        err.print(f"[dim]loading {escape(str(path))}: {rows:,} rows read and checked[/]")

    try:
        serve(
            options,
            announce=lambda line: err.print(escape(line)),
            progress=progress,
            open_browser=open_browser,
        )
    except OSError as error:
        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
