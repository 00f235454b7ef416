"""PPI++ and the agreement statistics against direct transcriptions and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ragmeter.scoring.calibration import ppi


def transcribed_ppi(y, f_lab, f_unl, z=1.959963984540054):
    """PPI++ for the mean, written out from the paper with plain Python loops."""
    n, big_n = len(y), len(f_unl)
    my = sum(y) / n
    mf = sum(f_lab) / n
    cov = sum((a - my) * (b - mf) for a, b in zip(y, f_lab, strict=True)) / (n - 1)
    both = list(f_lab) + list(f_unl)
    mb = sum(both) / len(both)
    var_both = sum((v - mb) ** 2 for v in both) / (len(both) - 1)
    lam = min(max(cov / ((1 + n / big_n) * var_both), 0.0), 1.0)
    mu = sum(f_unl) / big_n
    var_u = sum((v - mu) ** 2 for v in f_unl) / (big_n - 1)
    rect = [a - lam * b for a, b in zip(y, f_lab, strict=True)]
    mr = sum(rect) / n
    var_r = sum((r - mr) ** 2 for r in rect) / (n - 1)
    theta = lam * mu + mr
    half = z * math.sqrt(lam * lam * var_u / big_n + var_r / n)
    return theta, (theta - half, theta + half), lam


@pytest.mark.parametrize("seed", range(5))
def test_ppi_matches_a_direct_transcription(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, big_n = int(rng.integers(3, 12)), int(rng.integers(5, 30))
    y = rng.random(n).round(2).tolist()
    f_lab = (np.array(y) * 0.7 + rng.random(n) * 0.3).round(2).tolist()
    f_unl = rng.random(big_n).round(2).tolist()
    got = ppi.ppi_mean(y, f_lab, f_unl)
    theta, ci, lam = transcribed_ppi(y, f_lab, f_unl)
    assert got.mean == pytest.approx(theta, abs=1e-12)
    assert got.ci == pytest.approx(ci, abs=1e-12)
    assert got.tuning == pytest.approx(lam, abs=1e-12)


def test_ppi_with_tuning_zero_is_the_labels_alone() -> None:
    y, f_lab, f_unl = [1, 0, 1, 1], [0.9, 0.2, 0.4, 0.8], [0.1, 0.5, 0.7]
    got = ppi.ppi_mean(y, f_lab, f_unl, tuning=0.0)
    alone = ppi.labels_mean(y)
    assert got.mean == pytest.approx(alone.mean)
    assert got.ci == pytest.approx(alone.ci)


def test_a_perfect_judge_gives_the_judge_mean_with_a_narrow_interval() -> None:
    rng = np.random.default_rng(1)
    f_all = rng.random(10_000)
    lab = rng.choice(10_000, 200, replace=False)
    got = ppi.ppi_mean(f_all[lab], f_all[lab], f_all)
    assert got.tuning == pytest.approx(1 / (1 + 200 / 10_000), rel=0.05)
    assert got.mean == pytest.approx(f_all.mean(), abs=0.01)
    assert got.width < 0.4 * ppi.labels_mean(f_all[lab]).width


def test_a_constant_or_useless_judge_falls_back_to_the_labels() -> None:
    y = [1.0, 0.0, 1.0, 0.0, 1.0]
    got = ppi.ppi_mean(y, [0.5] * 5, [0.5] * 50)
    assert got.tuning == 0.0
    assert got.mean == pytest.approx(0.6)
    # Anti-correlated judge: lambda clipped at 0, never a negative weight.
    anti = ppi.ppi_mean(y, [0.0, 1.0, 0.0, 1.0, 0.0], [0.3, 0.9] * 10)
    assert anti.tuning == 0.0


def test_ppi_removes_a_judge_bias_that_the_judge_mean_keeps() -> None:
    rng = np.random.default_rng(7)
    truth = rng.random(5000)
    judge = np.clip(truth + 0.2 + rng.normal(0, 0.05, 5000), 0, 1.2)
    lab = rng.choice(5000, 300, replace=False)
    got = ppi.ppi_mean(truth[lab], judge[lab], judge)
    assert got.ci[0] <= truth.mean() <= got.ci[1]
    raw = ppi.judge_mean(judge)
    assert not raw.ci[0] <= truth.mean() <= raw.ci[1]
    bias = ppi.judge_bias(truth[lab], judge[lab])
    assert bias.ci[0] <= 0.2 + 0.01 and bias.ci[1] >= 0.2 - 0.01
    assert bias.mean > 0.15


def test_clt_means_match_scipy() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.9, 0.2]
    got = ppi.labels_mean(values)
    low, high = stats.norm.interval(0.95, loc=np.mean(values), scale=stats.sem(values))
    assert got.ci == pytest.approx((low, high))
    assert ppi.z_value(0.95) == pytest.approx(stats.norm.ppf(0.975))


def test_one_value_has_a_mean_but_no_interval_and_bad_input_is_refused() -> None:
    assert ppi.labels_mean([0.5]).ci is None
    with pytest.raises(ValueError, match="NaN"):
        ppi.labels_mean([0.5, float("nan")])
    with pytest.raises(ValueError, match="pair up"):
        ppi.ppi_mean([1, 0], [1], [0.5, 0.5])
    with pytest.raises(ValueError, match="no values"):
        ppi.judge_mean([])
    with pytest.raises(ValueError, match=r"tuning must lie in \[0, 1\]"):
        ppi.ppi_mean([1, 0], [1, 0], [0.5, 0.5], tuning=2.0)


@pytest.mark.parametrize("seed", range(4))
def test_agreement_statistics_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random(60) < 0.6).astype(float)
    score = np.round(np.clip(y * 0.4 + rng.random(60) * 0.7, 0, 1), 1)  # ties on purpose
    pred = (score >= 0.5).astype(float)
    u = stats.mannwhitneyu(score[y == 1], score[y == 0]).statistic
    assert ppi.auroc(y, score) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()))
    assert ppi.spearman(y, score) == pytest.approx(stats.spearmanr(y, score).statistic)
    tpr = (pred[y == 1] == 1).mean()
    tnr = (pred[y == 0] == 0).mean()
    assert ppi.balanced_accuracy(y, pred) == pytest.approx((tpr + tnr) / 2)
    p_o = (y == pred).mean()
    p_e = y.mean() * pred.mean() + (1 - y.mean()) * (1 - pred.mean())
    assert ppi.cohen_kappa(y, pred) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert ppi.mean_absolute_error(y, score) == pytest.approx(np.abs(score - y).mean())


def test_agreement_is_none_where_undefined() -> None:
    assert ppi.auroc([1, 1, 1], [0.2, 0.5, 0.9]) is None
    assert ppi.balanced_accuracy([0, 0], [1, 0]) is None
    assert ppi.spearman([1, 2, 3], [4, 4, 4]) is None
    assert ppi.cohen_kappa([1, 1], [1, 1]) is None
    assert ppi.cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="verdicts 0 or 1"):
        ppi.balanced_accuracy([0.5, 1], [1, 0])


def test_ppi_covers_the_truth_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(3)
    hits = 0
    trials = 400
    for _ in range(trials):
        truth = (rng.random(2000) < 0.7).astype(float)
        judge = np.where(rng.random(2000) < 0.8, truth, 1 - truth) * 0.8 + 0.1
        lab = rng.choice(2000, 100, replace=False)
        got = ppi.ppi_mean(truth[lab], judge[lab], judge)
        hits += got.ci[0] <= 0.7 <= got.ci[1]
    assert 0.91 <= hits / trials <= 0.99
