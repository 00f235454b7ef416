"""Means with 95% intervals from a judge's scores and a few human labels: pure numpy, no I/O.

Three estimates of a population mean, each with a normal (CLT) interval:

* :func:`judge_mean`: the judge's scores on every row (biased as the judge is biased);
* :func:`labels_mean`: the human labels on the labelled rows alone (valid, wide);
* :func:`ppi_mean`: prediction-powered inference with power tuning, PPI++ (Angelopoulos,
  Duchi and Zrnic, "PPI++: Efficient Prediction-Powered Inference", 2023, arXiv:2311.01453;
  the mean estimator of section 2 and its tuning parameter, eq. (6) / Example 1): valid like
  the labels and narrower whenever the judge is informative.

The judge's agreement with the labels on the labelled rows: :func:`balanced_accuracy`,
:func:`cohen_kappa` and :func:`auroc` for verdicts, :func:`spearman` and
:func:`mean_absolute_error` for graded scores, and :func:`judge_bias` (judge minus human, with
an interval).

Policy: an estimate that needs a spread is undefined (``None``) below two values; a statistic
undefined on the data (AUROC with one class, Spearman of a constant) is ``None``, never NaN.
Inputs with NaN or infinities raise ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = [
    "MeanEstimate",
    "auroc",
    "balanced_accuracy",
    "cohen_kappa",
    "judge_bias",
    "judge_mean",
    "labels_mean",
    "mean_absolute_error",
    "power_tuning",
    "ppi_mean",
    "spearman",
    "z_value",
]

ArrayLike = Sequence[float] | np.ndarray


@dataclass(frozen=True, slots=True)
class MeanEstimate:
    """A mean with its two-sided interval at ``confidence``.

    ``ci`` is ``None`` when the spread cannot be estimated (fewer than two values).
    ``tuning`` is PPI++'s lambda (0: labels only, 1: classic PPI); ``None`` for the others.
    """

    mean: float
    ci: tuple[float, float] | None
    n: int
    confidence: float = 0.95
    tuning: float | None = None

    @property
    def width(self) -> float | None:
        return None if self.ci is None else self.ci[1] - self.ci[0]


def z_value(confidence: float) -> float:
    """The normal quantile of a two-sided interval: 1.95996... at 0.95."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1). Got {confidence!r}.")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def _array(values: ArrayLike, name: str) -> np.ndarray:
    out = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(out).all():
        raise ValueError(f"{name} holds NaN or an infinity; give finite numbers.")
    return out


def _var(x: np.ndarray) -> float:
    """Sample variance (ddof 1)."""
    return float(np.var(x, ddof=1))


def _interval(mean: float, variance: float, confidence: float) -> tuple[float, float]:
    half = z_value(confidence) * float(np.sqrt(max(variance, 0.0)))
    return (mean - half, mean + half)


def _clt(values: np.ndarray, confidence: float) -> MeanEstimate:
    if values.size == 0:
        raise ValueError("no values to average; give at least one.")
    mean = float(values.mean())
    if values.size < 2:
        return MeanEstimate(mean, None, int(values.size), confidence)
    return MeanEstimate(
        mean, _interval(mean, _var(values) / values.size, confidence), int(values.size), confidence
    )


def judge_mean(f_all: ArrayLike, *, confidence: float = 0.95) -> MeanEstimate:
    """The judge's mean over every row, ``mean(f) +- z * sd(f) / sqrt(N)`` (the CLT interval
    of the judge's own mean: it says nothing about the judge's bias)."""
    return _clt(_array(f_all, "f_all"), confidence)


def labels_mean(y: ArrayLike, *, confidence: float = 0.95) -> MeanEstimate:
    """The labels' mean over the labelled rows, ``mean(Y) +- z * sd(Y) / sqrt(n)``."""
    return _clt(_array(y, "y"), confidence)


def power_tuning(y: ArrayLike, f_labelled: ArrayLike, f_unlabelled: ArrayLike) -> float:
    """PPI++'s tuning parameter for the mean (Angelopoulos et al. 2023, Example 1):

    ``lambda = Cov(Y, f) / ((1 + n / N) * Var(f))``, clipped to ``[0, 1]``,

    with ``Cov(Y, f)`` over the ``n`` labelled rows and ``Var(f)`` over the labelled and
    unlabelled scores together (``N`` unlabelled). 0 when ``f`` is constant (the judge says
    nothing) or fewer than two labels.
    """
    y_a, f_l, f_u = (
        _array(y, "y"),
        _array(f_labelled, "f_labelled"),
        _array(f_unlabelled, "f_unlabelled"),
    )
    n, big_n = y_a.size, f_u.size
    if n < 2 or big_n == 0:
        return 0.0
    var_f = _var(np.concatenate([f_l, f_u]))
    if var_f <= 0.0:
        return 0.0
    cov = float(np.cov(y_a, f_l, ddof=1)[0, 1])
    return float(np.clip(cov / ((1.0 + n / big_n) * var_f), 0.0, 1.0))


def ppi_mean(
    y: ArrayLike,
    f_labelled: ArrayLike,
    f_unlabelled: ArrayLike,
    *,
    confidence: float = 0.95,
    tuning: float | None = None,
) -> MeanEstimate:
    """The prediction-powered mean with power tuning (PPI++, Angelopoulos, Duchi, Zrnic 2023).

    ``theta = lambda * mean(f_unlabelled) + mean(Y - lambda * f_labelled)``

    ``Var(theta) = lambda^2 * Var(f_unlabelled) / N + Var(Y - lambda * f_labelled) / n``

    and the interval ``theta +- z * sqrt(Var(theta))``. ``lambda`` is :func:`power_tuning`'s
    unless ``tuning`` gives it (1 is the original PPI of Angelopoulos et al., Science 2023;
    0 the labels alone). ``y`` and ``f_labelled`` are the ``n`` labelled rows' human values and
    judge scores (paired); ``f_unlabelled`` the judge's scores on ``N`` rows of the same
    population. ragmeter passes every row's score there, the labelled ones included: the
    estimate stays unbiased, and the covariance the overlap adds, ``2 * lambda * (Cov(Y, f) -
    lambda * Var(f)) / N``, is of order ``n / N^2`` at the tuned lambda, smaller than the
    ``lambda^2 * Var(f) / N`` the formula counts for a finite population whose every score is
    known.
    """
    y_a = _array(y, "y")
    f_l = _array(f_labelled, "f_labelled")
    f_u = _array(f_unlabelled, "f_unlabelled")
    if y_a.size != f_l.size:
        raise ValueError(
            f"y and f_labelled must pair up (one judge score per label). Got {y_a.size} labels "
            f"and {f_l.size} scores."
        )
    if y_a.size == 0 or f_u.size == 0:
        raise ValueError(
            f"PPI needs labelled and unlabelled rows. Got {y_a.size} labelled and {f_u.size} "
            "unlabelled."
        )
    lam = power_tuning(y_a, f_l, f_u) if tuning is None else float(tuning)
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"tuning must lie in [0, 1]. Got {tuning!r}.")
    rectifier = y_a - lam * f_l
    theta = lam * float(f_u.mean()) + float(rectifier.mean())
    n, big_n = y_a.size, f_u.size
    if n < 2:
        return MeanEstimate(theta, None, n, confidence, lam)
    var_f = _var(f_u) if big_n > 1 else 0.0
    variance = lam * lam * var_f / big_n + _var(rectifier) / n
    return MeanEstimate(theta, _interval(theta, variance, confidence), n, confidence, lam)


def judge_bias(y: ArrayLike, f_labelled: ArrayLike, *, confidence: float = 0.95) -> MeanEstimate:
    """The judge's bias on the labelled rows: ``mean(f - Y)`` with the CLT interval of the
    paired differences (positive: the judge scores higher than people)."""
    y_a, f_l = _array(y, "y"), _array(f_labelled, "f_labelled")
    if y_a.size != f_l.size:
        raise ValueError(f"y and f_labelled must pair up. Got {y_a.size} and {f_l.size}.")
    return _clt(f_l - y_a, confidence)


# ----------------------------------------------------------------------------- agreement


def _binary(values: ArrayLike, name: str) -> np.ndarray:
    a = _array(values, name)
    if not np.isin(a, (0.0, 1.0)).all():
        raise ValueError(f"{name} must hold verdicts 0 or 1. Got {sorted(set(a.tolist()))[:5]}.")
    return a.astype(bool)


def balanced_accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float | None:
    """``(TPR + TNR) / 2`` of verdicts (1 supported); ``None`` when the labels hold one class."""
    t, p = _binary(y_true, "y_true"), _binary(y_pred, "y_pred")
    if t.size != p.size:
        raise ValueError(f"y_true and y_pred must pair up. Got {t.size} and {p.size}.")
    if t.all() or not t.any():
        return None
    return float((p[t].mean() + (~p[~t]).mean()) / 2.0)


def cohen_kappa(y_true: ArrayLike, y_pred: ArrayLike) -> float | None:
    """Cohen's kappa of two raters' verdicts, ``(p_o - p_e) / (1 - p_e)`` with ``p_e`` the
    agreement expected by chance from the two marginals; ``None`` when ``p_e`` is 1 (both
    raters give one and the same class throughout) or there is no verdict."""
    t, p = _binary(y_true, "y_true"), _binary(y_pred, "y_pred")
    if t.size != p.size:
        raise ValueError(f"y_true and y_pred must pair up. Got {t.size} and {p.size}.")
    if t.size == 0:
        return None
    p_o = float((t == p).mean())
    p_e = float(t.mean() * p.mean() + (1 - t.mean()) * (1 - p.mean()))
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank (as ``scipy.stats.rankdata``)."""
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], x.size]
    mean_rank = (starts + ends + 1) / 2.0  # ranks start..end-1 (0-based) averaged, plus 1
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def auroc(y_true: ArrayLike, score: ArrayLike) -> float | None:
    """Area under the ROC curve of ``score`` for the verdicts ``y_true`` (Mann-Whitney U over
    the two classes' sizes, ties counted half); ``None`` when the labels hold one class."""
    t, s = _binary(y_true, "y_true"), _array(score, "score")
    if t.size != s.size:
        raise ValueError(f"y_true and score must pair up. Got {t.size} and {s.size}.")
    n_pos, n_neg = int(t.sum()), int((~t).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = _average_ranks(s)
    u = float(ranks[t].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def spearman(x: ArrayLike, y: ArrayLike) -> float | None:
    """Spearman's rank correlation (Pearson's on average ranks); ``None`` when either side is
    constant or there are fewer than two pairs."""
    a, b = _array(x, "x"), _array(y, "y")
    if a.size != b.size:
        raise ValueError(f"x and y must pair up. Got {a.size} and {b.size}.")
    if a.size < 2:
        return None
    ra, rb = _average_ranks(a), _average_ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = float(np.sqrt((ra * ra).sum() * (rb * rb).sum()))
    if denom == 0.0:
        return None
    return float((ra * rb).sum() / denom)


def mean_absolute_error(y: ArrayLike, f: ArrayLike) -> float | None:
    """``mean(|f - Y|)``; ``None`` with no pair."""
    a, b = _array(y, "y"), _array(f, "f")
    if a.size != b.size:
        raise ValueError(f"y and f must pair up. Got {a.size} and {b.size}.")
    return None if a.size == 0 else float(np.abs(b - a).mean())
