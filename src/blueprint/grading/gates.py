"""Gates for CI that mean something: each says which rule failed, for which rows, and why.

- ``blocker-regression``: a row of a family whose severity is gated (``blocker`` by default)
  went from pass to fail against the baseline run;
- ``family-drop``: a case family's paired difference against the baseline lies wholly below
  zero at the chosen confidence: a drop beyond what noise explains;
- ``too-few-scored``: fewer than the set share of the rows that count got a pass or a fail;
- ``risk-claim``: a high-risk cell (reversibility R2 or R3, or blast radius B2 or B3) has
  fewer passing cases, with no failure, than a claim that its failure rate is below the
  stated bound needs (the exact zero-failure bound; the rule of three at 95%).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from blueprint.grading.compare import Comparison
from blueprint.grading.semantics import RowVerdict

#: reversibility and blast-radius values whose cases make a high-risk cell
HIGH_RISK: Final = frozenset({"R2", "R3", "B2", "B3"})


@dataclass(frozen=True)
class GateOptions:
    """Which gates run and their thresholds (docs/statistics.md gives the defaults' why)."""

    #: family severities whose pass-to-fail rows fail the run (with a baseline)
    severities: tuple[str, ...] = ("blocker",)
    #: fail on a family whose score drops beyond its interval (with a baseline)
    drops: bool = True
    #: the least share of the counted rows that must be scored (0: no such gate)
    min_scored_share: float = 0.0
    #: a claimed upper bound on the failure rate of each high-risk cell (None: no claim)
    claim: float | None = None
    #: the confidence of the intervals and of the claim
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not 0 <= self.min_scored_share <= 1:
            raise ValueError(f"a scored share is between 0 and 1, not {self.min_scored_share}")
        if self.claim is not None and not 0 < self.claim < 1:
            raise ValueError(f"a claimed failure rate is between 0 and 1, not {self.claim}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"a confidence is between 0 and 1, not {self.confidence}")


@dataclass(frozen=True)
class GateFailure:
    """One gate that failed: its name, what it is about (a row, a family, a cell), why, and
    the rows that make it fail."""

    gate: str
    subject: str
    reason: str
    rows: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "subject": self.subject,
            "reason": self.reason,
            "rows": list(self.rows),
        }


def claim_needs(claim: float, confidence: float = 0.95) -> int:
    """The passing cases, with no failure, a cell needs before its failure rate can be
    claimed below ``claim`` at ``confidence``: the least n with 1 - (1 - confidence)^(1/n)
    at most ``claim`` (29 for 10% at 95%; the rule of three says 30)."""
    return math.ceil(math.log(1 - confidence) / math.log(1 - claim) - 1e-9)


def risk_cell(reversibility: str | None, blast_radius: str | None) -> str | None:
    """The high-risk cell a case falls in (``R3/B2``, ``R2/-``), or None for a case of
    neither high reversibility cost nor wide blast radius."""
    if reversibility not in HIGH_RISK and blast_radius not in HIGH_RISK:
        return None
    return f"{reversibility or '-'}/{blast_radius or '-'}"


def run_gates(
    rows: Sequence[RowVerdict],
    options: GateOptions,
    *,
    comparison: Comparison | None = None,
    severities: Mapping[str, str] | None = None,
) -> list[GateFailure]:
    """Every gate that fails for a run's counted rows (starter rows are left out), given the
    comparison with a baseline run where there is one, the families' severities and each
    row's (reversibility, blast radius)."""
    failures: list[GateFailure] = []
    if comparison is not None:
        failures += _regressions(comparison, options, severities or {})
        if options.drops:
            failures += _drops(comparison)
    if options.min_scored_share:
        failures += _scored(_gold(rows), options.min_scored_share)
    if options.claim is not None:
        failures += _claims(_gold(rows), options)
    return failures


def _regressions(
    comparison: Comparison, options: GateOptions, severities: Mapping[str, str]
) -> list[GateFailure]:
    gated = set(options.severities)
    found = []
    for row in comparison.rows_with("pass->fail"):
        severity = severities.get(row.case_family or "")
        if severity in gated:
            found.append(
                GateFailure(
                    "blocker-regression",
                    row.id,
                    f"{row.id} went from pass to fail in case family {row.case_family!r},"
                    f" of severity {severity}",
                    (row.id,),
                )
            )
    return found


def _drops(comparison: Comparison) -> list[GateFailure]:
    found = []
    for family, group in comparison.by_case_family.items():
        if group.dropped and group.interval is not None and group.difference is not None:
            low, high = group.interval
            worse = tuple(
                row.id
                for row in comparison.rows_with("pass->fail")
                if (row.case_family or "(none)") == family
            )
            found.append(
                GateFailure(
                    "family-drop",
                    family,
                    f"case family {family!r} dropped {group.difference:+.1%} over"
                    f" {group.paired} paired row(s), interval [{low:+.1%}, {high:+.1%}] at"
                    f" {comparison.confidence:.0%}: more than noise explains",
                    worse,
                )
            )
    return found


def _gold(rows: Iterable[RowVerdict]) -> Iterator[RowVerdict]:
    """The rows that count (starter examples left out), read in order."""
    return (row for row in rows if not row.starter)


def _scored(gold: Iterable[RowVerdict], share: float) -> list[GateFailure]:
    counted = scored = 0
    for row in gold:
        counted += 1
        scored += row.scored
    if counted and scored / counted >= share:
        return []
    return [
        GateFailure(
            "too-few-scored",
            "set",
            f"{scored} of {counted} counted row(s) got a pass or a fail, fewer than the"
            f" {share:.0%} required",
        )
    ]


def _claims(gold: Iterable[RowVerdict], options: GateOptions) -> list[GateFailure]:
    assert options.claim is not None
    needed = claim_needs(options.claim, options.confidence)
    cells: dict[str, list[RowVerdict]] = {}
    for row in gold:
        cell = row.risk
        if cell is not None:
            cells.setdefault(cell, []).append(row)
    found = []
    for cell, members in sorted(cells.items()):
        failed = tuple(row.id for row in members if row.verdict == "fail")
        passed = sum(row.verdict == "pass" for row in members)
        if failed:
            reason = (
                f"high-risk cell {cell} has {len(failed)} failing case(s): no failure rate"
                f" below {options.claim:.0%} can be claimed"
            )
        elif passed < needed:
            reason = (
                f"high-risk cell {cell} has {passed} passing case(s) and no failure; a"
                f" failure rate below {options.claim:.0%} at {options.confidence:.0%} needs"
                f" {needed}"
            )
        else:
            continue
        found.append(GateFailure("risk-claim", cell, reason, failed))
    return found
