"""The power of each case family's rows: the smallest change in its pass rate two runs can
show, and, for a change the caller names, the rows the family needs.

Only rows a grader may score count: a row a person grades (expected-behavior-only, a
human-expert or rubric-human evaluator, a pairwise preference), a row the set bars from any
verdict, and a starter example never get a number from ``blueprint grade``, so they add
nothing to a family's power. The test and its formula are those of
:func:`blueprint.grading.statistics.rows_needed`; docs/statistics.md has them in full.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from blueprint.grading.statistics import detectable_difference, rows_needed

#: the pass rate the power is worked out at when the caller names none: one half, where a
#: pass rate varies most; a change from it needs close to the most rows any baseline needs
#: (docs/statistics.md gives how close)
BASELINE_RATE: Final = 0.5
POWER: Final = 0.8
ALPHA: Final = 0.05
#: what the power is of, in words a report prints
TEST: Final = (
    "two-sided two-proportion z-test (pooled variance, normal approximation) between two runs"
    " that each grade the family's scored rows"
)


@dataclass(frozen=True)
class FamilyPower:
    """One case family's scored rows and what they can detect."""

    #: None for the rows in no case family
    id: str | None
    #: all its rows, and those a grader may score
    rows: int
    scored_rows: int
    #: the smallest detectable change in the pass rate; None when no change is large enough
    detectable: float | None
    #: the rows it lacks for the asked-for change (None when no change was asked for)
    more_needed: int | None

    @property
    def change_label(self) -> str:
        """The detectable change as a report shows it: a share to three places."""
        if self.detectable is not None:
            return f"{self.detectable:.3f}"
        return "none (no scored rows)" if self.scored_rows == 0 else "none (too few rows)"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rows": self.rows,
            "scoredRows": self.scored_rows,
            "detectableDifference": None if self.detectable is None else round(self.detectable, 4),
            "moreNeeded": self.more_needed,
        }


@dataclass
class PowerTable:
    """The power of every case family at one baseline rate, power and significance level."""

    baseline_rate: float = BASELINE_RATE
    power: float = POWER
    alpha: float = ALPHA
    #: the change in pass rate the caller asked about (``--detect``), if any
    detect: float | None = None
    #: the scored rows a family needs for ``detect``
    rows_needed: int | None = None
    families: list[FamilyPower] = field(default_factory=list)

    @property
    def test(self) -> str:
        return TEST

    @property
    def settings(self) -> str:
        """The power, significance and baseline rate the table is worked out at, in words."""
        return (
            f"{self.power:.0%} power, {self.alpha:.0%} two-sided significance, baseline pass"
            f" rate {self.baseline_rate:g}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "test": TEST,
            "baselineRate": self.baseline_rate,
            "power": self.power,
            "alpha": self.alpha,
            "detect": self.detect,
            "rowsNeeded": self.rows_needed,
            "families": [family.to_json() for family in self.families],
        }


def check_power_options(baseline_rate: float, detect: float | None) -> None:
    """Raise ValueError, naming the option, for a baseline rate or a change out of range."""
    if not 0 < baseline_rate < 1:
        raise ValueError(f"--baseline-rate {baseline_rate:g}: give a rate between 0 and 1")
    if detect is not None:
        largest = max(baseline_rate, 1 - baseline_rate)
        if not 0 < detect <= largest:
            raise ValueError(
                f"--detect {detect:g}: give a change in pass rate above 0 and at most"
                f" {largest:g} (the largest change from a baseline rate of {baseline_rate:g}"
                " toward one half)"
            )


def power_table(
    families: Iterable[tuple[str | None, int, int]],
    baseline_rate: float = BASELINE_RATE,
    detect: float | None = None,
) -> PowerTable:
    """The power of each family, given as (id, rows, scored rows), at 80% power and 5%
    two-sided significance."""
    check_power_options(baseline_rate, detect)
    needed = None if detect is None else rows_needed(baseline_rate, detect, POWER, ALPHA)
    table = PowerTable(baseline_rate=baseline_rate, detect=detect, rows_needed=needed)
    for family_id, rows, scored in families:
        found = detectable_difference(scored, baseline_rate, POWER, ALPHA)
        table.families.append(
            FamilyPower(
                family_id,
                rows,
                scored,
                None if math.isinf(found) else found,
                None if needed is None else max(0, needed - scored),
            )
        )
    return table
