"""blueprint diff: compare two sets row by row across formats, or sets with a git revision."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from blueprint.cli._common import (
    AllowPath,
    ConfigOption,
    Force,
    FromFormat,
    Quiet,
    Report,
    SimpleReport,
    boundary,
    err,
    escape,
    joined,
    print_pieces,
    value_of,
)
from blueprint.core.errors import UsageError
from blueprint.diff import (
    ABSENT,
    Change,
    ComparedSet,
    LoadedSet,
    SetDiff,
    index_for_diff,
)
from blueprint.io.atomic import AtomicOutputs
from blueprint.io.jsonvalues import dumps_text, json_pieces
from blueprint.project.config import load_project
from blueprint.project.discovery import expand, project_sets
from blueprint.project.gitref import revision_for_diff
from blueprint.reports.review import Review, markdown_pieces, review


@boundary
def diff_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="BEFORE AFTER | PATH...",
            help="Two sets to compare; with --against, the sets to compare with the revision"
            " (all configured sets when none).",
            show_default=False,
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="REF",
            help="Compare each PATH with its version at this git revision (HEAD~1, main,"
            " a commit), whatever the format on each side.",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    source_format: FromFormat = None,
    ignore_order: Annotated[
        bool, typer.Option("--ignore-order", help="Do not count a change of row order.")
    ] = False,
    markdown: Annotated[
        Path | None,
        typer.Option(
            "--markdown",
            metavar="OUT",
            help="Also write a pull-request summary in Markdown to OUT (- for stdout).",
            show_default=False,
        ),
    ] = None,
    force: Force = False,
    report: Report = SimpleReport.text,
    allow_path: AllowPath = None,
    quiet: Quiet = False,
) -> None:
    """Show rows added, removed and changed (by id), and changed set-level fields.

    Exit 0 when the sets are identical, 1 when they differ.
    """
    fmt = value_of(source_format)
    if markdown is not None and str(markdown) == "-" and report is SimpleReport.json:
        raise UsageError("--markdown - and --report json both write to stdout; choose one")
    with contextlib.ExitStack() as revisions:  # the older sides' copies, while compared
        reviews = [
            _compared(before, after, ignore_order)
            for before, after in _pairs(paths or [], against, fmt, config, revisions)
        ]
    if report is SimpleReport.json:
        documents = [
            {**item.diff.to_json(streamed=True), "review": item.to_json(streamed=True)}
            for item in reviews
        ]
        single = against is None or len(documents) == 1
        document = (
            documents[0]
            if single and documents
            else {"identical": all(d["identical"] for d in documents), "sets": documents}
        )
        print_pieces(itertools.chain(json_pieces(document), "\n"))
    for item in reviews:
        print_diff(item.diff, several=len(reviews) > 1)
        print_findings(item)
    if markdown is not None:
        _write_markdown(markdown, markdown_pieces(reviews), force)
    raise typer.Exit(0 if all(item.diff.identical for item in reviews) else 1)


def _pairs(
    paths: list[Path],
    against: str | None,
    fmt: str | None,
    config: Path | None,
    revisions: contextlib.ExitStack,
) -> Iterator[tuple[ComparedSet, ComparedSet]]:
    """The pairs of sets to compare, each opened as it is reached: a set at ``against`` is
    taken out of git into a scratch folder that ``revisions`` removes."""
    if against is None:
        if len(paths) != 2:
            raise UsageError("diff takes two sets (BEFORE AFTER), or --against REF and paths")
        yield index_for_diff(paths[0], fmt), index_for_diff(paths[1], fmt)
        return
    if paths:
        sets = [item.path for item in expand(paths, format=fmt).sets]
    else:
        project = load_project(config)
        if project.path is None:
            raise UsageError("name the sets to compare: no configuration lists them")
        sets = [item.path for item in project_sets(project).sets]
    for path in sets:
        # each copy is removed once its set is compared (its review holds no row of it)
        revisions.close()
        yield (
            revisions.enter_context(revision_for_diff(path, against, format=fmt)),
            _current(path, fmt),
        )


def _current(path: Path, fmt: str | None) -> ComparedSet:
    if not path.exists():
        return LoadedSet(str(path), None, {}, [f"{path} no longer exists"])
    return index_for_diff(path, fmt)


def _compared(before: ComparedSet, after: ComparedSet, ignore_order: bool) -> Review:
    result = review(before, after)
    if ignore_order:
        result.diff.order_changed = False
    return result


def print_findings(item: Review) -> None:
    """The review's findings, each with its stable code, positioned in the newer set."""
    for issue in item.findings:
        err.print(
            f"{escape(item.after)}: [yellow]{issue.severity}[/] {issue.code}"
            f" {escape(issue.row_id or '(row)')}: {escape(issue.message)} ({escape(issue.path)})"
        )


def _write_markdown(target: Path, pieces: Iterable[str], force: bool) -> None:
    if str(target) == "-":
        print_pieces(pieces)
        return
    with AtomicOutputs([target], force=force) as outputs:
        written = outputs.open(target)
        for chunk in joined(pieces):
            written.write(chunk)
    err.print(f"wrote {escape(str(target))}")


def _show(value: Any) -> str:
    text = "(absent)" if value is ABSENT else dumps_text(value)
    return escape(text if len(text) <= 80 else text[:77] + "...")


def _transition(change: Change) -> str:
    return f"{_show(change.before)} -> {_show(change.after)}"


def print_diff(result: SetDiff, *, several: bool = False) -> None:
    """A set diff for people, on stderr (diff, and the dry run of every edit command)."""
    if several:
        err.print(f"[bold]{escape(result.left)}[/] -> [bold]{escape(result.right)}[/]")
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
