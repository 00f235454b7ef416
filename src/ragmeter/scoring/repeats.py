"""A judge's own noise, from its repeats (``Settings.repeats``): pure arithmetic, no I/O.

A row scored by ``N`` repeats of the judge has ``N`` values (``None`` where a repeat left it
undefined or failed). Its score is their mean (:func:`repeat_mean`), its *spread* the largest
minus the smallest (:func:`spread`). A claim *flips* when the repeats that found it gave it
different verdicts (:func:`flipped_claims`).

The mean over rows gets an interval that holds both sources of variance, the rows' and the
judge's (:func:`repeat_interval`): a two-stage bootstrap that resamples rows with
replacement, then each drawn row's repeats with replacement, and takes the percentile
interval of the mean of the row means (Davison & Hinkley, *Bootstrap Methods and their
Application*, 1997, section 3.8, resampling hierarchical data; with both stages resampled
the interval errs on the wide side, by the within-row share of the variance divided by the
number of rows). With one repeat per row it is the ordinary percentile bootstrap of the mean.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence

import numpy as np

__all__ = [
    "flipped_claims",
    "repeat_interval",
    "repeat_mean",
    "spread",
]

#: Values drawn per chunk of the bootstrap (rows x repeats x resamples), bounding memory.
_CHUNK = 4_000_000


def _defined(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None]


def repeat_mean(values: Sequence[float | None]) -> float | None:
    """The mean of a row's defined repeat values; ``None`` when none is defined.

    >>> repeat_mean([1.0, None, 0.5])
    0.75
    """
    found = _defined(values)
    return sum(found) / len(found) if found else None


def spread(values: Sequence[float | None]) -> float | None:
    """Largest minus smallest defined repeat value; ``None`` with fewer than two.

    >>> spread([0.5, 1.0, 0.75])
    0.5
    """
    found = _defined(values)
    return max(found) - min(found) if len(found) >= 2 else None


def _claim_key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower().rstrip(".")


def flipped_claims(
    verdicts: Sequence[Mapping[str, Hashable]],
) -> tuple[int, list[str]]:
    """How many claims two or more repeats found, and those whose verdicts differ.

    ``verdicts[k]`` maps each claim repeat ``k`` found (its text) to its verdict (any
    comparable value). Claims are matched across repeats by their text, compared without
    case, surrounding space or a final period: a judge that words a claim differently in
    another repeat has found another claim, which is neither matched nor flipped.

    >>> flipped_claims([{"A is B.": True, "C.": True}, {"a is b": False, "D.": True}])
    (1, ['A is B.'])
    """
    seen: dict[str, tuple[str, set[Hashable], int]] = {}
    for repeat in verdicts:
        for text, verdict in repeat.items():
            key = _claim_key(text)
            first, found, count = seen.get(key, (text, set(), 0))
            found.add(verdict)
            seen[key] = (first, found, count + 1)
    matched = [(first, found) for first, found, count in seen.values() if count >= 2]
    return len(matched), [first for first, found in matched if len(found) > 1]


def repeat_interval(
    rows: Sequence[Sequence[float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 42,
) -> tuple[float, float] | None:
    """Two-stage bootstrap interval of the mean of the rows' means (see the module's
    docstring). ``rows[i]`` holds row ``i``'s defined repeat values (at least one); ``None``
    when there is no row. Deterministic for a ``seed``.

    >>> repeat_interval([[1.0, 1.0], [0.0, 0.0]], n_resamples=200)
    (0.0, 1.0)
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1). Got {confidence!r}.")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1. Got {n_resamples!r}.")
    if not rows:
        return None
    counts = np.asarray([len(r) for r in rows])
    if (counts < 1).any():
        raise ValueError("Every row needs at least one defined repeat value.")
    n, width = len(rows), int(counts.max())
    table = np.zeros((n, width))
    for i, values in enumerate(rows):
        table[i, : len(values)] = values
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    step = max(1, _CHUNK // (n * width))
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        drawn = rng.integers(0, n, size=(b, n))  # rows, with replacement
        size = counts[drawn]  # repeats each drawn row has
        picks = np.floor(rng.random((b, n, width)) * size[..., None]).astype(np.int64)
        values = table[drawn[..., None], picks]  # repeats, with replacement
        used = np.arange(width) < size[..., None]  # a row draws as many repeats as it has
        row_means = (values * used).sum(axis=2) / size
        means[start : start + b] = row_means.mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high)
