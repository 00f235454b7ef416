"""Summary statistics of one metric over a run: pure functions, no I/O."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ragmeter.scoring.answerability import RefusalCounts


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
    #: Claim metrics: how many verdicts the defined scores rest on had a known certainty
    #: (the judge said which were uncertain), and how many of them were uncertain; ``None``
    #: for other metrics and for judges that do not say.
    verdicts: int | None = None
    uncertain_verdicts: int | None = None
    #: ``answerability_accuracy``: refused / answered by unanswerable / answerable, with
    #: precision, recall and F1 of refusing unanswerable questions and the false-refusal
    #: rate on answerable ones; ``None`` for other metrics.
    refusals: RefusalCounts | None = None

    @property
    def uncertain_share(self) -> float | None:
        """The share of uncertain verdicts; ``None`` when none is known (never NaN)."""
        if not self.verdicts or self.uncertain_verdicts is None:
            return None
        return self.uncertain_verdicts / self.verdicts

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict; with verdict counts, ``uncertain_share`` too (without them,
        the keys are left out)."""
        out = asdict(self)
        if self.verdicts is None:
            del out["verdicts"], out["uncertain_verdicts"]
        else:
            out["uncertain_share"] = self.uncertain_share
        if self.refusals is None:
            del out["refusals"]
        else:
            out["refusals"] = self.refusals.as_dict()
        return out


#: Resamples per batch (``scipy.stats.bootstrap``'s ``batch``, one ``integers`` call each):
#: the unit in which the counts are drawn and multiplied, and memory is bounded when they
#: are not kept. Batching does not change the random draws.
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

    The resamples are those ``scipy.stats.bootstrap`` draws (``default_rng(seed)``,
    ``BOOTSTRAP_BATCH`` resamples of indices at a time), their means equal to its means to
    within rounding and on the same side of the sample mean (:class:`Resamples`), so with
    the same generator scipy's interval is this one to 1e-9 (tested; not bit for bit, the
    sums add in another order): Unitxt's intervals are reproduced without scipy.

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
    of ``BOOTSTRAP_BATCH`` exactly as ``scipy.stats.bootstrap`` draws them and averaged as it
    averages them (a gather per resample): its numbers bit for bit. :class:`Resamples` gives
    the same means to within rounding (on the same side of the sample mean), for several
    metrics at less cost: the gathers become one count of the draws."""
    n = values.size
    out = np.empty(n_resamples, dtype=float)
    for start in range(0, n_resamples, BOOTSTRAP_BATCH):
        size = min(BOOTSTRAP_BATCH, n_resamples - start)
        out[start : start + size] = values[rng.integers(0, n, (size, n))].mean(axis=-1)
    return out


def _resample_counts(
    n: int, n_resamples: int, seed: int, *, keep: bool
) -> Iterator[tuple[np.ndarray, dict[str, Any]]]:
    """The resamples of ``bootstrap_means``, batch by batch: how often each value is drawn in
    each resample (float64, resamples by values), and the generator's state before the
    batch (to draw its indices again). With ``keep`` the batches are rows of one array of
    all the counts; without, of one buffer that the next batch overwrites."""
    rng = np.random.default_rng(seed)
    # One array for all the rows, not one per batch: one allocation of fresh memory.
    rows = np.empty((n_resamples if keep else min(BOOTSTRAP_BATCH, n_resamples), n))
    offsets = np.arange(0, BOOTSTRAP_BATCH * n, n)[:, None]
    for start in range(0, n_resamples, BOOTSTRAP_BATCH):
        size = min(BOOTSTRAP_BATCH, n_resamples - start)
        state = rng.bit_generator.state
        indices = rng.integers(0, n, (size, n))
        indices += offsets[:size]  # resample r's draws count in bins r * n to r * n + n - 1
        counts = rows[start : start + size] if keep else rows[:size]
        np.copyto(counts, np.bincount(indices.reshape(-1), minlength=size * n).reshape(size, n))
        yield counts, state


def _sums_are_exact(values: np.ndarray) -> bool:
    """Whether every sum of ``values.size`` of the values is exact in float64, in any order:
    all are integer multiples of one power of two ``2**-k``, with ``n * max|v| * 2**k`` at
    most ``2**52`` (binary scores, halves, and the like)."""
    top = float(np.abs(values).max())
    k = 52 - math.frexp(values.size * top)[1]
    scaled = np.ldexp(values, k)
    return bool(np.all(scaled == np.rint(scaled)) and np.all(np.ldexp(scaled, -k) == values))


class Resamples:
    """The resamples of a run's bootstraps: drawn once for its metrics, averaged by a product
    of counts.

    The resamples are ``bootstrap_means(values, n_resamples=..., rng=default_rng(seed))``'s
    (so ``scipy.stats.bootstrap``'s), kept as ``counts``: how often each value is drawn in
    each resample. A metric's means are then ``counts @ values / n``, one matrix-vector
    product per batch instead of a gather of ``n_resamples * n`` values. The sums add in
    another order than scipy's, so a mean can differ from scipy's in its last bits (at most
    ``(n + 1) * eps * max|v|``, tested; intervals agree to 1e-9), but not on which side of
    the sample mean it falls (BCa's bias correction counts that): means within rounding of
    the sample mean are recomputed as scipy computes them (:func:`_exact_ties`). Shared or
    not, the means are bit-identical.

    Metrics of one run often have the same number of defined scores: their bootstraps (same
    ``n``, resamples and seed) then draw once. Keeps the counts of one draw, at most
    ``max_indices`` float64 (32 MB: up to 4,000 values with 1,000 resamples, as many bytes
    as the indices they replace); larger draws are made each time, a batch at a time.
    """

    def __init__(self, max_indices: int = 4_000_000) -> None:
        self.max_indices = max_indices
        self._key: tuple[int, int, int] | None = None
        self._batches: list[tuple[np.ndarray, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def prepare(self, n: int, *, n_resamples: int = 1000, seed: int = 42) -> None:
        """Draw the counts for ``n`` values now, if :func:`summarize` would bootstrap that
        many and they fit in ``max_indices``: a runner that knows how many rows it scores
        calls this on a thread of its own while the rows are scored (the draw releases the
        GIL). The means are the same either way."""
        if self._worth_drawing(n, n_resamples):
            with self._lock:
                self._counts_for(n, n_resamples, seed)

    def prepare_in_background(
        self, n: int, *, n_resamples: int = 1000, seed: int = 42
    ) -> threading.Thread | None:
        """:meth:`prepare` on a daemon thread, started (``None``: nothing to draw);
        :meth:`means` waits for it."""
        if not self._worth_drawing(n, n_resamples):
            return None
        thread = threading.Thread(
            target=self.prepare,
            args=(n,),
            kwargs={"n_resamples": n_resamples, "seed": seed},
            name="ragmeter-resamples",
            daemon=True,
        )
        thread.start()
        return thread

    def _worth_drawing(self, n: int, n_resamples: int) -> bool:
        """Whether a bootstrap of ``n`` values is made (:func:`summarize`) and kept here."""
        return 2 <= n <= BOOTSTRAP_MAX_N and n * n_resamples <= self.max_indices

    def means(self, values: np.ndarray, *, n_resamples: int, seed: int) -> np.ndarray:
        """``bootstrap_means(values, n_resamples=..., rng=default_rng(seed))`` to within
        rounding, on the same side of ``values.mean()`` (see the class)."""
        n = values.size
        with self._lock:
            batches: Iterable[tuple[np.ndarray, dict[str, Any]]]
            if self._key != (n, n_resamples, seed) and n * n_resamples > self.max_indices:
                batches = _resample_counts(n, n_resamples, seed, keep=False)
            else:
                batches = self._counts_for(n, n_resamples, seed)
            return self._means(values, batches)

    def _counts_for(
        self, n: int, n_resamples: int, seed: int
    ) -> list[tuple[np.ndarray, dict[str, Any]]]:
        """The kept counts of ``(n, n_resamples, seed)``, drawn unless they are kept."""
        key = (n, n_resamples, seed)
        if self._key != key:
            self._key, self._batches = None, []  # the old draw goes before the new is made
            self._batches = list(_resample_counts(n, n_resamples, seed, keep=True))
            self._key = key
        return self._batches

    @staticmethod
    def _means(
        values: np.ndarray, batches: Iterable[tuple[np.ndarray, dict[str, Any]]]
    ) -> np.ndarray:
        n = values.size
        states = []
        sums = []
        for counts, state in batches:
            states.append(state)
            sums.append(counts @ values)
        means = np.concatenate(sums) / n
        _exact_ties(values, means, states)
        return means


def _exact_ties(values: np.ndarray, means: np.ndarray, states: Sequence[dict[str, Any]]) -> None:
    """Recompute as scipy computes them (in place) the ``means`` within rounding of
    ``values.mean()``, so that each is on the side of it that scipy's is.

    A sum of ``n`` terms in any order is within ``n`` units of roundoff (``eps / 2``) of
    ``n * max|v|`` of the exact sum (a product of counts adds one), so the two means of a
    resample differ by at most ``(n + 1) * eps * max|v|``: only a mean that close to the
    sample mean can be on another side of it than scipy's (four times that is taken). Such
    means are exact ties (discrete scores: reciprocal ranks, fractions); their batch's
    indices are drawn again from the generator's ``states`` and gathered. Not needed when
    every sum is exact (:func:`_sums_are_exact`).
    """
    n = values.size
    tolerance = 4 * (n + 2) * np.finfo(float).eps * float(np.abs(values).max())
    near = np.flatnonzero(np.abs(means - values.mean()) <= tolerance)
    if near.size == 0 or _sums_are_exact(values):
        return
    rng = np.random.default_rng(0)
    for batch in np.unique(near // BOOTSTRAP_BATCH):
        start = int(batch) * BOOTSTRAP_BATCH
        size = min(BOOTSTRAP_BATCH, means.size - start)
        rng.bit_generator.state = states[batch]
        indices = rng.integers(0, n, (size, n))
        rows = near[(near >= start) & (near < start + size)]
        means[rows] = values[indices[rows - start]].mean(axis=-1)


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
    resamples = Resamples() if resamples is None else resamples
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
