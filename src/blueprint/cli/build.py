"""blueprint packs, new, oracle and add: scaffold a set from a pack and edit it in place."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final

import typer
from rich import box
from rich.table import Table

from blueprint.authoring.builder import (
    AddRequest,
    OracleOutcome,
    OracleRequest,
    add_row,
    set_oracle,
)
from blueprint.authoring.packs import (
    Overlay,
    Pack,
    PackError,
    build_pack_set,
    build_set,
    bundled_files,
    load_any_file,
    load_bundled_file,
    load_overlay,
    load_pack,
    pack_problems,
)
from blueprint.cli._common import (
    BaselineRate,
    EvaluatorName,
    Force,
    IncludeHumanReview,
    LlmJudge,
    OracleName,
    ProvenanceName,
    Report,
    SimpleReport,
    SpreadsheetSafe,
    Strict,
    ToFormat,
    boundary,
    err,
    escape,
    print_export,
    print_json,
    print_listing,
    value_of,
)
from blueprint.cli._editing import (
    BlastRadiusName,
    DryRun,
    ReversibilityName,
    SetFormat,
    did,
    edit_options,
    finish,
    print_notes,
    print_rewrite,
)
from blueprint.core import admissibility
from blueprint.core.errors import UsageError
from blueprint.formats import WriteOptions, resolve_codec
from blueprint.grading.semantics import may_score
from blueprint.grading.statistics import rows_needed
from blueprint.io import jsonvalues
from blueprint.reports.power import ALPHA, BASELINE_RATE, POWER, check_power_options
from blueprint.validation.validate import validate_document

EXAMPLE_NOTICE = (
    "starter rows are examples, not validated gold answers: replace their expected values"
    " and behaviours with ones that are right for your system, then change their provenance"
)

#: the change in pass rate a scaffolded set's families are sized for unless --detect names one
PLANNED_CHANGE: Final = 0.1

packs_app = typer.Typer(
    help="List the task-family packs and overlays, show one, or check a pack file.",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _summary(pack: Pack | Overlay, kind: str) -> dict[str, Any]:
    return {
        "id": pack.id,
        "kind": kind,
        "title": pack.title,
        "description": pack.description,
        "families": len(pack.case_families),
        "rows": sum(len(family.rows) for family in pack.case_families),
        "oracleTypes": sorted({family.oracle_type for family in pack.case_families}),
    }


@packs_app.callback()
@boundary
def packs_command(ctx: typer.Context, report: Report = SimpleReport.text) -> None:
    """List the bundled task-family packs and domain overlays."""
    if ctx.invoked_subcommand is not None:
        return
    entries, broken = [], []
    for path in bundled_files():
        try:  # one broken file must not hide the others
            loaded = load_bundled_file(path)
        except PackError as error:
            broken.append(str(error))
            continue
        entries.append(_summary(loaded, "overlay" if isinstance(loaded, Overlay) else "pack"))
    for problem in broken:
        err.print(f"[red]{escape(problem)}[/]")
    if report is SimpleReport.json:
        print_json(entries)
        if broken:
            raise typer.Exit(1)
        return
    table = Table(title="task-family packs and overlays")
    for heading in ("id", "kind", "families", "rows", "oracle types"):
        table.add_column(heading, no_wrap=True)
    table.add_column("title", overflow="fold")
    for entry in entries:
        table.add_row(
            entry["id"],
            entry["kind"],
            str(entry["families"]),
            str(entry["rows"]),
            f"{len(entry['oracleTypes'])} of 6",
            escape(entry["title"]),
        )
    print_listing(table)
    err.print(f"[yellow]note:[/] {EXAMPLE_NOTICE}")
    if broken:
        raise typer.Exit(1)


def _family_json(pack: Pack | Overlay) -> list[dict[str, Any]]:
    return [
        {
            "id": family.id,
            "title": family.title,
            "oracleType": family.oracle_type,
            "evaluator": family.evaluator,
            "severity": family.severity,
            "rows": len(family.rows),
            "rowIds": [row.id for row in family.rows],
            "starterExamples": True,
        }
        for family in pack.case_families
    ]


def _load_any(name: str) -> tuple[Pack | Overlay, str]:
    if name.endswith((".yaml", ".yml")):  # a file: its schemaVersion says which it is
        loaded = load_any_file(Path(name))
        return loaded, "overlay" if isinstance(loaded, Overlay) else "pack"
    try:
        return load_pack(name), "pack"
    except UsageError:
        return load_overlay(name), "overlay"


@packs_app.command("show")
@boundary
def packs_show(
    pack_name: Annotated[
        str, typer.Argument(metavar="NAME", help="A pack or overlay id, or a pack file.")
    ],
    report: Report = SimpleReport.text,
) -> None:
    """Show a pack's case families with oracle type, evaluator, severity and row counts."""
    pack, kind = _load_any(pack_name)
    families = _family_json(pack)
    if report is SimpleReport.json:
        print_json({**_summary(pack, kind), "caseFamilies": families})
        return
    print_listing(
        f"[bold]{escape(pack.title)}[/] ({kind} {escape(pack.id)}): {escape(pack.description)}"
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for heading in ("family", "oracle type", "evaluator", "severity", "rows"):
        table.add_column(heading, no_wrap=True)
    for family in families:
        table.add_row(
            family["id"],
            family["oracleType"],
            family["evaluator"],
            family["severity"],
            str(family["rows"]),
        )
    print_listing(table)
    if pack.linked_concerns:
        concerns = ", ".join(concern.id for concern in pack.linked_concerns)
        print_listing(f"concern palette (a starting point, not a taxonomy): {escape(concerns)}")
    err.print(f"[yellow]note:[/] {EXAMPLE_NOTICE}")


@packs_app.command("check")
@boundary
def packs_check(
    files: Annotated[list[Path], typer.Argument(help="Pack or overlay YAML files to check.")],
) -> None:
    """Check pack and overlay files: format, content rules, and the set they build."""
    failed = False
    for path in files:
        try:
            pack = load_any_file(path)
        except PackError as error:
            err.print(f"[red]{escape(str(error))}[/]")
            failed = True
            continue
        document = build_pack_set(pack)
        problems = pack_problems(pack) + [
            f"{issue.row_id or '(set)'}: [{issue.code}] {issue.message}"
            for issue in validate_document(document).issues
            if issue.code != "starter-example"
        ]
        for problem in problems:
            err.print(f"[red]{escape(str(path))}:[/] {escape(problem)}")
        if problems:
            failed = True
        else:
            err.print(f"[green]ok[/] {escape(str(path))} ({len(document['rows'])} starter rows)")
    raise typer.Exit(1 if failed else 0)


@boundary
def new_command(
    pack: Annotated[str, typer.Argument(help="A pack id (see blueprint packs) or a pack file.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The set file to write.")],
    overlay: Annotated[
        list[str], typer.Option("--overlay", help="A domain overlay to add (repeatable).")
    ] = [],  # noqa: B006 - typer reads the default, never mutates it
    name: Annotated[str | None, typer.Option("--name", help="The set's name.")] = None,
    target_format: ToFormat = None,
    force: Force = False,
    strict: Strict = False,
    include_human_review: IncludeHumanReview = False,
    llm_judge: LlmJudge = False,
    spreadsheet_safe: SpreadsheetSafe = False,
    baseline_rate: BaselineRate = BASELINE_RATE,
    detect: Annotated[
        float,
        typer.Option(
            "--detect",
            help="The change in pass rate (0.1: ten points) each family's rows are sized for:"
            " the note gives the scored rows a family needs to detect it.",
        ),
    ] = PLANNED_CHANGE,
) -> None:
    """Scaffold a new set from a pack (and overlays), in any format Blueprint writes.

    A vendor format gets what convert would write of the same set: the rows it can hold,
    and a report of the rows it leaves out and what it drops or weakens (--strict refuses
    any of those, exit 1, and writes nothing).

    The note on stderr lists each case family with the scored rows it needs to detect a
    change of --detect in its pass rate between two runs (80% power, 5% two-sided
    significance, at --baseline-rate). Starter rows count for none: they are examples.
    """
    try:
        check_power_options(baseline_rate, detect)
    except ValueError as error:
        raise UsageError(str(error)) from None
    chosen = load_pack(pack)
    overlays = [load_overlay(item) for item in overlay]
    if name is not None and not name.strip():
        raise UsageError("--name is empty")
    document = build_set(chosen, overlays, name=name)
    problems = [i for i in validate_document(document).issues if i.code != "starter-example"]
    if problems:
        listed = "; ".join(f"{i.row_id or '(set)'}: [{i.code}] {i.message}" for i in problems[:5])
        raise PackError(
            f"the pack builds a set that is not valid ({len(problems)} finding(s)): {listed};"
            " run blueprint packs check on it"
        )
    codec = resolve_codec(output, value_of(target_format), reading=False)
    header = {key: value for key, value in document.items() if key != "rows"}
    # the export convert would write of the same set, with the same report
    options = WriteOptions(
        force=force,
        strict=strict,
        include_human_review=include_human_review,
        llm_judge=llm_judge,
        spreadsheet_safe=spreadsheet_safe,
    )
    result = codec.write(header, iter(document["rows"]), output, options)
    print_export(result)
    if output.suffix.lower() not in codec.extensions:
        err.print(
            f"[yellow]note:[/] {escape(str(output))} holds {codec.name}, which its extension"
            f" does not say; read it back with --from {codec.name}"
        )
    # a note on what was written, so on stderr; ids are folded in a narrow terminal, never cut
    # the rows each family needs before two runs over it can show the change asked for; a
    # family a person grades gets no number from blueprint grade, so no rows make it power
    needed = str(rows_needed(baseline_rate, detect, POWER, ALPHA))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for heading in ("family", "oracle type", "evaluator", "severity", f"rows for {detect:g}"):
        table.add_column(heading, overflow="fold")
    for family in header["caseFamilies"]:
        scored = may_score(family["oracleType"], family["evaluator"])
        table.add_row(
            family["id"],
            family["oracleType"],
            family["evaluator"],
            family["severity"],
            needed if scored else "a person grades",
        )
    print_listing(table, stderr=True)
    err.print(
        f"[yellow]note:[/] rows for {detect:g}: the scored rows a family needs to detect a"
        f" change of {detect:g} in its pass rate between two runs ({POWER:.0%} power,"
        f" {ALPHA:.0%} two-sided significance, baseline pass rate {baseline_rate:g}); see"
        " blueprint summary --detect once the rows are yours"
    )
    err.print(
        f"[yellow]note:[/] all {len(document['rows'])} rows in"
        f" {len(header['caseFamilies'])} case families: {EXAMPLE_NOTICE}"
    )


DROP_EXPECTED = typer.Option(
    "--drop-expected",
    help="Allow removing expected when the new oracle type has none (rubric,"
    " expected-behavior-only).",
)
_FAMILY_SCOPE = typer.Option(
    "--family", help="Change the row's whole case family (the family and all its rows)."
)
_LEAVE_SCOPE = typer.Option(
    "--leave-family", help="Take the row out of its case family and change it alone."
)


@boundary
def oracle_command(
    set_file: Annotated[Path, typer.Argument(metavar="SET", help="The set file to edit.")],
    row_id: Annotated[str, typer.Argument(help="The id of the row.")],
    oracle_type: Annotated[OracleName, typer.Argument(metavar="ORACLE", help="The oracle type.")],
    evaluator: Annotated[
        EvaluatorName | None,
        typer.Option("--evaluator", help="The evaluator; refused if the oracle type bars it."),
    ] = None,
    whole_family: Annotated[bool, _FAMILY_SCOPE] = False,
    leave_family: Annotated[bool, _LEAVE_SCOPE] = False,
    drop_expected: Annotated[bool, DROP_EXPECTED] = False,
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Set a row's oracle type and narrow its evaluator to the admissible ones.

    Exit 1, with the file unchanged, when the evaluator is barred or the change would split a
    case family without --family or --leave-family.
    """
    if whole_family and leave_family:
        raise UsageError("use --family or --leave-family, not both")
    scope = "family" if whole_family else "leave-family" if leave_family else "row"
    request = OracleRequest(
        row_id,
        oracle_type.value,  # type: ignore[arg-type]
        evaluator.value if evaluator else None,  # type: ignore[arg-type]
        scope=scope,  # type: ignore[arg-type]
        drop_expected=drop_expected,
    )
    outcome = set_oracle(set_file, request, edit_options(source_format, dry_run))
    print_notes(outcome.notes)
    what = f"case family {outcome.family}" if scope == "family" else f"row {outcome.row_id}"
    err.print(
        f"{did(dry_run, 'set', 'would set')} {escape(what)} to {outcome.oracle_type}"
        f" ({len(outcome.rows_changed)} row(s): {escape(', '.join(outcome.rows_changed))})"
    )
    print_narrowing(outcome)
    print_rewrite(outcome.written)
    finish(outcome, report)


def print_narrowing(outcome: OracleOutcome) -> None:
    """What an oracle change did to evaluators and expected values (oracle, family edit)."""
    if outcome.left_family:
        err.print(f"the row left the case family {escape(outcome.left_family)}")
    if outcome.cleared:
        cleared, reason = outcome.cleared
        err.print(
            f"[yellow]cleared the evaluator {cleared}[/]: {outcome.oracle_type} bars it: {reason}"
        )
    if outcome.evaluator:
        err.print(f"evaluator: {outcome.evaluator}")
    for changed, (before, after) in outcome.evaluator_changes.items():
        err.print(
            f"[yellow]{escape(changed)}:[/] evaluator {before or '(none)'} -> {after or '(none)'}"
        )
    if outcome.conditions:
        err.print(
            f"[yellow]{outcome.evaluator} is admitted only if[/] "
            + "; and ".join(outcome.conditions)
        )
    if outcome.admissible:
        rule = admissibility.rule_for(outcome.oracle_type)  # type: ignore[arg-type]
        listed = [
            f"{name} (with conditions)" if name in rule.conditional else name
            for name in outcome.admissible
        ]
        err.print(f"admissible evaluators for {outcome.oracle_type}: {', '.join(listed)}")
    for row, note in outcome.expected_notes.items():
        err.print(f"[yellow]{escape(row)}:[/] {escape(note)}")
    if outcome.starter_rows:
        err.print(f"[yellow]note:[/] {escape(', '.join(outcome.starter_rows))}: {EXAMPLE_NOTICE}")


def _text_option(text: str | None, option: str) -> str | None:
    if text is not None:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(f"{option} is not valid UTF-8 text") from None
    return text


def _json_option(text: str | None, option: str) -> Any:
    text = _text_option(text, option)
    if text is None:
        return None
    try:
        return jsonvalues.loads(text)
    except jsonvalues.JSONError as error:
        raise UsageError(
            f"{option} is not valid JSON: {error.reason} (column {error.column})"
        ) from None


def _metadata_option(items: list[str]) -> dict[str, Any]:
    """--metadata values: each a JSON object, or KEY=VALUE with VALUE as text."""
    metadata: dict[str, Any] = {}
    for item in items:
        if item.lstrip().startswith("{"):
            value = _json_option(item, "--metadata")
            if not isinstance(value, dict):
                raise UsageError("--metadata: a JSON value must be an object")
            pairs = list(value.items())
        else:
            key, equals, text = item.partition("=")
            if not equals or not key:
                raise UsageError(f"--metadata {item!r}: write KEY=VALUE or a JSON object")
            pairs = [(key, _text_option(text, "--metadata"))]
        for key, value in pairs:
            if key == "case":
                raise UsageError(
                    "--metadata case: metadata.case is the case profile; set its fields with"
                    " their own options"
                )
            if key in metadata:
                raise UsageError(f"--metadata gives the key {key!r} twice")
            metadata[key] = value
    return metadata


def _option_text(value: Any) -> str | None:
    return value.value if isinstance(value, StrEnum) else value


@boundary
def add_command(
    set_file: Annotated[Path, typer.Argument(metavar="SET", help="The set file to edit.")],
    row_id: Annotated[str, typer.Option("--id", help="The new row's id.")],
    behavior: Annotated[
        str, typer.Option("--behavior", help="expectedBehavior: what should happen, and why.")
    ],
    provenance: Annotated[
        ProvenanceName,
        typer.Option("--provenance", help="Where the row comes from (no default: say it)."),
    ],
    family: Annotated[
        str | None,
        typer.Option(
            "--family",
            help="The case family the row joins; it takes the family's oracle type and"
            " evaluator. Without it, give --oracle-type.",
        ),
    ] = None,
    oracle_type: Annotated[
        OracleName | None,
        typer.Option("--oracle-type", help="The oracle type of a row outside any family."),
    ] = None,
    evaluator: Annotated[
        EvaluatorName | None,
        typer.Option("--evaluator", help="The evaluator; refused if the oracle type bars it."),
    ] = None,
    input_text: Annotated[str | None, typer.Option("--input", help="The input, as text.")] = None,
    input_json: Annotated[
        str | None, typer.Option("--input-json", help="The input, as JSON.")
    ] = None,
    expected_text: Annotated[
        str | None, typer.Option("--expected", help="The expected value, as text.")
    ] = None,
    expected_json: Annotated[
        str | None, typer.Option("--expected-json", help="The expected value, as JSON.")
    ] = None,
    scenario: Annotated[str | None, typer.Option("--scenario")] = None,
    actor: Annotated[
        str | None, typer.Option("--actor", help="Who acts: a customer, an admin, an API.")
    ] = None,
    unacceptable: Annotated[
        list[str], typer.Option("--unacceptable", help="An unacceptable behaviour (repeatable).")
    ] = [],  # noqa: B006
    criterion: Annotated[
        list[str], typer.Option("--criterion", help="An evaluation criterion (repeatable).")
    ] = [],  # noqa: B006
    reversibility: Annotated[
        ReversibilityName | None,
        typer.Option("--reversibility", help="What a failure costs to undo: R0 to R3."),
    ] = None,
    blast_radius: Annotated[
        BlastRadiusName | None,
        typer.Option("--blast-radius", help="How far a failure travels: B0 to B3."),
    ] = None,
    linked_concern: Annotated[
        list[str], typer.Option("--linked-concern", help="A linked concern (repeatable).")
    ] = [],  # noqa: B006
    tool_action: Annotated[
        str | None, typer.Option("--tool-action-expectation", help="Which tools, how.")
    ] = None,
    escalation: Annotated[
        str | None,
        typer.Option("--escalation-expectation", help="Whether and when to escalate."),
    ] = None,
    reviewer_expertise: Annotated[str | None, typer.Option("--reviewer-expertise")] = None,
    pass_logic: Annotated[str | None, typer.Option("--pass-logic")] = None,
    case_version: Annotated[
        str | None, typer.Option("--case-version", help="case.version: the case's own version.")
    ] = None,
    retirement: Annotated[
        str | None,
        typer.Option("--retirement-condition", help="When the case should leave the set."),
    ] = None,
    extensions: Annotated[
        str | None,
        typer.Option("--extensions", help="case.extensions, as JSON: namespace -> object."),
    ] = None,
    metadata: Annotated[
        list[str],
        typer.Option(
            "--metadata",
            help="Row metadata: KEY=VALUE (VALUE as text) or a JSON object (repeatable).",
        ),
    ] = [],  # noqa: B006
    source_format: SetFormat = None,
    dry_run: DryRun = False,
    report: Report = SimpleReport.text,
) -> None:
    """Add a row to a case family, or outside any family with --oracle-type.

    In a family, the row takes the family's oracle type and evaluator. Exit 1, with the
    file unchanged, when the row would not be valid.
    """
    if (input_text is None) == (input_json is None):
        raise UsageError("give the input once: --input TEXT or --input-json JSON")
    if expected_text is not None and expected_json is not None:
        raise UsageError("give the expected value once: --expected or --expected-json")
    if family is None and oracle_type is None:
        raise UsageError("a row outside any case family needs --oracle-type; or name its --family")
    texts = {
        "scenario": (scenario, "--scenario"),
        "actor": (actor, "--actor"),
        "toolActionExpectation": (tool_action, "--tool-action-expectation"),
        "escalationExpectation": (escalation, "--escalation-expectation"),
        "reviewerExpertise": (reviewer_expertise, "--reviewer-expertise"),
        "passLogic": (pass_logic, "--pass-logic"),
        "version": (case_version, "--case-version"),
        "retirementCondition": (retirement, "--retirement-condition"),
    }
    case: dict[str, Any] = {key: _text_option(text, name) for key, (text, name) in texts.items()}
    case.update(
        {
            "unacceptableBehavior": unacceptable or None,
            "evaluationCriteria": criterion or None,
            "linkedConcerns": linked_concern or None,
            "reversibility": _option_text(reversibility),
            "blastRadius": _option_text(blast_radius),
            "extensions": _json_option(extensions, "--extensions"),
        }
    )
    request_args: dict[str, Any] = {}
    if expected_text is not None or expected_json is not None:
        request_args["expected"] = (
            expected_text
            if expected_text is not None
            else _json_option(expected_json, "--expected-json")
        )
    request = AddRequest(
        family=family,
        row_id=row_id,
        input=_text_option(input_text, "--input")
        if input_text is not None
        else _json_option(input_json, "--input-json"),
        expected_behavior=_text_option(behavior, "--behavior") or "",
        provenance=provenance.value,
        case={key: value for key, value in case.items() if value is not None},
        metadata=_metadata_option(metadata),
        oracle_type=value_of(oracle_type),
        evaluator=value_of(evaluator),
        **request_args,
    )
    outcome = add_row(set_file, request, edit_options(source_format, dry_run))
    print_notes(outcome.notes)
    row_case = outcome.row["metadata"]["case"]
    where = f"to {escape(family)}" if family is not None else "outside any case family"
    err.print(
        f"{did(dry_run, 'added', 'would add')} {escape(row_id)} {where} as row"
        f" {outcome.position + 1} of the set: {row_case['oracleType']}, evaluator"
        f" {row_case.get('evaluator', '(any admissible)')}"
    )
    if provenance.value in ("starter-example", "overlay-starter-needs-expert-validation"):
        err.print(f"[yellow]note:[/] {escape(row_id)}: {EXAMPLE_NOTICE}")
    for warning in outcome.warnings:
        err.print(f"[yellow]warning:[/] {escape(warning)}")
    print_rewrite(outcome.written)
    finish(outcome, report)
