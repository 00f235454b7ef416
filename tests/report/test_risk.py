from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import ConfigError
from ragmeter.report.risk import DEFAULT_PER_METRIC, RiskThresholds, rank_signs, risk_signs

FLAT = RiskThresholds(per_metric={})


def kinds(signs):
    return [s.kind for s in signs]


def test_no_sign_for_consistently_good_scores():
    assert risk_signs([0.9, 0.92, 0.95, 0.91, 0.93] * 3, metric="faithfulness") == []


def test_many_poor_samples_raise_poor_share_with_the_numbers_and_rows():
    values = [0.1, 0.2, 0.3, 0.9, 0.95, 0.9, 0.92, 0.91, 0.9, 0.93]
    signs = risk_signs(values, metric="faithfulness", indices=range(10, 20))
    (poor,) = signs
    assert poor.kind == "poor_share"
    assert poor.value == pytest.approx(3 / 10)
    assert poor.threshold == 0.25
    assert poor.n == 10 and poor.rows == (10, 11, 12)
    assert poor.message.startswith("3 of 10 samples (30%) have faithfulness below 0.50")


def test_poor_share_is_direction_aware_for_lower_is_better_metrics():
    values = [0.8, 0.9, 0.7, 0.1, 0.1] * 2
    assert "poor_share" in kinds(risk_signs(values, higher_is_better=True))  # 4 of 10 low
    lower = risk_signs(values, metric="hallucination", higher_is_better=False)
    (poor,) = [s for s in lower if s.kind == "poor_share"]
    assert "6 of 10" in poor.message and "hallucination above 0.50" in poor.message


def test_poor_cut_follows_the_metric_range():
    signs = risk_signs([1, 2, 3, 9, 9, 9] * 2, lower=0, upper=10)  # range [0, 10]: poor below 5
    (poor,) = [s for s in signs if s.kind == "poor_share"]
    assert "below 5.00" in poor.message


def test_no_sign_rests_on_fewer_rows_than_min_samples():
    assert risk_signs([0.0]) == []  # not "1 of 1 (100%)"
    assert risk_signs([0.0] * 9) == []
    assert kinds(risk_signs([0.0] * 10)) == ["poor_share"]
    assert kinds(risk_signs([0.0] * 3, thresholds=RiskThresholds(min_samples=3))) == ["poor_share"]
    assert risk_signs([], missing=9) == []
    assert kinds(risk_signs([], missing=10)) == ["missing"]


def test_mean_far_below_median_raises_skew_that_names_poor_samples():
    values = [0.95] * 16 + [0.0] * 4
    signs = risk_signs(values, metric="faithfulness", thresholds=RiskThresholds(poor_share=1.0))
    (skew,) = signs
    assert skew.kind == "skew" and skew.n == 20
    assert skew.value == pytest.approx(0.95 - 0.76)
    assert skew.message.startswith("faithfulness: the mean 0.76 of 20 samples is 0.19 below")
    assert "median 0.95" in skew.message and "few poor samples" in skew.message


def test_skew_upwards_is_poor_for_lower_is_better():
    values = [0.05] * 16 + [1.0] * 4
    signs = risk_signs(values, higher_is_better=False, thresholds=RiskThresholds(poor_share=1.0))
    (skew,) = signs
    assert "above" in skew.message and "few poor samples" in skew.message


def test_high_spread_raises_spread():
    signs = risk_signs([0.0, 0.9, 0.1, 1.0] * 5, thresholds=RiskThresholds(poor_share=1.0))
    assert kinds(signs) == ["spread"]
    assert "inconsistent" in signs[0].message and "of 20 samples" in signs[0].message


def test_shape_signs_need_twice_min_samples():
    assert risk_signs([0.0, 0.9, 0.1, 1.0] * 4, thresholds=RiskThresholds(poor_share=1.0)) == []


def test_no_shape_sign_for_scores_at_the_bounds_or_beside_a_poor_share():
    binary = [1.0] * 16 + [0.0] * 4  # a hit rate: its spread follows from its mean
    assert risk_signs(binary, metric="hit_rate_at_1") == []
    poor = [0.0] * 10 + [0.2, 0.9] * 5  # many poor samples: skew and spread would repeat it
    assert kinds(risk_signs(poor)) == ["poor_share"]


def test_many_missing_scores_raise_missing_and_failures_come_first():
    undefined = risk_signs([0.9] * 8, missing=4, missing_indices=[0, 3, 5, 9], metric="a")
    assert kinds(undefined) == ["missing"]
    assert undefined[0].rows == (0, 3, 5, 9) and undefined[0].n == 12
    assert "4 of 12 rows (33%) have no score (0 failed, 4 undefined)" in undefined[0].message
    failed = risk_signs([0.9] * 8, missing=3, failed=3, metric="b")
    poor = risk_signs([0.0] * 10, metric="c")
    ranked = rank_signs([*undefined, *poor, *failed])
    assert [s.metric for s in ranked] == ["b", "c", "a"]


def test_context_relevance_typical_values_raise_no_sign_by_default():
    typical = [0.06, 0.11, 0.15, 0.17, 0.17, 0.18, 0.21, 0.22, 0.29, 0.32, 0.48, 0.62]
    assert risk_signs(typical, metric="context_relevance") == []
    assert risk_signs(typical, metric="context_relevance_at_3") == []  # prefix entry
    assert kinds(risk_signs(typical, metric="context_relevance", thresholds=FLAT)) == ["poor_share"]
    assert kinds(risk_signs([0.02] * 6 + [0.3] * 6, metric="context_relevance")) == ["poor_share"]


def test_exact_match_misses_are_not_a_sign_but_precision_at_k_zeros_are():
    assert risk_signs([0.0] * 12, metric="exact_match") == []
    assert kinds(risk_signs([0.0] * 6 + [0.2] * 6, metric="precision_at_5")) == ["poor_share"]
    assert risk_signs([0.2] * 12, metric="precision_at_5") == []


def test_thresholds_are_frozen_and_overridable_from_strings():
    t = RiskThresholds()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.skew = 0.5  # type: ignore[misc]
    t2 = t.with_overrides({"poor_share": "0.1", "min_samples": "5"})
    assert t2.poor_share == 0.1 and t2.min_samples == 5 and t.poor_share == 0.25
    assert t2.per_metric == t.per_metric


def test_per_metric_override_wins_over_global_and_keeps_other_defaults():
    t = RiskThresholds().with_overrides(
        {"poor_score": "0.3", "context_relevance.poor_share": "0.5", "faithfulness.poor_score": 0.9}
    )
    cr = t.for_metric("context_relevance_at_1")
    assert (cr.poor_score, cr.poor_share) == (
        DEFAULT_PER_METRIC["context_relevance"]["poor_score"],
        0.5,
    )
    assert t.for_metric("faithfulness").poor_score == 0.9
    assert t.for_metric("mrr").poor_score == 0.3
    assert t.entry_for("context_relevance_at_1") == "context_relevance"
    assert t.entry_for("context_relevancex") is None


def test_thresholds_reject_unknown_names_with_a_suggestion():
    with pytest.raises(ConfigError, match="Did you mean 'spread'"):
        RiskThresholds().with_overrides({"spred": "0.2"})
    with pytest.raises(ConfigError, match="'faithfulness.por_score'. Did you mean 'poor_score'"):
        RiskThresholds().with_overrides({"faithfulness.por_score": "0.2"})


@pytest.mark.parametrize(
    "bad", [{"skew": "-0.1"}, {"poor_share": "2"}, {"spread": "x"}, {"m.poor_score": "1.5"}]
)
def test_thresholds_reject_bad_values(bad):
    with pytest.raises(ConfigError, match="Risk threshold"):
        RiskThresholds().with_overrides(bad)


def test_per_metric_entries_are_checked_when_built():
    with pytest.raises(ConfigError, match="'m.min_samples' must be >= 1"):
        RiskThresholds(per_metric={"m": {"min_samples": 0}})
    with pytest.raises(ConfigError, match="must be a mapping"):
        RiskThresholds(per_metric={"m": 0.5})  # type: ignore[dict-item]


def test_rank_signs_merges_metrics_failing_on_the_same_rows():
    zeros = [0.0, 0.0] + [1.0] * 3 + [0.0, 1.0, 0.0] + [1.0] * 4
    signs = [
        *risk_signs(zeros, metric="mrr"),
        *risk_signs([0.0] * 5 + [1.0] * 7, metric="map"),  # other rows: its own sign
        *risk_signs(zeros, metric="hit_rate_at_1"),
    ]
    ranked = rank_signs(signs)
    assert [s.metrics for s in ranked] == [("map",), ("mrr", "hit_rate_at_1")]
    assert ranked[1].message.startswith("4 of 12 samples (33%) have mrr and hit_rate_at_1 below")
    assert ranked[1].rows == (0, 1, 5, 7)


@given(st.lists(st.floats(0, 1), min_size=0, max_size=40), st.randoms())
def test_signs_do_not_depend_on_order(values, rnd):
    order = list(range(len(values)))
    rnd.shuffle(order)
    a = risk_signs(values, indices=range(len(values)), thresholds=RiskThresholds(min_samples=2))
    b = risk_signs(
        [values[i] for i in order], indices=order, thresholds=RiskThresholds(min_samples=2)
    )
    assert [(s.kind, round(s.value, 9), s.rows) for s in a] == [
        (s.kind, round(s.value, 9), s.rows) for s in b
    ]


def test_context_precision_is_poor_when_no_useful_context_is_in_the_top_two():
    # Average precision with one useful context among five, at rank 1, 2 or 3.
    rank_1, rank_2, rank_3 = 1.0, 0.5, 1 / 3
    t = RiskThresholds()
    assert t.entry_for("context_precision") is None  # not caught by a prefix entry
    assert risk_signs([rank_1] * 6 + [rank_2] * 6, metric="context_precision") == []
    (poor,) = risk_signs([rank_1] * 6 + [rank_3] * 6, metric="context_precision")
    assert poor.kind == "poor_share" and poor.rows == tuple(range(6, 12))
    # The claim-based formula keeps its own cut: 1 useful context of 5 (0.2) is normal there.
    assert risk_signs([0.2] * 12, metric="context_claim_precision") == []
    assert kinds(risk_signs([0.2] * 12, metric="context_precision")) == ["poor_share"]
