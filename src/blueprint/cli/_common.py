"""What every command shares: consoles, option types, and the error-to-exit-code boundary."""

from __future__ import annotations

import contextlib
import errno
import functools
import inspect
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape as escape_markup

from blueprint.core.errors import BlueprintError, UsageError
from blueprint.core.issues import Issue
from blueprint.core.model import EVALUATOR_TYPES, ORACLE_TYPES, PROVENANCES
from blueprint.formats import REGISTRY, ExportResult, SetSource, SourceRow, UnreadableRow
from blueprint.formats.base import ROW_WATCHER, ReadOptions, reading_with
from blueprint.formats.setfile import set_file_for
from blueprint.io.samefile import refuse_writing_over

#: characters a terminal acts on rather than shows: C0 controls but tab and newline, DEL, C1
#: controls, and the bidirectional overrides that make text read in another order
_CONTROL: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def escape(text: str) -> str:
    """Text from a dataset or the command line, made safe to print for a person: rich markup
    escaped, and every control character shown as its code (``\\x1b``), so that an id
    holding an escape sequence cannot recolour the terminal, move the cursor or write to the
    clipboard."""
    return escape_markup(_CONTROL.sub(_visible, text))


def visible(text: str) -> str:
    """Text from a dataset made safe for a terminal, as :func:`escape` makes it, for output
    that is not rich markup (a plain report piped to a file)."""
    return _CONTROL.sub(_visible, text)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


#: notes, progress and warnings about the run go to stderr; what a command was asked to
#: produce (listings, machine output) goes to stdout
class _StdoutConsole(Console):
    """A console on stdout whose reader went away (``| head -1``) raises BrokenPipeError,
    which the boundary reports as every failure to write stdout is reported (exit 2), where
    rich alone would exit 1 in silence."""

    def on_broken_pipe(self) -> None:
        quiet_stdout()
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")


err = Console(stderr=True, highlight=False, soft_wrap=True)
out = _StdoutConsole(highlight=False, soft_wrap=True)

#: how wide a listing may grow when stdout is a pipe or a file: wide enough that no table is
#: folded to fit, so every line reaches grep whole
PIPED_WIDTH: Final = 100_000


def listing_console(*, stderr: bool = False) -> Console:
    """The console a listing or table is printed on: stdout (stderr for a table that is a
    note about the run), at the terminal's width in a terminal, and at :data:`PIPED_WIDTH`
    piped or redirected."""
    # built per call: sys.stdout is whatever it is now (a test runner swaps it)
    kind = Console if stderr else _StdoutConsole
    console = kind(file=sys.stderr if stderr else sys.stdout, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console.width = PIPED_WIDTH
    return console


def print_listing(listing: Any, *, stderr: bool = False) -> None:
    """A listing or table the command was asked for, on stdout (or, with ``stderr``, one
    that tells what a run did, beside its notes).

    In a terminal it fits the terminal. Piped or redirected, it is laid out at its natural
    width: no cell is cut, folded or wrapped to 80 columns, so ids and paths stay whole and
    ``blueprint evaluators | grep judge`` finds full lines.
    """
    listing_console(stderr=stderr).print(listing)


class ReportKind(StrEnum):
    text = "text"
    json = "json"
    junit = "junit"
    github = "github"


class SimpleReport(StrEnum):
    text = "text"
    json = "json"


#: choices built from the registry and the model, so the CLI never keeps its own list
FormatName = StrEnum("FormatName", [(name, name) for name in REGISTRY])  # type: ignore[misc]
OracleName = StrEnum("OracleName", [(name, name) for name in ORACLE_TYPES])  # type: ignore[misc]
EvaluatorName = StrEnum("EvaluatorName", [(name, name) for name in EVALUATOR_TYPES])  # type: ignore[misc]
ProvenanceName = StrEnum("ProvenanceName", [(name, name) for name in PROVENANCES])  # type: ignore[misc]

FromFormat = Annotated[
    FormatName | None,
    typer.Option(
        "--from",
        help="Format of the input (default: from the file extension).",
        show_default=False,
    ),
]
ToFormat = Annotated[
    FormatName | None,
    typer.Option(
        "--to",
        help="Format of the output (default: from the file extension).",
        show_default=False,
    ),
]
Force = Annotated[bool, typer.Option("--force", help="Overwrite an existing output file.")]
Report = Annotated[
    SimpleReport,
    typer.Option("--report", help="text (for people, on stderr) or json (on stdout)."),
]
InputFile = Annotated[Path, typer.Argument(help="A set file.", show_default=False)]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="The configuration file (default: blueprint.toml, or pyproject.toml's"
        " \\[tool.blueprint], found from the working folder up).",
        show_default=False,
    ),
]

AllowPath = Annotated[
    list[Path] | None,
    typer.Option(
        "--allow-path",
        metavar="DIR",
        exists=True,
        file_okay=False,
        help="A folder files may also be read from (repeatable): files a set refers to"
        " (promptfoo's tests: file://...) beyond the set's own folder and the working folder,"
        " files a walk of a named folder finds beyond it, and paths a project configuration"
        " names beyond the project's folder.",
        show_default=False,
    ),
]


def jobs_option(help: str) -> Any:
    """``--jobs``/``-j``: a number of processes (0: one per core), as a command uses them."""
    return typer.Option("--jobs", "-j", min=0, help=help)


class EngineName(StrEnum):
    local = "local"
    dask = "dask"


Engine = Annotated[
    EngineName,
    typer.Option(
        "--engine",
        help="Where --shards are read: local (this machine's processes, --jobs) or dask"
        " (a Dask cluster: --scheduler, or a local one of --jobs workers; the dask extra).",
    ),
]
Scheduler = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="The Dask scheduler's address (tcp://host:8786) for --engine dask; without"
        " it, a local cluster.",
        show_default=False,
    ),
]


def refuse_engine_misuse(engine: EngineName, scheduler: str | None, shards: bool) -> None:
    """--engine dask reads a set in shards; --scheduler is for it alone."""
    if engine is not EngineName.local and not shards:
        raise UsageError("--engine dask reads a set of shards: add --shards")
    if scheduler is not None and engine is not EngineName.dask:
        raise UsageError("--scheduler is the Dask scheduler's address: add --engine dask")


@contextlib.contextmanager
def dask_engine(jobs: int, scheduler: str | None) -> Iterator[Any]:
    """The Dask cluster at ``scheduler``, or a local one of ``jobs`` workers (0: a core
    each), for the length of the block."""
    from blueprint.validation.engines import DaskEngine
    from blueprint.validation.parallel import default_jobs

    with DaskEngine(jobs or default_jobs(), scheduler) as cluster:
        yield cluster


Quiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bar while large sets are read.")
]

#: a set is read this far before its progress bar appears: smaller ones are read in moments
PROGRESS_AFTER_ROWS: Final = 2000
#: how often the bar moves, in rows: often enough to look alive, rarely enough to cost nothing
_PROGRESS_STEP: Final = 500


@contextlib.contextmanager
def row_progress(*, quiet: bool = False, console: Console | None = None) -> Iterator[None]:
    """A progress bar on stderr for every set read inside, once it passes a few thousand rows.

    Never with ``--quiet``, and never when stderr is not a terminal: a pipe, a CI log or a
    test runner sees nothing of it.
    """
    console = console or err
    if quiet or not console.is_terminal:
        yield
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,} rows"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    owner = os.getpid()  # worker processes forked by check --jobs draw nothing

    def watch(source: SetSource) -> Iterator[SourceRow | UnreadableRow]:
        if os.getpid() != owner:
            return source.rows
        return _counted(source.rows, source.path.name, bar)

    token = ROW_WATCHER.set(watch)
    try:
        yield
    finally:
        ROW_WATCHER.reset(token)
        bar.stop()


def _counted(
    rows: Iterator[SourceRow | UnreadableRow], name: str, bar: Any
) -> Iterator[SourceRow | UnreadableRow]:
    task = None
    for count, item in enumerate(rows, start=1):
        if count % _PROGRESS_STEP == 0:
            if task is not None:
                bar.update(task, completed=count)
            elif count >= PROGRESS_AFTER_ROWS:
                bar.start()  # a no-op once started
                task = bar.add_task(f"reading {escape(name)}", total=None, completed=count)
                bar.refresh()  # drawn at once, not at the next tick
        yield item
    if task is not None:
        bar.remove_task(task)


def refuse_output_over_inputs(
    output: Path | None, *inputs: Path | None, writes_set: bool = False, instead: str = ""
) -> None:
    """Refuse (exit 2, even with --force) an output that names a file the command reads: an
    input, or the set file beside a canonical data file, by any name (a link, ``./``, a
    hard link). A command that writes a set writes the set file beside it too."""
    if output is None:
        return
    read: list[Path] = []
    for given in inputs:
        if given is None:
            continue
        read.append(given)
        beside = set_file_for(given)
        with contextlib.suppress(OSError):
            if beside.is_file():
                read.append(beside)
    written = [output, set_file_for(output)] if writes_set else [output]
    refuse_writing_over(written, read, instead=instead)


def value_of(choice: StrEnum | None) -> str | None:
    return None if choice is None else choice.value


def print_json(data: Any) -> None:
    """Machine output: JSON on stdout, nothing else there."""
    try:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
    except OSError as error:
        raise stdout_failure(error) from None


def print_pieces(pieces: Iterable[str]) -> None:
    """Text made a piece at a time (a large report's rows), on stdout as it comes, in
    writes of some 64 KiB."""
    try:
        for chunk in joined(pieces):
            typer.echo(chunk, nl=False)
    except OSError as error:
        raise stdout_failure(error) from None


def joined(pieces: Iterable[str], size: int = 1 << 16) -> Iterator[str]:
    """Pieces of text joined into chunks of about ``size`` characters."""
    held: list[str] = []
    length = 0
    for piece in pieces:
        held.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(held)
            held, length = [], 0
    if held:
        yield "".join(held)


Strict = Annotated[
    bool,
    typer.Option(
        "--strict",
        help="Refuse (exit 1, write nothing) if the export would drop a field, leave out a row"
        " or weaken a rule.",
    ),
]
IncludeHumanReview = Annotated[
    bool,
    typer.Option(
        "--include-human-review",
        help="Export rows no automated grader may score, marked for human review.",
    ),
]
Clean = Annotated[
    bool,
    typer.Option(
        "--clean",
        help="Write the vendor file with no Blueprint key at all, for a team that leaves"
        " Blueprint: what the records alone do not say is reported as dropped.",
    ),
]
SpreadsheetSafe = Annotated[
    bool,
    typer.Option(
        "--spreadsheet-safe",
        help="In a CSV output, write a cell a spreadsheet would run as a formula (it begins"
        " with =, +, -, @, a tab or a carriage return) with a leading ' so it shows as text;"
        " the quote stays in the value, and the change is reported as a loss.",
    ),
]
BaselineRate = Annotated[
    float,
    typer.Option(
        "--baseline-rate",
        help="The pass rate each family's power is worked out at. One half, the default,"
        " is where a pass rate varies most, and close to the worst case.",
    ),
]
LlmJudge = Annotated[
    bool,
    typer.Option(
        "--llm-judge",
        help="Write rubric rows as LLM-judge assertions in a format whose runner does not grade"
        " them today (apollia: every llm_judge assertion fails); left out otherwise.",
    ),
]

#: how many row ids a loss line names before it says "and N more"
ROW_ID_PREVIEW = 5
_LOSS_LABELS: Final = {
    "dropped": "[yellow]dropped[/]",
    "excluded": "[yellow]left out[/]",
    "weakened": "[magenta]weakened[/]",
}


def print_export(export: ExportResult) -> None:
    """What a write produced, and every loss it declared, for people (stderr)."""
    files = " and ".join(escape(str(path)) for path in export.files)
    err.print(f"wrote {files} ({export.format}, {export.rows} rows)")
    for lossy in export.lossy:
        preview = ", ".join(lossy.row_ids[:ROW_ID_PREVIEW])
        more = f" and {lossy.count - ROW_ID_PREVIEW} more" if lossy.count > ROW_ID_PREVIEW else ""
        rows = f"{lossy.count} row(s) ({escape(preview)}{more})"
        label = _LOSS_LABELS[lossy.kind]
        if lossy.kind == "excluded":
            what = rows
        elif lossy.scope == "set":
            what = f"set-level field {escape(lossy.field)}"
        else:
            what = f"{escape(lossy.field)} in {rows}"
        err.print(f"{label} {what}: {escape(lossy.reason)}")
    for note in export.notes:
        err.print(f"[yellow]note:[/] {escape(note)}")
    print_write_findings(export.findings)


def print_write_findings(findings: Sequence[Issue]) -> None:
    """Findings about a file just written (a CSV cell a spreadsheet would run, a column an
    edit added), for people."""
    for finding in findings:
        where = f"row {finding.row_id}" if finding.row_index is not None else "header"
        label = "[yellow]warning[/]" if finding.severity == "warning" else finding.severity
        hint = (
            " (convert and new write it as text with --spreadsheet-safe)"
            if finding.code == "spreadsheet-formula"
            else ""
        )
        err.print(f"{label} {finding.code} ({escape(where)}): {escape(finding.message)}{hint}")


P = ParamSpec("P")
R = TypeVar("R")


def boundary(command: Callable[P, R]) -> Callable[P, R]:
    """Turn library errors into a message and an exit code; never show a traceback.

    BlueprintError subclasses carry their own exit code (1 or 2). Anything else is a bug in
    Blueprint and exits 3 with a one-line message.
    """

    # a command with a --quiet option reads sets big enough for a progress bar
    shows_progress = "quiet" in inspect.signature(command).parameters

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            refuse_undecodable(kwargs, command)
            # a command taking --allow-path passes it to every reader it runs, through here
            given: Any = kwargs.get("allow_path") or ()
            allowed = tuple(Path(folder) for folder in given)
            with reading_with(ReadOptions(allowed_paths=allowed)):
                if not shows_progress:
                    return command(*args, **kwargs)
                with row_progress(quiet=bool(kwargs.get("quiet"))):
                    return command(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except BlueprintError as error:
            _fail(str(error), error.exit_code, kwargs)
        except StdoutError as error:
            _fail(str(error), 2, {})  # stdout is what failed: say it on stderr only
        except BrokenPipeError as error:  # only stdout is a pipe Blueprint writes to
            quiet_stdout()
            _fail(str(stdout_failure(error)), 2, {})
        except OSError as error:  # the machine refused (disk full, permissions): not a bug
            _fail(str(error), 2, kwargs)
        except Exception as error:
            stop = stop_within(error)
            if stop is not None:
                raise stop from None
            _fail(
                "internal error (a bug in blueprint; please report it):"
                f" {type(error).__name__}: {error}",
                3,
                kwargs,
            )

    return wrapper


def stop_within(error: Exception) -> BaseException | None:
    """A stop (^C, or a signal's exception: none is an Exception) that Python wrapped in an
    error of its own, as Python 3.11 wraps whatever a class attribute's ``__set_name__``
    raises (``RuntimeError: Error calling __set_name__``) when the signal arrives while a
    module being imported makes a class. The stop is what happened, not a bug."""
    seen: set[int] = set()
    found = error.__cause__ or error.__context__
    while found is not None and id(found) not in seen:
        if not isinstance(found, Exception):
            return found
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return None


#: a character no UTF-8 text holds: what Python makes of a byte of the command line that is
#: not UTF-8 (``\\udcff`` for 0xff)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
#: arguments that may name a file, whose name may be any bytes: the rest are text
_FILE_NAMES: Final = frozenset({"pack", "pack_name", "overlay"})


def refuse_undecodable(arguments: dict[str, Any], command: Callable[..., Any]) -> None:
    """Refuse (exit 2) text given on the command line that is not UTF-8 (a row id, a value
    for --text): no set can hold it, and no writer could write it. Paths are let be: a file
    name may be any bytes."""
    for name, value in arguments.items():
        if name in _FILE_NAMES:
            continue
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, str) and _SURROGATE.search(item):
                raise UsageError(
                    f"{_option_of(command, name)} {item!a}: not UTF-8 text (the command line"
                    " holds bytes that no set can hold as text)"
                )


def _option_of(command: Callable[..., Any], name: str) -> str:
    """How a command's parameter is written on its command line (--text, or ROW)."""
    import typing

    try:
        hint = typing.get_type_hints(command, include_extras=True).get(name)
    except Exception:  # an annotation that does not resolve: the parameter's own name
        hint = None
    for meta in getattr(hint, "__metadata__", ()):
        # in Annotated, typer takes an Option's first argument as its first name
        names = [getattr(meta, "default", None), *(getattr(meta, "param_decls", None) or ())]
        declared = [d for d in names if isinstance(d, str) and d.startswith("--")]
        if declared:
            return declared[0]
        metavar = getattr(meta, "metavar", None)
        if isinstance(metavar, str):
            return metavar
    return name.upper()


def _fail(message: str, code: int, arguments: dict[str, Any]) -> NoReturn:
    """Say what went wrong on stderr (and, for --report json, as JSON on stdout), then exit."""
    err.print(f"[bold red]error:[/] {escape(message)}")
    report = arguments.get("report")
    if isinstance(report, StrEnum) and report.value == "json":
        with contextlib.suppress(StdoutError):  # said on stderr already
            print_json({"error": message, "exitCode": code})
    raise typer.Exit(code)


class StdoutError(BlueprintError, OSError):
    """Standard output cannot be written (a full disk, a closed pipe)."""


def quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of a full disk or a
    closed pipe does not end in a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def stdout_failure(error: OSError) -> StdoutError:
    reason = error.strerror or str(error)
    return StdoutError(f"cannot write to standard output: {reason}")
