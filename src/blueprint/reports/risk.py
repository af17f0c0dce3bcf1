"""The action-risk matrix: reversibility by blast radius, and high-risk cases left unguarded.

A case's ``reversibility`` (R0 no state change, R1 the actor can undo it, R2 a compensating
operation is needed, R3 no way back) and ``blastRadius`` (B0 one record, B1 one team, B2 the
organization, B3 outside it) say what a failure of the system under test would cost. The
matrix counts cases per cell, with a "not stated" row and column for cases that leave a
field out.

A case is **high risk** when a failure cannot be undone (R3), reaches outside the
organization (B3), or needs a compensating operation across the organization (R2 or more
and B2 or more). Each of those is a failure nobody inside one team can quietly repair, so a
high-risk case should say when to hand off to a person (``escalationExpectation``) and be
graded by someone with the domain knowledge to judge it (``reviewerExpertise``, or the
``human-expert`` evaluator). The matrix lists the high-risk cases that lack either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from blueprint.core.model import BlastRadius, Reversibility

REVERSIBILITY: Final[tuple[Reversibility, ...]] = ("R0", "R1", "R2", "R3")
BLAST_RADII: Final[tuple[BlastRadius, ...]] = ("B0", "B1", "B2", "B3")
NOT_STATED: Final = "not stated"

#: what each level means, as the spec defines them
MEANINGS: Final[dict[str, str]] = {
    "R0": "no state change",
    "R1": "the actor can undo it",
    "R2": "needs a compensating operation",
    "R3": "no way back",
    "B0": "one record",
    "B1": "one team",
    "B2": "the organization",
    "B3": "outside the organization",
    NOT_STATED: "the case does not say",
}

HIGH_RISK_RULE: Final = (
    "R3 (no way back), or B3 (reaches outside the organization), or R2+ with B2+ (a"
    " compensating operation across the organization)"
)

#: the safeguards a high-risk case should carry, as the gaps name them
ESCALATION: Final = "escalationExpectation"
EXPERT_REVIEWER: Final = "expertReviewer"

#: how many unguarded cases a matrix keeps by id (the count is always exact)
GAP_LIMIT: Final = 1000


def level(value: Any, levels: tuple[str, ...]) -> str:
    """The level a case states, or "not stated" (absent, or not one of the levels)."""
    return value if isinstance(value, str) and value in levels else NOT_STATED


def is_high_risk(reversibility: str, blast_radius: str) -> bool:
    """The rule in the module docstring; a level not stated never makes a case high risk."""
    r = REVERSIBILITY.index(reversibility) if reversibility in REVERSIBILITY else None
    b = BLAST_RADII.index(blast_radius) if blast_radius in BLAST_RADII else None
    if r == 3 or b == 3:
        return True
    return r is not None and b is not None and r >= 2 and b >= 2


def _stated(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def missing_safeguards(case: dict[str, Any], evaluator: str | None) -> list[str]:
    """The safeguards a case lacks: an escalation expectation, an expert reviewer."""
    missing = []
    if not _stated(case.get("escalationExpectation")):
        missing.append(ESCALATION)
    if not _stated(case.get("reviewerExpertise")) and evaluator != "human-expert":
        missing.append(EXPERT_REVIEWER)
    return missing


@dataclass(frozen=True)
class RiskGap:
    """A high-risk case without a safeguard it should have."""

    id: str | None
    family: str | None
    reversibility: str
    blast_radius: str
    missing: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "family": self.family,
            "reversibility": self.reversibility,
            "blastRadius": self.blast_radius,
            "missing": list(self.missing),
        }


def _empty_cells() -> dict[str, dict[str, int]]:
    return {r: dict.fromkeys((*BLAST_RADII, NOT_STATED), 0) for r in (*REVERSIBILITY, NOT_STATED)}


@dataclass
class RiskMatrix:
    """Cases per (reversibility, blast radius) cell, and the high-risk cases left unguarded.

    Memory is bounded: 25 counters and at most :data:`GAP_LIMIT` gaps by id.
    """

    cells: dict[str, dict[str, int]] = field(default_factory=_empty_cells)
    high_risk: int = 0
    gaps: list[RiskGap] = field(default_factory=list)
    gap_count: int = 0

    def add(
        self, row_id: str | None, case: dict[str, Any], evaluator: str | None, family: str | None
    ) -> None:
        reversibility = level(case.get("reversibility"), REVERSIBILITY)
        blast_radius = level(case.get("blastRadius"), BLAST_RADII)
        self.cells[reversibility][blast_radius] += 1
        if not is_high_risk(reversibility, blast_radius):
            return
        self.high_risk += 1
        missing = missing_safeguards(case, evaluator)
        if missing:
            self.gap_count += 1
            if len(self.gaps) < GAP_LIMIT:
                self.gaps.append(
                    RiskGap(row_id, family, reversibility, blast_radius, tuple(missing))
                )

    @property
    def rows(self) -> int:
        return sum(sum(by_radius.values()) for by_radius in self.cells.values())

    def row_totals(self) -> dict[str, int]:
        return {r: sum(by_radius.values()) for r, by_radius in self.cells.items()}

    def column_totals(self) -> dict[str, int]:
        return {
            b: sum(by_radius[b] for by_radius in self.cells.values())
            for b in (*BLAST_RADII, NOT_STATED)
        }

    def high_risk_cell(self, reversibility: str, blast_radius: str) -> bool:
        return is_high_risk(reversibility, blast_radius)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": HIGH_RISK_RULE,
            "reversibility": [*REVERSIBILITY, NOT_STATED],
            "blastRadius": [*BLAST_RADII, NOT_STATED],
            "cells": self.cells,
            "rowTotals": self.row_totals(),
            "columnTotals": self.column_totals(),
            "rows": self.rows,
            "highRisk": self.high_risk,
            "gapCount": self.gap_count,
            "gaps": [gap.to_json() for gap in self.gaps],
        }
