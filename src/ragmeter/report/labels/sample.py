"""Which rows a person labels: a uniform random sample, or a stratified one for looking.

Only a uniform sample (every row equally likely, drawn without replacement) supports an
estimate of a population mean from labels (prediction-powered inference assumes it). A
stratified sample draws as evenly as it can from score bands, so that poor scores, which are
rare, get looked at; its labels are marked ``"selection": "stratified"`` and are never used
for estimates.

Both are pure functions of their inputs and a seed: the same results, size and seed give the
same rows, in the same order (ascending row position).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmeter.errors import ConfigError

__all__ = ["STRATA", "STRATIFIED", "UNIFORM", "stratified_sample", "uniform_sample"]

#: The two selections, as written in every label line's ``selection`` field.
UNIFORM = "uniform"
STRATIFIED = "stratified"

#: Score bands of a stratified sample: equal widths over the metric's range.
STRATA = 5


def _check_size(size: int) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ConfigError(f"The sample size must be an integer >= 1. Got {size!r}.")


def uniform_sample(candidates: Sequence[int], size: int, *, seed: int) -> list[int]:
    """``size`` of ``candidates`` drawn uniformly without replacement (all of them when there
    are fewer), in ascending order."""
    _check_size(size)
    rng = np.random.default_rng(seed)
    if size >= len(candidates):
        return sorted(candidates)
    chosen = rng.choice(len(candidates), size=size, replace=False)
    return sorted(candidates[int(i)] for i in chosen)


def stratified_sample(
    candidates: Sequence[int],
    values: Sequence[float],
    size: int,
    *,
    seed: int,
    lower: float = 0.0,
    upper: float = 1.0,
    strata: int = STRATA,
) -> list[int]:
    """``size`` of ``candidates`` spread over ``strata`` equal-width bands of their ``values``
    in ``[lower, upper]``: each band gets an equal share (a band with fewer rows gives all it
    has, and the rest goes to the bands that have more), drawn uniformly inside the band.
    In ascending order."""
    _check_size(size)
    if len(candidates) != len(values):
        raise ValueError(
            f"candidates and values differ in length: {len(candidates)} and {len(values)}."
        )
    if size >= len(candidates):
        return sorted(candidates)
    width = (upper - lower) or 1.0
    bands: list[list[int]] = [[] for _ in range(strata)]
    for candidate, value in zip(candidates, values, strict=True):
        band = int((value - lower) / width * strata)
        bands[min(max(band, 0), strata - 1)].append(candidate)
    quota = [0] * strata
    left = size
    while left:
        open_bands = [b for b in range(strata) if quota[b] < len(bands[b])]
        share, extra = divmod(left, len(open_bands))
        for k, b in enumerate(open_bands):
            take = min(share + (k < extra), len(bands[b]) - quota[b])
            quota[b] += take
            left -= take
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for band, take in zip(bands, quota, strict=True):
        if take:
            chosen.extend(band[int(i)] for i in rng.choice(len(band), size=take, replace=False))
    return sorted(chosen)
