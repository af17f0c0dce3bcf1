"""The ``blueprint`` command line: a thin adapter over the library."""

from __future__ import annotations

import codecs
import contextlib
import io
import itertools
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Final

import typer

from blueprint.cli._commands import LazyCommands, click_exceptions

#: the commands are not registered here: LazyCommands imports each one's module when it runs
app = typer.Typer(
    cls=LazyCommands,
    name="blueprint",
    help="Build, validate and convert golden sets whose cases declare their oracle type.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=True,
)


def _version(value: bool) -> None:
    if value:
        from blueprint import __version__

        typer.echo(f"blueprint {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Build, validate and convert golden sets whose cases declare their oracle type."""


def _wants_json(arguments: list[str]) -> bool:
    """Whether the command line asks for JSON reports (--report json or --report=json)."""
    return "--report=json" in arguments or any(
        pair == ("--report", "json") for pair in itertools.pairwise(arguments)
    )


#: command-line parsing errors
_PARSING_ERRORS = click_exceptions("ClickException")


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


#: the error handler of the standard streams: what their encoding cannot spell is escaped
_ESCAPE: Final = "blueprint-escape"


def _escape(error: UnicodeError) -> tuple[str, int]:
    """``\\u00e9`` for a character the stream's encoding lacks (surrogate pairs beyond the
    Basic Plane): inside JSON it is the same string, and text stays readable."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be", "surrogatepass")
    escaped = "".join(
        f"\\u{int.from_bytes(units[at : at + 2], 'big'):04x}" for at in range(0, len(units), 2)
    )
    return escaped, error.end


def _encodable_streams() -> None:
    """A terminal, pipe or locale whose encoding cannot spell every character
    (``PYTHONIOENCODING=ascii``, ``LANG=C`` on an old Python) gets escapes instead of a
    UnicodeEncodeError half-way through the output."""
    codecs.register_error(_ESCAPE, _escape)
    for stream in (sys.stdout, sys.stderr):
        # strict, or surrogateescape (a C locale's stdout): both fail on a character the
        # encoding lacks; backslashreplace (stderr's default there) never does
        if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict", "surrogateescape"):
            with contextlib.suppress(ValueError, OSError):  # closed, or not reconfigurable
                stream.reconfigure(errors=_ESCAPE)


class _ClosedOutput(io.TextIOBase):
    """Standard output when the command started with it closed (``>&-``): writing to it
    fails as writing to a closed descriptor does, so a command that prints says so and exits
    2, while one that prints nothing there runs as usual."""

    encoding = "utf-8"
    errors = "strict"

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError("standard output is closed")

    def flush(self) -> None:
        pass


def _closed_streams() -> None:
    """A command started with a standard stream closed gets /dev/null in its place, so that
    no file it opens takes descriptor 0, 1 or 2 (which a command it runs would then read or
    write). Python leaves such a stream None: stdout becomes :class:`_ClosedOutput`, stdin and
    stderr /dev/null."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            try:
                opened = os.open(os.devnull, os.O_RDWR)
            except OSError:
                continue
            if opened != descriptor:
                os.dup2(opened, descriptor)
                os.close(opened)
    if sys.stdout is None:
        sys.stdout = _ClosedOutput()
    if sys.stderr is None:
        sys.stderr = Path(os.devnull).open("w", encoding="utf-8")  # noqa: SIM115 - kept open
    if sys.stdin is None:
        sys.stdin = Path(os.devnull).open(encoding="utf-8")  # noqa: SIM115 - kept open


def main() -> None:
    """The console script. A signal that stops it (SIGINT, SIGTERM, SIGHUP) removes its
    temporary files and exits with 128 + the signal's number, as a shell reports it."""
    _closed_streams()
    _install_signal_handlers()
    _encodable_streams()
    try:
        _run()
    except _Stopped as stopped:
        from blueprint.cli._common import err

        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP)
            err.print(f"stopped by {signal.Signals(stopped.signum).name}")
        sys.exit(128 + stopped.signum)


def _run() -> None:
    """Errors in the command line itself (an unknown option, a format that does not exist)
    are reported as JSON too when --report json was asked for. The consoles are imported
    only on the way out: --help needs none of what they bring."""
    try:
        code = app(standalone_mode=False)
    except _PARSING_ERRORS as error:
        from blueprint.cli._common import print_json

        message, exit_code = error.format_message(), error.exit_code  # type: ignore[attr-defined]
        if _wants_json(sys.argv[1:]) and message:
            with contextlib.suppress(OSError):  # the message goes to stderr below anyway
                print_json({"error": message, "exitCode": exit_code})
        error.show()  # type: ignore[attr-defined]
        sys.exit(exit_code)
    except typer.Abort:
        from blueprint.cli._common import err

        err.print("aborted")
        sys.exit(1)
    except OSError as error:  # stdout written outside a command's boundary (a parsing error)
        from blueprint.cli._common import err, quiet_stdout, stdout_failure

        quiet_stdout()
        err.print(f"[bold red]error:[/] {stdout_failure(error)}")
        sys.exit(2)
    try:
        sys.stdout.flush()
    except OSError as error:  # what the command printed could not all be written
        from blueprint.cli._common import err, quiet_stdout, stdout_failure

        quiet_stdout()
        err.print(f"[bold red]error:[/] {stdout_failure(error)}")
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
