"""The ``blueprint`` command line: a thin adapter over the library."""

from __future__ import annotations

import typer

from blueprint import __version__
from blueprint.cli.build import add_command, new_command, oracle_command, packs_app
from blueprint.cli.convert import convert_command, roundtrip_command
from blueprint.cli.diff import diff_command
from blueprint.cli.reference import evaluators_command, formats_command, schema_command
from blueprint.cli.validate import validate_command

app = typer.Typer(
    name="blueprint",
    help="Build, validate and convert golden sets whose cases declare their oracle type.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"blueprint {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Build, validate and convert golden sets whose cases declare their oracle type."""


app.command("validate")(validate_command)
app.command("convert")(convert_command)
app.command("diff")(diff_command)
app.command("roundtrip")(roundtrip_command)
app.command("formats")(formats_command)
app.command("evaluators")(evaluators_command)
app.command("schema")(schema_command)
app.add_typer(packs_app, name="packs")
app.command("new")(new_command)
app.command("oracle")(oracle_command)
app.command("add")(add_command)


def main() -> None:
    app()
