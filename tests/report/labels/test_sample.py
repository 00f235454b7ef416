"""Which rows a person labels: uniform (seeded, without replacement, every row equally
likely) or stratified by score band."""

from __future__ import annotations

from collections import Counter

import pytest

from ragmeter.errors import ConfigError
from ragmeter.report.labels.sample import stratified_sample, uniform_sample


def test_a_uniform_sample_is_reproducible_sorted_and_without_replacement():
    rows = list(range(100, 200))
    first = uniform_sample(rows, 20, seed=7)
    assert first == uniform_sample(rows, 20, seed=7)
    assert first != uniform_sample(rows, 20, seed=8)
    assert first == sorted(set(first)) and len(first) == 20
    assert set(first) <= set(rows)


def test_a_sample_larger_than_the_rows_takes_them_all():
    assert uniform_sample([5, 3, 9], 10, seed=0) == [3, 5, 9]
    assert stratified_sample([5, 3, 9], [0.1, 0.5, 0.9], 3, seed=0) == [3, 5, 9]


def test_every_row_is_equally_likely_in_a_uniform_sample():
    counts = Counter(
        i for seed in range(2000) for i in uniform_sample(list(range(10)), 3, seed=seed)
    )
    # 600 expected per row; a binomial(2000, 0.3) sd is about 20.
    assert all(520 < counts[i] < 680 for i in range(10)), counts


def test_a_stratified_sample_draws_from_every_score_band():
    # 90 good rows, 10 poor ones: a uniform sample of 10 finds about one poor row.
    values = [0.95] * 90 + [0.05] * 5 + [0.45] * 5
    rows = list(range(100))
    chosen = stratified_sample(rows, values, 10, seed=3)
    bands = Counter(values[i] for i in chosen)
    assert bands == {0.05: 4, 0.45: 3, 0.95: 3} or bands == {0.05: 3, 0.45: 4, 0.95: 3}
    assert len(set(chosen)) == 10


def test_a_band_with_few_rows_gives_them_all_and_the_rest_goes_elsewhere():
    values = [0.9] * 50 + [0.1]
    chosen = stratified_sample(list(range(51)), values, 6, seed=0)
    assert 50 in chosen and len(chosen) == 6


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_a_sample_size_below_one_or_not_an_integer_is_refused(size):
    with pytest.raises(ConfigError, match="sample size must be an integer >= 1"):
        uniform_sample([1, 2], size, seed=0)
