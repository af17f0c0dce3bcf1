"""blueprint rm, rename, family, merge, accept and promote: curating a set in place."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from blueprint.authoring.curate import (
    FAMILY_FIELDS,
    FamilyDefinition,
    FamilyEdit,
    FamilyOutcome,
    PromoteRequest,
    accept_derived,
    add_family,
    edit_family,
    promote,
    remove_family,
    remove_rows,
    rename_row,
)
from blueprint.authoring.merge import MergeOptions, MergeOutcome, MergeRefused, merge_sets
from blueprint.cli._common import (
    EvaluatorName,
    Force,
    FormatName,
    OracleName,
    ProvenanceName,
    Report,
    SimpleReport,
    ToFormat,
    boundary,
    err,
    escape,
    print_export,
    print_json,
    refuse_output_over_inputs,
    value_of,
)
from blueprint.cli._editing import (
    DryRun,
    SetFormat,
    SeverityName,
    did,
    edit_options,
    finish,
    print_notes,
    print_rewrite,
)
from blueprint.cli.build import DROP_EXPECTED, EXAMPLE_NOTICE, print_narrowing
from blueprint.cli.diff import print_diff
from blueprint.core.errors import UsageError
from blueprint.io.jsonvalues import dumps_text

SetFile = Annotated[Path, typer.Argument(metavar="SET", help="The set file to edit.")]


def _listed(items: list[str], limit: int = 10) -> str:
    shown = ", ".join(items[:limit])
    return escape(shown + (f" and {len(items) - limit} more" if len(items) > limit else ""))


# --- rm, rename ------------------------------------------------------------------------------


@boundary
def rm_command(
    set_file: SetFile,
    row_ids: Annotated[list[str], typer.Argument(metavar="ROW...", help="Ids of rows to remove.")],
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Remove rows by id.

    Exit 1, with the file unchanged, when an id is unknown or names several rows.
    """
    outcome = remove_rows(set_file, row_ids, edit_options(source_format, dry_run))
    print_notes(outcome.notes)
    verb = did(dry_run, "removed", "would remove")
    err.print(f"{verb} {len(outcome.removed)} row(s): {_listed(outcome.removed)}")
    for family in outcome.emptied_families:
        err.print(
            f"[yellow]note:[/] the case family {escape(family)} has no rows left (it stays"
            " defined; blueprint family rm removes it)"
        )
    print_rewrite(outcome.written)
    finish(outcome, report)


@boundary
def rename_command(
    set_file: SetFile,
    old: Annotated[str, typer.Argument(help="The row's id now.")],
    new: Annotated[str, typer.Argument(help="Its new id.")],
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Rename a row: its id and case.caseId change together.

    Exit 1, with the file unchanged, when OLD is missing or NEW is already used.
    """
    outcome = rename_row(set_file, old, new, edit_options(source_format, dry_run))
    print_notes(outcome.notes)
    err.print(f"{did(dry_run, 'renamed', 'would rename')} {escape(old)} to {escape(new)}")
    if outcome.case_id_was is not None:
        err.print(
            f"[yellow]note:[/] its case.caseId was {escape(dumps_text(outcome.case_id_was))},"
            " not its id; both are now the new id"
        )
    print_rewrite(outcome.written)
    finish(outcome, report)


# --- family ----------------------------------------------------------------------------------

family_app = typer.Typer(
    help="Create, change or remove a case family (the rows that share how they are graded).",
    no_args_is_help=True,
)

FamilyId = Annotated[str, typer.Argument(metavar="FAMILY", help="The case family's id.")]
Title = Annotated[str | None, typer.Option("--title", help="A short human name.")]
Description = Annotated[str | None, typer.Option("--description", help="What it tests.")]
Severity = Annotated[
    SeverityName | None,
    typer.Option("--severity", help="How much a failure matters: blocker, major, minor."),
]
Concerns = Annotated[
    list[str],
    typer.Option("--linked-concern", help="A concern it covers (repeatable; replaces the list)."),
]
FamilyEvaluator = Annotated[
    EvaluatorName | None,
    typer.Option("--evaluator", help="The evaluator its rows share; refused if barred."),
]


def _print_family(outcome: FamilyOutcome, dry_run: bool) -> None:
    print_notes(outcome.notes)
    definition = outcome.definition or {}
    verbs = {
        "add": ("defined", "would define"),
        "edit": ("changed", "would change"),
        "rm": ("removed", "would remove"),
    }
    verb = did(dry_run, *verbs[outcome.action])
    summary = ", ".join(
        f"{key} {escape(dumps_text(value) if not isinstance(value, str) else value)}"
        for key, value in definition.items()
        if key != "id"
    )
    err.print(
        f"{verb} the case family {escape(outcome.family)}" + (f": {summary}" if summary else "")
    )
    if outcome.oracle is not None:
        print_narrowing(outcome.oracle)
    elif outcome.conditions:
        err.print(
            f"[yellow]{definition.get('evaluator')} is admitted only if[/] "
            + "; and ".join(outcome.conditions)
        )
    if outcome.undefined:
        err.print(
            f"[yellow]warning:[/] rows name case families the set does not define:"
            f" {_listed(outcome.undefined)} (blueprint validate: unknown-case-family)"
        )


@family_app.command("add")
@boundary
def family_add(
    set_file: SetFile,
    family: FamilyId,
    oracle_type: Annotated[
        OracleName, typer.Option("--oracle-type", help="The oracle type its rows share.")
    ],
    evaluator: FamilyEvaluator = None,
    severity: Severity = None,
    title: Title = None,
    description: Description = None,
    linked_concern: Concerns = [],  # noqa: B006 - typer reads the default, never mutates it
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Define a new case family, with no rows yet (blueprint add --family fills it).

    A CSV or JSONL set without its set file gets one, which holds the families. Exit 1,
    with the file unchanged, when the id exists or the oracle type bars the evaluator.
    """
    definition = FamilyDefinition(
        id=family,
        oracle_type=oracle_type.value,
        evaluator=value_of(evaluator),
        severity=value_of(severity),
        title=title,
        description=description,
        linked_concerns=tuple(linked_concern) or None,
    )
    outcome = add_family(set_file, definition, edit_options(source_format, dry_run))
    _print_family(outcome, dry_run)
    print_rewrite(outcome.written)
    finish(outcome, report)


#: built from the library's list (a member named "title" would shadow str.title)
UnsetField = StrEnum("UnsetField", [(name, name) for name in FAMILY_FIELDS])  # type: ignore[misc]


@family_app.command("edit")
@boundary
def family_edit(
    set_file: SetFile,
    family: FamilyId,
    title: Title = None,
    description: Description = None,
    severity: Severity = None,
    linked_concern: Concerns = [],  # noqa: B006
    unset: Annotated[
        list[UnsetField],
        typer.Option("--unset", help="Remove a field (repeatable)."),
    ] = [],  # noqa: B006
    oracle_type: Annotated[
        OracleName | None,
        typer.Option(
            "--oracle-type",
            help="A new oracle type for the family and every row in it, narrowed as"
            " blueprint oracle ROW --family does.",
        ),
    ] = None,
    evaluator: FamilyEvaluator = None,
    drop_expected: Annotated[bool, DROP_EXPECTED] = False,
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Change a case family; a new oracle type or evaluator changes its rows with it.

    Exit 1, with the file unchanged, when the family does not exist or the change is
    refused (a barred evaluator, an expected value that would be lost).
    """
    edit = FamilyEdit(
        family=family,
        title=title,
        description=description,
        severity=value_of(severity),
        linked_concerns=tuple(linked_concern) if linked_concern else None,
        oracle_type=value_of(oracle_type),
        evaluator=value_of(evaluator),
        unset=frozenset(item.value for item in unset),
        drop_expected=drop_expected,
    )
    outcome = edit_family(set_file, edit, edit_options(source_format, dry_run))
    _print_family(outcome, dry_run)
    if outcome.oracle is not None and outcome.oracle.starter_rows:
        err.print(f"[yellow]note:[/] {_listed(outcome.oracle.starter_rows)}: {EXAMPLE_NOTICE}")
    print_rewrite(outcome.written)
    finish(outcome, report)


class RowsAction(StrEnum):
    drop = "drop"
    detach = "detach"


@family_app.command("rm")
@boundary
def family_rm(
    set_file: SetFile,
    family: FamilyId,
    rows: Annotated[
        RowsAction | None,
        typer.Option(
            "--rows",
            help="What happens to the family's rows: drop removes them, detach keeps them"
            " outside any family (with the family's evaluator).",
        ),
    ] = None,
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Remove a case family.

    Exit 1, with the file unchanged, while rows belong to it and --rows does not say what
    happens to them.
    """
    outcome = remove_family(
        set_file,
        family,
        rows.value if rows is not None else None,
        edit_options(source_format, dry_run),
    )
    _print_family(outcome, dry_run)
    if outcome.rows:
        what = "dropped" if rows is RowsAction.drop else "detached"
        if dry_run:
            what = f"would be {what}"
        err.print(f"{len(outcome.rows)} row(s) {what}: {_listed(outcome.rows)}")
    if outcome.took_evaluator:
        evaluator = (outcome.previous or {}).get("evaluator")
        err.print(
            f"{_listed(outcome.took_evaluator)} now name the evaluator {escape(str(evaluator))}"
            " themselves, as the family did for them"
        )
    print_rewrite(outcome.written)
    finish(outcome, report)


# --- accept, promote -------------------------------------------------------------------------


@boundary
def accept_command(
    set_file: SetFile,
    row_ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ROW]...", help="Rows whose derived values you confirm."),
    ] = None,
    every_row: Annotated[bool, typer.Option("--all", help="Every row of the set.")] = False,
    fields: Annotated[
        list[str],
        typer.Option(
            "--field",
            help="Accept only this derived field (repeatable): its path, e.g. expected or"
            " metadata.case.oracleType, or its last part (oracleType).",
        ),
    ] = [],  # noqa: B006
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Confirm values an import derived, so validate stops reporting them (derived-value).

    Review each value first (blueprint validate lists them, with how they were derived).
    Exit 1, with the file unchanged, for an unknown row; nothing to accept is exit 0.
    """
    if every_row == bool(row_ids):
        raise UsageError("name the rows to accept, or give --all (not both)")
    outcome = accept_derived(
        set_file,
        None if every_row else row_ids,
        fields or None,
        edit_options(source_format, dry_run),
    )
    print_notes(outcome.notes)
    verb = did(dry_run, "accepted", "would accept")
    for row_id, accepted in outcome.accepted.items():
        err.print(f"{verb} in {escape(row_id)}: {_listed(list(accepted))}")
    if outcome.nothing:
        err.print(f"nothing to accept in {_listed(outcome.nothing)}")
    if outcome.unmatched_fields:
        err.print(
            f"no derived value at {_listed(outcome.unmatched_fields)} (still derived there:"
            f" {_listed(outcome.derived_fields) or 'nothing'})"
        )
    if not outcome.accepted:
        err.print(f"nothing to accept: {escape(str(set_file))} is unchanged")
    print_rewrite(outcome.written)
    finish(outcome, report)


@boundary
def promote_command(
    set_file: SetFile,
    row_ids: Annotated[list[str], typer.Argument(metavar="ROW...", help="Rows you reviewed.")],
    provenance: Annotated[
        ProvenanceName,
        typer.Option(
            "--provenance",
            help="How the answer is now known (expert-authored, observed-incident, ...);"
            " starter and import provenances are refused.",
        ),
    ],
    reviewer: Annotated[str, typer.Option("--reviewer", help="Who reviewed the rows.")],
    accept: Annotated[
        bool,
        typer.Option(
            "--accept-derived",
            help="Also confirm the values an import derived (else such a row is refused).",
        ),
    ] = False,
    reviewed_at: Annotated[
        str | None,
        typer.Option(
            "--reviewed-at",
            help="When the review happened, ISO 8601 with a time zone (default: now).",
        ),
    ] = None,
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Turn starter or imported rows into gold, recording who reviewed them and when.

    The record is case.extensions["blueprint-review"]: reviewer, reviewedAt (UTC),
    previousProvenance, provenance. Exit 1, with the file unchanged, for a row that is not
    starter or imported material, or a starter provenance as the target.
    """
    request = PromoteRequest(
        row_ids=tuple(row_ids),
        provenance=provenance.value,
        reviewer=reviewer,
        accept_derived=accept,
        reviewed_at=_moment(reviewed_at),
    )
    outcome = promote(set_file, request, edit_options(source_format, dry_run))
    print_notes(outcome.notes)
    verb = did(dry_run, "promoted", "would promote")
    for row_id, before in outcome.promoted.items():
        err.print(
            f"{verb} {escape(row_id)}: {before} -> {outcome.provenance}, reviewed by"
            f" {escape(outcome.reviewer)} at {outcome.reviewed_at}"
        )
    for row_id, accepted in outcome.accepted.items():
        err.print(f"  and accepted in {escape(row_id)}: {_listed(list(accepted))}")
    print_rewrite(outcome.written)
    finish(outcome, report)


def _moment(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--reviewed-at {text!r} is not an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        raise UsageError(f"--reviewed-at {text!r} has no time zone; add one (Z for UTC)")
    return moment


# --- merge -----------------------------------------------------------------------------------


class KeepSide(StrEnum):
    a = "a"
    b = "b"


@boundary
def merge_command(
    a: Annotated[Path, typer.Argument(metavar="A", help="The first set (its fields win).")],
    b: Annotated[Path, typer.Argument(metavar="B", help="The set merged into it.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The merged set file.")],
    keep: Annotated[
        KeepSide | None,
        typer.Option(
            "--keep",
            help="For ids both sets use for different rows, and families described"
            " differently: keep a's or b's.",
        ),
    ] = None,
    suffix: Annotated[
        str | None,
        typer.Option("--suffix", help="Or give b's conflicting rows their id with this suffix."),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="The merged set's name.")] = None,
    source_format: Annotated[
        FormatName | None,
        typer.Option("--from", help="Format of both inputs (default: from each extension)."),
    ] = None,
    target_format: ToFormat = None,
    force: Force = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show the merged set against A and write nothing."),
    ] = False,
    report: Report = SimpleReport.text,
) -> None:
    """Merge two sets into a new one; conflicts are reported, never overwritten silently.

    A's rows, then B's rows A does not have; a row both hold identically is written once.
    Set-level fields come from A (a field only B has is taken; differences are listed);
    case families are the union. Exit 1, writing nothing, when an id names different rows
    (unless --keep or --suffix) or a case family is defined differently (unless --keep and
    both grade its rows the same).
    """
    refuse_output_over_inputs(output, a, b, writes_set=True)
    options = MergeOptions(
        source_format=value_of(source_format),
        target_format=value_of(target_format),
        force=force,
        dry_run=dry_run,
        keep=keep.value if keep is not None else None,
        suffix=suffix,
        name=name,
    )
    try:
        outcome = merge_sets(a, b, output, options)
    except MergeRefused as refused:
        _print_merge(refused.outcome)
        err.print(f"[bold red]error:[/] {escape(str(refused))}")
        if report is SimpleReport.json:
            print_json({**refused.outcome.to_json(), "error": str(refused), "exitCode": 1})
        raise typer.Exit(1) from None
    _print_merge(outcome)
    if outcome.export is not None:
        print_export(outcome.export)
    else:
        if outcome.diff is not None:
            print_diff(outcome.diff)
        err.print(f"[bold]dry run:[/] nothing written; {escape(str(output))} not created")
    finish(outcome, report)


def _short(value: object) -> str:
    text = dumps_text(value)
    return escape(text if len(text) <= 60 else text[:57] + "...")


def _print_merge(outcome: MergeOutcome) -> None:
    print_notes(outcome.notes)
    for choice in outcome.set_fields:
        if choice.taken == "given":
            err.print(f"set field {escape(choice.field)}: given by --name")
        elif choice.taken == "b":
            err.print(f"set field {escape(choice.field)}: only B has it, taken from B")
        else:
            err.print(
                f"[yellow]set field {escape(choice.field)}:[/] A's kept"
                f" ({_short(choice.a)}); B's was {_short(choice.b)}"
            )
    if outcome.families_from_b:
        err.print(f"case families from B: {_listed(outcome.families_from_b)}")
    for family in outcome.family_conflicts:
        settled = outcome.families_resolved.get(family.id)
        label = "[yellow]" if settled else "[red]"
        err.print(
            f"{label}case family {escape(family.id)}[/] is defined differently:"
            f" {escape(', '.join(family.fields))}" + (f": {settled}" if settled else "")
        )
    for conflict in outcome.conflicts:
        resolution = outcome.resolved.get(conflict.id)
        if conflict.id in outcome.renamed:
            resolution = f"B's renamed to {outcome.renamed[conflict.id]}"
        label = "[yellow]" if resolution else "[red]"
        err.print(
            f"{label}row {escape(conflict.id)}[/] differs in {_listed(list(conflict.paths), 5)}"
            + (f": {escape(resolution)}" if resolution else "")
        )
    if outcome.identical:
        err.print(f"{len(outcome.identical)} row(s) identical in both, written once")
    if outcome.rows:
        err.print(
            f"{'would merge' if outcome.dry_run else 'merged'} {outcome.rows} rows:"
            f" {outcome.from_a} from A, {outcome.from_b} from B"
        )
