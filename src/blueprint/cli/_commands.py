"""The command table: where each command lives and its one-line help, so --help imports none."""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
from dataclasses import dataclass
from typing import Any, Final

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption


@dataclass(frozen=True)
class CommandEntry:
    """One command of ``blueprint``: the module and name of its function (or of the Typer of
    its subcommands), and the first paragraph of its help, which is what --help lists."""

    module: str
    attribute: str
    summary: str


#: every command, in the order --help lists them (typer lists commands before groups); a
#: test holds each summary equal to the first paragraph of the command's own help
COMMANDS: Final[dict[str, CommandEntry]] = {
    "validate": CommandEntry(
        "blueprint.cli.validate",
        "validate_command",
        "Validate sets: schema, admissibility and every rule, in one pass over each file.",
    ),
    "check": CommandEntry(
        "blueprint.cli.check",
        "check_command",
        "Check the project's golden sets: validation, round-trips and committed exports.",
    ),
    "convert": CommandEntry(
        "blueprint.cli.convert",
        "convert_command",
        "Convert a set to another format; every dropped field, left-out row and weakened rule "
        "is reported.",
    ),
    "diff": CommandEntry(
        "blueprint.cli.diff",
        "diff_command",
        "Show rows added, removed and changed (by id), and changed set-level fields.",
    ),
    "roundtrip": CommandEntry(
        "blueprint.cli.convert",
        "roundtrip_command",
        "Export a set through a format, read it back, and compare declared with actual loss.",
    ),
    "formats": CommandEntry(
        "blueprint.cli.reference",
        "formats_command",
        "List the formats Blueprint reads and writes.",
    ),
    "evaluators": CommandEntry(
        "blueprint.cli.reference",
        "evaluators_command",
        "Show which evaluators each oracle type admits, admits with conditions, or bars.",
    ),
    "schema": CommandEntry(
        "blueprint.cli.reference",
        "schema_command",
        "Print a published JSON Schema, or write them all (generated from the models).",
    ),
    "new": CommandEntry(
        "blueprint.cli.build",
        "new_command",
        "Scaffold a new set from a pack (and overlays), in any format Blueprint writes.",
    ),
    "oracle": CommandEntry(
        "blueprint.cli.build",
        "oracle_command",
        "Set a row's oracle type and narrow its evaluator to the admissible ones.",
    ),
    "add": CommandEntry(
        "blueprint.cli.build",
        "add_command",
        "Add a row to a case family, or outside any family with --oracle-type.",
    ),
    "rm": CommandEntry("blueprint.cli.curate", "rm_command", "Remove rows by id."),
    "rename": CommandEntry(
        "blueprint.cli.curate",
        "rename_command",
        "Rename a row: its id and case.caseId change together.",
    ),
    "edit": CommandEntry(
        "blueprint.cli.rowedit",
        "edit_command",
        "Change a row's fields by path: input, expected, metadata.case.*, metadata.*.",
    ),
    "merge": CommandEntry(
        "blueprint.cli.curate",
        "merge_command",
        "Merge two sets into a new one; conflicts are reported, never overwritten silently.",
    ),
    "accept": CommandEntry(
        "blueprint.cli.curate",
        "accept_command",
        "Confirm values an import derived, so validate stops reporting them (derived-value).",
    ),
    "promote": CommandEntry(
        "blueprint.cli.curate",
        "promote_command",
        "Turn starter or imported rows into gold, recording who reviewed them and when.",
    ),
    "dedupe": CommandEntry(
        "blueprint.cli.hygiene",
        "dedupe_command",
        "Find inputs that repeat, exactly or nearly, within and across sets.",
    ),
    "split": CommandEntry(
        "blueprint.cli.hygiene",
        "split_command",
        "Give every row a metadata.split, stratified by case family and oracle type.",
    ),
    "sample": CommandEntry(
        "blueprint.cli.hygiene",
        "sample_command",
        "Write a seeded sample of SIZE rows, stratified by case family and oracle type.",
    ),
    "grade": CommandEntry(
        "blueprint.cli.grade",
        "grade_command",
        "Grade recorded results against a set: one verdict a row, kept apart by oracle type.",
    ),
    "studio": CommandEntry(
        "blueprint.cli.studio",
        "studio_command",
        "Review rows, promote starter rows and label judge verdicts in a local web app.",
    ),
    "judge-report": CommandEntry(
        "blueprint.cli.judge",
        "judge_report_command",
        "Measure an LLM judge against human labels on a set's own cases, per case family.",
    ),
    "summary": CommandEntry(
        "blueprint.cli.reports",
        "summary_command",
        "A set at a glance: rows by oracle type, evaluator, case family, provenance and split; "
        "linked-concern coverage; the action-risk matrix; what each vendor export leaves out;"
        " and the retired cases.",
    ),
    "risk": CommandEntry(
        "blueprint.cli.reports",
        "risk_command",
        "The action-risk matrix: reversibility (R0-R3) by blast radius (B0-B3), and the "
        "high-risk cases (R3, B3, or R2+ with B2+) that lack an escalation expectation or an "
        "expert reviewer.",
    ),
    "render": CommandEntry(
        "blueprint.cli.reports",
        "render_command",
        "Render the set as a page for the people who review it: case families with their "
        "rows, provenance, linked concerns, action risk, judge validation and vendor exports.",
    ),
    "packs": CommandEntry(
        "blueprint.cli.build",
        "packs_app",
        "List the task-family packs and overlays, show one, or check a pack file.",
    ),
    "family": CommandEntry(
        "blueprint.cli.curate",
        "family_app",
        "Create, change or remove a case family (the rows that share how they are graded).",
    ),
}


def click_exceptions(name: str) -> tuple[type[Exception], ...]:
    """The exception classes of that name in click, which newer typers ship inside themselves
    (the module differs between typer versions)."""
    errors: list[type[Exception]] = []
    for module_name in ("typer._click.exceptions", "click.exceptions"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        errors.append(getattr(module, name))
    return tuple(errors)


_USAGE_ERRORS: Final = click_exceptions("UsageError")


#: a paragraph that is laid out by hand, and keeps its line breaks: click's \b marker, or a
#: line after the first that is indented or starts a list item
_LAID_OUT: Final = re.compile(r"\A\x08|\n(?:\s|[-*\u2022] |\d+[.)] )")


def reflow(text: str | None) -> str | None:
    """Help text with each paragraph on one line, for the terminal to wrap at its own width:
    docstrings are broken at 100 columns, and rich panels print those breaks as they are,
    leaving short orphan lines at 80 (paragraphs laid out by hand keep their breaks)."""
    if text is None:
        return None
    help_text, marker, rest = inspect.cleandoc(text).partition("\f")
    paragraphs = [
        paragraph if _LAID_OUT.search(paragraph) else " ".join(paragraph.split())
        for paragraph in help_text.strip().split("\n\n")
    ]
    return "\n\n".join(paragraphs) + marker + rest


def _tidy_own_help(command: Any, ctx: Any) -> None:
    command.help = reflow(command.help)
    for param in command.get_params(ctx) if ctx is not None else command.params:
        if isinstance(param, TyperOption) and param.is_bool_flag and param.metavar is None:
            param.metavar = ""  # typer shows a metavar that is set, and shows "" as nothing


def tidy_help(command: Any, ctx: Any = None) -> Any:
    """A command (and, for a group, its subcommands) with its help reflowed and no metavar on
    its flags: a flag takes no value, so typer's ``<bool>`` beside one misleads. Without a
    context, the --help option (made per context) is left until a context tidies it."""
    _tidy_own_help(command, ctx)
    for subcommand in getattr(command, "commands", {}).values():
        tidy_help(subcommand, ctx)
    return command


class TidyGroup(TyperGroup):
    """A group whose help, and that of the commands it hands out, goes through ``tidy_help``
    (the eager registration the start-up test compares with uses it too)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        return None if command is None else tidy_help(command, ctx)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _tidy_own_help(self, ctx)  # not its commands: a listing need not build them
        super().format_help(ctx, formatter)


def build_command(name: str) -> Any:
    """The click command of one entry, built by typer exactly as ``app.command(name)`` or
    ``app.add_typer(..., name=name)`` would build it (the import happens here)."""
    entry = COMMANDS[name]
    target = getattr(importlib.import_module(entry.module), entry.attribute)
    holder = typer.Typer()
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    return tidy_help(typer.main.get_group(holder).commands[name])


class LazyCommands(TidyGroup):
    """The root group: a command's module is imported when the command runs (or its own
    --help is asked for), never to list it; the listing reads the summaries above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._built: dict[str, Any] = {}
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *COMMANDS]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        if self._listing:
            # all a listing reads of a command: its name, summary, and that it is not hidden
            return TyperCommand(name=cmd_name, help=COMMANDS[cmd_name].summary)
        if cmd_name not in self._built:
            self._built[cmd_name] = build_command(cmd_name)
        return tidy_help(self._built[cmd_name], ctx)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except _USAGE_ERRORS as error:
            # typer suggests a command for a typo from those registered with it, and none are
            # (typers before 0.16 suggest nothing)
            if getattr(self, "suggest_commands", False) and args:
                matches = difflib.get_close_matches(args[0], self.list_commands(ctx))
                if matches:
                    message = error.message.rstrip(".")  # type: ignore[attr-defined]
                    suggestions = ", ".join(f"{match!r}" for match in matches)
                    error.message = f"{message}. Did you mean {suggestions}?"  # type: ignore[attr-defined]
            raise

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
