"""One metric's estimates from paired values: the people's ``Y`` on the labelled rows, the
judge's ``f`` on the same rows and on every row of the run.

:func:`estimates` gives the judge's, the labels' and the calibrated mean and the judge's bias,
with the small-sample policy (:func:`too_few`, the spread floor); :func:`label_budget` about
how many labelled rows reach a target width; :func:`row_agreement` the judge's agreement with
the people; :class:`Design` how the labelled rows were drawn, as the estimates need it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.scoring.calibration import ppi

__all__ = [
    "Design",
    "estimates",
    "interval_record",
    "label_budget",
    "row_agreement",
    "too_few",
]


def interval_record(
    est: ppi.MeanEstimate | None, bounds: tuple[float, float] | None = None
) -> dict[str, Any]:
    """``{"mean", "ci"}``; with ``bounds``, the interval cut to the metric's range (a mean
    outside it is impossible, so cutting keeps the coverage)."""
    if est is None:
        return {"mean": None, "ci": None}
    if est.ci is None:
        return {"mean": est.mean, "ci": None}
    low, high = est.ci
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return {"mean": est.mean, "ci": [low, high]}


@dataclass(frozen=True, slots=True)
class Design:
    """How the labelled rows were drawn, as the estimates need it: each labelled row's
    inclusion probability (by position) for a weighted selection, else ``None``; a reason
    estimates are refused; the target width of a label budget."""

    refused: str | None = None
    probability: Mapping[int, float] | None = None
    target_width: float | None = None

    def of(self, positions: Sequence[int]) -> np.ndarray | None:
        if self.probability is None:
            return None
        return np.array([self.probability[pos] for pos in positions], dtype=float)

    def how_weighted(self) -> str:
        if self.probability is None:
            return "PPI++ over the rows"
        return (
            "rows drawn with unequal probabilities: active inference (Zrnic and Candes 2024), "
            "each labelled row's error weighted by its inverse inclusion probability"
        )


def too_few(n: int) -> str | None:
    """Why ``n`` labelled rows give no interval, or ``None`` when they are enough."""
    if n >= ppi.MIN_LABELLED_ROWS:
        return None
    return (
        f"only {n} labelled row(s): an interval needs at least {ppi.MIN_LABELLED_ROWS}, since "
        "the spread of the people's values and of the judge's errors cannot be told from fewer "
        "(and a gate would pass on luck); label more rows"
    )


def _floor(y: np.ndarray, bounds: tuple[float, float]) -> float:
    """:func:`ppi.spread_floor` for these labels: verdict-like when every one is at a bound."""
    verdicts = bool(np.isin(y, bounds).all())
    return ppi.spread_floor(int(y.size), bounds[1] - bounds[0], verdicts=verdicts)


def estimates(
    y: np.ndarray,
    f_lab: np.ndarray,
    f_all: np.ndarray,
    refused: str | None,
    *,
    bounds: tuple[float, float],
    probability: np.ndarray | None = None,
) -> tuple[ppi.MeanEstimate | None, ...]:
    """The judge's, the labels' and the calibrated mean and the bias. Under
    :data:`ppi.MIN_LABELLED_ROWS` labelled rows the labels' and calibrated means carry no
    interval; every interval's spread is at least :func:`ppi.spread_floor`'s. With
    ``probability`` (rows drawn with unequal probabilities): :func:`ppi.active_mean`."""
    judge = ppi.judge_mean(f_all) if f_all.size else None
    if refused or y.size == 0:
        return judge, None, None, (ppi.judge_bias(y, f_lab) if y.size else None)
    floor = _floor(y, bounds)
    if probability is not None:
        alone = ppi.active_mean(y, f_lab, probability, f_all, tuning=0.0, floor=floor)
        calibrated = ppi.active_mean(y, f_lab, probability, f_all, floor=floor)
    else:
        alone = ppi.labels_mean(y, floor=floor)
        calibrated = ppi.ppi_mean(y, f_lab, f_all, floor=floor)
    if too_few(int(y.size)):
        alone = ppi.MeanEstimate(alone.mean, None, alone.n, alone.confidence, alone.tuning)
        calibrated = ppi.MeanEstimate(
            calibrated.mean, None, calibrated.n, calibrated.confidence, calibrated.tuning
        )
    return judge, alone, calibrated, ppi.judge_bias(y, f_lab)


def label_budget(
    y: np.ndarray,
    f_lab: np.ndarray,
    f_all: np.ndarray,
    width: float | None,
    *,
    bounds: tuple[float, float],
    probability: np.ndarray | None = None,
) -> dict[str, Any] | None:
    """About how many labelled rows bring the calibrated interval to ``width``."""
    if width is None:
        return None
    n = int(y.size)
    out: dict[str, Any] = {"target_width": width, "labelled_rows": n}
    if n < 3:
        return {**out, "needed": None, "why": "fewer than three labelled rows to go by"}
    floor = _floor(y, bounds)
    if probability is not None:
        needed = ppi.active_labels_needed(y, f_lab, probability, f_all, width, floor=floor)
    else:
        needed = ppi.labels_needed(y, f_lab, f_all, width, floor=floor)
    if needed is None:
        why = (
            "no number of labels reaches it: the judge's own spread over the run's rows is "
            "already wider"
        )
        return {**out, "needed": None, "why": why}
    needed = max(needed, ppi.MIN_LABELLED_ROWS)
    if needed > f_all.size:
        return {
            **out,
            "needed": int(f_all.size),
            "more": max(0, int(f_all.size) - n),
            "why": "even every row of the run labelled may not reach it",
        }
    out.update(needed=int(needed), more=max(0, int(needed) - n))
    if n < ppi.MIN_LABELLED_ROWS:
        out["why"] = f"a rough figure from {n} labelled rows"
    return out


def _is_binary(values: np.ndarray) -> bool:
    return bool(values.size) and bool(np.isin(values, (0.0, 1.0)).all())


def row_agreement(y: np.ndarray, f: np.ndarray) -> dict[str, Any]:
    """The judge's agreement with the people on the labelled rows: Spearman and mean absolute
    error; balanced accuracy and Cohen's kappa when both are verdicts; AUROC when the people's
    values are."""
    out: dict[str, Any] = {
        "n": int(y.size),
        "spearman": ppi.spearman(y, f) if y.size else None,
        "mae": ppi.mean_absolute_error(y, f),
    }
    if _is_binary(y) and _is_binary(f):
        out["balanced_accuracy"] = ppi.balanced_accuracy(y, f)
        out["cohen_kappa"] = ppi.cohen_kappa(y, f)
    if _is_binary(y):
        out["auroc"] = ppi.auroc(y, f)
    return out


def paired_difference(y: np.ndarray, f_lab: np.ndarray, f_all: np.ndarray) -> dict[str, Any]:
    """PPI++ on per-row differences of two runs: ``y = Y_B - Y_A`` on the rows labelled in
    both, ``f = f_B - f_A`` on the same rows (``f_lab``) and on every row both scored."""
    # Differences of two metrics in [lo, hi] lie in a range twice as wide.
    floor = ppi.spread_floor(int(y.size), 2.0, verdicts=bool(np.isin(y, (-1.0, 0.0, 1.0)).all()))
    return interval_record(ppi.ppi_mean(y, f_lab, f_all, floor=floor))


def unpaired_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """B - A of two calibrated means (``{"mean", "ci"}``), its variance the sum of theirs
    (from each interval's half-width)."""
    z = ppi.z_value(0.95)
    half_a = (a["ci"][1] - a["ci"][0]) / 2
    half_b = (b["ci"][1] - b["ci"][0]) / 2
    mean = b["mean"] - a["mean"]
    half = float(np.hypot(half_a / z, half_b / z)) * z
    return {"mean": mean, "ci": [mean - half, mean + half]}
