"""blueprint.grading.statistics: each function against scipy, published values and hand work."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats

from blueprint.grading import statistics
from blueprint.grading.statistics import (
    EXACT,
    WILSON,
    clustered_standard_error,
    detectable_difference,
    exact_interval,
    failure_upper_bound,
    mcnemar_p,
    paired_difference,
    rate_interval,
    rows_needed,
    wilson_interval,
)

CONFIDENCES = (0.8, 0.9, 0.95, 0.99)
COUNTS = [(0, 1), (1, 1), (0, 5), (3, 5), (5, 5), (7, 10), (1, 29), (20, 40), (39, 40), (81, 263)]

counts = st.integers(min_value=1, max_value=2000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
confidences = st.floats(min_value=0.5, max_value=0.999)


# --- the intervals of a pass rate --------------------------------------------------------------


@pytest.mark.parametrize(("passed", "n"), COUNTS)
@pytest.mark.parametrize("confidence", CONFIDENCES)
def test_both_intervals_are_scipys(passed: int, n: int, confidence: float) -> None:
    result = stats.binomtest(passed, n)
    for ours, method in ((wilson_interval, "wilson"), (exact_interval, "exact")):
        reference = result.proportion_ci(confidence_level=confidence, method=method)
        assert ours(passed, n, confidence) == pytest.approx(
            (reference.low, reference.high), abs=1e-12
        )


@pytest.mark.parametrize(
    ("passed", "n", "wilson", "exact"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857-872, table II: the score (Wilson)
        # and exact (Clopper-Pearson) intervals of his four examples, to four places
        (81, 263, (0.2553, 0.3662), (0.2527, 0.3676)),
        (15, 148, (0.0624, 0.1605), (0.0578, 0.1617)),
        (0, 20, (0.0, 0.1611), (0.0, 0.1684)),
        (1, 29, (0.0061, 0.1718), (0.0009, 0.1776)),
    ],
)
def test_newcombes_published_examples(
    passed: int, n: int, wilson: tuple[float, float], exact: tuple[float, float]
) -> None:
    assert tuple(round(x, 4) for x in wilson_interval(passed, n)) == wilson
    assert tuple(round(x, 4) for x in exact_interval(passed, n)) == exact


def test_wilson_by_hand() -> None:
    # 7 of 10 at 95%: z = 1.959964, z^2/n = 0.384146; centre (0.7 + 0.192073) / 1.384146
    # = 0.644493; half-width 1.959964 / 1.384146 * sqrt(0.021 + 0.0096037) = 0.247715
    lower, upper = wilson_interval(7, 10)
    assert lower == pytest.approx(0.644493 - 0.247715, abs=2e-6)
    assert upper == pytest.approx(0.644493 + 0.247715, abs=2e-6)


def test_exact_by_hand_at_the_ends() -> None:
    # at 0 of n the upper bound solves (1 - p)^n = 0.025; at n of n the lower, p^n = 0.025
    assert exact_interval(0, 10) == (0.0, pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-12))
    assert exact_interval(10, 10) == (pytest.approx(0.025 ** (1 / 10), abs=1e-12), 1.0)


def test_no_rows_say_nothing() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert exact_interval(0, 0) == (0.0, 1.0)
    assert rate_interval(0, 0) == (0.0, 1.0, EXACT)


def test_the_reports_interval_is_exact_below_40_rows_or_at_either_end() -> None:
    assert rate_interval(20, 39)[2] == EXACT
    assert rate_interval(20, 40) == (*wilson_interval(20, 40), WILSON)
    assert rate_interval(0, 500) == (*exact_interval(0, 500), EXACT)
    assert rate_interval(500, 500)[2] == EXACT
    assert rate_interval(499, 500)[2] == WILSON
    assert rate_interval(3, 10, 0.9) == (*exact_interval(3, 10, 0.9), EXACT)


@given(counts, confidences)
def test_intervals_hold_the_rate_and_lie_in_the_unit_interval(
    count: tuple[int, int], confidence: float
) -> None:
    passed, n = count
    rate = passed / n
    for lower, upper in (
        wilson_interval(passed, n, confidence),
        exact_interval(passed, n, confidence),
        rate_interval(passed, n, confidence)[:2],
    ):
        assert 0.0 <= lower <= rate <= upper <= 1.0


@given(counts, confidences)
def test_the_exact_interval_holds_wilsons_midpoint(
    count: tuple[int, int], confidence: float
) -> None:
    passed, n = count
    lower, upper = exact_interval(passed, n, confidence)
    w_lower, w_upper = wilson_interval(passed, n, confidence)
    assert lower <= (w_lower + w_upper) / 2 <= upper


@given(counts, st.integers(min_value=2, max_value=10), confidences)
def test_intervals_shrink_as_rows_grow_at_the_same_rate(
    count: tuple[int, int], factor: int, confidence: float
) -> None:
    passed, n = count
    for interval in (wilson_interval, exact_interval):
        small = interval(passed, n, confidence)
        large = interval(passed * factor, n * factor, confidence)
        assert large[1] - large[0] < small[1] - small[0]


@given(counts, confidences, confidences)
def test_more_confidence_gives_a_wider_interval(
    count: tuple[int, int], first: float, second: float
) -> None:
    assume(abs(first - second) > 1e-6)
    passed, n = count
    low, high = sorted((first, second))
    for interval in (wilson_interval, exact_interval):
        narrow, wide = interval(passed, n, low), interval(passed, n, high)
        assert wide[0] <= narrow[0] and narrow[1] <= wide[1]


# --- nothing failed ----------------------------------------------------------------------------


def test_the_zero_failure_bound() -> None:
    assert failure_upper_bound(100) == pytest.approx(0.0295130, abs=1e-7)
    assert failure_upper_bound(20) == pytest.approx(0.1391083, abs=1e-7)
    assert failure_upper_bound(0) == 1.0
    assert failure_upper_bound(1, 0.9) == pytest.approx(0.9)
    for n in (1, 10, 300):
        # the one-sided Clopper-Pearson bound for 0 of n: a beta(1, n) quantile
        assert failure_upper_bound(n, 0.95) == pytest.approx(stats.beta.ppf(0.95, 1, n))


@given(st.integers(min_value=1, max_value=100_000))
def test_the_rule_of_three_is_the_bounds_approximation(n: int) -> None:
    bound = failure_upper_bound(n)
    # -ln(0.05) = 2.996 < 3, and 1 - exp(-x) < x: the rule of three is never below the bound
    assert bound < 3 / n
    if n >= 30:
        assert bound == pytest.approx(3 / n, rel=0.05)


# --- the clustered standard error --------------------------------------------------------------


def direct_clustered(scores: list[float], clusters: list[str]) -> float:
    """Miller's double sum over the pairs of rows within each cluster, with C / (C - 1)."""
    values = np.asarray(scores, dtype=float)
    labels = np.asarray(clusters)
    residuals = values - values.mean()
    total = 0.0
    for label in np.unique(labels):
        inside = residuals[labels == label]
        total += float(np.outer(inside, inside).sum())
    count = len(np.unique(labels))
    return math.sqrt(total * count / (count - 1)) / len(values)


def test_the_clustered_standard_error_by_hand() -> None:
    # mean 0.5; cluster sums of residuals: a (0.5 + 0.5) = 1, b (-0.5 - 0.5) = -1,
    # c (0.5 - 0.5) = 0; C / (C - 1) = 3/2: sqrt(1.5 * 2) / 6
    scores = [1, 1, 0, 0, 1, 0]
    clusters = ["a", "a", "b", "b", "c", "c"]
    assert clustered_standard_error(scores, clusters) == pytest.approx(math.sqrt(3) / 6)
    # the same rows as if independent: s = sqrt(6 * 0.25 / 5), s / sqrt(6)
    assert clustered_standard_error(scores, list("uvwxyz")) == pytest.approx(
        math.sqrt(0.3) / math.sqrt(6)
    )


rows_in_clusters = st.lists(
    st.tuples(st.floats(min_value=0, max_value=1), st.sampled_from("abcdefgh")),
    min_size=2,
    max_size=60,
)


@given(rows_in_clusters)
def test_the_clustered_standard_error_is_the_direct_sum(rows: list[tuple[float, str]]) -> None:
    scores = [score for score, _ in rows]
    clusters = [cluster for _, cluster in rows]
    assume(len(set(clusters)) >= 2)
    # compared as variances: rounding in the sums is additive there, and a square root turns
    # a rounding of 1e-18 in a variance of zero (clusters alike) into 1e-9
    assert clustered_standard_error(scores, clusters) ** 2 == pytest.approx(
        direct_clustered(scores, clusters) ** 2, abs=1e-12
    )


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=2, max_size=80))
def test_one_row_per_cluster_is_the_ordinary_standard_error(scores: list[float]) -> None:
    clusters = [f"c{index}" for index in range(len(scores))]
    ordinary = float(np.std(scores, ddof=1)) / math.sqrt(len(scores))
    assert clustered_standard_error(scores, clusters) == pytest.approx(ordinary, abs=1e-12)


@given(
    st.lists(st.floats(min_value=0, max_value=1), min_size=2, max_size=20),
    st.integers(min_value=1, max_value=8),
)
def test_clusters_that_move_together_count_as_one_row_each(means: list[float], size: int) -> None:
    # every row of a cluster scores alike: the clustered error is that of the cluster means
    scores = [mean for mean in means for _ in range(size)]
    clusters = [f"c{index}" for index in range(len(means)) for _ in range(size)]
    expected = float(np.std(means, ddof=1)) / math.sqrt(len(means))
    assert clustered_standard_error(scores, clusters) == pytest.approx(expected, abs=1e-12)


# --- two runs of the same rows -----------------------------------------------------------------


def test_the_paired_difference_is_scipys_paired_t_interval() -> None:
    before = [0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1]
    after = [1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1]
    for confidence in CONFIDENCES:
        mean, lower, upper = paired_difference(before, after, confidence)
        reference = stats.ttest_rel(after, before).confidence_interval(confidence)
        assert mean == pytest.approx(np.mean(np.subtract(after, before)))
        assert (lower, upper) == pytest.approx((reference.low, reference.high), abs=1e-12)


def test_the_paired_difference_by_hand() -> None:
    # differences 1, 0, 1, 0: mean 0.5, sd sqrt(1/3), t(0.975, 3) = 3.182446
    mean, lower, upper = paired_difference([0, 1, 0, 1], [1, 1, 1, 1])
    half = 3.182446 * math.sqrt(1 / 3) / 2
    assert mean == 0.5
    assert (lower, upper) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-6)


@given(
    st.lists(
        st.tuples(st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1)),
        min_size=2,
        max_size=50,
    )
)
def test_the_paired_interval_holds_its_mean(pairs: list[tuple[float, float]]) -> None:
    mean, lower, upper = paired_difference([a for a, _ in pairs], [b for _, b in pairs])
    assert lower <= mean + 1e-12 and mean - 1e-12 <= upper


def test_mcnemar_by_hand_and_against_scipy() -> None:
    # 1 against 9 discordant pairs: 2 * P(X <= 1) for X ~ Binomial(10, 1/2) = 2 * 11 / 1024
    assert mcnemar_p(1, 9) == pytest.approx(22 / 1024)
    assert mcnemar_p(9, 1) == pytest.approx(22 / 1024)
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(5, 5) == 1.0
    assert mcnemar_p(0, 6) == pytest.approx(2 / 64)
    for b, c in ((3, 12), (20, 31), (0, 1)):
        assert mcnemar_p(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)


@given(st.integers(min_value=0, max_value=300), st.integers(min_value=0, max_value=300))
def test_mcnemar_is_symmetric_and_a_probability(b: int, c: int) -> None:
    assert 0.0 < mcnemar_p(b, c) <= 1.0
    assert mcnemar_p(b, c) == pytest.approx(mcnemar_p(c, b))


# --- power -------------------------------------------------------------------------------------


def pooled_power(n: int, p1: float, p2: float, alpha: float = 0.05) -> float:
    """The power of the two-sided pooled two-proportion z-test, both tails, by scipy."""
    pooled = (p1 + p2) / 2
    null = math.sqrt(2 * pooled * (1 - pooled) / n)
    alternative = math.sqrt((p1 * (1 - p1) + p2 * (1 - p2)) / n)
    z = stats.norm.ppf(1 - alpha / 2)
    shift = abs(p2 - p1)
    return float(
        stats.norm.cdf((shift - z * null) / alternative)
        + stats.norm.cdf((-shift - z * null) / alternative)
    )


def test_rows_needed_for_a_ten_point_change_from_one_half() -> None:
    # (1.959964 * sqrt(2 * 0.55 * 0.45) + 0.841621 * sqrt(0.25 + 0.24)) ** 2 / 0.01 = 387.34
    assert statistics._required(0.5, 0.1, 0.8, 0.05) == pytest.approx(387.3385, abs=1e-4)
    assert rows_needed(0.5, 0.1) == 388
    assert pooled_power(388, 0.5, 0.6) >= 0.8 > pooled_power(387, 0.5, 0.6)


def test_rows_needed_matches_zars_published_example() -> None:
    # Zar, Biostatistical Analysis (1999), example 24.26: p 0.45 against 0.25, two-sided
    # 0.05, power 0.90: 127.23 rows per group with Fleiss's continuity correction
    # n' = n / 4 * (1 + sqrt(1 + 4 / (n d))) ** 2 applied to the uncorrected n
    n = statistics._required(0.25, 0.2, 0.9, 0.05)
    corrected = n / 4 * (1 + math.sqrt(1 + 4 / (n * 0.2))) ** 2
    assert corrected == pytest.approx(127.2343, abs=1e-4)
    assert rows_needed(0.25, 0.2, power=0.9) == math.ceil(n) == 118


@given(
    st.floats(min_value=0.02, max_value=0.98),
    st.floats(min_value=0.02, max_value=1.0),
    st.sampled_from([0.7, 0.8, 0.9]),
    st.sampled_from([0.01, 0.05, 0.1]),
)
def test_rows_needed_reach_the_power_and_one_fewer_does_not(
    baseline: float, share: float, power: float, alpha: float
) -> None:
    difference = share * max(baseline, 1 - baseline)
    other = baseline + difference if baseline <= 0.5 else baseline - difference
    assume(0.001 < other < 0.999)
    needed = rows_needed(baseline, difference, power, alpha)
    assert pooled_power(needed, baseline, other, alpha) >= power - 1e-9
    if needed > 1:
        # the formula leaves out the far tail, which at one row fewer is below 1e-3
        assert pooled_power(needed - 1, baseline, other, alpha) < power + 1e-3


def reference_rows(p1: float, p2: float, power: float = 0.8, alpha: float = 0.05) -> float:
    """The pooled two-proportion formula for any two rates, with scipy's normal quantiles."""
    pooled = (p1 + p2) / 2
    spread = stats.norm.ppf(1 - alpha / 2) * math.sqrt(2 * pooled * (1 - pooled)) + stats.norm.ppf(
        power
    ) * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return float(spread**2 / (p2 - p1) ** 2)


@given(st.floats(min_value=0.02, max_value=0.98), st.floats(min_value=0.01, max_value=0.99))
def test_the_change_is_taken_toward_one_half_the_harder_to_detect(
    baseline: float, share: float
) -> None:
    difference = share * min(baseline, 1 - baseline)
    toward = baseline + difference if baseline <= 0.5 else baseline - difference
    away = baseline - difference if baseline <= 0.5 else baseline + difference
    found = statistics._required(baseline, difference, 0.8, 0.05)
    assert found == pytest.approx(reference_rows(baseline, toward), rel=1e-9)
    assert found >= reference_rows(baseline, away) * (1 - 1e-9)


@given(st.integers(min_value=1, max_value=5000), st.floats(min_value=0.02, max_value=0.98))
def test_the_detectable_difference_is_the_inverse_of_rows_needed(n: int, baseline: float) -> None:
    found = detectable_difference(n, baseline)
    if math.isinf(found):
        # even the largest change toward one half needs more rows than there are
        largest = max(baseline, 1 - baseline)
        assert statistics._required(baseline, largest, 0.8, 0.05) > n
        return
    assert rows_needed(baseline, found) <= n
    assert statistics._required(baseline, found - 1e-6, 0.8, 0.05) > n


@given(st.integers(min_value=11, max_value=5000), st.floats(min_value=0.05, max_value=0.95))
def test_more_rows_detect_a_smaller_change(n: int, baseline: float) -> None:
    assert detectable_difference(n + 1, baseline) <= detectable_difference(n, baseline)


def test_the_detectable_difference_at_one_half() -> None:
    assert detectable_difference(0, 0.5) == math.inf
    assert detectable_difference(10, 0.5) == math.inf  # a change to 1.0 needs 10.5 rows
    assert detectable_difference(11, 0.5) < 0.5
    assert detectable_difference(388, 0.5) == pytest.approx(0.1, abs=2e-4)
    assert detectable_difference(388, 0.5) <= 0.1


# --- arguments ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: wilson_interval(3, 2),
        lambda: wilson_interval(-1, 2),
        lambda: exact_interval(1, -2),
        lambda: exact_interval(1, 2, 1.0),
        lambda: rate_interval(1, 2, 0.0),
        lambda: wilson_interval(1.5, 2),  # type: ignore[arg-type]
        lambda: wilson_interval(True, 2),  # type: ignore[arg-type]
        lambda: failure_upper_bound(-1),
        lambda: failure_upper_bound(10, 1.5),
        lambda: clustered_standard_error([1, 0], ["a"]),
        lambda: clustered_standard_error([1, 0], ["a", "a"]),
        lambda: clustered_standard_error([], []),
        lambda: clustered_standard_error([1, math.nan], ["a", "b"]),
        lambda: paired_difference([1], [0]),
        lambda: paired_difference([1, 0], [0]),
        lambda: paired_difference([1, 0], [0, 1], 2),
        lambda: mcnemar_p(-1, 3),
        lambda: detectable_difference(10, 0.0),
        lambda: detectable_difference(10, 1.0),
        lambda: detectable_difference(-1, 0.5),
        lambda: detectable_difference(10, 0.5, power=1.0),
        lambda: rows_needed(0.5, 0.0),
        lambda: rows_needed(0.5, 0.6),
        lambda: rows_needed(0.3, 0.71),
        lambda: rows_needed(0.5, 0.1, alpha=0.0),
    ],
)
def test_bad_arguments_raise_value_error(call) -> None:
    with pytest.raises(ValueError):
        call()
