"""`blueprint check`: every configured set validated, round-tripped and compared with its
committed exports, in one report that CI reads.

For each set it runs, in order: validation (with the project's code selection), the starter-row
limit, the canonical round-trip (json, jsonl and csv: nothing may change), each configured
round-trip (the loss must be exactly the declared loss, and within the project's lossy and
weakened policy), and each committed export (exporting the set today must give the committed
file byte for byte). A set with errors is not exported: those steps are skipped and say why.
"""

from __future__ import annotations

import filecmp
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, Final, Literal

from blueprint.authoring.hygiene import find_duplicates
from blueprint.convert import ConvertOptions, RoundtripResult, convert, roundtrip
from blueprint.core.errors import BlueprintError
from blueprint.core.issues import CodeStatistic, ValidationReport, code_statistics
from blueprint.diff import diff_files
from blueprint.formats import ExportResult, LossyField
from blueprint.formats.setfile import set_file_for
from blueprint.io.atomic import scratch_folder
from blueprint.project.config import ExportSpec, GradeSpec, Project, SetSettings
from blueprint.project.discovery import Discovery, FoundSet
from blueprint.validation.validate import validate_file

CANONICAL: Final = ("json", "jsonl", "csv")
StepStatus = Literal["passed", "failed", "skipped"]
#: how many problems one step lists before it says how many more there are
PROBLEM_PREVIEW: Final = 10


@dataclass
class Step:
    """One thing asked of a set, and how it went."""

    name: str
    status: StepStatus
    #: one line for the summary table
    summary: str = ""
    #: what failed, one line each (row ids and field paths)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "problems": self.problems,
        }


@dataclass
class SetOutcome:
    """What checking one set found."""

    path: Path
    settings: SetSettings
    report: ValidationReport | None = None
    steps: list[Step] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(step.status != "failed" for step in self.steps)

    @property
    def format(self) -> str | None:
        return self.report.format if self.report is not None else self.settings.format

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "format": self.format,
            "passed": self.passed,
            "rows": self.report.rows if self.report is not None else None,
            "starterRows": self.report.starter_rows if self.report is not None else None,
            "steps": [step.to_json() for step in self.steps],
            "validation": self.report.to_json() if self.report is not None else None,
        }


@dataclass
class CheckReport:
    """Every set checked, and what the run noticed on the way (sets passed over)."""

    config: Path | None
    sets: list[SetOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(outcome.passed for outcome in self.sets)

    def statistics(self) -> list[CodeStatistic]:
        """The findings of every set grouped by code, most frequent first."""
        return code_statistics(o.report for o in self.sets if o.report is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "config": str(self.config) if self.config is not None else None,
            "sets": [outcome.to_json() for outcome in self.sets],
            "statistics": [stat.to_json() for stat in self.statistics()],
            "notes": self.notes,
        }


#: below this many sets, a pool of processes costs more than it saves
POOL_THRESHOLD: Final = 4


def check_sets(
    project: Project,
    discovery: Discovery,
    *,
    jobs: int = 1,
    compare_with: Sequence[FoundSet] = (),
) -> CheckReport:
    """Check every set found; configured sets that are missing fail as such.

    With ``jobs`` above 1 the sets are checked in that many processes at once; the report is
    the same, in the same order. ``compare_with`` names the project's other sets, searched
    for the inputs of the sets checked (a hook checks the changed sets, against all).
    """
    report = CheckReport(config=project.path, notes=list(discovery.notes))
    for path, entry in discovery.missing:
        settings = project.settings_for(path, entry)
        outcome = SetOutcome(path, settings)
        outcome.steps.append(
            Step("validate", "failed", "no such file", [f"{path}: the configuration names it"])
        )
        report.sets.append(outcome)
    workers = min(jobs, len(discovery.sets))
    if workers > 1 and len(discovery.sets) >= POOL_THRESHOLD:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            report.sets.extend(pool.map(check_set, repeat(project), discovery.sets))
    else:
        # one set at a time: a large one may still be validated by several processes
        report.sets.extend(check_set(project, found, jobs=jobs) for found in discovery.sets)
    report.sets.sort(key=lambda outcome: str(outcome.path))
    if project.config.duplicates != "off":
        _check_across_sets(report.sets, project, compare_with)
    return report


def _check_across_sets(
    outcomes: list[SetOutcome], project: Project, compare_with: Sequence[FoundSet]
) -> None:
    """The same input in two sets: a repeat, and an error when the two are different splits
    (a test case that also sits in the dev set). Within one set the validator reports them."""
    readable = [o for o in outcomes if o.report is not None and not o.report.unreadable]
    checked = {outcome.path.resolve() for outcome in outcomes}
    others = [
        project.settings_for(found.path, found.entry)
        for found in compare_with
        if found.path.resolve() not in checked and found.path.exists()
    ]
    # in the project's order (by path), so a repeat is reported on the same row whichever
    # sets were named
    searched = sorted(
        [outcome.settings for outcome in readable] + others, key=lambda item: str(item.path)
    )
    if not readable or len(searched) < 2:
        return
    name = "duplicates across sets"
    try:
        found = find_duplicates(
            [settings.path for settings in searched],
            threshold=project.config.duplicate_threshold,
            near=project.config.duplicates == "near",
            formats=[settings.format for settings in searched],
            splits=[settings.split for settings in searched],
        )
    except BlueprintError as error:
        for outcome in readable:
            outcome.steps.append(Step(name, "failed", "refused", [str(error)]))
        return
    for outcome in readable:
        assert outcome.report is not None
        options = outcome.settings.options
        issues = [
            issue
            for issue in found.issues_for(outcome.path, across_sets_only=True)
            if options.wants(issue.code)
        ]
        outcome.report.issues.extend(issues)
        failing = [
            issue
            for issue in issues
            if issue.severity == "error"
            or (issue.severity == "warning" and outcome.settings.fail_on == "warning")
        ]
        summary = (
            f"{len(issues)} input(s) also in another set" if issues else "no input of another set"
        )
        outcome.steps.append(
            Step(
                name,
                "failed" if failing else "passed",
                summary,
                [f"row {issue.row_id or issue.row_index}: {issue.message}" for issue in failing],
            )
        )


def check_set(project: Project, found: FoundSet, jobs: int = 1) -> SetOutcome:
    settings = project.settings_for(found.path, found.entry)
    outcome = SetOutcome(found.path, settings)
    try:
        report = validate_file(
            found.path,
            format=settings.format,
            options=settings.options,
            judge_reports=settings.judge_reports,
            jobs=jobs,
        )
    except BlueprintError as error:  # the format cannot be told, or the file is not there
        outcome.steps.append(Step("validate", "failed", "unreadable", [str(error)]))
        return outcome
    outcome.report = report
    outcome.steps.append(_validation_step(report, settings))
    if settings.max_starter_rows is not None:
        outcome.steps.append(_starter_step(report, settings.max_starter_rows))
    usable = report.valid
    if settings.canonical_roundtrip:
        outcome.steps.append(
            _guarded("canonical round-trip", usable, lambda: _canonical_step(found.path, settings))
        )
    for via in settings.roundtrip:
        outcome.steps.append(
            _guarded(
                f"round-trip via {via}", usable, functools.partial(_roundtrip_step, via, settings)
            )
        )
    for spec in settings.exports:
        run = functools.partial(_export_step, spec, project.resolve(spec.path), settings)
        outcome.steps.append(_guarded(f"export {spec.format} {spec.path}", usable, run))
    if settings.grade is not None:
        run = functools.partial(_grade_step, project, found.path, settings, settings.grade)
        outcome.steps.append(_guarded("grade", usable, run))
    return outcome


def _grade_step(project: Project, path: Path, settings: SetSettings, spec: GradeSpec) -> Step:
    """The set graded against its recorded results, with the gates: failed when a counted
    row fails or is invalid, or a gate fails."""
    from blueprint.grading import grade_set
    from blueprint.grading.gates import GateOptions

    results = [project.resolve(item) for item in spec.results]
    report = grade_set(path, results, source_format=settings.format)
    baseline = None
    if spec.baseline:
        baseline_paths = [project.resolve(item) for item in spec.baseline]
        baseline = grade_set(path, baseline_paths, source_format=settings.format)
    report.run_gates(
        GateOptions(
            severities=tuple(spec.gate_severity),
            drops=spec.drop_gate,
            min_scored_share=spec.min_scored_share,
            claim=spec.claim,
            confidence=spec.confidence,
        ),
        baseline,
    )
    problems = [
        f"{row.id}: {row.verdict}: {row.reason}"
        for row in report.gold
        if row.verdict in ("fail", "invalid")
    ]
    problems += [f"gate {failure.gate}: {failure.reason}" for failure in report.gate_failures]
    summary = f"{report.scored} scored row(s), {len(report.gate_failures)} gate(s) failed"
    return Step("", "failed" if problems else "passed", summary, problems)


def _guarded(name: str, usable: bool, run: Callable[[], Step]) -> Step:
    """Run a step on a valid set; a set with errors is not exported, and a refusal (a file
    that cannot be read back, an export refused) fails the step with its message."""
    if not usable:
        return Step(name, "skipped", "the set is not valid; fix it first")
    try:
        step = run()
    except BlueprintError as error:
        return Step(name, "failed", "refused", [str(error)])
    step.name = name
    return step


def _validation_step(report: ValidationReport, settings: SetSettings) -> Step:
    counts = report.counts()
    summary = (
        f"{report.rows} rows: {counts['error']} error(s), {counts['warning']} warning(s),"
        f" {counts['info']} info"
    )
    if report.unreadable:
        return Step("validate", "failed", "unreadable: " + summary)
    failing = counts["error"] + (counts["warning"] if settings.fail_on == "warning" else 0)
    return Step("validate", "failed" if failing else "passed", summary)


def _starter_step(report: ValidationReport, allowed: int) -> Step:
    summary = f"{report.starter_rows} starter row(s), {allowed} allowed"
    if report.starter_rows > allowed:
        return Step(
            "starter rows",
            "failed",
            summary,
            [
                f"{report.starter_rows} rows are starter examples, not validated gold: the set"
                f" counts as unfinished above {allowed}"
            ],
        )
    return Step("starter rows", "passed", summary)


def _canonical_step(path: Path, settings: SetSettings) -> Step:
    problems = []
    for via in CANONICAL:
        result = roundtrip(path, via, source_format=settings.format)
        problems += [f"via {via}: {line}" for line in _roundtrip_problems(result)]
        # a canonical format loses nothing: any declared loss is a failure too
        problems += [f"via {via}: {_loss_line(lossy)}" for lossy in result.export.lossy]
    if problems:
        return Step("", "failed", f"{len(problems)} difference(s)", problems)
    return Step("", "passed", "identical through " + ", ".join(CANONICAL))


def _roundtrip_step(via: str, settings: SetSettings) -> Step:
    result = roundtrip(settings.path, via, source_format=settings.format)
    problems = _roundtrip_problems(result) + _policy_problems(result.export, settings)
    summary = _loss_summary(result.export)
    if problems:
        return Step("", "failed", summary, problems)
    return Step("", "passed", summary)


def _roundtrip_problems(result: RoundtripResult) -> list[str]:
    problems = [
        f"{row}: {path} changed on the way back but the export did not declare it"
        for row, path in result.undeclared
    ]
    problems += [
        f"{row}: {lost} declared lost but came back unchanged" for row, lost in result.unobserved
    ]
    problems += [f"vendor records changed: {change}" for change in result.vendor_changes or []]
    return problems


def _policy_problems(export: ExportResult, settings: SetSettings) -> list[str]:
    problems = []
    for lossy in export.lossy:
        if lossy.kind == "weakened" and not settings.allow_weakened:
            problems.append(f"weakened (allow-weakened is false): {_loss_line(lossy)}")
        elif lossy.kind != "weakened" and not settings.allow_lossy:
            problems.append(f"{lossy.kind} (allow-lossy is false): {_loss_line(lossy)}")
    return problems


def _loss_line(lossy: LossyField) -> str:
    if lossy.kind == "excluded":
        what = f"{lossy.count} row(s)"
    elif lossy.scope == "set":
        what = f"set-level field {lossy.field}"
    else:
        what = f"{lossy.field} in {lossy.count} row(s)"
    ids = _preview(lossy.row_ids) if lossy.scope == "row" else ""
    return f"{lossy.kind} {what}{ids}: {lossy.reason}"


def _preview(ids: Iterable[str]) -> str:
    listed = list(ids)
    if not listed:
        return ""
    shown = ", ".join(listed[:5])
    more = f" and {len(listed) - 5} more" if len(listed) > 5 else ""
    return f" ({shown}{more})"


def _loss_summary(export: ExportResult) -> str:
    kinds = Counter(lossy.kind for lossy in export.lossy)
    if not kinds:
        return "exact, nothing lost"
    return "declared loss as reported: " + ", ".join(
        f"{count} {kind}" for kind, count in sorted(kinds.items())
    )


def _export_step(spec: ExportSpec, committed: Path, settings: SetSettings) -> Step:
    refresh = f"blueprint convert {settings.path} {spec.path} --to {spec.format} --force"
    if not committed.exists():
        return Step("", "failed", "missing", [f"{committed} does not exist; write it: {refresh}"])
    with scratch_folder("check") as folder:
        fresh = Path(folder) / committed.name
        result = convert(
            settings.path,
            fresh,
            ConvertOptions(
                source_format=settings.format,
                target_format=spec.format,
                include_human_review=spec.include_human_review,
                llm_judge=spec.llm_judge,
                data_format=spec.data_format,
            ),
        )
        policy = _policy_problems(result.export, settings)
        differences = _file_differences(committed, fresh)
        if differences:
            problems = [*_explain(committed, fresh, spec.format), f"regenerate it: {refresh}"]
            return Step("", "failed", "out of date", problems + policy)
    if policy:
        return Step("", "failed", _loss_summary(result.export), policy)
    return Step("", "passed", "in sync; " + _loss_summary(result.export))


def _file_differences(committed: Path, fresh: Path) -> list[str]:
    """The files that differ between a committed export and today's (a CSV or JSONL with its
    set file, a dataset folder file by file)."""
    if fresh.is_dir():
        comparison = filecmp.dircmp(committed, fresh) if committed.is_dir() else None
        if comparison is None:
            return [str(committed)]
        return _folder_differences(comparison, Path())
    pairs = [(committed, fresh)]
    if set_file_for(fresh).exists() or set_file_for(committed).exists():
        pairs.append((set_file_for(committed), set_file_for(fresh)))
    return [
        str(old)
        for old, new in pairs
        if not (old.is_file() and new.is_file() and filecmp.cmp(old, new, shallow=False))
    ]


def _folder_differences(comparison: filecmp.dircmp[str], under: Path) -> list[str]:
    found = [
        str(under / name)
        for name in (*comparison.left_only, *comparison.right_only, *comparison.diff_files)
    ]
    for name, sub in comparison.subdirs.items():
        found += _folder_differences(sub, under / name)
    return found


def _explain(committed: Path, fresh: Path, format_name: str) -> list[str]:
    """What differs between the committed export and today's, row by row where both read."""
    try:
        diff = diff_files(committed, fresh, left_format=format_name, right_format=format_name)
    except BlueprintError as error:
        return [f"{committed} differs from today's export, and cannot be read back: {error}"]
    if diff.identical:
        return [f"{committed} holds the same rows as today's export, written differently"]
    lines = [
        f"{committed} differs from today's export: {len(diff.added)} row(s) to add,"
        f" {len(diff.removed)} to remove, {len(diff.changed)} changed,"
        f" {len(diff.header)} set-level change(s)"
    ]
    lines += [f"missing from the committed export: {row}" for row in diff.added[:PROBLEM_PREVIEW]]
    lines += [f"no longer in the set: {row}" for row in diff.removed[:PROBLEM_PREVIEW]]
    lines += [f"{row.id}: {', '.join(row.paths)}" for row in diff.changed[:PROBLEM_PREVIEW]]
    return lines
