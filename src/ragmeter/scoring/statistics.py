"""Summary statistics of one metric over a run: pure functions, no I/O."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class Summary:
    """Aggregate of one metric. Statistics are over defined scores only.

    ``mean`` and friends are ``None`` when no score is defined (never NaN).
    ``ci_low``/``ci_high`` is a 95 % bootstrap interval (BCa, as Unitxt), ``None`` when
    fewer than two defined scores exist; with all scores equal it collapses to the value.
    """

    count: int
    undefined: int
    failed: int
    mean: float | None
    median: float | None
    std: float | None
    min: float | None
    max: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float = 0.95
    #: How the interval was computed: "bca", "percentile", "constant", "normal" or "none".
    ci_method: str = "none"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Resamples per vectorised call: bounds memory at ``BOOTSTRAP_BATCH * n`` floats. Batching
#: does not change the random draws, so intervals are bit-identical.
BOOTSTRAP_BATCH = 100

#: The standard normal distribution (its ``cdf`` and ``inv_cdf`` are scipy's ndtr and ndtri).
_NORMAL = NormalDist()


def bootstrap_interval(
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 42,
    method: str = "BCa",
) -> tuple[float, float] | None:
    """Bootstrap confidence interval of the mean.

    BCa by default (bias-corrected and accelerated, Efron & Tibshirani 1993, 14.3 and
    eq. 14.15); ``method="percentile"`` gives the percentile interval. BCa falls back to the
    percentile interval of the same resamples when it is degenerate (every resampled mean
    on one side of the sample's). Returns ``None`` for fewer than two values.

    The resamples are drawn as ``scipy.stats.bootstrap`` draws them (``default_rng(seed)``,
    ``BOOTSTRAP_BATCH`` resamples of indices at a time), so with the same generator scipy's
    interval is this one (tested to 1e-9): Unitxt's intervals are reproduced without scipy.

    >>> bootstrap_interval([0.0, 0.5, 1.0, 1.0, 0.5, 0.0, 1.0], n_resamples=200, seed=0)
    (0.2857142857142857, 0.8571428571428571)
    """
    found = _bootstrap(
        values, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )
    return None if found is None else (found[0], found[1])


def bootstrap_means(
    values: np.ndarray, *, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement) of ``values``, drawn in batches
    of ``BOOTSTRAP_BATCH`` exactly as ``scipy.stats.bootstrap`` draws them."""
    n = values.size
    out = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, BOOTSTRAP_BATCH):
        size = min(BOOTSTRAP_BATCH, n_resamples - start)
        out[start : start + size] = values[rng.integers(0, n, (size, n))].mean(axis=-1)
    return out


class Resamples:
    """The resample indices of the last bootstrap, for the next one of as many values.

    Drawing the indices is most of a bootstrap's time, and the metrics of one run often have
    the same number of defined scores: their bootstraps (same ``n``, resamples and seed, so
    the same draws) then draw once. Intervals are bit-identical to drawing each time. Keeps
    one set of indices, of at most ``max_indices`` (32 MB: up to 4,000 values with 1,000
    resamples); larger ones are drawn each time.
    """

    def __init__(self, max_indices: int = 4_000_000) -> None:
        self.max_indices = max_indices
        self._key: tuple[int, int, int] | None = None
        self._draws: list[np.ndarray] = []

    def means(self, values: np.ndarray, *, n_resamples: int, seed: int) -> np.ndarray:
        """What ``bootstrap_means(values, n_resamples=..., rng=default_rng(seed))`` gives."""
        n = values.size
        if n * n_resamples > self.max_indices:
            rng = np.random.default_rng(seed)
            return bootstrap_means(values, n_resamples=n_resamples, rng=rng)
        if self._key != (n, n_resamples, seed):
            rng = np.random.default_rng(seed)
            self._draws = [
                rng.integers(0, n, (min(BOOTSTRAP_BATCH, n_resamples - start), n))
                for start in range(0, n_resamples, BOOTSTRAP_BATCH)
            ]
            self._key = (n, n_resamples, seed)
        return np.concatenate([values[indices].mean(axis=-1) for indices in self._draws])


def bca_levels(values: np.ndarray, means: np.ndarray, alpha: float) -> tuple[float, float]:
    """The BCa interval's two quantile levels of the bootstrap ``means`` (NaN when the
    bias correction is infinite, i.e. every resampled mean lies on one side of the mean).

    The bias correction ``z0`` is the normal quantile of the share of resampled means below
    the sample mean (ties count one half); the acceleration ``a`` is the skewness of the
    jackknife means (leave-one-out means, ``(sum - x_i) / (n - 1)``).
    """
    mean = values.mean()
    below = np.count_nonzero(means < mean) + np.count_nonzero(means <= mean)
    share = below / (2 * means.size)
    if not 0 < share < 1:
        return math.nan, math.nan
    z0 = _NORMAL.inv_cdf(share)
    n = values.size
    jackknife = (values.sum() - values) / (n - 1)
    u = (n - 1) * (jackknife.mean() - jackknife)
    accel = float(np.sum(u**3) / n**3 / (np.sum(u**2) / n**2) ** 1.5 / 6)
    z_alpha = _NORMAL.inv_cdf(alpha)
    levels = []
    for z in (z_alpha, -z_alpha):
        shifted = z0 + z
        denominator = 1 - accel * shifted
        # 1 - a * (z0 + z) = 0 sends the level to 0 or 1 (the extreme mean), as scipy does.
        corrected = z0 + (
            math.copysign(math.inf, shifted) if denominator == 0 else shifted / denominator
        )
        levels.append(_NORMAL.cdf(corrected))
    return levels[0], levels[1]


def _bootstrap(
    values: Sequence[float],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
    method: str,
    resamples: Resamples | None = None,
) -> tuple[float, float, str] | None:
    """``(low, high, method used)``; the method is "constant" when all values are equal."""
    if not 0 < confidence < 1:
        raise ValueError(f"The 'confidence' parameter must be in (0, 1). Got {confidence!r}.")
    if n_resamples < 1:
        raise ValueError(f"The 'n_resamples' parameter must be >= 1. Got {n_resamples!r}.")
    if method.lower() not in ("bca", "percentile"):
        raise ValueError(f"The 'method' parameter must be 'BCa' or 'percentile'. Got {method!r}.")
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return None
    if np.all(arr == arr[0]):
        return float(arr[0]), float(arr[0]), "constant"
    if resamples is None:
        means = bootstrap_means(arr, n_resamples=n_resamples, rng=np.random.default_rng(seed))
    else:
        means = resamples.means(arr, n_resamples=n_resamples, seed=seed)
    alpha = (1 - confidence) / 2
    if method.lower() == "bca":
        low_level, high_level = bca_levels(arr, means, alpha)
        if math.isfinite(low_level) and math.isfinite(high_level):
            low, high = np.quantile(means, [low_level, high_level])
            return float(low), float(high), "bca"
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high), "percentile"


def sign_test_pvalue(successes: int, trials: int) -> float:
    """Two-sided exact binomial test of ``successes`` in ``trials`` against p = 0.5.

    The sign test of a paired comparison (rows improved among rows changed). With p = 0.5
    the distribution is symmetric, so the p-value is twice the smaller tail, at most 1: the
    same as ``scipy.stats.binomtest(successes, trials, 0.5).pvalue`` (tested to 1e-9
    relative). The tail is summed in logs (``log C(n, i)`` as a running sum), so a run of
    any size takes one pass over the smaller tail.

    >>> round(sign_test_pvalue(8, 10), 6)
    0.109375
    """
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(
            f"The sign test needs 0 <= successes <= trials and trials >= 1. Got {successes} "
            f"of {trials}."
        )
    tail = min(successes, trials - successes)
    if 2 * tail == trials:
        return 1.0
    i = np.arange(1, tail + 1, dtype=float)
    log_comb = np.concatenate([[0.0], np.cumsum(np.log(trials - i + 1) - np.log(i))])
    top = float(log_comb.max())
    log_tail = top + math.log(float(np.exp(log_comb - top).sum())) - trials * math.log(2)
    return min(1.0, 2 * math.exp(log_tail))


#: Above this many scores the interval is the normal approximation (each of the 1000
#: resamples draws n indices, and at this size both agree to the third decimal).
BOOTSTRAP_MAX_N = 10_000


def normal_interval(values: Sequence[float], *, confidence: float = 0.95) -> tuple[float, float]:
    """Normal-approximation interval of the mean (for large samples)."""
    arr = np.asarray(values, dtype=float)
    z = _NORMAL.inv_cdf(0.5 + confidence / 2)
    half = float(z * arr.std(ddof=1) / np.sqrt(arr.size))
    mean = float(arr.mean())
    return mean - half, mean + half


def summarize(
    values: Sequence[float],
    *,
    undefined: int = 0,
    failed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 42,
    resamples: Resamples | None = None,
) -> Summary:
    """Summarise the defined scores of one metric; order of ``values`` does not matter.

    ``resamples`` (one :class:`Resamples` for the metrics of a run) lets bootstraps of as
    many values share their draws; the result is the same without it."""
    arr = np.sort(np.asarray(values, dtype=float))
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError("Scores must be finite; undefined scores are counted, not passed.")
    if arr.size == 0:
        return Summary(0, undefined, failed, None, None, None, None, None, None, None, confidence)
    if arr.size > BOOTSTRAP_MAX_N:
        ci: tuple[float, float] | None = normal_interval(arr, confidence=confidence)
        method = "normal"
    else:
        found = _bootstrap(
            arr,
            confidence=confidence,
            n_resamples=n_resamples,
            seed=seed,
            method="BCa",
            resamples=resamples,
        )
        ci, method = (None, "none") if found is None else ((found[0], found[1]), found[2])
    return Summary(
        count=int(arr.size),
        undefined=undefined,
        failed=failed,
        mean=float(arr.mean()),
        median=float(np.median(arr)),
        std=float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        min=float(arr[0]),
        max=float(arr[-1]),
        ci_low=None if ci is None else ci[0],
        ci_high=None if ci is None else ci[1],
        confidence=confidence,
        ci_method=method,
    )
