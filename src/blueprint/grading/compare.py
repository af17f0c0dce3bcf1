"""Two runs of one set compared, paired on rows: which rows went from pass to fail and back,
and per oracle type and case family the paired difference in score with its interval and
McNemar's test on the rows whose verdict changed.

Pairing on rows is what makes a small change visible: the same case in both runs, so the
variation between cases cancels out (Miller, "Adding Error Bars to Evals", 2024, section
"paired differences"). A row scored in one run only is listed, never dropped silently; it is
in no paired figure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from blueprint.core.spill import FieldsList, SpillList
from blueprint.grading.semantics import RowVerdict

Change = Literal["pass->fail", "fail->pass", "same", "new-only", "baseline-only", "unscored"]
#: the changes in the order a report lists them
CHANGES: Final[tuple[Change, ...]] = (
    "pass->fail",
    "fail->pass",
    "same",
    "new-only",
    "baseline-only",
    "unscored",
)


@dataclass(frozen=True)
class RowChange:
    """One row in both runs: its verdict and score in each (None: not in that run)."""

    id: str
    oracle_type: str | None
    case_family: str | None
    baseline: str | None
    new: str | None
    baseline_score: float | None
    new_score: float | None

    @property
    def change(self) -> Change:
        if self.baseline is None:
            return "new-only"
        if self.new is None:
            return "baseline-only"
        if self.baseline_score is None or self.new_score is None:
            return "unscored"
        if self.baseline == "pass" and self.new == "fail":
            return "pass->fail"
        if self.baseline == "fail" and self.new == "pass":
            return "fail->pass"
        return "same"

    @property
    def paired(self) -> bool:
        """Whether the row is scored in both runs, so it enters the paired figures."""
        return self.change in ("pass->fail", "fail->pass", "same")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "oracleType": self.oracle_type,
            "caseFamily": self.case_family,
            "baseline": self.baseline,
            "new": self.new,
            "baselineScore": self.baseline_score,
            "newScore": self.new_score,
            "change": self.change,
        }


@dataclass(frozen=True)
class GroupComparison:
    """A group's paired figures: the rows scored in both runs, the mean score in each, the
    difference (new minus baseline) with its interval, and McNemar's p on the changed
    verdicts (None when no row is paired)."""

    name: str
    paired: int
    pass_to_fail: int
    fail_to_pass: int
    baseline_rate: float | None
    new_rate: float | None
    difference: float | None
    interval: tuple[float, float] | None
    mcnemar_p: float | None

    @property
    def dropped(self) -> bool:
        """Whether the score fell by more than noise: the whole interval is below zero."""
        return self.interval is not None and self.interval[1] < 0

    def to_json(self) -> dict[str, Any]:
        return {
            "paired": self.paired,
            "passToFail": self.pass_to_fail,
            "failToPass": self.fail_to_pass,
            "baselineRate": self.baseline_rate,
            "newRate": self.new_rate,
            "difference": self.difference,
            "interval": list(self.interval) if self.interval is not None else None,
            "mcnemarP": self.mcnemar_p,
            "dropped": self.dropped,
        }


@dataclass
class Comparison:
    """Every row's change between the runs, and each oracle type's and case family's paired
    figures."""

    #: every row's change, in the new run's order (the oldest wait in a scratch file)
    rows: Sequence[RowChange]
    confidence: float
    by_oracle_type: dict[str, GroupComparison] = field(default_factory=dict)
    by_case_family: dict[str, GroupComparison] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = dict.fromkeys(CHANGES, 0)
        for row in self.rows:
            found[row.change] += 1
        return found

    def rows_with(self, change: Change) -> list[RowChange]:
        return [row for row in self.rows if row.change == change]

    def to_json(self) -> dict[str, Any]:
        return {
            "confidence": self.confidence,
            "changes": self.counts(),
            "rows": [row.to_json() for row in self.rows if row.change != "same"],
            "byOracleType": {k: v.to_json() for k, v in self.by_oracle_type.items()},
            "byCaseFamily": {k: v.to_json() for k, v in self.by_case_family.items()},
        }


class ChangeList(FieldsList[RowChange], kind=RowChange):
    """The rows' changes: past a few thousand, the oldest wait in a scratch file, each as
    the tuple of its fields."""

    __slots__ = ()


def compare_runs(
    new: Sequence[RowVerdict], baseline: Sequence[RowVerdict], confidence: float = 0.95
) -> Comparison:
    """Pair two runs' verdicts (starter rows left out: they are examples, in no figure), in
    the new run's order. Two runs of one set list the same rows in the same order: each row
    is paired with itself, by place (a repeated id too), and nothing is held but a few rows
    of each. Otherwise rows are paired on ids, with rows of the baseline only at the end."""
    rows = ChangeList()
    rows.extend(_by_place(new, baseline) if _aligned(new, baseline) else _by_id(new, baseline))
    comparison = Comparison(rows, confidence)
    comparison.by_oracle_type = _grouped(rows, lambda r: r.oracle_type or "(none)", confidence)
    comparison.by_case_family = _grouped(rows, lambda r: r.case_family or "(none)", confidence)
    return comparison


def _aligned(new: Sequence[RowVerdict], baseline: Sequence[RowVerdict]) -> bool:
    """Whether the runs list the same rows in the same order (ids and starter rows)."""
    return len(new) == len(baseline) and all(
        row.id == before.id and row.starter == before.starter
        for row, before in zip(new, baseline, strict=True)
    )


def _change(row: RowVerdict, before: RowVerdict | None) -> RowChange:
    return RowChange(
        row.id,
        row.oracle_type,
        row.case_family,
        before.verdict if before is not None else None,
        row.verdict,
        before.counted_score if before is not None else None,
        row.counted_score,
    )


def _by_place(new: Iterable[RowVerdict], baseline: Iterable[RowVerdict]) -> Iterator[RowChange]:
    for row, before in zip(new, baseline, strict=True):
        if not row.starter:
            yield _change(row, before)


def _by_id(new: Iterable[RowVerdict], baseline: Iterable[RowVerdict]) -> Iterator[RowChange]:
    old = {row.id: row for row in baseline if not row.starter}
    seen: set[str] = set()
    for row in new:
        if row.starter:
            continue
        seen.add(row.id)
        yield _change(row, old.get(row.id))
    for row_id, before in old.items():
        if row_id not in seen:
            yield RowChange(
                row_id,
                before.oracle_type,
                before.case_family,
                before.verdict,
                None,
                before.counted_score,
                None,
            )


@dataclass
class _Paired:
    """A group's rows scored in both runs, added one at a time: the scores of each run
    (kept off the heap past a few thousand) and the changed verdicts."""

    before: SpillList[float] = field(default_factory=SpillList)
    after: SpillList[float] = field(default_factory=SpillList)
    worse: int = 0
    better: int = 0

    def add(self, row: RowChange) -> None:
        if not row.paired:
            return
        self.before.append(float(row.baseline_score or 0.0))
        self.after.append(float(row.new_score or 0.0))
        self.worse += row.change == "pass->fail"
        self.better += row.change == "fail->pass"


def _grouped(
    rows: Iterable[RowChange], key: Callable[[RowChange], str], confidence: float
) -> dict[str, GroupComparison]:
    groups: dict[str, _Paired] = {}
    for row in rows:
        name = key(row)
        if name not in groups:
            groups[name] = _Paired()
        groups[name].add(row)
    return {name: _figures(name, group, confidence) for name, group in groups.items()}


def group_comparison(name: str, rows: Iterable[RowChange], confidence: float) -> GroupComparison:
    """The paired figures of a group's rows (those scored in both runs)."""
    group = _Paired()
    for row in rows:
        group.add(row)
    return _figures(name, group, confidence)


def _figures(name: str, group: _Paired, confidence: float) -> GroupComparison:
    from blueprint.grading.statistics import mcnemar_p, paired_difference

    before, after = group.before, group.after
    paired = len(before)
    if not paired:
        return GroupComparison(name, 0, 0, 0, None, None, None, None, None)
    difference = (sum(after) - sum(before)) / paired
    interval = None  # one pair has no spread to make an interval from
    if paired > 1:
        difference, low, high = paired_difference(before, after, confidence)
        interval = (low, high)
    return GroupComparison(
        name,
        paired,
        group.worse,
        group.better,
        sum(before) / paired,
        sum(after) / paired,
        difference,
        interval,
        mcnemar_p(group.better, group.worse),
    )


def family_severities(header: Mapping[str, Any] | None) -> dict[str, str]:
    """The severity each declared case family names, by family id."""
    found = {}
    for family in (header or {}).get("caseFamilies") or []:
        if isinstance(family, Mapping) and isinstance(family.get("id"), str):
            severity = family.get("severity")
            if isinstance(severity, str):
                found[family["id"]] = severity
    return found
