from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import ConfigError
from ragmeter.report.risk import RiskThresholds, risk_signs


def kinds(signs):
    return [s.kind for s in signs]


def test_no_sign_for_consistently_good_scores():
    assert risk_signs([0.9, 0.92, 0.95, 0.91, 0.93], metric="faithfulness") == []


def test_many_poor_samples_raise_poor_share_with_the_numbers():
    signs = risk_signs([0.1, 0.2, 0.3, 0.9, 0.95, 0.9, 0.92, 0.91], metric="faithfulness")
    (poor,) = [s for s in signs if s.kind == "poor_share"]
    assert poor.value == pytest.approx(3 / 8)
    assert poor.threshold == 0.25
    assert "3 of 8 samples (38%)" in poor.message
    assert "below 0.50" in poor.message
    assert "faithfulness" in poor.message


def test_poor_share_is_direction_aware_for_lower_is_better_metrics():
    values = [0.8, 0.9, 0.7, 0.1, 0.1]
    assert "poor_share" in kinds(risk_signs(values, higher_is_better=True))  # 2 of 5 low
    lower = risk_signs(values, metric="noise_sensitivity", higher_is_better=False)
    (poor,) = [s for s in lower if s.kind == "poor_share"]
    assert "3 of 5" in poor.message and "above 0.50" in poor.message


def test_poor_cut_follows_the_metric_range():
    # range [0, 10]: poor below 5
    signs = risk_signs([1, 2, 3, 9, 9, 9], lower=0, upper=10)
    (poor,) = [s for s in signs if s.kind == "poor_share"]
    assert "below 5.00" in poor.message


def test_mean_far_below_median_raises_skew_that_names_poor_samples():
    values = [0.95] * 8 + [0.0] * 2
    signs = risk_signs(values, metric="faithfulness", thresholds=RiskThresholds(poor_share=1.0))
    (skew,) = [s for s in signs if s.kind == "skew"]
    assert skew.value == pytest.approx((0.95 - 0.76) / 1.0)
    assert "mean 0.76" in skew.message and "median 0.95" in skew.message
    assert "below" in skew.message and "poor" in skew.message


def test_skew_upwards_is_poor_for_lower_is_better():
    values = [0.05] * 8 + [1.0] * 2
    signs = risk_signs(values, higher_is_better=False, thresholds=RiskThresholds(poor_share=1.0))
    (skew,) = [s for s in signs if s.kind == "skew"]
    assert "above" in skew.message and "few poor samples" in skew.message


def test_high_spread_raises_spread():
    signs = risk_signs([0.0, 1.0, 0.0, 1.0], thresholds=RiskThresholds(poor_share=1.0))
    assert kinds(signs) == ["spread"]
    assert "inconsistent" in signs[0].message


def test_distribution_signs_need_min_samples():
    assert kinds(risk_signs([0.0, 1.0], thresholds=RiskThresholds(poor_share=1.0))) == []


def test_many_missing_scores_raise_missing():
    signs = risk_signs([0.9, 0.9], missing=3)
    assert kinds(signs) == ["missing"]
    assert "3 of 5 rows (60%)" in signs[0].message


def test_no_values_gives_only_missing_sign():
    assert kinds(risk_signs([], missing=1)) == ["missing"]
    assert risk_signs([]) == []


def test_thresholds_are_frozen_and_overridable_from_strings():
    t = RiskThresholds()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.skew = 0.5  # type: ignore[misc]
    t2 = t.with_overrides({"poor_share": "0.1", "min_samples": "5"})
    assert t2.poor_share == 0.1 and t2.min_samples == 5 and t.poor_share == 0.25


def test_thresholds_reject_unknown_names_with_a_suggestion():
    with pytest.raises(ConfigError, match="Did you mean 'spread'"):
        RiskThresholds().with_overrides({"spred": "0.2"})


@pytest.mark.parametrize("bad", [{"skew": "-0.1"}, {"poor_share": "2"}, {"spread": "x"}])
def test_thresholds_reject_bad_values(bad):
    with pytest.raises(ConfigError, match="Risk threshold"):
        RiskThresholds().with_overrides(bad)


@given(st.lists(st.floats(0, 1), min_size=0, max_size=30), st.randoms())
def test_signs_do_not_depend_on_order(values, rnd):
    shuffled = list(values)
    rnd.shuffle(shuffled)
    a = [(s.kind, round(s.value, 9)) for s in risk_signs(values)]
    b = [(s.kind, round(s.value, 9)) for s in risk_signs(shuffled)]
    assert a == b
