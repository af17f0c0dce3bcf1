"""Grading a whole set against its recorded results, with the summary kept apart by oracle
type and case family (a pass rate over rows of different oracle types means nothing alone).

The set is validated first and obeyed: a row the validator finds an error in gets the verdict
``invalid`` and no number, and an error that belongs to no row refuses the whole set. Starter
rows are graded as examples: shown, marked, and counted in no pass rate.

Several trials (results files, or the trials a file names) give each row a verdict in each
and its figures (:mod:`blueprint.grading.trials`); the row's own verdict passes only when
every scored trial passes, and each oracle type and case family gets the trials' figures
over its rows. With one trial, nothing of this appears.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from blueprint.convert import complete_header, data_rows, open_set
from blueprint.core.errors import ParseError, UsageError
from blueprint.core.issues import ERROR_CODES, Issue, IssueLog
from blueprint.formats.base import SetSource
from blueprint.formats.shards import Shards, find_shards
from blueprint.grading.buckets import GradingEngine, grade_in_buckets
from blueprint.grading.compare import Comparison, compare_runs, family_severities
from blueprint.grading.gates import GateFailure, GateOptions, run_gates
from blueprint.grading.judges import JUDGE_STATUSES, JudgeCheck, JudgeChecks
from blueprint.grading.results import require_readable
from blueprint.grading.semantics import VERDICTS, GradingOptions, RowVerdict
from blueprint.grading.streamed import UnknownResultIds, grade_rows
from blueprint.grading.trials import GroupFigures, RowTrials, TrialRun
from blueprint.validation import parallel
from blueprint.validation.engines import SMALL_BUCKET_BYTES, LocalEngine, PoolEngine, TaskEngine
from blueprint.validation.parallel import default_jobs, pieces, set_size, worth_a_pool
from blueprint.validation.stream import ValidationOptions
from blueprint.validation.validate import validate_file, validate_shards


class SetNotGradable(UsageError):
    """The set has errors that belong to no one row (a case family declared twice, a header
    that does not read): no row of it is graded."""

    #: how many of those errors the message names (the rest are counted)
    SHOWN: ClassVar[int] = 5

    def __init__(self, set_path: Path, issues: list[Issue], count: int | None = None) -> None:
        """``issues``: the errors (or the first of them, with ``count`` in all)."""
        count = len(issues) if count is None else count
        shown = "; ".join(f"{issue.code}: {issue.message}" for issue in issues[: self.SHOWN])
        more = f" and {count - self.SHOWN} more" if count > self.SHOWN else ""
        super().__init__(
            f"{set_path}: the set is not valid, so no row is graded ({shown}{more});"
            " run blueprint validate"
        )
        self.issues = issues[: self.SHOWN]
        self.count = count


@dataclass
class GradeReport:
    """Every row's verdict, in the set's order, and where the results came from."""

    set_path: Path
    #: the (first) results file
    results_path: Path
    rows: Sequence[RowVerdict] = field(default_factory=list)
    #: the judge checks of the judged rows that got a pass or a fail (None: no check)
    judges: JudgeChecks | None = None
    #: every results file, in the order given
    results_paths: list[Path] = field(default_factory=list)
    #: the trials, and each row's verdict in each (in the order of ``rows``); None for a
    #: run of one trial
    trials: TrialRun | None = None
    #: the severity each declared case family names
    severities: dict[str, str] = field(default_factory=dict)
    #: the comparison with a baseline run, where one was given
    comparison: Comparison | None = None
    #: the gates that failed (see :func:`blueprint.grading.gates.run_gates`)
    gate_failures: list[GateFailure] = field(default_factory=list)
    #: the confidence of the summary's intervals
    confidence: float = 0.95
    _totals: Totals | None = field(default=None, init=False, repr=False, compare=False)
    _totals_of: tuple[int, int] = field(default=(0, 0), init=False, repr=False, compare=False)

    def run_gates(self, options: GateOptions, baseline: GradeReport | None = None) -> None:
        """Compare with a baseline run (when given) and run the gates on this report."""
        self.confidence = options.confidence
        if baseline is not None:
            self.comparison = compare_runs(self.rows, baseline.rows, options.confidence)
        self.gate_failures = run_gates(
            self.rows,
            options,
            comparison=self.comparison,
            severities=self.severities,
        )

    @property
    def unvalidated_judges(self) -> int:
        """How many judged verdicts that count come from a judge no passing report
        validated."""
        statuses = self.totals().judge_statuses
        return sum(statuses.values()) - statuses["validated"]

    def judge_check(self, row: RowVerdict) -> JudgeCheck | None:
        """The check of the judge behind a row's verdict: for a judged row's pass or fail
        that counts, else None."""
        return self.judges.check(row) if self.judges is not None else None

    @property
    def gold(self) -> Iterator[RowVerdict]:
        """The rows whose verdicts count: every row but the starter examples, in order."""
        return (row for row in self.rows if not row.starter)

    @property
    def failed(self) -> bool:
        """Whether a row that counts fails (a starter example's failure does not)."""
        return self.totals().verdicts["fail"] > 0

    @property
    def invalid(self) -> int:
        """How many rows the set forbids grading (starter examples too: the set is wrong)."""
        return self.totals().invalid

    @property
    def scored(self) -> int:
        """How many rows that count got a pass or a fail."""
        return self.totals().verdicts["pass"] + self.totals().verdicts["fail"]

    def totals(self) -> Totals:
        """The run's counts, from one pass over its rows (made on first use, and again if
        the rows or the judge checks are replaced)."""
        made_of = (id(self.rows), id(self.judges))
        if self._totals is None or self._totals_of != made_of:
            self._totals = Totals.of(self.rows, self.judge_check)
            self._totals_of = made_of
        return self._totals

    def row_trials(self) -> Iterable[RowTrials | None]:
        """Each row's trials, in the order of ``rows`` (None throughout for one trial)."""
        return self.trials.rows if self.trials else itertools.repeat(None, len(self.rows))

    def summary(self) -> dict[str, Any]:
        totals = self.totals()
        return {
            "rows": totals.rows,
            "scored": self.scored,
            "verdicts": dict(totals.verdicts),
            "starterExamples": {
                "rows": totals.starters,
                "verdicts": dict(totals.starter_verdicts),
            },
            "byOracleType": self._grouped(totals.by_oracle_type, _oracle_type_of),
            "byCaseFamily": self._grouped(totals.by_case_family, _case_family_of),
            "judgeValidation": dict(totals.judge_statuses),
            "riskCells": risk_cells(totals.by_risk_cell, self.confidence),
        }

    def _grouped(
        self, groups: dict[str, _Group], key: Callable[[RowVerdict], str]
    ) -> dict[str, Any]:
        found = {name: group.figures(self.confidence) for name, group in groups.items()}
        if self.trials is not None:
            k = self.trials.k
            members: dict[str, GroupFigures] = {}
            for row, trials in zip(self.rows, self.trials.rows, strict=True):
                if not row.starter:
                    name = key(row)
                    if name not in members:
                        members[name] = GroupFigures(k)
                    members[name].add(trials)
            for name, group in found.items():
                group["trials"] = (members.get(name) or GroupFigures(k)).figures()
        return found

    def to_json(self, *, rows: Any = None) -> dict[str, Any]:
        """The report as JSON values; ``rows`` stands in for the rows' list where given."""
        several = len(self.results_paths) > 1
        found: dict[str, Any] = {
            "set": str(self.set_path),
            "results": [str(path) for path in self.results_paths]
            if several
            else str(self.results_path),
        }
        if self.trials is not None:
            found["trials"] = self.trials.to_json()
        found["rows"] = list(self._json_rows()) if rows is None else rows
        found["summary"] = self.summary()
        if self.comparison is not None:
            found["comparison"] = self.comparison.to_json()
        found["gates"] = {
            "passed": not self.gate_failures,
            "failures": [failure.to_json() for failure in self.gate_failures],
        }
        return found

    def json_text(self) -> Iterator[str]:
        """The JSON report (``to_json``) as ``json.dumps(..., indent=2, ensure_ascii=False)``
        writes it, in pieces: the rows one at a time, so that a report of any size is
        written in the same memory (the rows may wait on disk)."""
        rows = self._json_rows()
        marker = f"rows-{secrets.token_hex(16)}"
        shell = self.to_json(rows=marker)
        head, _, tail = json.dumps(shell, indent=2, ensure_ascii=False).partition(
            json.dumps(marker)
        )
        yield head
        first = True
        for row in rows:
            text = json.dumps(row, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            yield ("[\n    " if first else ",\n    ") + text
            first = False
        yield "[]" if first else "\n  ]"
        yield tail

    def _json_rows(self) -> Iterator[dict[str, Any]]:
        k = self.trials.k if self.trials else None
        for row, trials in zip(self.rows, self.row_trials(), strict=True):
            yield self._row_json(row, trials, k)

    def _row_json(
        self, row: RowVerdict, trials: RowTrials | None = None, k: int | None = None
    ) -> dict[str, Any]:
        found = row.to_json()
        check = self.judge_check(row)
        if check is not None:
            found["judgeValidation"] = check.to_json()
        if trials is not None:
            found["trials"] = trials.to_json(k)
        return found


def _oracle_type_of(row: RowVerdict) -> str:
    return row.oracle_type or "(none)"


def _case_family_of(row: RowVerdict) -> str:
    return row.case_family or "(none)"


@dataclass
class _Group:
    """A group's rows, its verdicts over the rows that count, and its starter examples."""

    rows: int = 0
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    starters: int = 0

    def figures(self, confidence: float) -> dict[str, Any]:
        counts = self.verdicts
        return {
            "rows": self.rows,
            **counts,
            "starterExamples": self.starters,
            "passRate": pass_rate(counts),
            **rate_figures(counts["pass"], counts["pass"] + counts["fail"], confidence),
        }


@dataclass
class Totals:
    """A run's counts, taken in one pass over its rows (which may wait on disk): the rows,
    the verdicts of the rows that count and of the starter examples, the invalid rows, each
    oracle type's and case family's (in the order first met), and each high-risk cell's
    counted rows' verdicts."""

    rows: int = 0
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    starters: int = 0
    starter_verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    invalid: int = 0
    by_oracle_type: dict[str, _Group] = field(default_factory=dict)
    by_case_family: dict[str, _Group] = field(default_factory=dict)
    by_risk_cell: dict[str, dict[str, int]] = field(default_factory=dict)
    judge_statuses: dict[str, int] = field(default_factory=lambda: dict.fromkeys(JUDGE_STATUSES, 0))

    @classmethod
    def of(
        cls,
        rows: Iterable[RowVerdict],
        judge_check: Callable[[RowVerdict], JudgeCheck | None] | None = None,
    ) -> Totals:
        totals = cls()
        for row in rows:
            totals.rows += 1
            verdict = row.verdict
            if verdict == "invalid":
                totals.invalid += 1
            for groups, name in (
                (totals.by_oracle_type, _oracle_type_of(row)),
                (totals.by_case_family, _case_family_of(row)),
            ):
                group = groups.get(name)
                if group is None:
                    group = groups[name] = _Group()
                group.rows += 1
                if row.starter:
                    group.starters += 1
                else:
                    group.verdicts[verdict] += 1
            if row.starter:
                totals.starters += 1
                totals.starter_verdicts[verdict] += 1
                continue
            totals.verdicts[verdict] += 1
            check = judge_check(row) if judge_check is not None and row.judged else None
            if check is not None:
                totals.judge_statuses[check.status] += 1
            cell = row.risk
            if cell is not None:
                counts = totals.by_risk_cell.get(cell)
                if counts is None:
                    counts = totals.by_risk_cell[cell] = dict.fromkeys(VERDICTS, 0)
                counts[verdict] += 1
        return totals


def pass_rate(counts: dict[str, int]) -> float | None:
    """Passed over scored (pass and fail) rows; None when no row of the group was scored."""
    scored = counts["pass"] + counts["fail"]
    return counts["pass"] / scored if scored else None


def rate_figures(passed: int, scored: int, confidence: float) -> dict[str, Any]:
    """A pass rate's interval and, with no failure, the upper bound on the failure rate."""
    if not scored:
        return {"interval": None}
    from blueprint.grading.statistics import failure_upper_bound, rate_interval

    low, high, method = rate_interval(passed, scored, confidence)
    found: dict[str, Any] = {"interval": {"low": low, "high": high, "method": method}}
    if passed == scored:
        found["failureBound"] = failure_upper_bound(scored, confidence)
    return found


def risk_cells(cells: dict[str, dict[str, int]], confidence: float) -> dict[str, Any]:
    """Each high-risk cell's counts (its counted rows' verdicts, by cell), pass rate interval
    and, with no failure, the upper bound on its failure rate."""
    found = {}
    for cell, counts in sorted(cells.items()):
        scored = counts["pass"] + counts["fail"]
        found[cell] = {
            "rows": sum(counts.values()),
            "pass": counts["pass"],
            "fail": counts["fail"],
            **rate_figures(counts["pass"], scored, confidence),
        }
    return found


def grade_set(
    set_path: Path,
    results_path: Path | Sequence[Path],
    options: GradingOptions | None = None,
    *,
    source_format: str | None = None,
    k: int | None = None,
    jobs: int = 1,
    engine: GradingEngine | None = None,
) -> GradeReport:
    """Grade every row of a set against its recorded results; a row with none is ``not-run``.

    ``results_path`` is a results file, or several: each file a trial, or the trials its
    results name (:mod:`blueprint.grading.streamed`). Results are read and graded one at a
    time. ``k`` is the k the summary gives pass@k and pass^k at (the number of trials when
    None).

    The set is validated first: a row with an error finding is ``invalid`` whatever its
    result says. Raises ParseError for an unreadable set or results file, SetNotGradable for
    an error that belongs to no row, UnknownResultIds when a result names a row the set
    does not have, and UsageError for a ``k`` past the number of trials.

    ``jobs`` processes (0: one per core) validate a large set first (as ``blueprint
    validate --jobs``). With an ``engine`` (a cluster,
    :class:`blueprint.validation.engines.DaskEngine`), the set is a set in shards, validated
    and graded by the engine's workers (:mod:`blueprint.grading.buckets`): the same report.
    """
    paths = [results_path] if isinstance(results_path, str | Path) else list(results_path)
    if not paths:
        raise UsageError("no results file to grade")
    for path in paths:
        require_readable(Path(path))  # before a large set is read
    if engine is not None and source_format != "shards":
        raise UsageError("a set graded on an engine is a set in shards (--shards)")
    errors = _row_errors(set_path, source_format, jobs, engine)
    source = open_set(set_path, source_format)
    header, _ = complete_header(source)
    families = {
        family["id"]: family.get("evaluator")
        for family in header.get("caseFamilies") or []
        if isinstance(family, dict) and isinstance(family.get("id"), str)
    }
    paths = [Path(path) for path in paths]
    options = options or GradingOptions()
    shards = find_shards([set_path]) if source_format == "shards" else None
    with contextlib.ExitStack() as stack:
        tasks: TaskEngine | None = engine
        if tasks is None and _worth_a_pool(source, jobs, shards):
            pool = PoolEngine(jobs or default_jobs(), bucket_bytes=SMALL_BUCKET_BYTES)
            tasks = stack.enter_context(pool)
        elif tasks is None and _worth_buckets(source, shards):
            tasks = stack.enter_context(LocalEngine())
        if tasks is None:
            graded = grade_rows(data_rows(source), families, errors, paths, options, k=k)
        else:
            # buckets enough for the set's rows and the results both
            span, buckets = tasks.sizes(set_size(source, shards) + _results_size(paths))
            spans = pieces(source, shards, span)
            graded = grade_in_buckets(
                tasks.runner(), spans, families, errors, paths, options, buckets=buckets, k=k
            )
    report = GradeReport(
        set_path,
        paths[0],
        graded.rows,
        results_paths=paths,
        trials=graded.trials,
        severities=family_severities(header),
    )
    report.judges = JudgeChecks(set_path, header, source_format)
    return report


def _worth_a_pool(source: SetSource, jobs: int, shards: Shards | None) -> bool:
    """Whether the set is graded on worker processes: a set in shards or a JSON Lines file,
    as large as ``validate`` takes a pool for (:func:`blueprint.validation.parallel.worth_a_pool`),
    with more than one job."""
    if jobs == 1 or (shards is None and source.format != "jsonl"):
        return False
    return worth_a_pool(source, jobs or default_jobs(), shards)


def _results_size(paths: Sequence[Path]) -> int:
    """The bytes of the results files (each was found readable)."""
    size = 0
    for path in paths:
        with contextlib.suppress(OSError):
            size += path.stat().st_size
    return size


def _worth_buckets(source: SetSource, shards: Shards | None) -> bool:
    """Whether one process grades the set in buckets on disk (a bucket's rows in memory at
    a time, not the whole set's): a set in shards or a JSON Lines file of more than a
    bucket's bytes."""
    if shards is None and source.format != "jsonl":
        return False
    return set_size(source, shards) > parallel.BUCKET_BYTES


def _row_errors(
    set_path: Path, source_format: str | None, jobs: int = 1, engine: GradingEngine | None = None
) -> IssueLog:
    """The validator's error findings on the set's rows, in the report's order (past a few
    thousand, on disk: a set of any size with an error on every row is graded in the same
    memory); SetNotGradable for those of no row."""
    # errors only: a warning changes no verdict, and leaving them out spares the pass the
    # rules only they need (the duplicate inputs' normalisation, the passLogic phrases)
    options = ValidationOptions(select=ERROR_CODES, row_ids=False)
    if engine is None:
        report = validate_file(set_path, format=source_format, options=options, jobs=jobs)
    else:
        report = validate_shards([set_path], options=options, engine=engine)
    placed = IssueLog()
    unplaced: list[Issue] = []
    unplaced_count = 0
    first_parse: Issue | None = None
    for issue in report.issues:
        if issue.severity != "error":
            continue
        if first_parse is None and issue.code == "parse":
            first_parse = issue
        if issue.row_id is not None:
            placed.append(issue)
            continue
        unplaced_count += 1
        if len(unplaced) < SetNotGradable.SHOWN:
            unplaced.append(issue)  # the first few are named, the rest counted
    if report.unreadable:
        raise ParseError(
            set_path,
            first_parse.message if first_parse else "the set does not read",
            line=first_parse.line if first_parse else None,
        )
    if unplaced:
        raise SetNotGradable(set_path, unplaced, unplaced_count)
    return placed


__all__ = [
    "VERDICTS",
    "GradeReport",
    "SetNotGradable",
    "UnknownResultIds",
    "grade_set",
    "pass_rate",
]
