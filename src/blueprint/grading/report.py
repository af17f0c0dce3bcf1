"""Grading a whole set against its recorded results, with the summary kept apart by oracle
type and case family (a pass rate over rows of different oracle types means nothing alone)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blueprint.convert import complete_header, data_rows, open_set
from blueprint.core.errors import UsageError
from blueprint.grading.results import read_results
from blueprint.grading.semantics import (
    VERDICTS,
    GradingOptions,
    RowVerdict,
    grade_row,
    verdict_counts,
)


class UnknownResultIds(UsageError):
    """Results name rows the set does not have: the results belong to another set (or an
    older version of it), and no verdict is given on a mismatch."""

    def __init__(self, results: Path, ids: list[str]) -> None:
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        super().__init__(
            f"{results}: {len(ids)} result(s) name rows the set does not have: {shown}"
        )
        self.ids = ids


@dataclass
class GradeReport:
    """Every row's verdict, in the set's order, and where the results came from."""

    set_path: Path
    results_path: Path
    rows: list[RowVerdict] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(row.verdict == "fail" for row in self.rows)

    def summary(self) -> dict[str, Any]:
        return {
            "rows": len(self.rows),
            "verdicts": verdict_counts(self.rows),
            "byOracleType": _grouped(self.rows, lambda row: row.oracle_type or "(none)"),
            "byCaseFamily": _grouped(self.rows, lambda row: row.case_family or "(none)"),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "set": str(self.set_path),
            "results": str(self.results_path),
            "rows": [row.to_json() for row in self.rows],
            "summary": self.summary(),
        }


def pass_rate(counts: dict[str, int]) -> float | None:
    """Passed over scored (pass and fail) rows; None when no row of the group was scored."""
    scored = counts["pass"] + counts["fail"]
    return counts["pass"] / scored if scored else None


def _grouped(rows: list[RowVerdict], key: Any) -> dict[str, Any]:
    groups: dict[str, list[RowVerdict]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    found = {}
    for name, members in groups.items():
        counts = verdict_counts(members)
        found[name] = {"rows": len(members), **counts, "passRate": pass_rate(counts)}
    return found


def grade_set(
    set_path: Path,
    results_path: Path,
    options: GradingOptions | None = None,
    *,
    source_format: str | None = None,
) -> GradeReport:
    """Grade every row of a set against its recorded result; a row with none is ``not-run``.

    Raises ParseError for an unreadable set or results file, and UnknownResultIds when a
    result names a row the set does not have.
    """
    results = read_results(results_path)
    source = open_set(set_path, source_format)
    header, _ = complete_header(source)
    families = {
        family["id"]: family.get("evaluator")
        for family in header.get("caseFamilies") or []
        if isinstance(family, dict) and isinstance(family.get("id"), str)
    }
    report = GradeReport(set_path, results_path)
    graded: set[str] = set()
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
        report.rows.append(grade_row(row, result, options, family_evaluator=evaluator))
    unknown = sorted(set(results) - graded)
    if unknown:
        raise UnknownResultIds(results_path, unknown)
    return report


__all__ = ["VERDICTS", "GradeReport", "UnknownResultIds", "grade_set", "pass_rate"]
