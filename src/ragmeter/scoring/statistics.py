"""Summary statistics of one metric over a run: pure functions, no I/O."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
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


#: Resamples (and jackknife samples) per vectorised call: bounds memory at
#: ``BOOTSTRAP_BATCH * n`` floats (BCa's jackknife is otherwise n x n: 1.5 GB at n = 9,000).
#: Batching does not change the random draws, so intervals are bit-identical.
BOOTSTRAP_BATCH = 100


def bootstrap_interval(
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 42,
    method: str = "BCa",
) -> tuple[float, float] | None:
    """Bootstrap confidence interval of the mean.

    Uses ``scipy.stats.bootstrap`` (BCa by default); falls back to the percentile method
    when BCa is degenerate. Returns ``None`` for fewer than two values.
    """
    found = _bootstrap(
        values, confidence=confidence, n_resamples=n_resamples, seed=seed, method=method
    )
    return None if found is None else (found[0], found[1])


def _bootstrap(
    values: Sequence[float],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
    method: str,
) -> tuple[float, float, str] | None:
    """``(low, high, method used)``; the method is "constant" when all values are equal."""
    if not 0 < confidence < 1:
        raise ValueError(f"The 'confidence' parameter must be in (0, 1). Got {confidence!r}.")
    if n_resamples < 1:
        raise ValueError(f"The 'n_resamples' parameter must be >= 1. Got {n_resamples!r}.")
    arr = np.asarray(values, dtype=float)
    if arr.size < 2:
        return None
    if np.all(arr == arr[0]):
        return float(arr[0]), float(arr[0]), "constant"
    from scipy.stats import bootstrap

    rng = np.random.default_rng(seed)
    for m in (method, "percentile"):
        res = bootstrap(
            (arr,),
            np.mean,
            confidence_level=confidence,
            n_resamples=n_resamples,
            method=m,
            random_state=rng,
            vectorized=True,
            batch=BOOTSTRAP_BATCH,
        )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high, m.lower()
        rng = np.random.default_rng(seed)
    return None


#: Above this many scores the interval is the normal approximation (the bootstrap's
#: jackknife step is quadratic, and at this size both agree to the third decimal).
BOOTSTRAP_MAX_N = 10_000


def normal_interval(values: Sequence[float], *, confidence: float = 0.95) -> tuple[float, float]:
    """Normal-approximation interval of the mean (for large samples)."""
    from scipy.stats import norm

    arr = np.asarray(values, dtype=float)
    half = float(norm.ppf(0.5 + confidence / 2) * arr.std(ddof=1) / np.sqrt(arr.size))
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
) -> Summary:
    """Summarise the defined scores of one metric; order of ``values`` does not matter."""
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
            arr, confidence=confidence, n_resamples=n_resamples, seed=seed, method="BCa"
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
