"""Agreement statistics between metric scores and human judgments: pure functions, no I/O.

Correlations are computed here with numpy (no scipy): Pearson, Spearman (Pearson of average
ranks) and Kendall's tau-b (discordant pairs counted in O(n log n) with a Fenwick tree, as
scipy does); the tests check them against :mod:`scipy.stats` where it is installed. A
statistic that is not defined (fewer than two pairs, a constant input) is ``None``, never NaN.
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
    "average_ranks",
    "correlation",
    "impute_median",
    "kendall_tau_b",
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
    a, b = _paired(x, y)
    n = int(a.size)
    if n < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return Correlation(n, None, None, None)
    return Correlation(
        n,
        _finite_or_none(_pearson(a, b)),
        _finite_or_none(_pearson(average_ranks(a), average_ranks(b))),
        _finite_or_none(kendall_tau_b(a, b)),
    )


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    da, db = a - a.mean(), b - b.mean()
    # Scaled by the largest deviation first, so squares neither overflow nor underflow.
    da, db = da / np.abs(da).max(), db / np.abs(db).max()
    r = float(np.dot(da, db) / math.sqrt(float(np.dot(da, da)) * float(np.dot(db, db))))
    return max(-1.0, min(1.0, r))  # rounding can step past the bounds


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values``, ties sharing their average rank (``rankdata``'s default).

    >>> average_ranks([0.3, 0.1, 0.3, 0.2]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    arr = np.asarray(values, dtype=float)
    order = np.argsort(arr, kind="mergesort")
    ordered = arr[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], arr.size]
    ranks = np.empty(arr.size, dtype=float)
    ranks[order] = ((starts + ends + 1) / 2.0)[np.cumsum(first) - 1]
    return ranks


def _dense_ranks(values: np.ndarray) -> np.ndarray:
    """0-based ranks with ties sharing one rank."""
    return np.unique(values, return_inverse=True)[1].reshape(-1)


def _tied_pairs(ranks: np.ndarray) -> int:
    counts = np.bincount(ranks).astype(np.int64)
    return int((counts * (counts - 1) // 2).sum())


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b: (concordant - discordant) / sqrt(pairs untied in x * in y).

    NaN when either side is constant. Pairs are counted exactly, in O(n log n).

    >>> kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4])
    0.6666666666666666
    """
    rx = _dense_ranks(np.asarray(x, dtype=float))
    ry = _dense_ranks(np.asarray(y, dtype=float))
    n = rx.size
    order = np.lexsort((ry, rx))  # by x, ties in x by y: they add no discordant pair
    rx, ry = rx[order], ry[order]
    # Discordant pairs: i < j with y_i > y_j, counted with a Fenwick tree over y's ranks.
    tree = [0] * (int(ry.max()) + 2)
    discordant = 0
    for seen, rank in enumerate(ry.tolist()):
        i, not_above = rank + 1, 0
        while i > 0:
            not_above += tree[i]
            i -= i & -i
        discordant += seen - not_above
        i = rank + 1
        while i < len(tree):
            tree[i] += 1
            i += i & -i
    joint = np.r_[True, (rx[1:] != rx[:-1]) | (ry[1:] != ry[:-1]), True]
    runs = np.diff(np.flatnonzero(joint)).astype(np.int64)
    tied_both = int((runs * (runs - 1) // 2).sum())
    total = n * (n - 1) // 2
    tied_x, tied_y = _tied_pairs(rx), _tied_pairs(ry)
    if tied_x == total or tied_y == total:
        return math.nan
    difference = total - tied_x - tied_y + tied_both - 2 * discordant
    tau = difference / math.sqrt((total - tied_x) * (total - tied_y))
    return max(-1.0, min(1.0, tau))


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
    ranks = average_ranks(np.concatenate([pos, neg]))  # average ranks: ties count one half
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
