"""The ``blueprint`` command line: a thin adapter over the library."""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
import signal
import sys
from types import FrameType
from typing import Final

import typer

from blueprint import __version__
from blueprint.cli._common import err, print_json, stdout_failure
from blueprint.cli.build import add_command, new_command, oracle_command, packs_app
from blueprint.cli.check import check_command
from blueprint.cli.convert import convert_command, roundtrip_command
from blueprint.cli.curate import (
    accept_command,
    family_app,
    merge_command,
    promote_command,
    rename_command,
    rm_command,
)
from blueprint.cli.diff import diff_command
from blueprint.cli.hygiene import dedupe_command, sample_command, split_command
from blueprint.cli.judge import judge_report_command
from blueprint.cli.reference import evaluators_command, formats_command, schema_command
from blueprint.cli.reports import render_command, risk_command, summary_command
from blueprint.cli.validate import validate_command

app = typer.Typer(
    name="blueprint",
    help="Build, validate and convert golden sets whose cases declare their oracle type.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=True,
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
app.command("check")(check_command)
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
app.command("rm")(rm_command)
app.command("rename")(rename_command)
app.add_typer(family_app, name="family")
app.command("merge")(merge_command)
app.command("accept")(accept_command)
app.command("promote")(promote_command)
app.command("dedupe")(dedupe_command)
app.command("split")(split_command)
app.command("sample")(sample_command)
app.command("judge-report")(judge_report_command)
app.command("summary")(summary_command)
app.command("risk")(risk_command)
app.command("render")(render_command)


def _wants_json(arguments: list[str]) -> bool:
    """Whether the command line asks for JSON reports (--report json or --report=json)."""
    return "--report=json" in arguments or any(
        pair == ("--report", "json") for pair in itertools.pairwise(arguments)
    )


def _parsing_errors() -> tuple[type[Exception], ...]:
    """The exception classes of command-line parsing errors: click's, which newer typers
    ship inside themselves (the module differs between typer versions)."""
    errors: list[type[Exception]] = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        errors.append(module.ClickException)
    return tuple(errors)


_PARSING_ERRORS = _parsing_errors()


class _Stopped(BaseException):
    """A signal asked the command to stop: raised where it runs, so that every ``finally``
    and ``with`` on the way out removes its temporary files (not an Exception, so that no
    boundary mistakes it for an error of the command's)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: the signals that stop a command cleanly (SIGHUP: the terminal closed)
_STOPPING: Final = (
    (signal.SIGINT, signal.SIGTERM)
    if sys.platform == "win32"
    else (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
)


def _stop(signum: int, frame: FrameType | None) -> None:
    for stopping in _STOPPING:  # a second signal must not cut the clean-up short
        signal.signal(stopping, signal.SIG_IGN)
    raise _Stopped(signum)


def _install_signal_handlers() -> None:
    for stopping in _STOPPING:
        if signal.getsignal(stopping) is not signal.SIG_IGN:  # nohup, a background job
            signal.signal(stopping, _stop)


def main() -> None:
    """The console script. A signal that stops it (SIGINT, SIGTERM, SIGHUP) removes its
    temporary files and exits with 128 + the signal's number, as a shell reports it."""
    _install_signal_handlers()
    try:
        _run()
    except _Stopped as stopped:
        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP)
            err.print(f"stopped by {signal.Signals(stopped.signum).name}")
        sys.exit(128 + stopped.signum)


def _run() -> None:
    """Errors in the command line itself (an unknown option, a format that does not exist)
    are reported as JSON too when --report json was asked for."""
    try:
        code = app(standalone_mode=False)
    except _PARSING_ERRORS as error:
        message, exit_code = error.format_message(), error.exit_code  # type: ignore[attr-defined]
        if _wants_json(sys.argv[1:]) and message:
            with contextlib.suppress(OSError):  # the message goes to stderr below anyway
                print_json({"error": message, "exitCode": exit_code})
        error.show()  # type: ignore[attr-defined]
        sys.exit(exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(1)
    except OSError as error:  # stdout written outside a command's boundary (a parsing error)
        _quiet_stdout()
        err.print(f"[bold red]error:[/] {stdout_failure(error)}")
        sys.exit(2)
    try:
        sys.stdout.flush()
    except OSError as error:  # what the command printed could not all be written
        _quiet_stdout()
        err.print(f"[bold red]error:[/] {stdout_failure(error)}")
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of a full disk or a
    closed pipe does not end in a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
