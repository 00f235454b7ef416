"""Means with 95% intervals from a judge's scores and a few human labels: pure numpy, no I/O.

Three estimates of a population mean, each with a normal (CLT) interval:

* :func:`judge_mean`: the judge's scores on every row (biased as the judge is biased);
* :func:`labels_mean`: the human labels on the labelled rows alone (valid, wide);
* :func:`ppi_mean`: prediction-powered inference with power tuning, PPI++ (Angelopoulos,
  Duchi and Zrnic, "PPI++: Efficient Prediction-Powered Inference", 2023, arXiv:2311.01453;
  the mean estimator of section 2 and its tuning parameter, eq. (6) / Example 1): valid like
  the labels and narrower whenever the judge is informative.

Active labelling (rows drawn with unequal probabilities, :func:`inclusion_probabilities`):

* :func:`active_mean`: active statistical inference (Zrnic and Candes, "Active Statistical
  Inference", ICML 2024, arXiv:2403.03208), the prediction-powered mean with every labelled
  row's error weighted by the inverse of its inclusion probability, and a design-based
  variance for the run's rows (Poisson sampling, Horvitz-Thompson);
* :func:`labels_needed` and :func:`active_labels_needed`: about how many labels bring an
  interval to a given width.

Small samples: the calibration layer asks for :data:`MIN_LABELLED_ROWS` labelled rows before
it gives an interval, and passes ``spread_floor`` so that identical labels never give a
zero-width interval (:func:`spread_floor`).

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
    "MIN_LABELLED_ROWS",
    "MeanEstimate",
    "active_labels_needed",
    "active_mean",
    "auroc",
    "balanced_accuracy",
    "cohen_kappa",
    "inclusion_probabilities",
    "judge_bias",
    "judge_mean",
    "labels_mean",
    "labels_needed",
    "mean_absolute_error",
    "power_tuning",
    "ppi_mean",
    "spearman",
    "spread_floor",
    "z_value",
]

ArrayLike = Sequence[float] | np.ndarray

#: Below this many labelled rows no interval is given: the spread of the judge's errors (or of
#: the labels) cannot be told from so few, and a gate on such an interval would pass on luck.
MIN_LABELLED_ROWS = 10


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


def spread_floor(n: int, value_range: float, *, verdicts: bool = True) -> float:
    """The least variance of ``n`` values in a range of width ``value_range`` that an interval
    is built with, so that ``n`` identical labels (or a judge that agreed with them on every
    labelled row) never give a zero-width interval.

    For verdicts (every label at an end of the range, as people's supported / not supported
    are): the variance of ``n + 1`` values of which one lies a whole range away from the other
    ``n``, ``range^2 * n / (n + 1)^2`` (one pseudo-disagreement, in the spirit of the Wilson
    and Agresti-Coull intervals for a proportion): ten labels of 1.0 on a [0, 1] metric give
    about [0.82, 1], not [1, 1]. For graded labels, whose spread says more: ``range^2 /
    (n + 1)^2``, which keeps the interval from closing without widening an informative one."""
    if n < 1:
        raise ValueError(f"n must be >= 1. Got {n!r}.")
    scale = n if verdicts else 1
    return float(value_range) ** 2 * scale / (n + 1) ** 2


def _clt(values: np.ndarray, confidence: float, floor: float | None = None) -> MeanEstimate:
    if values.size == 0:
        raise ValueError("no values to average; give at least one.")
    mean = float(values.mean())
    if values.size < 2:
        return MeanEstimate(mean, None, int(values.size), confidence)
    var = _var(values) if floor is None else max(_var(values), floor)
    return MeanEstimate(
        mean, _interval(mean, var / values.size, confidence), int(values.size), confidence
    )


def judge_mean(f_all: ArrayLike, *, confidence: float = 0.95) -> MeanEstimate:
    """The judge's mean over every row, ``mean(f) +- z * sd(f) / sqrt(N)`` (the CLT interval
    of the judge's own mean: it says nothing about the judge's bias)."""
    return _clt(_array(f_all, "f_all"), confidence)


def labels_mean(
    y: ArrayLike, *, confidence: float = 0.95, floor: float | None = None
) -> MeanEstimate:
    """The labels' mean over the labelled rows, ``mean(Y) +- z * sd(Y) / sqrt(n)``; with
    ``floor``, ``sd(Y)^2`` is at least ``floor`` (:func:`spread_floor`)."""
    return _clt(_array(y, "y"), confidence, floor)


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
    floor: float | None = None,
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
    known. With ``floor``, ``Var(Y - lambda * f)`` is at least ``floor`` (:func:`spread_floor`).
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
    var_r = _var(rectifier) if floor is None else max(_var(rectifier), floor)
    variance = lam * lam * var_f / big_n + var_r / n
    return MeanEstimate(theta, _interval(theta, variance, confidence), n, confidence, lam)


def _probabilities(probability: ArrayLike, size: int) -> np.ndarray:
    p = _array(probability, "probability")
    if p.size != size:
        raise ValueError(f"one probability per labelled row: got {p.size} for {size} rows.")
    if ((p <= 0.0) | (p > 1.0)).any():
        raise ValueError("every inclusion probability must lie in (0, 1].")
    return p


def active_mean(
    y: ArrayLike,
    f_labelled: ArrayLike,
    probability: ArrayLike,
    f_all: ArrayLike,
    *,
    confidence: float = 0.95,
    tuning: float | None = None,
    floor: float | None = None,
) -> MeanEstimate:
    """The mean over a run's rows from labels on rows drawn with unequal probabilities
    (active statistical inference, Zrnic and Candes 2024), with a design-based interval.

    Each of the ``N`` rows (``f_all``, the judge's scores, the labelled rows' among them) was
    labelled independently with its own probability ``pi`` (Poisson sampling);
    ``y``, ``f_labelled`` and ``probability`` are the labelled rows' human values, judge scores
    and probabilities. With the prediction ``h = a + lambda * f``::

        theta = mean(h over N) + sum((Y - h) / pi over labelled) / N

    is unbiased for the mean of ``Y`` over the ``N`` rows for any fixed ``a`` and ``lambda``
    (each row's error counts ``1 / pi`` times, and is drawn with probability ``pi``). Its
    variance over the draw, ``sum((1 - pi) / pi * (Y - h)^2 over N) / N^2``, is estimated by
    ``sum((1 - pi) / pi^2 * e^2 over labelled) / N^2`` (Horvitz-Thompson) times ``n / (n - 2)``
    for the two fitted parameters, and is least for the ``a`` and ``lambda`` of the weighted
    least squares of ``Y`` on ``f`` with weights ``(1 - pi) / pi^2``, which are used
    (``lambda`` clipped to [0, 1]; ``tuning`` fixes it, 0 gives the labels alone). Unlike
    :func:`ppi_mean`, whose interval is for the mean of the population the rows came from,
    this one is for the run's own rows, as the draw only varies which of them are labelled.
    With ``floor``, each labelled row's squared error is at least ``floor``.
    """
    y_a, f_l = _array(y, "y"), _array(f_labelled, "f_labelled")
    f_a = _array(f_all, "f_all")
    if y_a.size != f_l.size:
        raise ValueError(f"y and f_labelled must pair up. Got {y_a.size} and {f_l.size}.")
    p = _probabilities(probability, y_a.size)
    n, big_n = y_a.size, f_a.size
    if n == 0 or big_n == 0:
        raise ValueError(
            f"active_mean needs labelled rows and every row's score. Got {n}, {big_n}."
        )
    w = (1.0 - p) / (p * p)
    if w.sum() <= 0.0:
        w = np.ones_like(p)  # every labelled row was certain to be: plain least squares
    wm = float(np.average(y_a, weights=w)), float(np.average(f_l, weights=w))
    if tuning is None:
        var_f = float(np.average((f_l - wm[1]) ** 2, weights=w))
        cov = float(np.average((f_l - wm[1]) * (y_a - wm[0]), weights=w))
        lam = float(np.clip(cov / var_f, 0.0, 1.0)) if var_f > 0.0 and n >= 2 else 0.0
    else:
        lam = float(tuning)
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"tuning must lie in [0, 1]. Got {tuning!r}.")
    a = wm[0] - lam * wm[1]
    e = y_a - a - lam * f_l
    theta = a + lam * float(f_a.mean()) + float((e / p).sum()) / big_n
    if n < 3:
        return MeanEstimate(theta, None, n, confidence, lam)
    sq = e * e if floor is None else np.maximum(e * e, floor)
    variance = float(((1.0 - p) / (p * p) * sq).sum()) / big_n**2 * n / (n - 2)
    return MeanEstimate(theta, _interval(theta, variance, confidence), n, confidence, lam)


def inclusion_probabilities(
    uncertainty: ArrayLike, size: float, *, uniform_share: float = 0.2
) -> np.ndarray:
    """Each row's probability of being labelled, for about ``size`` labels in all: a mixture
    of ``1 - uniform_share`` proportional to ``uncertainty`` (the expected size of the judge's
    error on the row, as far as it can be told before labelling) and ``uniform_share`` equal
    for every row, so that no probability is under ``uniform_share * size / N`` (the floor
    keeps the inverse weights, and so the interval, bounded where the uncertainty is wrong).
    Probabilities above 1 are set to 1 and their excess shared among the others."""
    u = _array(uncertainty, "uncertainty")
    if (u < 0).any():
        raise ValueError("uncertainty must be >= 0.")
    if not 0.0 < uniform_share <= 1.0:
        raise ValueError(f"uniform_share must lie in (0, 1]. Got {uniform_share!r}.")
    big_n = u.size
    if big_n == 0:
        return u
    if size >= big_n:
        return np.ones(big_n)
    shape = u / u.sum() if u.sum() > 0 else np.full(big_n, 1.0 / big_n)
    shape = (1.0 - uniform_share) * shape + uniform_share / big_n
    p = np.zeros(big_n)
    fixed = np.zeros(big_n, dtype=bool)
    for _ in range(big_n):
        left = size - fixed.sum()
        free = ~fixed
        p[free] = left * shape[free] / shape[free].sum()
        over = free & (p >= 1.0)
        if not over.any():
            break
        fixed |= over
        p[fixed] = 1.0
    return np.minimum(p, 1.0)


def labels_needed(
    y: ArrayLike,
    f_labelled: ArrayLike,
    f_all: ArrayLike,
    width: float,
    *,
    confidence: float = 0.95,
    floor: float | None = None,
) -> int | None:
    """About how many labelled rows in all (uniformly drawn) bring :func:`ppi_mean`'s interval
    to ``width`` (upper minus lower), from the labels so far: the ``n`` that solves
    ``z^2 * (lambda^2 * Var(f) / N + Var(Y - lambda * f) / n) = (width / 2)^2`` with this
    sample's ``lambda`` and spreads. ``None`` when no number of labels can (the judge's own
    term is already wider), or fewer than two labels to measure the spread from."""
    y_a, f_l, f_a = _array(y, "y"), _array(f_labelled, "f_labelled"), _array(f_all, "f_all")
    if y_a.size < 2 or f_a.size == 0:
        return None
    if not width > 0:
        raise ValueError(f"width must be > 0. Got {width!r}.")
    lam = power_tuning(y_a, f_l, f_a)
    rect = y_a - lam * f_l
    var_r = _var(rect) if floor is None else max(_var(rect), floor)
    var_f = _var(f_a) if f_a.size > 1 else 0.0
    room = (width / 2.0 / z_value(confidence)) ** 2 - lam * lam * var_f / f_a.size
    if room <= 0.0:
        return None
    return max(2, int(np.ceil(var_r / room)))


def active_labels_needed(
    y: ArrayLike,
    f_labelled: ArrayLike,
    probability: ArrayLike,
    f_all: ArrayLike,
    width: float,
    *,
    confidence: float = 0.95,
    floor: float | None = None,
) -> int | None:
    """About how many labels in all (expected, drawn with probabilities in the same proportions
    as now) bring :func:`active_mean`'s interval to ``width``. With ``pi = m * q`` for a budget
    of ``m`` labels, the variance is ``A / m - B``, ``A = sum(e^2 / q) / N^2`` and
    ``B = sum(e^2) / N^2``, both estimated from the labelled rows' errors ``e`` weighted by
    their inverse probabilities (``q = pi / n``); ``None`` with fewer than three labels."""
    y_a, f_l = _array(y, "y"), _array(f_labelled, "f_labelled")
    p = _probabilities(probability, y_a.size)
    f_a = _array(f_all, "f_all")
    n, big_n = y_a.size, f_a.size
    if n < 3 or big_n == 0:
        return None
    if not width > 0:
        raise ValueError(f"width must be > 0. Got {width!r}.")
    est = active_mean(y_a, f_l, p, f_a, confidence=confidence)
    lam = est.tuning or 0.0
    w = (1.0 - p) / (p * p)
    if w.sum() <= 0.0:
        w = np.ones_like(p)
    a = float(np.average(y_a - lam * f_l, weights=w))
    sq = (y_a - a - lam * f_l) ** 2 * n / (n - 2)
    if floor is not None:
        sq = np.maximum(sq, floor)
    # The budget the probabilities were drawn for, sum(pi over N), is estimated without bias
    # by sum(pi / pi over the labelled rows) = n.
    big_a = n * float((sq / (p * p)).sum()) / big_n**2
    big_b = float((sq / p).sum()) / big_n**2
    target = (width / 2.0 / z_value(confidence)) ** 2
    return int(min(big_n, max(3, np.ceil(big_a / (target + big_b)))))


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
