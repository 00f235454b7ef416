"""Which rows a person labels: a uniform random sample, one drawn by the judge's uncertainty,
or a stratified one for looking.

An *uncertainty* sample (active labelling) draws each row independently with its own
probability (Poisson sampling), larger where the judge's verdicts are less sure
(:func:`row_uncertainty`), with a floor for every row
(:func:`ragmeter.scoring.calibration.ppi.inclusion_probabilities`); each row's probability
goes with its labels, and calibrated estimates weight by its inverse, so the estimate stays
unbiased.

Only a uniform sample (every row equally likely, drawn without replacement) supports an
estimate of a population mean from labels (prediction-powered inference assumes it). A
stratified sample draws as evenly as it can from score bands, so that poor scores, which are
rare, get looked at; its labels are marked ``"selection": "stratified"`` and are never used
for estimates.

Both are pure functions of their inputs and a seed: the same results, size and seed give the
same rows, in the same order (ascending row position).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.scoring.calibration.ppi import inclusion_probabilities

__all__ = [
    "STRATA",
    "STRATIFIED",
    "UNCERTAINTY",
    "UNIFORM",
    "UNIFORM_SHARE",
    "row_uncertainty",
    "stratified_sample",
    "uncertainty_sample",
    "uniform_sample",
]

#: The selections, as written in every label line's ``selection`` field.
UNIFORM = "uniform"
STRATIFIED = "stratified"
UNCERTAINTY = "uncertainty"

#: The share of an uncertainty sample's probability spread evenly over every row: no row's
#: probability is under this share of a uniform sample's.
UNIFORM_SHARE = 0.2

#: Where the judge's evidence for a verdict kind is kept in a claim's ``evidence``.
_EVIDENCE = {"contexts": "contexts", "reference": "references", "answer": "answer"}

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


def _verdict_variance(claim: Any, against: str) -> float | None:
    """``p * (1 - p)`` of one verdict, ``p`` the judge's support for it (its best premise's;
    the support is a calibrated probability for the offline judge), 1/4 where the judge marked
    the verdict uncertain; ``None`` when the claim records no such verdict."""
    evidence = claim.get("evidence") if isinstance(claim, Mapping) else None
    part = evidence.get(_EVIDENCE[against]) if isinstance(evidence, Mapping) else None
    if not isinstance(part, Mapping):
        return None
    if part.get("uncertain") is True:
        return 0.25
    supports = [
        float(r["support"])
        for r in part.get("rests_on") or ()
        if isinstance(r, Mapping)
        and isinstance(r.get("support"), int | float)
        and not isinstance(r.get("support"), bool)
        and math.isfinite(r["support"])
    ]
    if not supports:
        entailed = part.get("entailed")
        return 0.0 if isinstance(entailed, bool) else None
    p = min(max(max(supports), 0.0), 1.0)
    return p * (1.0 - p)


def row_uncertainty(
    details: Any,
    score: float,
    *,
    against: Sequence[tuple[str, str]] = (("answer", "contexts"),),
    bounds: tuple[float, float] = (0.0, 1.0),
) -> float:
    """How far the judge's score of a row may be off, as far as can be told before labelling
    (the standard deviation of the row's score were each verdict drawn with the judge's
    support as its probability), in units of the metric's range.

    ``details`` is the metric's details of the row; ``against`` the verdict kinds its score
    reads ((whose claims, checked against what)). With claims: ``sqrt(sum of p * (1 - p)) /
    claims`` over every verdict; with repeats (``--repeats``), at least half their spread;
    without claims: ``sqrt(x * (1 - x))`` of the score ``x`` scaled to [0, 1]."""
    width = (bounds[1] - bounds[0]) or 1.0
    x = min(max((score - bounds[0]) / width, 0.0), 1.0)
    out: float | None = None
    if isinstance(details, Mapping):
        variances: list[float] = []
        count = 0
        for source, what in against:
            if source == "answer":
                claims = details.get("answer_claims")
            else:
                refs = details.get("reference_claims")
                claims = [c for r in refs if isinstance(r, list) for c in r] if refs else None
            if not isinstance(claims, list):
                continue
            count = max(count, len(claims))
            for claim in claims:
                v = _verdict_variance(claim, what)
                if v is not None:
                    variances.append(v)
        if count:
            out = math.sqrt(sum(variances)) / count
        repeats = details.get("repeats")
        spread = repeats.get("spread") if isinstance(repeats, Mapping) else None
        if isinstance(spread, int | float) and not isinstance(spread, bool):
            out = max(out or 0.0, float(spread) / width / 2.0)
    if out is None:
        out = math.sqrt(x * (1.0 - x))
    return out


def uncertainty_sample(
    candidates: Sequence[int],
    uncertainty: Sequence[float],
    size: int,
    *,
    seed: int,
    uniform_share: float = UNIFORM_SHARE,
) -> tuple[list[int], dict[int, float]]:
    """About ``size`` of ``candidates``, each drawn independently with its inclusion
    probability (:func:`ragmeter.scoring.calibration.ppi.inclusion_probabilities` of
    ``uncertainty``), in ascending order, and every candidate's probability. The count varies
    around ``size`` (Poisson sampling, as active inference assumes)."""
    _check_size(size)
    if len(candidates) != len(uncertainty):
        raise ValueError(
            f"candidates and uncertainty differ in length: {len(candidates)} and "
            f"{len(uncertainty)}."
        )
    probability = inclusion_probabilities(uncertainty, size, uniform_share=uniform_share)
    rng = np.random.default_rng(seed)
    drawn = rng.random(len(candidates)) < probability
    chosen = sorted(int(candidates[k]) for k in np.flatnonzero(drawn))
    return chosen, {int(c): float(p) for c, p in zip(candidates, probability, strict=True)}
