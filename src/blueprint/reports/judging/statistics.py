"""The agreement statistics of a judge against human labels: percent agreement, Cohen's
kappa, Krippendorff's alpha among the human raters, the judge's bias, and seeded bootstrap
intervals.

The statistics libraries (numpy, scipy, krippendorff) are imported inside the functions that
use them: ``blueprint --help`` and ``blueprint validate`` never load them. Kappa and the
confusion matrix are a few lines of numpy (tests hold them equal to scikit-learn's, which is
a test dependency only: some 50 MB installed for two formulas).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from blueprint.reports.judging.labels import Scale
from blueprint.validation.judge_status import LabelsError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


#: the bootstrap's bounds: fewer resamples give intervals that move from seed to seed; more
#: than the upper bound cost minutes and change nothing a report shows (six decimals)
MIN_RESAMPLES: Final = 100
MAX_RESAMPLES: Final = 100_000
#: indices one batch of resamples holds at once (8 bytes each): memory stays within some
#: 64 MB whatever the number of resamples and cases
_BATCH_CELLS: Final = 8_000_000


@dataclass(frozen=True)
class BootstrapOptions:
    """The percentile bootstrap over cases: resamples, confidence level and seed."""

    resamples: int = 2000
    confidence: float = 0.95
    seed: int = 0

    def __post_init__(self) -> None:
        if not MIN_RESAMPLES <= self.resamples <= MAX_RESAMPLES:
            raise LabelsError(
                f"--resamples must be between {MIN_RESAMPLES} and {MAX_RESAMPLES:,}, not"
                f" {self.resamples} (the intervals settle long before the upper bound)"
            )
        if not 0 < self.confidence < 1:
            raise LabelsError(f"--confidence must be between 0 and 1, not {self.confidence}")
        if self.seed < 0:
            raise LabelsError(f"--seed must be 0 or more, not {self.seed}")

    def to_json(self) -> dict[str, Any]:
        return {
            "method": "percentile",
            "resamples": self.resamples,
            "confidence": self.confidence,
            "seed": self.seed,
        }


def _kappa_weights(scale: Scale) -> str | None:
    return "quadratic" if scale.kind == "ordinal" else None


def cohen_kappa(human: Sequence[int], judge: Sequence[int], scale: Scale) -> float | None:
    """Cohen's kappa of judge against humans (quadratic-weighted on an ordinal scale); None
    when it is undefined (no disagreement is possible by chance: one label throughout on
    both sides)."""
    import numpy as np

    h = np.array([list(human)], dtype=np.int64)
    j = np.array([list(judge)], dtype=np.int64)
    if h.shape[-1] == 0:
        return None
    disagreement, chance = _kappa_parts(h, j, scale)
    if not chance[0] > 0:
        return None
    return float(1 - disagreement[0] / chance[0])


def confusion(human: Sequence[int], judge: Sequence[int], scale: Scale) -> list[list[int]]:
    """How many cases got each human label (rows) and each judge label (columns), in the
    scale's order."""
    size = len(scale.values)
    matrix = [[0] * size for _ in range(size)]
    for a, b in zip(human, judge, strict=True):
        matrix[a - scale.low][b - scale.low] += 1
    return matrix


def krippendorff_alpha(
    ratings: Sequence[Mapping[str, int]], raters: Sequence[str], scale: Scale
) -> float | None:
    """Krippendorff's alpha across human raters (nominal for pass/fail, ordinal for scores),
    from the ``krippendorff`` package; None when it is undefined (fewer than two raters on
    every case, or a single value throughout)."""
    import numpy as np

    matrix = np.array(
        [[case.get(rater, np.nan) for case in ratings] for rater in raters], dtype=float
    )
    return _alpha_of(matrix, scale)


def _alpha_of(matrix: NDArray[np.float64], scale: Scale) -> float | None:
    import krippendorff
    import numpy as np

    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    if matrix.shape[0] < 2 or not pairable.any():
        return None
    values = matrix[:, pairable]
    if len(np.unique(values[~np.isnan(values)])) < 2:
        return None
    level: Literal["nominal", "ordinal"] = "nominal" if scale.kind == "pass-fail" else "ordinal"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = krippendorff.alpha(
            reliability_data=matrix, level_of_measurement=level, value_domain=scale.values
        )
    return None if math.isnan(value) else float(value)


def _vectorized_kappa(
    human: NDArray[np.int64], judge: NDArray[np.int64], scale: Scale
) -> NDArray[np.float64]:
    """Kappa for many resamples at once (the rows of ``human`` and ``judge``): the formula
    scikit-learn's ``cohen_kappa_score`` computes, vectorized, because the bootstrap makes
    thousands. Tests hold the two equal."""
    import numpy as np

    disagreement, chance = _kappa_parts(human, judge, scale)
    # a resample in which both sides give one and the same label throughout agrees perfectly
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance > 0, 1 - disagreement / np.where(chance > 0, chance, 1), 1.0)


def _kappa_parts(
    human: NDArray[np.int64], judge: NDArray[np.int64], scale: Scale
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The observed and the chance disagreement of each row, weighted as kappa weighs them."""
    import numpy as np

    size = len(scale.values)
    h = human - scale.low
    j = judge - scale.low
    observed = (
        np.stack(
            [((h == a) & (j == b)).sum(axis=-1) for a in range(size) for b in range(size)], axis=-1
        )
        .reshape(*h.shape[:-1], size, size)
        .astype(float)
    )
    observed /= h.shape[-1]
    expected = observed.sum(axis=-1)[..., :, None] * observed.sum(axis=-2)[..., None, :]
    grid = np.arange(size)
    if scale.kind == "ordinal":
        weights = (grid[:, None] - grid[None, :]).astype(float) ** 2
    else:
        weights = (grid[:, None] != grid[None, :]).astype(float)
    disagreement = (weights * observed).sum(axis=(-2, -1))
    chance = (weights * expected).sum(axis=(-2, -1))
    return disagreement, chance


@dataclass(frozen=True)
class Sample:
    """The labelled cases of one group, as arrays."""

    scale: Scale
    raters: tuple[str, ...]
    case_ids: list[str]
    human: list[int]
    judge: list[int]
    ratings: list[dict[str, int]]


def _interval(
    statistic: Callable[[Any], Any], size: int, options: BootstrapOptions, vectorized: bool
) -> list[float] | None:
    import numpy as np
    from scipy.stats import bootstrap

    if size < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bootstrap(
            (np.arange(size),),
            statistic,
            n_resamples=options.resamples,
            batch=max(1, _BATCH_CELLS // size),
            confidence_level=options.confidence,
            method="percentile",
            vectorized=vectorized,
            rng=np.random.default_rng(options.seed),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):
        return None
    return [_round(low), _round(high)]


def _round(value: float) -> float:
    # six decimals: stable across platforms' last-bit differences, and more than any reader needs
    return round(value, 6) + 0.0


def agreement_statistics(sample: Sample, options: BootstrapOptions) -> dict[str, Any]:
    """Agreement, kappa, bias, the confusion matrix and (with several raters) alpha, each
    with its bootstrap interval, for one group of labelled cases."""
    import numpy as np

    scale = sample.scale
    human = np.array(sample.human, dtype=np.int64)
    judge = np.array(sample.judge, dtype=np.int64)
    size = len(human)

    def agreement(index: Any, axis: int = -1) -> Any:
        return (human[index] == judge[index]).mean(axis=axis)

    def kappa(index: Any, axis: int = -1) -> Any:
        return _vectorized_kappa(human[index], judge[index], scale)

    def bias(index: Any, axis: int = -1) -> Any:
        return (judge[index].mean(axis=axis) - human[index].mean(axis=axis)) / scale.span

    kappa_value = cohen_kappa(sample.human, sample.judge, scale)
    bias_value = float((judge.mean() - human.mean()) / scale.span)
    statistics: dict[str, Any] = {
        "labelled": size,
        "agreement": {
            "value": _round(float(agreement(slice(None)))),
            "ci": _interval(agreement, size, options, vectorized=True),
        },
        "kappa": {
            "value": None if kappa_value is None else _round(kappa_value),
            "weights": _kappa_weights(scale),
            "ci": _interval(kappa, size, options, vectorized=True),
        },
        "bias": {
            "value": _round(bias_value),
            "ci": _interval(bias, size, options, vectorized=True),
            "direction": "lenient" if bias_value > 0 else "harsh" if bias_value < 0 else "none",
            "humanMean": _round(float(human.mean())),
            "judgeMean": _round(float(judge.mean())),
        },
        "confusion": {
            "labels": [scale.name(value) for value in scale.values],
            "rows": "human",
            "columns": "judge",
            "matrix": confusion(sample.human, sample.judge, scale),
        },
        "alpha": None,
    }
    if len(sample.raters) >= 2:
        matrix = np.array(
            [[case.get(rater, np.nan) for case in sample.ratings] for rater in sample.raters],
            dtype=float,
        )
        value = _alpha_of(matrix, scale)

        def alpha(index: Any) -> float:
            # as for kappa, a resample in which the raters give one label throughout agrees
            # perfectly (alpha itself is undefined there)
            found = _alpha_of(matrix[:, index], scale)
            return 1.0 if found is None else found

        statistics["alpha"] = {
            "value": None if value is None else _round(value),
            "level": "nominal" if scale.kind == "pass-fail" else "ordinal",
            "raters": list(sample.raters),
            "ci": None if value is None else _interval(alpha, size, options, vectorized=False),
        }
    return statistics
