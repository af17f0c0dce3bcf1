"""Repeated trials: the figures of a row run several times, and of a group of such rows.

A trial is one run of the system under test over the set. When the results hold several,
each row has a verdict in each trial; only its scored trials (pass or fail) count in its
figures, so a trial that is ``not-run``, ``needs-judge``, ``needs-human`` or ``invalid`` for
the row weighs nothing. For a row with ``n`` scored trials of which ``c`` pass:

- the share passed is ``c / n``;
- pass@k, the chance that at least one of k trials drawn from the n passes, by the unbiased
  estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained on Code"):
  ``1 - C(n - c, k) / C(n, k)``;
- pass^k, the chance that all k trials drawn from the n pass, as tau-bench defines it (Yao et
  al. 2024, "τ-bench: A Benchmark for Tool-Agent-User Interaction in Real-World Domains"):
  ``C(c, k) / C(n, k)``.

Both are exact: the binomial coefficients are whole numbers (``math.comb``), and the one
division rounds once, so no n is too large for a float. pass@1 and pass^1 are both ``c / n``.

A group's figures (an oracle type, a case family) are means over its rows, each row weighing
the same; a figure at k counts only the rows with at least k scored trials.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from blueprint.grading.semantics import VERDICTS, Verdict

#: each verdict as one byte (0 is no verdict)
CODES: Final[dict[str, int]] = {verdict: number for number, verdict in enumerate(VERDICTS, 1)}
_PASS: Final = CODES["pass"]
_FAIL: Final = CODES["fail"]
#: each verdict as one letter, for a row's trials on one line
LETTERS: Final[dict[str, str]] = {
    "pass": "P",
    "fail": "F",
    "needs-judge": "J",
    "needs-human": "H",
    "not-run": "-",
    "invalid": "X",
}


def _checked(n: int, c: int, k: int) -> None:
    for name, value in (("n", n), ("c", c), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} is a whole number, not {value!r}")
    if not 0 <= c <= n:
        raise ValueError(f"c (trials passed) is from 0 to n = {n}, not {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k is from 1 to n = {n} (the trials scored), not {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` trials drawn (without replacement) from ``n``
    scored trials, ``c`` of which pass, passes: ``1 - C(n - c, k) / C(n, k)``, the unbiased
    estimator of Chen et al. 2021. Exact; ValueError unless 0 <= c <= n and 1 <= k <= n."""
    _checked(n, c, k)
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` trials drawn (without replacement) from ``n`` scored trials,
    ``c`` of which pass, pass: ``C(c, k) / C(n, k)``, tau-bench's pass^k. Exact; ValueError
    unless 0 <= c <= n and 1 <= k <= n."""
    _checked(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class TrialLabel:
    """One trial of a run: its label in reports, the results file it came from and the
    trial that file's results name (None when they name none)."""

    label: str
    file: str
    trial: str | None

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "file": self.file, "trial": self.trial}


@dataclass(frozen=True, slots=True)
class RowTrials:
    """A row's verdict and score in each trial of the run, in the run's trial order: one
    byte a trial (:data:`CODES`), and one double a trial (NaN: no score; none given at all
    when ``packed_scores`` is empty)."""

    codes: bytes
    packed_scores: bytes = b""

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return tuple(VERDICTS[code - 1] for code in self.codes)

    @property
    def scores(self) -> tuple[float | None, ...]:
        """The score of each trial: a pass's or a fail's, None for any other verdict."""
        if not self.packed_scores:
            return (None,) * len(self.codes)
        found = array("d")
        found.frombytes(self.packed_scores)
        return tuple(
            None if math.isnan(score) or code not in (_PASS, _FAIL) else score
            for score, code in zip(found, self.codes, strict=True)
        )

    @property
    def scored(self) -> int:
        """n: the trials that gave the row a pass or a fail."""
        return self.codes.count(_PASS) + self.codes.count(_FAIL)

    @property
    def passed(self) -> int:
        """c: the trials that passed the row."""
        return self.codes.count(_PASS)

    @property
    def share_passed(self) -> float | None:
        """c / n; None when no trial scored the row."""
        n = self.scored
        return self.passed / n if n else None

    def pass_at(self, k: int) -> float | None:
        """pass@k over the row's scored trials; None when fewer than k scored it."""
        n = self.scored
        return pass_at_k(n, self.passed, k) if 1 <= k <= n else None

    def pass_hat(self, k: int) -> float | None:
        """pass^k over the row's scored trials; None when fewer than k scored it."""
        n = self.scored
        return pass_hat_k(n, self.passed, k) if 1 <= k <= n else None

    def letters(self) -> str:
        """The verdict of each trial as a letter (:data:`LETTERS`): ``PPF-P``."""
        return "".join(LETTERS[verdict] for verdict in self.verdicts)

    def ks(self, k: int | None = None) -> list[int]:
        """The k a row's figures are given at: 1, n (its scored trials) and ``k``."""
        return sorted({1, max(self.scored, 1), *([k] if k else [])})

    def to_json(self, k: int | None = None) -> dict[str, Any]:
        ks = self.ks(k)
        return {
            "verdicts": list(self.verdicts),
            "scores": list(self.scores),
            "scored": self.scored,
            "passed": self.passed,
            "sharePassed": self.share_passed,
            "passAt": {str(at): self.pass_at(at) for at in ks},
            "passHat": {str(at): self.pass_hat(at) for at in ks},
        }


@dataclass(frozen=True)
class TrialRun:
    """The trials of a run and every row's verdict in each: ``rows`` is in the order of the
    report's rows; ``k`` is the k the summary gives pass@k and pass^k at."""

    labels: list[TrialLabel]
    rows: Sequence[RowTrials]
    k: int

    @property
    def count(self) -> int:
        return len(self.labels)

    def to_json(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "k": self.k,
            "trials": [label.to_json() for label in self.labels],
        }


class ExactMean:
    """The mean of numbers added one at a time, with ``math.fsum``'s exactness: the sum is
    kept as a few partial sums that add up to it exactly (Shewchuk's algorithm, as in the
    Python documentation's recipe), however many numbers there are."""

    __slots__ = ("count", "partials")

    def __init__(self) -> None:
        self.partials: list[float] = []
        self.count = 0

    def add(self, value: float) -> None:
        self.count += 1
        kept = 0
        for other in self.partials:
            if abs(value) < abs(other):
                value, other = other, value
            high = value + other
            low = other - (high - value)
            if low:
                self.partials[kept] = low
                kept += 1
            value = high
        self.partials[kept:] = [value]

    def mean(self) -> float | None:
        return math.fsum(self.partials) / self.count if self.count else None


class GroupFigures:
    """A group's figures, its rows added one at a time (see :func:`group_figures`)."""

    __slots__ = ("at_k", "hat_k", "k", "shares")

    def __init__(self, k: int) -> None:
        self.k = k
        self.shares = ExactMean()
        self.at_k = ExactMean()
        self.hat_k = ExactMean()

    def add(self, row: RowTrials) -> None:
        n, c = row.scored, row.passed
        if not n:
            return
        self.shares.add(c / n)
        if n >= self.k:
            self.at_k.add(pass_at_k(n, c, self.k))
            self.hat_k.add(pass_hat_k(n, c, self.k))

    def figures(self) -> dict[str, Any]:
        share, k = self.shares.mean(), str(self.k)
        return {
            "rows": self.shares.count,
            "sharePassed": share,
            # pass@1 and pass^1 of a row are its share passed
            "passAt": {"1": share, k: self.at_k.mean()},
            "passHat": {"1": share, k: self.hat_k.mean()},
            "rowsAt": {"1": self.shares.count, k: self.at_k.count},
        }


def group_figures(rows: Iterable[RowTrials], k: int) -> dict[str, Any]:
    """A group's figures over its rows, each weighing the same: the mean share passed,
    pass@1, and pass@k and pass^k over the rows with at least k scored trials. ``rows``
    counts the rows with any scored trial; ``rowsAt`` the rows each figure is over."""
    found = GroupFigures(k)
    for row in rows:
        found.add(row)
    return found.figures()


__all__ = [
    "CODES",
    "LETTERS",
    "RowTrials",
    "TrialLabel",
    "TrialRun",
    "group_figures",
    "pass_at_k",
    "pass_hat_k",
]
