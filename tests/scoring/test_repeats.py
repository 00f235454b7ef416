"""The arithmetic of a judge's repeats: row means and spreads, flipped claims, and the
two-stage bootstrap interval checked against a direct transcription."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.scoring.repeats import flipped_claims, repeat_interval, repeat_mean, spread


def test_a_rows_mean_and_spread_leave_undefined_repeats_out():
    assert repeat_mean([0.2, None, 0.6]) == pytest.approx(0.4)
    assert repeat_mean([None, None]) is None
    assert spread([0.2, None, 0.6]) == pytest.approx(0.4)
    assert spread([0.2, None]) is None  # one defined value cannot spread


def test_claims_are_matched_by_text_and_flip_when_verdicts_differ():
    repeats = [
        {"Paris is in France.": True, "It rains.": False, "Only once.": True},
        {"paris is in france": True, "It rains.": True},
        {"Paris is in France. ": True, "It  rains.": False},
    ]
    assert flipped_claims(repeats) == (2, ["It rains."])
    assert flipped_claims([{"A.": True}]) == (0, [])


def direct_two_stage(rows, n_resamples, seed):
    """The two-stage bootstrap written out loop by loop, from the same random draws (rows
    of every resample first, then the uniforms that pick repeats)."""
    rng = np.random.default_rng(seed)
    n, width = len(rows), max(len(r) for r in rows)
    drawn_rows = rng.integers(0, n, size=(n_resamples, n))
    uniforms = rng.random((n_resamples, n, width))
    means = []
    for b in range(n_resamples):
        row_means = []
        for i, row in enumerate(drawn_rows[b]):
            values = rows[row]
            picks = [values[int(uniforms[b, i, j] * len(values))] for j in range(len(values))]
            row_means.append(sum(picks) / len(picks))
        means.append(sum(row_means) / n)
    return tuple(np.quantile(means, [0.025, 0.975]))


def test_the_interval_equals_a_direct_transcription():
    rows = [[0.1, 0.4, 0.3], [0.9], [0.5, 0.7], [0.2, 0.2, 0.8], [1.0, 0.6]]
    got = repeat_interval(rows, n_resamples=300, seed=3)
    assert got == pytest.approx(direct_two_stage(rows, 300, 3))


def test_the_judges_noise_alone_gives_the_interval_its_width():
    rng = np.random.default_rng(0)
    steady = [[0.5] * 5 for _ in range(200)]  # every row the same, the judge too
    noisy = [list(0.5 + rng.normal(0, 0.3, 5)) for _ in range(200)]
    assert repeat_interval(steady) == pytest.approx((0.5, 0.5))
    lo, hi = repeat_interval(noisy)
    # Row means vary by 0.3 / sqrt(5) from the judge alone; both stages add their share.
    assert lo < 0.5 < hi
    assert 2 * 1.96 * 0.3 / np.sqrt(1000) < hi - lo < 2 * 1.96 * 0.3 * np.sqrt(2 / 1000) * 1.2


def test_with_one_value_per_row_it_is_the_ordinary_bootstrap():
    truth = np.random.default_rng(2).random(200)
    lo, hi = repeat_interval([[t] for t in truth])
    width = 2 * 1.96 * truth.std() / np.sqrt(len(truth))
    assert hi - lo == pytest.approx(width, rel=0.15)


def test_the_interval_covers_the_mean_at_about_the_nominal_rate():
    rng = np.random.default_rng(1)
    covered = 0
    trials = 200
    for t in range(trials):
        quality = rng.beta(4, 2, 60)  # the population mean is 4 / 6
        rows = [list(rng.binomial(1, q, 3).astype(float)) for q in quality]
        lo, hi = repeat_interval(rows, n_resamples=400, seed=t)
        covered += lo <= 4 / 6 <= hi
    assert 0.88 <= covered / trials <= 0.995


def test_bad_inputs_are_refused():
    assert repeat_interval([]) is None
    with pytest.raises(ValueError, match="at least one defined repeat"):
        repeat_interval([[0.5], []])
    with pytest.raises(ValueError, match="confidence"):
        repeat_interval([[0.5]], confidence=1.0)
