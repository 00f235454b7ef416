from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from ragmeter.scoring.statistics import (
    BOOTSTRAP_BATCH,
    BOOTSTRAP_MAX_N,
    Summary,
    _bootstrap,
    bootstrap_interval,
    normal_interval,
    sign_test_pvalue,
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


def _scipy_interval(values, *, method, seed=42, confidence=0.95, n_resamples=1000):
    from scipy.stats import bootstrap

    res = bootstrap(
        (np.asarray(values, dtype=float),),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method=method,
        rng=np.random.default_rng(seed),
        vectorized=True,
        batch=BOOTSTRAP_BATCH,
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


_SAMPLES = {
    "uniform": np.random.default_rng(1).random(37),
    "skewed": np.random.default_rng(2).exponential(size=60) / 5,
    "binary": (np.random.default_rng(3).random(25) < 0.3).astype(float),
    "few": np.array([0.0, 0.2, 0.9]),
    "mostly_ties": np.array([1.0] * 14 + [0.0, 0.5]),
    "large": np.random.default_rng(4).beta(0.5, 0.5, size=3000),
}


@pytest.mark.parametrize("name", sorted(_SAMPLES))
@pytest.mark.parametrize(
    ("method", "confidence"), [("BCa", 0.95), ("BCa", 0.8), ("percentile", 0.95)]
)
def test_numpy_bootstrap_equals_scipy_on_the_same_resamples(name, method, confidence):
    pytest.importorskip("scipy")
    values = _SAMPLES[name]
    ours = bootstrap_interval(values, method=method, confidence=confidence, seed=11)
    theirs = _scipy_interval(values, method=method, confidence=confidence, seed=11)
    assert ours == pytest.approx(theirs, abs=1e-9, rel=0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy dividing by zero on the way
def test_a_degenerate_bca_falls_back_to_the_percentile_interval_like_scipy():
    # One resample whose mean is not the sample's: every resampled mean lies on one side of
    # it, the bias correction is infinite and BCa undefined.
    values = [0.0, 0.3, 1.0]
    found = _bootstrap(values, confidence=0.95, n_resamples=1, seed=0, method="BCa")
    assert found is not None and found[2] == "percentile"
    assert found[:2] == bootstrap_interval(values, n_resamples=1, seed=0, method="percentile")
    if importlib.util.find_spec("scipy") is not None:
        with pytest.warns(Warning, match="BCa"):
            low, high = _scipy_interval(values, method="BCa", n_resamples=1, seed=0)
        assert math.isnan(low) or math.isnan(high)


def test_an_unknown_method_is_rejected():
    with pytest.raises(ValueError, match=r"'BCa' or 'percentile'. Got 'basic'"):
        bootstrap_interval([0.1, 0.2], method="basic")


def test_normal_interval_uses_the_normal_quantile():
    values = [0.0, 1.0] * 50
    low, high = normal_interval(values)
    half = 1.959963984540054 * np.std(values, ddof=1) / 10
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-12)


def test_sign_test_by_hand():
    # 8 of 10: 2 * (1 + 10 + 45) / 1024
    assert sign_test_pvalue(8, 10) == pytest.approx(112 / 1024, rel=1e-12)
    assert sign_test_pvalue(2, 10) == sign_test_pvalue(8, 10)
    assert sign_test_pvalue(5, 10) == 1.0
    assert sign_test_pvalue(0, 1) == 1.0
    assert sign_test_pvalue(0, 3) == pytest.approx(0.25)


@pytest.mark.parametrize("trials", [1, 2, 7, 30, 61, 400, 5001])
def test_sign_test_equals_scipy_binomtest(trials):
    binomtest = pytest.importorskip("scipy.stats").binomtest
    for successes in range(0, trials + 1, max(1, trials // 40)):
        expected = binomtest(successes, trials, 0.5).pvalue
        assert sign_test_pvalue(successes, trials) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize(("successes", "trials"), [(-1, 3), (4, 3), (0, 0)])
def test_sign_test_rejects_impossible_counts(successes, trials):
    with pytest.raises(ValueError, match=f"Got {successes} of {trials}"):
        sign_test_pvalue(successes, trials)


def test_shared_resamples_give_the_same_summaries_as_drawing_each_time() -> None:
    from ragmeter.scoring.statistics import Resamples

    rng = np.random.default_rng(3)
    columns = [rng.random(300), rng.random(300), rng.random(200), rng.random(300)]
    shared = Resamples()
    assert [summarize(c, resamples=shared) for c in columns] == [summarize(c) for c in columns]
    small = Resamples(max_indices=10)  # too many indices to keep: drawn each time
    assert summarize(columns[0], resamples=small) == summarize(columns[0])


def test_resamples_drawn_ahead_on_a_thread_give_the_same_summaries() -> None:
    from ragmeter.scoring.statistics import Resamples

    rng = np.random.default_rng(4)
    columns = [rng.random(300), rng.integers(0, 4, 300) / 3, rng.random(200)]
    ahead = Resamples()
    ahead.prepare_in_background(300).join()
    assert ahead._key == (300, 1000, 42)  # drawn before any values were seen
    assert [summarize(c, resamples=ahead) for c in columns] == [summarize(c) for c in columns]
    racing = Resamples()
    racing.prepare_in_background(300)  # not waited for: means() waits or draws itself
    assert [summarize(c, resamples=racing) for c in columns] == [summarize(c) for c in columns]
    too_many = Resamples(max_indices=10)
    too_many.prepare(300)
    assert too_many._key is None  # nothing kept that does not fit
    assert too_many.prepare_in_background(300) is None  # and no thread started for it
    assert Resamples().prepare_in_background(BOOTSTRAP_MAX_N + 1) is None  # normal interval
    assert Resamples().prepare_in_background(1) is None  # no interval


def _discrete_samples() -> list[np.ndarray]:
    """Scores with exact ties between resampled means and the sample mean (reciprocal ranks,
    sevenths, thirds): where the order of a sum decides which side of the mean it falls."""
    rng = np.random.default_rng(5)
    return [
        np.sort(1 / rng.integers(1, 6, 17)),
        np.sort(rng.integers(0, 8, 60) / 7),
        np.sort(rng.integers(0, 4, 300) / 3),
        np.sort(1 / rng.integers(1, 6, 2000) * (rng.random(2000) < 0.8)),
    ]


def test_resampled_means_are_scipys_to_rounding_and_on_the_same_side_of_the_mean() -> None:
    from ragmeter.scoring.statistics import Resamples, bootstrap_means

    near_ties = 0
    for values in [*_discrete_samples(), np.random.default_rng(6).random(500)]:
        n = values.size
        ours = Resamples().means(values, n_resamples=1000, seed=11)
        scipys = bootstrap_means(values, n_resamples=1000, rng=np.random.default_rng(11))
        bound = (n + 1) * np.finfo(float).eps * np.abs(values).max()
        assert np.abs(ours - scipys).max() <= bound
        mean = values.mean()
        assert np.array_equal(ours < mean, scipys < mean)
        assert np.array_equal(ours <= mean, scipys <= mean)
        near_ties += np.count_nonzero(np.abs(scipys - mean) <= 4 * bound)
    assert near_ties > 0  # the samples do test the recomputed ties


@pytest.mark.parametrize("n_resamples", [1000, 250])  # 250: a last batch of 50
@pytest.mark.parametrize("index", range(4))
def test_intervals_of_tied_discrete_scores_equal_scipys(index, n_resamples):
    pytest.importorskip("scipy")
    values = _discrete_samples()[index]
    ours = bootstrap_interval(values, seed=11, n_resamples=n_resamples)
    theirs = _scipy_interval(values, method="BCa", seed=11, n_resamples=n_resamples)
    assert ours == pytest.approx(theirs, abs=1e-9, rel=0)


def test_tied_discrete_scores_summarise_the_same_with_draws_kept_or_not() -> None:
    from ragmeter.scoring.statistics import Resamples

    for values in _discrete_samples():
        drawn_each_batch = Resamples(max_indices=10)  # counts not kept: one batch at a time
        assert summarize(values, resamples=drawn_each_batch) == summarize(values)


def test_sums_are_exact_for_binary_and_dyadic_scores_only() -> None:
    from ragmeter.scoring.statistics import _sums_are_exact

    assert _sums_are_exact(np.array([0.0, 1.0, 1.0, 0.0]))
    assert _sums_are_exact(np.array([0.25, 0.5, 0.75] * 1000))
    assert not _sums_are_exact(np.array([0.0, 1 / 3, 1.0]))
    assert not _sums_are_exact(np.array([1e300, 1e-300]))  # too far apart for one scale
