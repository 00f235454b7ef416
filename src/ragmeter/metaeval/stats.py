"""Agreement statistics between metric scores and human judgments: pure functions, no I/O.

Correlations come from :mod:`scipy.stats`. A statistic that is not defined (fewer than two
pairs, a constant input) is ``None``, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = [
    "Correlation",
    "auroc",
    "correlation",
    "impute_median",
    "minmax_to_range",
    "pairwise_accuracy",
]


@dataclass(frozen=True, slots=True)
class Correlation:
    """Pearson, Spearman and Kendall (tau-b) of two paired samples; ``None`` when undefined."""

    n: int
    pearson: float | None
    spearman: float | None
    kendall: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _finite_or_none(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            f"Correlation needs two 1-D sequences of the same length. Got shapes {a.shape} "
            f"and {b.shape}."
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError(
            "Correlation inputs must be finite; drop or impute undefined scores first "
            "(see impute_median)."
        )
    return a, b


def correlation(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Pearson, Spearman and Kendall correlation of ``x`` with ``y``.

    Each is ``None`` when undefined: fewer than two pairs, or either side constant.

    >>> correlation([1, 2, 3], [2, 4, 7]).spearman
    1.0
    >>> correlation([1, 1, 1], [1, 2, 3]).pearson is None
    True
    """
    from scipy import stats

    a, b = _paired(x, y)
    n = int(a.size)
    if n < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return Correlation(n, None, None, None)
    return Correlation(
        n,
        _finite_or_none(stats.pearsonr(a, b).statistic),
        _finite_or_none(stats.spearmanr(a, b).statistic),
        _finite_or_none(stats.kendalltau(a, b).statistic),
    )


def pairwise_accuracy(
    better: Sequence[float], worse: Sequence[float], *, tie: float = 0.5
) -> float | None:
    """Share of pairs where the item humans preferred scores higher than the other.

    ``better[i]`` and ``worse[i]`` are the scores of the preferred and the other item of
    pair ``i``. A tie counts ``tie`` (0.5 by default, so a constant metric scores 0.5, like
    chance; pass 0.0 for the strict count). ``None`` for no pairs.

    >>> pairwise_accuracy([0.9, 0.4, 0.5], [0.1, 0.6, 0.5])
    0.5
    >>> pairwise_accuracy([0.9, 0.4, 0.5], [0.1, 0.6, 0.5], tie=0.0)
    0.3333333333333333
    """
    if not 0.0 <= tie <= 1.0:
        raise ValueError(f"The 'tie' parameter must be in [0, 1]. Got {tie!r}.")
    a, b = _paired(better, worse)
    if a.size == 0:
        return None
    wins = float(np.sum(a > b))
    ties = float(np.sum(a == b))
    return (wins + tie * ties) / a.size


def auroc(scores: Sequence[float], labels: Sequence[int | bool]) -> float | None:
    """Area under the ROC curve: the chance that a random positive outscores a random negative.

    Ties between a positive and a negative count one half (the Mann-Whitney statistic).
    ``None`` when either class is absent.

    >>> auroc([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 0])
    0.75
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels)
    if s.ndim != 1 or s.shape != y.shape:
        raise ValueError(
            f"auroc needs scores and labels of the same length. Got {s.shape} and {y.shape}."
        )
    if not np.all(np.isfinite(s)):
        raise ValueError("auroc scores must be finite; drop undefined scores first.")
    if not np.all(np.isin(y, (0, 1))):
        raise ValueError(f"auroc labels must be 0/1 or booleans. Got {sorted(set(y.tolist()))}.")
    pos = s[y.astype(bool)]
    neg = s[~y.astype(bool)]
    if pos.size == 0 or neg.size == 0:
        return None
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([pos, neg]))  # average ranks: ties count one half
    u = float(np.sum(ranks[: pos.size])) - pos.size * (pos.size + 1) / 2.0
    return u / (pos.size * neg.size)


def impute_median(values: Sequence[float | None]) -> tuple[np.ndarray, int]:
    """Replace undefined values (``None`` or NaN) by the median of the defined ones.

    Returns the filled array and how many values were filled. This is RAGChecker's
    meta-evaluation procedure; with no defined value at all it raises.
    """
    arr = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    missing = ~np.isfinite(arr)
    if missing.all() and arr.size:
        raise ValueError(f"All {arr.size} values are undefined; nothing to impute from.")
    if missing.any():
        arr[missing] = float(np.median(arr[~missing]))
    return arr, int(missing.sum())


def minmax_to_range(values: Sequence[float], low: float = -2.0, high: float = 2.0) -> np.ndarray:
    """Scale ``values`` linearly onto ``[low, high]``; a constant input is returned unchanged.

    RAGChecker maps score differences onto the human label range (-2..2) this way; the
    correlations do not change under it.
    """
    arr = np.asarray(values, dtype=float)
    lo, hi = float(np.min(arr)), float(np.max(arr))
    if hi == lo:
        return arr.copy()
    return (arr - lo) / (hi - lo) * (high - low) + low
