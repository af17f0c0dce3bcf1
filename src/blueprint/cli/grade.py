"""blueprint grade: each recorded result graded as its row's oracle type says, one verdict a row."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final
from xml.etree import ElementTree

import typer

from blueprint.cli import _gating, _trials
from blueprint.cli._common import (
    Engine,
    EngineName,
    Force,
    FromFormat,
    InputFile,
    Scheduler,
    boundary,
    dask_engine,
    err,
    escape,
    jobs_option,
    joined,
    out,
    print_pieces,
    refuse_engine_misuse,
    refuse_output_over_inputs,
    value_of,
    visible,
)
from blueprint.core.errors import UsageError
from blueprint.grading import GradingOptions, grade_set, pass_rate
from blueprint.grading.gates import GateOptions
from blueprint.grading.report import GradeReport
from blueprint.grading.semantics import STARTER_MARK
from blueprint.io.atomic import AtomicOutputs
from blueprint.reports.writers import github_command


class GradeReportKind(StrEnum):
    text = "text"
    json = "json"
    junit = "junit"
    markdown = "markdown"
    github = "github"
    html = "html"


class ArgumentMatch(StrEnum):
    subset = "subset"
    exact = "exact"


@boundary
def grade_command(
    set_path: InputFile,
    results: Annotated[
        list[Path],
        typer.Argument(
            help="Recorded results: JSON Lines (or CSV with JSON cells), one result a row run:"
            ' {"id", "output", "toolCalls", "finalState", "judge", "trial"}; or a runner\'s own'
            " results (promptfoo's results file, an Inspect log, DeepEval's test run, LangSmith"
            " and Braintrust experiment exports). Several files are several trials (each file"
            " one, or the trials its results name).",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="Write the report to this file instead of stdout.",
            show_default=False,
        ),
    ] = None,
    report: Annotated[
        GradeReportKind, typer.Option("--report", help="The report's form.")
    ] = GradeReportKind.text,
    source_format: FromFormat = None,
    shards: Annotated[
        bool,
        typer.Option(
            "--shards",
            help="SET is a set in shards: a folder or a glob of JSON Lines and Parquet files"
            " read as one set (as --from shards).",
        ),
    ] = False,
    jobs: Annotated[
        int,
        jobs_option(
            "Processes to validate and grade a large set with (0: one per core; a JSON"
            " document, and a set under 32 MiB, are graded in one); with --engine dask, the"
            " workers of a local cluster."
        ),
    ] = 0,
    engine: Engine = EngineName.local,
    scheduler: Scheduler = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--workdir",
            help="A folder file_exists checks look in (read only, confined to it).",
            show_default=False,
        ),
    ] = None,
    allow_commands: Annotated[
        bool,
        typer.Option(
            "--allow-commands",
            help="Run command checks that have no recorded exit code (a set's commands never"
            " run unasked).",
        ),
    ] = False,
    command_timeout: Annotated[
        float, typer.Option("--command-timeout", help="Seconds a command check may run.")
    ] = 30.0,
    arguments: Annotated[
        ArgumentMatch,
        typer.Option(
            "--arguments",
            help="How a tool call's arguments match: subset (the expected ones among those"
            " given) or exact.",
        ),
    ] = ArgumentMatch.subset,
    pass_grade: Annotated[
        float,
        typer.Option("--pass-grade", help="The grade a graded acceptable-set member needs."),
    ] = 1.0,
    min_scored: Annotated[
        int,
        typer.Option(
            "--min-scored",
            min=0,
            help="Fail (exit 1) unless at least this many rows got a pass or a fail (starter"
            " examples do not count): results that score nothing are not a green gate.",
        ),
    ] = 1,
    validated_judges: Annotated[
        bool,
        typer.Option(
            "--validated-judges",
            help="Fail (exit 1) when a counted judged verdict comes from a judge no passing"
            " judge-validation report validated (missing, stale, unconfirmed...).",
        ),
    ] = False,
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            min=1,
            help="With several trials: the k of pass@k and pass^k in the summary, and beside"
            " 1 and n on each row (default: the number of trials; at most that).",
            show_default=False,
        ),
    ] = None,
    baseline: Annotated[
        list[Path] | None,
        typer.Option(
            "--baseline",
            help="The results of an earlier run of the set (repeat it for several trials):"
            " rows are paired on id, and the report shows what changed, with each oracle"
            " type's and family's paired difference; the regression gates need it.",
            show_default=False,
        ),
    ] = None,
    gate_severity: Annotated[
        list[str] | None,
        typer.Option(
            "--gate-severity",
            help="A case-family severity whose rows may not go from pass to fail against the"
            " baseline (default: blocker; repeat it for more).",
            show_default=False,
        ),
    ] = None,
    drop_gate: Annotated[
        bool,
        typer.Option(
            "--drop-gate/--no-drop-gate",
            help="Fail when a case family's paired difference against the baseline lies wholly"
            " below zero (a drop beyond noise).",
        ),
    ] = True,
    min_scored_share: Annotated[
        float,
        typer.Option(
            "--min-scored-share",
            help="Fail unless at least this share of the counted rows got a pass or a fail.",
        ),
    ] = 0.0,
    claim: Annotated[
        float | None,
        typer.Option(
            "--claim",
            help="A failure rate each high-risk cell (R2/R3, B2/B3) must be shown to be below:"
            " fail when a cell has a failing case or too few passing cases for it.",
            show_default=False,
        ),
    ] = None,
    confidence: Annotated[
        float, typer.Option("--confidence", help="The confidence of intervals and claims.")
    ] = 0.95,
    force: Force = False,
) -> None:
    """Grade recorded results against a set: one verdict a row, kept apart by oracle type.

    A row passes or fails by its oracle type's rule (docs/grading.md). The set is obeyed
    first: a row it has an error in (an evaluator its oracle type bars) is invalid and gets
    no verdict. A row graded by an LLM judge needs the judge's verdict in its result, and
    each judged verdict says whether a passing judge-validation report validated its judge
    (model and template); an expected-behavior-only or human row needs a person and gets no
    number; a row with no result is not-run; a starter row is an example, graded but counted
    in no pass rate. Exit 0 when no counted row fails, 1 when one does, a row is invalid,
    a judge is unvalidated under --validated-judges, or fewer rows than
    --min-scored were scored, 2 for unusable input (a result for a row the set does not
    have, the same row twice in one trial, a field of the wrong type).

    Several trials (several results files, a `trial` key, an Inspect log's epochs,
    promptfoo's --repeat) give each row a verdict in each, with its share passed, pass@k
    and pass^k over its scored trials; a row passes only when every scored trial passes,
    and each oracle type and case family gets the trials' means over its rows.
    """
    if workdir is not None and not workdir.is_dir():
        raise UsageError(f"--workdir {workdir}: no such folder")
    if not 0 <= pass_grade <= 1:
        raise UsageError(f"--pass-grade {pass_grade:g}: a grade is between 0 and 1")
    if not (math.isfinite(command_timeout) and command_timeout > 0):
        raise UsageError(f"--command-timeout {command_timeout:g}: a number of seconds above 0")
    refuse_output_over_inputs(output, set_path, *results)
    options = GradingOptions(
        arguments="exact" if arguments is ArgumentMatch.exact else "subset",
        pass_grade=pass_grade,
        workdir=workdir,
        allow_commands=allow_commands,
        command_timeout=command_timeout,
    )
    try:
        gates = GateOptions(
            severities=tuple(gate_severity or ("blocker",)),
            drops=drop_gate,
            min_scored_share=min_scored_share,
            claim=claim,
            confidence=confidence,
        )
    except ValueError as error:
        raise UsageError(str(error)) from None
    refuse_output_over_inputs(output, *(baseline or []))
    if shards and source_format is not None:
        raise UsageError("--shards is --from shards: give one of them")
    refuse_engine_misuse(engine, scheduler, shards)
    set_format = "shards" if shards else value_of(source_format)
    with contextlib.ExitStack() as stack:
        cluster = None
        if engine is EngineName.dask:
            cluster = stack.enter_context(dask_engine(jobs, scheduler))
        graded = grade_set(
            set_path, results, options, source_format=set_format, k=k, jobs=jobs, engine=cluster
        )
        before = None
        if baseline:
            before = grade_set(
                set_path, baseline, options, source_format=set_format, jobs=jobs, engine=cluster
            )
    graded.run_gates(gates, before)
    # rendered once, for where it goes (a report of many rows takes seconds to render), and
    # the text and JSON reports written as they are made
    if output is not None:
        with AtomicOutputs([output], force=force) as outputs:
            written = outputs.open(output)
            for chunk in joined(_rendered(graded, report)):
                written.write(chunk)
        err.print(f"wrote {escape(str(output))} ({report.value})")
    elif report is GradeReportKind.text:
        _print_text(graded)
    else:
        print_pieces(_rendered(graded, report))
    short = graded.scored < min_scored
    if graded.invalid:
        err.print(
            f"[bold red]{graded.invalid} row(s) invalid:[/] the set forbids grading them;"
            " run blueprint validate on it"
        )
    if short:
        err.print(
            f"[bold red]{graded.scored} row(s) scored[/], fewer than --min-scored"
            f" {min_scored}: nothing here shows the set passes"
        )
    unvalidated = graded.unvalidated_judges
    if unvalidated:
        style = "bold red" if validated_judges else "yellow"
        err.print(
            f"[{style}]{unvalidated} judged verdict(s) from a judge no passing report"
            " validated[/] (blueprint judge-report; docs/judge-validation.md)"
        )
    refused = validated_judges and unvalidated > 0
    for failure in graded.gate_failures:
        err.print(f"[bold red]gate failed:[/] {escape(failure.gate)}: {escape(failure.reason)}")
    gated = bool(graded.gate_failures)
    raise typer.Exit(1 if graded.failed or graded.invalid or short or refused or gated else 0)


def _rendered(graded: GradeReport, report: GradeReportKind) -> Iterator[str]:
    """The report, in pieces (the text and JSON reports a row at a time)."""
    if report is GradeReportKind.html:
        from blueprint.reports.gradepage import render_html

        # the page shows the summary and the gates, not the rows: they are not gathered
        page = graded.to_json(rows=[])
        yield render_html(page, graded.set_path.name, graded.confidence)
    elif report is GradeReportKind.github:
        for line in _gating.gate_annotations(str(graded.set_path), graded.gate_failures):
            yield line + "\n"
        for row in graded.gold:
            if row.verdict in ("fail", "invalid"):
                yield (
                    github_command(
                        "error", str(graded.set_path), f"blueprint grade: {row.id}", row.reason
                    )
                    + "\n"
                )
    elif report is GradeReportKind.junit:
        yield from _junit(graded)
    elif report is GradeReportKind.markdown:
        yield from _markdown(graded)
    elif report is GradeReportKind.json:
        yield from graded.json_text()
        yield "\n"
    else:
        for line in _text_lines(graded):
            yield line + "\n"


def _rate(counts: dict[str, Any]) -> str:
    rate = pass_rate(counts)
    return "-" if rate is None else f"{rate:.0%}"


def _interval(counts: dict[str, Any]) -> str:
    """A group's pass-rate interval (``[55-69]``), and the bound on its failure rate when
    nothing failed ("", without a scored row)."""
    interval = counts.get("interval")
    if not interval:
        return ""
    shown = f"[{interval['low']:.0%}-{interval['high']:.0%}]"
    bound = counts.get("failureBound")
    return shown if bound is None else f"{shown}, failure rate below {bound:.1%}"


def _rate_and_interval(counts: dict[str, Any]) -> str:
    """``62% [55-69]``, as the text report shows a pass rate."""
    interval = _interval(counts)
    return _rate(counts) + (f" {interval}" if interval else "")


def _text_lines(graded: GradeReport) -> Iterator[str]:
    """The text report's lines: a row's, each in turn, then the summary's."""
    k = graded.trials.k if graded.trials else 1
    for row, trials in zip(graded.rows, graded.row_trials(), strict=True):
        score = "" if row.score is None else f" {row.score:.2f}"
        mark = f" {STARTER_MARK}" if row.starter else ""
        note = "" if trials is None else _trials.row_note(trials, k)
        judge = _judge_note(graded, row)
        yield f"{row.verdict:<11} {row.id}{score}{mark}{note}: {row.reason}{judge}"
    yield from _summary_lines(graded)


def _summary_lines(graded: GradeReport) -> list[str]:
    lines: list[str] = []
    summary = graded.summary()
    counts = summary["verdicts"]
    starters = summary["starterExamples"]
    lines.append("")
    counted = ", ".join(f"{counts[name]} {name}" for name in counts if counts[name])
    lines.append(f"{summary['rows']} row(s): {counted or 'none counted'}")
    if starters["rows"]:
        shown = ", ".join(f"{n} {name}" for name, n in starters["verdicts"].items() if n)
        lines.append(
            f"{starters['rows']} starter example(s), not gold, in no count or pass rate: {shown}"
        )
    judges = {name: n for name, n in summary["judgeValidation"].items() if n}
    if judges:
        shown = ", ".join(f"{n} {name}" for name, n in judges.items())
        lines.append(f"judged verdicts, by whether their judge is validated: {shown}")
    for title, key in (("by oracle type", "byOracleType"), ("by case family", "byCaseFamily")):
        lines.append(f"{title} (pass rate over pass and fail only, starter examples apart):")
        for name, group in summary[key].items():
            parts = [f"{group[verdict]} {verdict}" for verdict in counts if group.get(verdict)]
            if group["starterExamples"]:
                parts.append(f"{group['starterExamples']} starter example(s)")
            lines.append(f"  {name}: {_rate_and_interval(group)} ({', '.join(parts)})")
    cells = summary["riskCells"]
    if cells:
        lines.append("high-risk cells (reversibility/blast radius):")
        for name, cell in cells.items():
            lines.append(
                f"  {name}: {_rate_and_interval(cell)} ({cell['pass']} pass, {cell['fail']} fail)"
            )
    lines += _trials.text_lines(graded, summary)
    if graded.comparison is not None:
        lines += _gating.comparison_lines(graded.comparison)
    return lines + _gating.gate_lines(graded.gate_failures)


def _judge_note(graded: GradeReport, row: Any) -> str:
    """Who judged a judged verdict, and whether that judge is validated."""
    check = graded.judge_check(row)
    if check is None:
        return ""
    judge = row.judge or {}
    named = ", ".join(f"{key} {judge[key]}" for key in ("model", "template") if key in judge)
    by = f"judged by {named}; " if named else ""
    return f" [{by}judge {check.status}: {check.reason}]"


def _print_text(graded: GradeReport) -> None:
    lines = _text_lines(graded)
    if not out.is_terminal:
        # a report piped to a file or a program: plain lines, written as they are made
        print_pieces(visible(line) + "\n" for line in lines)
        return
    styles = {"pass": "green", "fail": "bold red", "not-run": "yellow", "invalid": "bold red"}
    # the rows first (zip stops at the last row without taking a summary line)
    for row, line in zip(graded.rows, lines, strict=False):
        style = styles.get(row.verdict, "cyan")
        out.print(f"[{style}]{escape(line[:11])}[/]{escape(line[11:])}", highlight=False)
    for line in lines:
        out.print(escape(line), highlight=False)


def _markdown(graded: GradeReport) -> Iterator[str]:
    """The markdown report in pieces: the summary's tables, a row at a time, the gates."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    summary = graded.summary()
    lines = [f"# Grades: {cell(graded.set_path.name)}", ""]
    for title, key in (("Oracle type", "byOracleType"), ("Case family", "byCaseFamily")):
        lines += [
            f"| {title} | rows | pass | fail | needs judge | needs human | not run | invalid"
            " | starter examples | pass rate | interval |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, group in summary[key].items():
            lines.append(
                f"| {cell(name)} | {group['rows']} | {group['pass']} | {group['fail']} |"
                f" {group['needs-judge']} | {group['needs-human']} | {group['not-run']} |"
                f" {group['invalid']} | {group['starterExamples']} | {_rate(group)} |"
                f" {_interval(group)} |"
            )
        lines.append("")
    lines.append(
        "Pass rates count pass and fail only; starter examples are shown but counted in no"
        " pass rate."
    )
    trials = _trials.markdown_lines(graded, summary, cell)
    if trials:
        lines += ["", *trials[:-1]]
        lines += ["", "| Row | Verdict | Score | Trials | Reason |", "|---|---|---|---|---|"]
    else:
        lines += ["", "| Row | Verdict | Score | Reason |", "|---|---|---|---|"]
    yield "\n".join(lines)  # ends in the row table's head, never in a line break
    for row, found in zip(graded.rows, graded.row_trials(), strict=True):
        score = "" if row.score is None else f"{row.score:.2f}"
        mark = f" {STARTER_MARK}" if row.starter else ""
        reason = row.reason + _judge_note(graded, row)
        column = f" {_trials.markdown_cell(found)} |" if trials else ""
        yield f"\n| {cell(row.id)} | {row.verdict}{mark} | {score} |{column} {cell(reason)} |"
    gates = _gating.comparison_markdown(graded.comparison, graded.gate_failures)
    yield ("\n\n" + gates).rstrip("\n") + "\n"


def _junit(graded: GradeReport) -> Iterator[str]:
    """The JUnit report in pieces, a test case a row, as ``ElementTree`` indents and writes
    the whole suite: the suite with a stand-in for the rows is written once, and each row's
    case is indented at the suite's children's depth and written in the stand-in's place."""
    # a starter example is skipped whatever its verdict (an example, not gold); an invalid
    # row is an error (the set forbids grading it)
    totals = graded.totals()
    suite = ElementTree.Element(
        "testsuite",
        name=f"blueprint grade {graded.set_path.name}",
        tests=str(totals.rows + len(graded.gate_failures)),
        failures=str(totals.verdicts["fail"] + len(graded.gate_failures)),
        errors=str(totals.invalid),
        skipped=str(totals.rows - totals.invalid - graded.scored),
    )
    _trials.junit_suite(suite, graded.trials)
    rows = totals.rows > 0
    if rows:
        ElementTree.SubElement(suite, _STAND_IN)
    _gating.add_gate_cases(suite, graded.gate_failures)
    ElementTree.indent(suite)
    whole = ElementTree.tostring(suite, encoding="unicode")
    head, _, tail = whole.partition(f"<{_STAND_IN} />")
    yield '<?xml version="1.0" encoding="utf-8"?>\n' + head
    k = graded.trials.k if graded.trials else 1
    first = True
    for row, trials in zip(graded.rows, graded.row_trials(), strict=True) if rows else ():
        case = ElementTree.Element(
            "testcase", name=row.id, classname=row.case_family or row.oracle_type or "set"
        )
        _trials.junit_case(case, trials, k)
        if row.verdict == "invalid":
            ElementTree.SubElement(case, "error", message=row.reason, type="invalid")
        elif row.starter:
            ElementTree.SubElement(
                case, "skipped", message=f"{STARTER_MARK} {row.verdict}: {row.reason}"
            )
        elif row.verdict == "fail":
            ElementTree.SubElement(case, "failure", message=row.reason, type="fail")
        elif row.verdict != "pass":
            ElementTree.SubElement(case, "skipped", message=f"{row.verdict}: {row.reason}")
        ElementTree.indent(case, level=1)
        yield ("" if first else "\n  ") + ElementTree.tostring(case, encoding="unicode")
        first = False
    yield tail + "\n"


#: the element standing in for the rows' test cases while the suite around them is written
_STAND_IN: Final = "blueprint-rows"
