"""blueprint formats, evaluators and schema: what the tool knows, for people and for scripts."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from blueprint.cli._common import (
    Force,
    FormatName,
    OracleName,
    Report,
    SimpleReport,
    boundary,
    err,
    escape,
    listing_console,
    print_json,
    print_listing,
)
from blueprint.core import admissibility
from blueprint.core.errors import UsageError
from blueprint.core.model import ORACLE_TYPES
from blueprint.core.schema import SCHEMA_FILES, published_schemas, render_schema
from blueprint.formats import REGISTRY, get_codec
from blueprint.formats.mapping import load_mapping

# named from the table of files: generating the schemas themselves at start-up costs more
# than the rest of the command line's imports
SchemaName = StrEnum(  # type: ignore[misc]
    "SchemaName", [(n.removesuffix(".schema.json"),) * 2 for n in SCHEMA_FILES]
)

_DEFAULT_SCHEMA = SchemaName("eval-set")


def _format_json(name: str, *, details: bool = False) -> dict[str, Any]:
    codec = REGISTRY.facts(name)  # listing a format imports none of its code
    entry: dict[str, Any] = {
        "name": codec.name,
        "title": codec.title,
        "extensions": list(codec.extensions),
        "readExtensions": list(codec.read_extensions),
        "reads": codec.can_read,
        "writes": codec.can_write,
        "lossless": codec.lossless,
    }
    if details and not codec.lossless:
        entry["mapping"] = load_mapping(name).model_dump(exclude={"example"})
    return entry


def _print_mapping(name: str) -> None:
    mapping = load_mapping(name)
    print_listing(f"[bold]{escape(mapping.title)}[/]\n{escape(mapping.summary)}")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("canonical field", no_wrap=True)
    table.add_column(f"in {name}", overflow="fold")
    for entry in [*mapping.rows, *mapping.set]:
        where = entry.to or f"[yellow]dropped:[/] {escape(entry.dropped or '')}"
        table.add_row(escape(entry.field), where if entry.dropped else escape(where))
    print_listing(table)
    for kind, reason in mapping.excluded.items():
        print_listing(f"[yellow]rows left out ({kind}):[/] {escape(reason)}")
    grading = mapping.grading
    print_listing(f"\n[bold]what {name} enforces[/]: {escape(grading.summary)}")
    enforced = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    enforced.add_column("oracle type", no_wrap=True)
    enforced.add_column("enforced", overflow="fold")
    for oracle_type, text in grading.enforced.items():
        enforced.add_row(oracle_type, escape(text))
    print_listing(enforced)
    for rule in grading.weakened:
        scope = ", ".join(rule.oracle_types or ["every oracle type"])
        print_listing(f"[magenta]weakened[/] {escape(rule.field)} ({scope}): {escape(rule.reason)}")
    if mapping.media:
        what = "images, audio, video, documents"
        print_listing(f"[magenta]weakened[/] input ({what}): {escape(mapping.media)}")


@boundary
def formats_command(
    name: Annotated[FormatName | None, typer.Argument(help="Show one format only.")] = None,
    report: Report = SimpleReport.text,
) -> None:
    """List the formats Blueprint reads and writes."""
    names = [get_codec(name.value).name] if name else list(REGISTRY)
    if report is SimpleReport.json:
        if name is None:
            print_json([_format_json(n) for n in names])
        else:
            print_json(_format_json(names[0], details=True))
        return
    table = Table(title="formats")
    for heading in ("name", "title", "writes as", "reads", "writes", "lossless"):
        # names and extensions are typed back on the command line: never broken
        table.add_column(heading, no_wrap=heading in ("name", "writes as"))
    for entry in map(_format_json, names):
        table.add_row(
            entry["name"],
            entry["title"],
            " ".join(entry["extensions"]) or "a folder",
            "yes" if entry["reads"] else "no",
            "yes" if entry["writes"] else "no",
            "yes" if entry["lossless"] else "no",
        )
    print_listing(table)
    if name is not None and not REGISTRY.facts(names[0]).lossless:
        _print_mapping(names[0])


def evaluators_json(oracle_type: str) -> dict[str, Any]:
    rule = admissibility.rule_for(oracle_type)  # type: ignore[arg-type]
    return {
        "oracleType": rule.oracle_type,
        "summary": rule.summary,
        "admits": list(rule.admits),
        "admitsWithConditions": [
            {"evaluator": evaluator, "conditions": list(conditions)}
            for evaluator, conditions in rule.conditional.items()
        ],
        "bars": [
            {"evaluator": evaluator, "reason": reason} for evaluator, reason in rule.bars.items()
        ],
    }


@boundary
def evaluators_command(
    oracle_type: Annotated[
        OracleName | None,
        typer.Argument(help="Show one oracle type only.", metavar="[ORACLE]"),
    ] = None,
    report: Report = SimpleReport.text,
) -> None:
    """Show which evaluators each oracle type admits, admits with conditions, or bars."""
    oracle_types = [oracle_type.value] if oracle_type else list(ORACLE_TYPES)
    entries = [evaluators_json(o) for o in oracle_types]
    if report is SimpleReport.json:
        print_json(entries[0] if oracle_type else entries)
        return
    console = listing_console()
    if console.is_terminal:
        console.print(_evaluator_blocks(entries))
        return
    # piped or redirected: one table whose lines stay whole, so that grep finds an
    # evaluator's whole condition or reason on the line that names it
    table = Table(title="admissible evaluators by oracle type", show_lines=True)
    for heading in ("oracle type", "admits", "admits with conditions", "bars (why)"):
        table.add_column(heading, no_wrap=heading in ("oracle type", "admits"), overflow="fold")
    for entry in entries:
        conditional = "\n".join(_condition(c) for c in entry["admitsWithConditions"])
        bars = "\n".join(f"{b['evaluator']}: {b['reason']}" for b in entry["bars"])
        table.add_row(
            entry["oracleType"], "\n".join(entry["admits"]), escape(conditional), escape(bars)
        )
    console.print(table)


def _condition(conditional: dict[str, Any]) -> str:
    return f"{conditional['evaluator']}: only if " + "; and ".join(conditional["conditions"])


def _evaluator_blocks(entries: list[dict[str, Any]]) -> Group:
    """The evaluators for a terminal: a block for each oracle type, its conditions and
    reasons wrapped between words at the terminal's width (four columns of prose side by
    side leave a word or two a line at 80 columns)."""
    parts: list[Any] = [Text("admissible evaluators by oracle type", style="italic")]
    for entry in entries:
        grid = Table.grid(padding=(0, 2), pad_edge=False)
        grid.add_column(no_wrap=True, min_width=len("with conditions"))
        grid.add_column(overflow="fold")
        grid.add_row("admits", escape(", ".join(entry["admits"])) or "none")
        for index, conditional in enumerate(entry["admitsWithConditions"]):
            conditions = "; and ".join(conditional["conditions"])
            grid.add_row(
                "" if index else "with conditions",
                f"[bold]{escape(conditional['evaluator'])}[/]: only if {escape(conditions)}",
            )
        for index, barred in enumerate(entry["bars"]):
            grid.add_row(
                "" if index else "bars",
                f"[bold]{escape(barred['evaluator'])}[/]: {escape(barred['reason'])}",
            )
        parts += [Text(""), Text(entry["oracleType"], style="bold"), Padding(grid, (0, 0, 0, 2))]
    return Group(*parts)


@boundary
def schema_command(
    name: Annotated[SchemaName, typer.Argument(help="Which schema to print.")] = _DEFAULT_SCHEMA,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            help="Write every published schema into this folder (e.g. schemas/).",
            show_default=False,
        ),
    ] = None,
    check: Annotated[
        Path | None,
        typer.Option(
            "--check",
            help="Exit 1 if the schemas in this folder differ from the models.",
            show_default=False,
        ),
    ] = None,
    force: Force = False,
) -> None:
    """Print a published JSON Schema, or write them all (generated from the models)."""
    if write is not None and check is not None:
        raise UsageError("use --write or --check, not both")
    from blueprint.cli.docgen import stale_schemas, write_schemas

    if write is not None:
        written = write_schemas(write, force=force)
        for path in written:
            err.print(f"wrote {escape(str(path))}")
        if not written:
            err.print(f"{escape(str(write))}: schemas are already current")
        return
    if check is not None:
        if not check.is_dir():
            raise UsageError(f"{check} is not a folder")
        stale = stale_schemas(check)
        for file_name in stale:
            err.print(f"[red]out of date:[/] {escape(str(check / file_name))}")
        if stale:
            err.print("run: blueprint schema --write " + escape(str(check)))
            raise typer.Exit(1)
        err.print("schemas are current")
        return
    typer.echo(render_schema(published_schemas()[f"{name.value}.schema.json"]), nl=False)
