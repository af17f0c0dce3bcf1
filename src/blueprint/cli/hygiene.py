"""blueprint dedupe, split and sample: duplicate inputs, seeded stratified splits and samples."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from blueprint.authoring.buckets import bucketed_duplicates
from blueprint.authoring.hygiene import (
    DEFAULT_THRESHOLD,
    DedupeResult,
    DuplicateOptions,
    DuplicateReport,
    ExactGroup,
    NearGroup,
    RowRef,
    find_duplicates,
    remove_duplicates,
)
from blueprint.authoring.splits import (
    SampleOptions,
    SampleResult,
    SplitOptions,
    SplitResult,
    parse_ratios,
    sample_set,
    split_set,
)
from blueprint.cli._common import (
    Engine,
    EngineName,
    Force,
    FromFormat,
    InputFile,
    Quiet,
    Report,
    Scheduler,
    SimpleReport,
    boundary,
    dask_engine,
    err,
    escape,
    jobs_option,
    out,
    print_export,
    print_json,
    print_listing,
    refuse_engine_misuse,
    refuse_output_over_inputs,
    value_of,
)
from blueprint.core.errors import UsageError
from blueprint.validation.engines import PoolEngine
from blueprint.validation.parallel import default_jobs

#: how many rows the text table shows before it points to --report json
TEXT_LIMIT = 500

Threshold = Annotated[
    float,
    typer.Option(
        "--threshold",
        help="Jaccard similarity (over words and adjacent word pairs) at which two inputs are"
        " near-duplicates, in (0, 1].",
    ),
]
ExactOnly = Annotated[
    bool,
    typer.Option("--exact-only", help="Look for exact duplicates only (no near-duplicates)."),
]
Output = Annotated[
    Path | None,
    typer.Option("-o", "--output", help="The file to write.", show_default=False),
]


def _none(value: str | None) -> str:
    return escape(value) if value is not None else "[dim](none)[/]"


# --- dedupe ------------------------------------------------------------------------------------


@boundary
def dedupe_command(
    sets: Annotated[
        list[Path],
        typer.Argument(
            help="The set files, compared within and with one another.", show_default=False
        ),
    ],
    source_format: FromFormat = None,
    threshold: Threshold = DEFAULT_THRESHOLD,
    exact_only: ExactOnly = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="Write the last SET here (a canonical format) without its rows whose input"
            " exactly repeats an earlier row's, in it or in a SET before it.",
            show_default=False,
        ),
    ] = None,
    force: Force = False,
    report: Report = SimpleReport.text,
    shards: Annotated[
        bool,
        typer.Option(
            "--shards",
            help="Each SET is a set in shards: a folder or a glob of JSON Lines and Parquet"
            " files, read as one set; each row found names its shard (as --from shards).",
        ),
    ] = False,
    engine: Engine = EngineName.local,
    scheduler: Scheduler = None,
    jobs: Annotated[
        int | None,
        jobs_option(
            "With --shards: search on this many worker processes (0: one per core); with"
            " --engine dask and no --scheduler, the local cluster's workers."
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Find inputs that repeat, exactly or nearly, within and across sets.

    Inputs are compared after normalising Unicode, case, spacing and punctuation; near
    duplicates by the similarity of their words. Duplicates across splits (dev and test)
    are the ones that matter most. Exit 0 when there is none, 1 when there are duplicates
    (also after -o wrote the set without its exact repeats), 2 when a file cannot be read.
    With --shards, -j N searches on N processes, --engine dask on a Dask cluster.
    """
    # a bad threshold is refused before any reading
    options = DuplicateOptions(threshold=threshold, near=not exact_only)
    refuse_engine_misuse(engine, scheduler, shards)
    if jobs is not None and not shards:
        raise UsageError(
            "-j searches sets in shards on several processes: add --shards (one set file is"
            " searched in one process)"
        )
    if shards and output is not None:
        raise UsageError(
            "-o writes one set file without its repeats; a set in shards is not rewritten"
            " (find the repeats with --shards, then remove them where the shards are made)"
        )
    if shards and source_format is not None:
        raise UsageError("--shards is --from shards: give one of them")
    # -o may name the last set (the one it writes, without its repeats), never one before it
    refuse_output_over_inputs(output, *sets[:-1], writes_set=True)
    fmt = "shards" if shards else value_of(source_format)
    written: DedupeResult | None = None
    if engine is EngineName.dask:
        with dask_engine(jobs or 0, scheduler) as cluster:
            found = bucketed_duplicates(cluster, sets, options)
    elif jobs is not None:
        with PoolEngine(jobs or default_jobs()) as pool:
            found = bucketed_duplicates(pool, sets, options)
    elif output is not None:
        written = remove_duplicates(
            sets, output, threshold=threshold, near=not exact_only, format=fmt, force=force
        )
        found = written.report
    else:
        found = find_duplicates(sets, threshold=threshold, near=not exact_only, format=fmt)
    if report is SimpleReport.json:
        data: dict[str, Any] = found.to_json()
        if written is not None:
            data["written"] = written.to_json()
        print_json(data)
    else:
        _print_duplicates(found)
    if written is not None:
        _print_removed(written)
    raise typer.Exit(1 if found.found else 0)


def _print_duplicates(found: DuplicateReport) -> None:
    several = len(found.sets) > 1
    with_splits = any(summary.splits for summary in found.sets)
    groups: list[ExactGroup | NearGroup] = [*found.exact, *found.near]
    # a set in shards: the shard beside the line
    sharded = any(row.file is not None for group in groups for row in group.rows)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False)
    table.add_column("group", justify="right", no_wrap=True)
    # "exact" or "near" on a group's first row; a near-duplicate's similarity on its own
    table.add_column("kind", justify="right", no_wrap=True)
    if several:
        table.add_column("set", overflow="fold")
    if sharded:
        table.add_column("shard", overflow="fold")
    table.add_column("line", justify="right", no_wrap=True)
    table.add_column("row", overflow="fold")
    if with_splits:
        table.add_column("split", no_wrap=True)
    table.add_column("note", no_wrap=True)
    shown = 0

    def add(group: str, kind: str, row: RowRef, note: str = "") -> None:
        nonlocal shown
        shown += 1
        if shown > TEXT_LIMIT:
            return
        cells = [group, kind]
        if several:
            cells.append(escape(row.set))
        if sharded:
            cells.append(escape(row.file or ""))
        cells += [
            str(row.line) if row.line is not None else "",
            escape(row.id) if row.id is not None else f"#{row.index}",
        ]
        if with_splits:
            cells.append(_none(row.split))
        cells.append(note)
        table.add_row(*cells)

    def note(group: ExactGroup | NearGroup) -> str:
        if group.across_splits:
            return "[bold red]across splits[/]"
        return "[yellow]across sets[/]" if group.across_sets else ""

    number = 0
    for exact in found.exact:
        number += 1
        add(str(number), "exact", exact.rows[0], note(exact))
        for row in exact.rows[1:]:
            add("", "", row)
    for near in found.near:
        number += 1
        add(str(number), "near", near.first, note(near))
        for match in near.matches:
            add("", f"{match.similarity:.2f}", match.row)
    if shown:
        print_listing(table)
    if shown > TEXT_LIMIT:
        out.print(f"... and {shown - TEXT_LIMIT} more row(s); --report json lists them all")
    out.print(_summary(found))
    crossing = [group for group in groups if group.across_splits]
    if crossing:
        splits = sorted({split for group in crossing for split in group.splits})
        out.print(
            f"[bold red]{len(crossing)} group(s) straddle splits[/] ({escape(', '.join(splits))}):"
            " a case in two splits is graded on the split it was tuned on. Keep each group in"
            " one split (blueprint split keeps them together)."
        )


def _summary(found: DuplicateReport) -> str:
    counts = found.counts()
    rows = sum(summary.rows for summary in found.sets)
    where = escape(found.sets[0].path) if len(found.sets) == 1 else f"{len(found.sets)} sets"
    near = (
        f"{counts['nearGroups']} near-duplicate group(s) ({counts['nearRows']} similar row(s),"
        f" similarity >= {found.threshold:.2f})"
        if found.threshold is not None
        else "near-duplicates not looked for"
    )
    verdict = "[bold]duplicates[/]" if found.found else "[bold green]no duplicates[/]"
    return (
        f"{verdict}: {where} ({rows} rows): {counts['exactGroups']} exact group(s)"
        f" ({counts['exactRows']} repeated row(s)), {near}"
    )


def _print_removed(written: DedupeResult) -> None:
    print_export(written.export)
    for row, first in written.removed[:TEXT_LIMIT]:
        where = "" if row.set == first.set else f" of {escape(first.set)}"
        err.print(
            f"[yellow]removed[/] {escape(row.label())}: repeats {escape(first.label())}{where}"
        )
    if len(written.removed) > TEXT_LIMIT:
        err.print(f"... and {len(written.removed) - TEXT_LIMIT} more removed row(s)")
    err.print(f"removed {len(written.removed)} exact repeat(s); near-duplicates are never removed")
    for note in written.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")


# --- split -------------------------------------------------------------------------------------


@boundary
def split_command(
    file: InputFile,
    ratios: Annotated[
        str,
        typer.Option(
            "--ratios",
            help="The splits and their shares, summing to 1: train=0.8,test=0.2 or"
            " dev=0.5,test=0.5.",
            show_default=False,
        ),
    ],
    seed: Annotated[
        int, typer.Option("--seed", help="The seed: the same seed gives the same splits.")
    ],
    output: Output = None,
    in_place: Annotated[
        bool, typer.Option("--in-place", help="Rewrite the set itself (canonical formats).")
    ] = False,
    reassign: Annotated[
        bool,
        typer.Option("--reassign", help="Replace the splits rows already carry."),
    ] = False,
    threshold: Threshold = DEFAULT_THRESHOLD,
    exact_only: ExactOnly = False,
    source_format: FromFormat = None,
    force: Force = False,
    report: Report = SimpleReport.text,
) -> None:
    """Give every row a metadata.split, stratified by case family and oracle type.

    Rows with the same or a near-duplicate input go to one split together, so no case is in
    two splits. Refuses (exit 1, nothing written) when rows already carry a split, unless
    --reassign. Writes OUTPUT (-o, a canonical format) or the set itself (--in-place).
    """
    if (output is None) == (not in_place):
        raise UsageError("give either -o/--output or --in-place, once")
    refuse_output_over_inputs(
        output, file, writes_set=True, instead="--in-place rewrites the set itself"
    )
    options = SplitOptions(
        ratios=parse_ratios(ratios),
        seed=seed,
        reassign=reassign,
        duplicates=DuplicateOptions(threshold=threshold, near=not exact_only),
        force=force,
    )
    result = split_set(file, options, output=output, format=value_of(source_format))
    if report is SimpleReport.json:
        print_json(result.to_json())
    else:
        _print_split(result)
    print_export(result.export)
    if result.replaced:
        err.print(f"replaced the split {result.replaced} row(s) carried (--reassign)")
    for note in result.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")


def _print_split(result: SplitResult) -> None:
    names = result.options.names
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False, show_footer=True)
    table.add_column("case family", footer="total", overflow="fold")
    table.add_column("oracle type", overflow="fold")
    table.add_column("rows", justify="right", footer=str(result.export.rows))
    for name in names:
        table.add_column(escape(name), justify="right", footer=str(result.totals[name]))
    for stratum in result.strata:
        table.add_row(
            _none(stratum.family),
            _none(stratum.oracle_type),
            str(stratum.rows),
            *(str(stratum.counts[name]) for name in names),
        )
    print_listing(table)
    if result.groups:
        out.print(
            f"{result.groups} group(s) of duplicate inputs ({result.grouped_rows} rows) were each"
            f" kept in one split; the largest has {result.largest_group} rows"
        )


# --- sample ------------------------------------------------------------------------------------


@boundary
def sample_command(
    file: InputFile,
    size: Annotated[int, typer.Argument(help="How many rows to sample.", show_default=False)],
    seed: Annotated[
        int, typer.Option("--seed", help="The seed: the same seed gives the same sample.")
    ],
    output: Annotated[
        Path,
        typer.Option(
            "-o", "--output", help="The file to write (a canonical format).", show_default=False
        ),
    ],
    source_format: FromFormat = None,
    force: Force = False,
    report: Report = SimpleReport.text,
) -> None:
    """Write a seeded sample of SIZE rows, stratified by case family and oracle type.

    The sample keeps the set's order and its set-level fields, with only the case families
    its rows use.
    """
    refuse_output_over_inputs(output, file, writes_set=True)
    result = sample_set(
        file,
        output,
        SampleOptions(size=size, seed=seed, force=force),
        format=value_of(source_format),
    )
    if report is SimpleReport.json:
        print_json(result.to_json())
    else:
        _print_sample(result)
    print_export(result.export)
    for note in result.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")


def _print_sample(result: SampleResult) -> None:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=False, show_footer=True)
    table.add_column("case family", footer="total", overflow="fold")
    table.add_column("oracle type", overflow="fold")
    table.add_column("rows", justify="right", footer=str(result.rows))
    table.add_column("sampled", justify="right", footer=str(result.export.rows))
    for stratum in result.strata:
        table.add_row(
            _none(stratum.family),
            _none(stratum.oracle_type),
            str(stratum.rows),
            str(stratum.sampled),
        )
    print_listing(table)
