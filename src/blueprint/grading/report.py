"""Grading a whole set against its recorded results, with the summary kept apart by oracle
type and case family (a pass rate over rows of different oracle types means nothing alone).

The set is validated first and obeyed: a row the validator finds an error in gets the verdict
``invalid`` and no number, and an error that belongs to no row refuses the whole set. Starter
rows are graded as examples: shown, marked, and counted in no pass rate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blueprint.convert import complete_header, data_rows, open_set
from blueprint.core.errors import ParseError, UsageError
from blueprint.core.issues import Issue
from blueprint.core.judgeprompt import judged
from blueprint.grading.judges import JudgeCheck, check_judges, judge_counts
from blueprint.grading.results import read_results
from blueprint.grading.semantics import (
    VERDICTS,
    GradingOptions,
    RowVerdict,
    grade_row,
    verdict_counts,
)
from blueprint.validation.stream import ValidationOptions
from blueprint.validation.validate import validate_file


class UnknownResultIds(UsageError):
    """Results name rows the set does not have: the results belong to another set (or an
    older version of it), and no verdict is given on a mismatch."""

    def __init__(self, results: Path, ids: list[str]) -> None:
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        super().__init__(
            f"{results}: {len(ids)} result(s) name rows the set does not have: {shown}"
        )
        self.ids = ids


class SetNotGradable(UsageError):
    """The set has errors that belong to no one row (a case family declared twice, a header
    that does not read): no row of it is graded."""

    def __init__(self, set_path: Path, issues: list[Issue]) -> None:
        shown = "; ".join(f"{issue.code}: {issue.message}" for issue in issues[:5])
        more = f" and {len(issues) - 5} more" if len(issues) > 5 else ""
        super().__init__(
            f"{set_path}: the set is not valid, so no row is graded ({shown}{more});"
            " run blueprint validate"
        )
        self.issues = issues


@dataclass
class GradeReport:
    """Every row's verdict, in the set's order, and where the results came from."""

    set_path: Path
    results_path: Path
    rows: list[RowVerdict] = field(default_factory=list)
    #: the judge check of each judged row that got a pass or a fail, by row id
    judges: dict[str, JudgeCheck] = field(default_factory=dict)

    @property
    def unvalidated_judges(self) -> int:
        """How many judged verdicts that count come from a judge no passing report
        validated."""
        return sum(
            1
            for row in self.gold
            if row.id in self.judges and self.judges[row.id].status != "validated"
        )

    @property
    def gold(self) -> list[RowVerdict]:
        """The rows whose verdicts count: every row but the starter examples."""
        return [row for row in self.rows if not row.starter]

    @property
    def failed(self) -> bool:
        """Whether a row that counts fails (a starter example's failure does not)."""
        return any(row.verdict == "fail" for row in self.gold)

    @property
    def invalid(self) -> int:
        """How many rows the set forbids grading (starter examples too: the set is wrong)."""
        return sum(row.verdict == "invalid" for row in self.rows)

    @property
    def scored(self) -> int:
        """How many rows that count got a pass or a fail."""
        return sum(row.scored for row in self.rows)

    def summary(self) -> dict[str, Any]:
        starters = [row for row in self.rows if row.starter]
        return {
            "rows": len(self.rows),
            "scored": self.scored,
            "verdicts": verdict_counts(self.gold),
            "starterExamples": {"rows": len(starters), "verdicts": verdict_counts(starters)},
            "byOracleType": _grouped(self.rows, lambda row: row.oracle_type or "(none)"),
            "byCaseFamily": _grouped(self.rows, lambda row: row.case_family or "(none)"),
            "judgeValidation": judge_counts(self.judges),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "set": str(self.set_path),
            "results": str(self.results_path),
            "rows": [self._row_json(row) for row in self.rows],
            "summary": self.summary(),
        }

    def _row_json(self, row: RowVerdict) -> dict[str, Any]:
        found = row.to_json()
        check = self.judges.get(row.id)
        if check is not None:
            found["judgeValidation"] = check.to_json()
        return found


def pass_rate(counts: dict[str, int]) -> float | None:
    """Passed over scored (pass and fail) rows; None when no row of the group was scored."""
    scored = counts["pass"] + counts["fail"]
    return counts["pass"] / scored if scored else None


def _grouped(rows: list[RowVerdict], key: Any) -> dict[str, Any]:
    """Each group's verdicts over the rows that count, with its starter examples counted
    apart (their verdicts are in no group's counts or pass rate)."""
    groups: dict[str, list[RowVerdict]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    found = {}
    for name, members in groups.items():
        counts = verdict_counts(row for row in members if not row.starter)
        found[name] = {
            "rows": len(members),
            **counts,
            "starterExamples": sum(row.starter for row in members),
            "passRate": pass_rate(counts),
        }
    return found


def grade_set(
    set_path: Path,
    results_path: Path,
    options: GradingOptions | None = None,
    *,
    source_format: str | None = None,
) -> GradeReport:
    """Grade every row of a set against its recorded result; a row with none is ``not-run``.

    The set is validated first: a row with an error finding is ``invalid`` whatever its
    result says. Raises ParseError for an unreadable set or results file, SetNotGradable for
    an error that belongs to no row, and UnknownResultIds when a result names a row the set
    does not have.
    """
    results = read_results(results_path)
    errors = _row_errors(set_path, source_format)
    source = open_set(set_path, source_format)
    header, _ = complete_header(source)
    families = {
        family["id"]: family.get("evaluator")
        for family in header.get("caseFamilies") or []
        if isinstance(family, dict) and isinstance(family.get("id"), str)
    }
    report = GradeReport(set_path, results_path)
    graded: set[str] = set()
    judged_ids: set[str] = set()
    for row in data_rows(source):
        if not isinstance(row, dict):
            continue
        row_id = row.get("id")
        result = results.get(row_id) if isinstance(row_id, str) else None
        if result is not None:
            graded.add(result.id)
        case = (row.get("metadata") or {}).get("case") or {}
        family = case.get("caseFamily") if isinstance(case, dict) else None
        evaluator = families.get(family) if isinstance(family, str) else None
        verdict = grade_row(row, result, options, family_evaluator=evaluator)
        if judged(row, evaluator):
            judged_ids.add(verdict.id)
        found = errors.get(row_id) if isinstance(row_id, str) else None
        if found:
            verdict = _invalid(verdict, found)
        report.rows.append(verdict)
    unknown = sorted(set(results) - graded)
    if unknown:
        raise UnknownResultIds(results_path, unknown)
    report.judges = check_judges(
        set_path, header, report.gold, judged_ids, source_format=source_format
    )
    return report


def _row_errors(set_path: Path, source_format: str | None) -> dict[str, list[Issue]]:
    """The validator's error findings by row id; SetNotGradable for those of no row."""
    report = validate_file(set_path, format=source_format, options=ValidationOptions(row_ids=False))
    errors = [issue for issue in report.issues if issue.severity == "error"]
    if report.unreadable:
        first = next((issue for issue in errors if issue.code == "parse"), None)
        raise ParseError(
            set_path,
            first.message if first else "the set does not read",
            line=first.line if first else None,
        )
    unplaced = [issue for issue in errors if issue.row_id is None]
    if unplaced:
        raise SetNotGradable(set_path, unplaced)
    found: dict[str, list[Issue]] = {}
    for issue in errors:
        assert issue.row_id is not None
        found.setdefault(issue.row_id, []).append(issue)
    return found


def _invalid(verdict: RowVerdict, issues: Iterable[Issue]) -> RowVerdict:
    """A verdict replaced by the set's own errors for the row: no number, the codes named."""
    if verdict.verdict == "invalid":
        return verdict  # the evaluator's bar already says why, in the validator's words too
    listed = list(issues)
    codes = ", ".join(dict.fromkeys(issue.code for issue in listed))
    return dataclasses.replace(
        verdict,
        verdict="invalid",
        score=None,
        reason=f"the set is not valid here ({codes}): {listed[0].message}; no verdict is given",
    )


__all__ = [
    "VERDICTS",
    "GradeReport",
    "SetNotGradable",
    "UnknownResultIds",
    "grade_set",
    "pass_rate",
]
