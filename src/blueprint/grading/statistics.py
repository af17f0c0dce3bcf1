"""The statistics of an evaluation, as pure functions: intervals for a pass rate, the bound
when nothing failed, the standard error of a mean score whose rows come in case families,
the paired difference of two runs, McNemar's test, and the power of a family's rows.

Every function checks its arguments and raises ValueError with a message that names the
argument. scipy is imported inside the functions that need it (the Clopper-Pearson interval,
the t quantile, the binomial test); the quantiles come from ``scipy.special`` (the functions
``scipy.stats`` calls, without the third of a second its import takes), the normal quantile
from the standard library.
docs/statistics.md gives each formula, when it applies, and its source.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from statistics import NormalDist
from typing import Any, Final

#: below this many rows a pass rate's interval is the exact (Clopper-Pearson) one
EXACT_BELOW: Final = 40
#: the names :func:`rate_interval` gives its methods
EXACT: Final = "clopper-pearson"
WILSON: Final = "wilson"

#: how close the search for the smallest detectable difference gets
_TOLERANCE: Final = 1e-12


# --- checking arguments ------------------------------------------------------------------------


def _count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be 0 or more, not {value}")
    return value


def _counts(passed: int, n: int) -> tuple[int, int]:
    _count("n", n)
    _count("passed", passed)
    if passed > n:
        raise ValueError(f"passed ({passed}) cannot exceed n ({n})")
    return passed, n


def _share(name: str, value: float) -> float:
    """A probability strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ValueError(f"{name} must be strictly between 0 and 1, not {value!r}")
    return float(value)


def _scores(name: str, values: Sequence[float]) -> list[float]:
    return [_score(name, index, value) for index, value in enumerate(values)]


def _score(name: str, index: int, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name}[{index}] must be a finite number, not {value!r}")
    return float(value)


def _z(probability: float) -> float:
    """The standard normal quantile (Wichura's AS 241, as the standard library computes it)."""
    return NormalDist().inv_cdf(probability)


# --- a pass rate's interval ------------------------------------------------------------------


def wilson_interval(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for ``passed`` passes in ``n`` rows (n = 0: no information,
    the whole of [0, 1])."""
    passed, n = _counts(passed, n)
    confidence = _share("confidence", confidence)
    if n == 0:
        return 0.0, 1.0
    z = _z(0.5 + confidence / 2)
    rate = passed / n
    z2n = z * z / n
    centre = (rate + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(rate * (1 - rate) / n + z2n / (4 * n))
    # at 0 or n passes a bound is 0 or 1 exactly; rounding would otherwise leave a hair
    lower = 0.0 if passed == 0 else max(0.0, centre - half)
    upper = 1.0 if passed == n else min(1.0, centre + half)
    return lower, upper


def exact_interval(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Clopper-Pearson ("exact") interval: the quantiles of beta distributions, each tail
    holding (1 - confidence) / 2; a bound at 0 or n passes is 0 or 1."""
    passed, n = _counts(passed, n)
    confidence = _share("confidence", confidence)
    if n == 0:
        return 0.0, 1.0
    from scipy.special import betaincinv  # the beta distribution's quantile (beta.ppf)

    tail = (1 - confidence) / 2
    lower = 0.0 if passed == 0 else float(betaincinv(passed, n - passed + 1, tail))
    upper = 1.0 if passed == n else float(betaincinv(passed + 1, n - passed, 1 - tail))
    return lower, upper


def rate_interval(passed: int, n: int, confidence: float = 0.95) -> tuple[float, float, str]:
    """The interval the reports give a pass rate, and the method's name.

    Clopper-Pearson when there are fewer than 40 rows or every row passed or none did;
    Wilson otherwise. Wilson's interval is close to its nominal coverage on average but dips
    below it for some rates at small n and near 0 and 1 (Brown, Cai and DasGupta 2001);
    Clopper-Pearson never covers less than the confidence asked for, at the price of some
    width. A small family's rate, or a family that passed everything, is the one most easily
    over-read, so it gets the interval that is never too narrow.
    """
    passed, n = _counts(passed, n)
    if n < EXACT_BELOW or passed in (0, n):
        return (*exact_interval(passed, n, confidence), EXACT)
    return (*wilson_interval(passed, n, confidence), WILSON)


def failure_upper_bound(n: int, confidence: float = 0.95) -> float:
    """With no failure in ``n`` rows, the exact one-sided upper confidence bound on the failure
    rate: 1 - (1 - confidence) ** (1 / n). At 95% it is close to the rule of three, 3 / n.
    n = 0 says nothing: 1."""
    _count("n", n)
    confidence = _share("confidence", confidence)
    if n == 0:
        return 1.0
    return 1 - (1 - confidence) ** (1 / n)


# --- a mean score ----------------------------------------------------------------------------


def clustered_standard_error(scores: Sequence[float], clusters: Sequence[str]) -> float:
    """The standard error of the mean score when rows come in clusters (case families).

    The cluster-robust estimate (Miller 2024, its section on clustered standard errors and
    appendix A):
    sqrt(C / (C - 1) * sum over clusters of (sum of the cluster's s_i - mean) ** 2) / n,
    with C clusters and n rows. The factor C / (C - 1) is the usual small-sample correction;
    with it, one row per cluster gives exactly the ordinary standard error s / sqrt(n) with
    the n - 1 sample variance. Needs at least two clusters.
    """
    values = _scores("scores", scores)
    if len(values) != len(clusters):
        raise ValueError(
            f"scores and clusters differ in length ({len(values)} and {len(clusters)})"
        )
    sums: dict[str, list[float]] = {}
    mean = math.fsum(values) / len(values) if values else 0.0
    for value, cluster in zip(values, clusters, strict=True):
        sums.setdefault(cluster, []).append(value - mean)
    count = len(sums)
    if count < 2:
        raise ValueError(f"a clustered standard error needs at least two clusters, not {count}")
    total = math.fsum(math.fsum(residuals) ** 2 for residuals in sums.values())
    return math.sqrt(total * count / (count - 1)) / len(values)


def paired_difference(
    before: Sequence[float], after: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """The mean of after - before over paired rows, and its t interval:
    mean +/- t(confidence, n - 1) * sd / sqrt(n), with sd the n - 1 standard deviation of the
    differences. Needs at least two pairs."""
    # each side is read in passes, not copied: a large run's scores may wait on disk
    for name, values in (("before", before), ("after", after)):
        for index, value in enumerate(values):
            _score(name, index, value)
    confidence = _share("confidence", confidence)
    if len(before) != len(after):
        raise ValueError(f"before and after differ in length ({len(before)} and {len(after)})")
    n = len(before)
    if n < 2:
        raise ValueError(f"a paired difference needs at least two pairs, not {n}")

    def differences() -> Iterator[float]:
        return (float(b) - float(a) for a, b in zip(before, after, strict=True))

    mean = math.fsum(differences()) / n
    variance = math.fsum((d - mean) ** 2 for d in differences()) / (n - 1)
    from scipy.special import stdtrit  # Student's t quantile (t.ppf)

    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * math.sqrt(variance / n)
    return mean, mean - half, mean + half


def mcnemar_p(fail_to_pass: int, pass_to_fail: int) -> float:
    """The exact two-sided McNemar test of two runs over the same rows: the binomial test of
    the discordant pairs against one half (1.0 when there are none)."""
    _count("fail_to_pass", fail_to_pass)
    _count("pass_to_fail", pass_to_fail)
    discordant = fail_to_pass + pass_to_fail
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(fail_to_pass, discordant, 0.5).pvalue)


# --- power -----------------------------------------------------------------------------------
#
# The test: a family's rows are graded in two runs and the two pass rates are compared by the
# two-sided two-proportion z-test with the pooled variance under the null hypothesis (the
# chi-square test of the 2x2 table), n rows in each run. Rows needed for power 1 - beta to
# detect rates p1 = baseline and p2 = baseline +/- difference (Fleiss, Levin and Paik 2003,
# chapter 4, without the continuity correction):
#
#     n = (z(1 - alpha/2) * sqrt(2 pbar qbar) + z(power) * sqrt(p1 q1 + p2 q2)) ** 2 / d ** 2
#
# with pbar the mean of p1 and p2 and q = 1 - p. The change is taken toward one half, the
# direction that needs more rows. The two runs grade the same rows, so they are paired; when
# the runs agree more often than chance (as two runs of one system do), the paired test
# (McNemar) needs fewer rows, and this count is on the safe side.


def _difference(baseline: float, difference: float) -> float:
    if isinstance(difference, bool) or not isinstance(difference, int | float):
        raise ValueError(f"difference must be a number, not {difference!r}")
    largest = max(baseline, 1 - baseline)
    if not 0 < difference <= largest:
        raise ValueError(
            f"difference must be more than 0 and at most {largest:g} (the largest change from"
            f" a baseline of {baseline:g} toward one half), not {difference!r}"
        )
    return float(difference)


def _required(baseline: float, difference: float, power: float, alpha: float) -> float:
    """The rows the formula asks for, before rounding up."""
    other = baseline + difference if baseline <= 0.5 else baseline - difference
    other = min(1.0, max(0.0, other))
    pooled = (baseline + other) / 2
    null = math.sqrt(2 * pooled * (1 - pooled))
    alternative = math.sqrt(baseline * (1 - baseline) + other * (1 - other))
    spread = _z(1 - alpha / 2) * null + _z(power) * alternative
    return spread * spread / (difference * difference)


def rows_needed(baseline: float, difference: float, power: float = 0.8, alpha: float = 0.05) -> int:
    """The rows a family needs, graded in each of two runs, for the two-sided two-proportion
    test at level ``alpha`` to detect a change of ``difference`` in its pass rate from
    ``baseline`` with probability ``power`` (the change toward one half; see above)."""
    baseline = _share("baseline", baseline)
    power = _share("power", power)
    alpha = _share("alpha", alpha)
    difference = _difference(baseline, difference)
    # a count the formula gives as a whole number must not round up past it
    return max(1, math.ceil(_required(baseline, difference, power, alpha) - 1e-9))


def detectable_difference(
    n: int, baseline: float, power: float = 0.8, alpha: float = 0.05
) -> float:
    """The smallest change in a pass rate from ``baseline`` that ``n`` rows, graded in each
    of two runs, detect with probability ``power`` at level ``alpha`` (the test of
    :func:`rows_needed`); infinity when no change is large enough (n = 0 included)."""
    _count("n", n)
    baseline = _share("baseline", baseline)
    power = _share("power", power)
    alpha = _share("alpha", alpha)
    largest = max(baseline, 1 - baseline)
    if n == 0 or _required(baseline, largest, power, alpha) > n:
        return math.inf
    # the rows asked for fall as the difference grows: bisect for where they reach n
    low, high = 0.0, largest
    while high - low > _TOLERANCE:
        middle = (low + high) / 2
        if _required(baseline, middle, power, alpha) > n:
            low = middle
        else:
            high = middle
    return high
