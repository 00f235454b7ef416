from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ragmeter.metaeval.ragchecker import delta_correlation
from ragmeter.metaeval.stats import (
    auroc,
    average_ranks,
    correlation,
    impute_median,
    minmax_to_range,
    pairwise_accuracy,
)


def test_pairwise_accuracy_counts_wins_and_half_ties():
    # pair 1 right, pair 2 wrong, pair 3 tied
    assert pairwise_accuracy([0.9, 0.4, 0.5], [0.1, 0.6, 0.5]) == pytest.approx(0.5)
    assert pairwise_accuracy([0.9, 0.4, 0.5], [0.1, 0.6, 0.5], tie=0.0) == pytest.approx(1 / 3)
    assert pairwise_accuracy([1.0, 1.0], [0.0, 0.0]) == 1.0


def test_pairwise_accuracy_of_no_pairs_is_undefined():
    assert pairwise_accuracy([], []) is None


def test_pairwise_accuracy_rejects_unpaired_or_nan_input():
    with pytest.raises(ValueError, match="same length"):
        pairwise_accuracy([0.1, 0.2], [0.3])
    with pytest.raises(ValueError, match="finite"):
        pairwise_accuracy([math.nan], [0.3])
    with pytest.raises(ValueError, match="tie"):
        pairwise_accuracy([0.1], [0.3], tie=2.0)


def test_auroc_hand_computed():
    # positives 0.9, 0.3; negatives 0.8, 0.1: 3 of the 4 (pos, neg) pairs are ordered right
    assert auroc([0.9, 0.8, 0.3, 0.1], [1, 0, 1, 0]) == pytest.approx(0.75)
    assert auroc([0.2, 0.1], [1, 0]) == 1.0
    assert auroc([0.1, 0.2], [1, 0]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5  # a tie counts one half


def test_auroc_equals_the_share_of_ordered_pairs_on_random_data():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, size=40).astype(float)  # many ties
    labels = rng.integers(0, 2, size=40)
    pos = scores[labels == 1]
    neg = scores[labels == 0]
    pairs = list(itertools.product(pos, neg))
    expected = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in pairs) / len(pairs)
    assert auroc(scores, labels) == pytest.approx(expected)


def test_auroc_needs_both_classes_and_binary_labels():
    assert auroc([0.1, 0.2], [1, 1]) is None
    with pytest.raises(ValueError, match="0/1"):
        auroc([0.1, 0.2], [1, 2])


def test_correlation_of_monotone_data_and_undefined_cases():
    c = correlation([1, 2, 3, 4], [10, 20, 40, 80])
    assert c.spearman == pytest.approx(1.0)
    assert c.kendall == pytest.approx(1.0)
    assert 0.9 < c.pearson < 1.0
    assert correlation([1, 1, 1], [1, 2, 3]).pearson is None
    assert correlation([1], [2]).spearman is None
    reverse = correlation([1, 2, 3], [3, 2, 1])
    assert reverse.kendall == pytest.approx(-1.0)


def test_impute_median_fills_undefined_values():
    filled, n = impute_median([1.0, None, 3.0, float("nan"), 10.0])
    assert n == 2
    assert filled.tolist() == [1.0, 3.0, 3.0, 3.0, 10.0]
    with pytest.raises(ValueError, match="undefined"):
        impute_median([None, None])


def test_minmax_to_range_maps_onto_minus_two_to_two():
    assert minmax_to_range([0.0, 0.5, 1.0]).tolist() == [-2.0, 0.0, 2.0]
    assert minmax_to_range([3.0, 3.0]).tolist() == [3.0, 3.0]


def test_delta_correlation_repeats_each_delta_for_both_annotators():
    first = [0.1, 0.5, 0.2, None]
    second = [0.9, 0.1, 0.2, 0.3]
    labels = [2, 1, -2, -1, 0, 0, 1, 0]
    res = delta_correlation(first, second, labels)
    deltas = np.array([0.8, -0.4, 0.0, 0.0])  # the undefined delta becomes the median, 0.0
    expected = np.corrcoef(np.repeat(deltas, 2), labels)[0, 1] * 100
    assert res["imputed"] == 1
    assert res["pearson"] == pytest.approx(expected)
    with pytest.raises(ValueError, match="two labels per pair"):
        delta_correlation(first, second, labels[:-1])


def _paired_samples():
    rng = np.random.default_rng(5)
    x = rng.random(300)
    yield "continuous", x, x + rng.normal(0, 0.3, x.size)
    yield "ties", np.round(x * 4), np.round((x + rng.normal(0, 0.2, x.size)) * 3)
    yield "binary_vs_scores", (x > 0.5).astype(float), rng.random(x.size)
    yield "anti", x, -(x**3)
    yield "small", np.array([0.1, 0.4, 0.4, 0.9]), np.array([1.0, 0.0, 2.0, 2.0])


@pytest.mark.parametrize(
    ("name", "x", "y"), list(_paired_samples()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_correlations_equal_scipys(name, x, y):
    stats = pytest.importorskip("scipy.stats")
    c = correlation(x, y)
    assert c.pearson == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert c.spearman == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert c.kendall == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert average_ranks(y).tolist() == stats.rankdata(y).tolist()


def test_kendall_counts_concordant_and_discordant_pairs_by_hand():
    # pairs of (x, y): (1,1) (2,3) (3,2) (4,4): 5 concordant, 1 discordant, no ties
    assert correlation([1, 2, 3, 4], [1, 3, 2, 4]).kendall == pytest.approx(4 / 6)
    # a tie in x: (1,1) (1,2) (2,3): 2 concordant, pairs untied in x 2, in y 3
    assert correlation([1, 1, 2], [1, 2, 3]).kendall == pytest.approx(2 / math.sqrt(2 * 3))
