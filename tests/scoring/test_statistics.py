from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.scoring.statistics import (
    BOOTSTRAP_MAX_N,
    Summary,
    bootstrap_interval,
    normal_interval,
    summarize,
)


def test_summary_of_hand_computed_scores():
    s = summarize([0.0, 0.5, 1.0, 0.5], undefined=1, failed=2)
    assert (s.count, s.undefined, s.failed) == (4, 1, 2)
    assert s.mean == 0.5
    assert s.median == 0.5
    assert s.std == pytest.approx(math.sqrt((0.25 + 0 + 0.25 + 0) / 3))
    assert (s.min, s.max) == (0.0, 1.0)
    assert s.ci_low < s.mean < s.ci_high
    assert s.confidence == 0.95


def test_no_defined_score_gives_none_not_nan():
    s = summarize([], undefined=3)
    assert s == Summary(0, 3, 0, None, None, None, None, None, None, None, 0.95)


def test_a_single_score_has_no_interval_and_zero_spread():
    s = summarize([0.7])
    assert (s.mean, s.std, s.ci_low, s.ci_high) == (0.7, 0.0, None, None)


def test_equal_scores_collapse_the_interval_to_the_value():
    s = summarize([0.25] * 5)
    assert (s.ci_low, s.ci_high) == (0.25, 0.25)


def test_nan_scores_are_rejected():
    with pytest.raises(ValueError, match="finite"):
        summarize([0.1, float("nan")])


def test_the_interval_is_reproducible_with_the_same_seed_and_moves_with_another():
    values = np.linspace(0, 1, 23) ** 2
    assert bootstrap_interval(values, seed=7) == bootstrap_interval(values, seed=7)
    assert bootstrap_interval(values, seed=7) != bootstrap_interval(values, seed=8)


def test_a_higher_confidence_gives_a_wider_interval():
    values = [0.0, 0.1, 0.4, 0.4, 0.9, 1.0, 0.3, 0.2]
    lo90, hi90 = bootstrap_interval(values, confidence=0.90)
    lo99, hi99 = bootstrap_interval(values, confidence=0.99)
    assert lo99 <= lo90 < hi90 <= hi99


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence": 1.0}, r"The 'confidence' parameter must be in \(0, 1\). Got 1.0."),
        ({"confidence": 0}, r"The 'confidence' parameter must be in \(0, 1\). Got 0."),
        ({"n_resamples": 0}, r"The 'n_resamples' parameter must be >= 1. Got 0."),
    ],
)
def test_bad_options_are_rejected_with_what_was_received(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_interval([0.1, 0.2, 0.3], **kwargs)


def test_as_dict_has_every_field():
    d = summarize([0.2, 0.4]).as_dict()
    assert set(d) == {
        "count",
        "undefined",
        "failed",
        "mean",
        "median",
        "std",
        "min",
        "max",
        "ci_low",
        "ci_high",
        "confidence",
        "ci_method",
    }


def test_small_runs_use_bca_and_large_runs_the_normal_approximation():
    assert summarize([0.1, 0.5, 0.9]).ci_method == "bca"
    assert summarize([0.5]).ci_method == "none"
    values = np.random.default_rng(0).random(BOOTSTRAP_MAX_N + 1)
    s = summarize(values)
    assert s.ci_method == "normal"
    low, high = normal_interval(values)
    assert (s.ci_low, s.ci_high) == pytest.approx((low, high))
    assert low < s.mean < high
