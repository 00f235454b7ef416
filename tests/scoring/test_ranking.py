from __future__ import annotations

import math

import pytest

from ragmeter.errors import ConfigError
from ragmeter.scoring.ranking import (
    average_precision,
    check_k,
    first_relevant_rank,
    hit_rate_at_k,
    map_retrieved,
    mrr,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    retrieval_at_k,
)

AT_K = [retrieval_at_k, hit_rate_at_k, precision_at_k, recall_at_k, ndcg_at_k]


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_id():
    assert mrr(["d1", "d2", "g", "g2"], ["g", "g2"]) == pytest.approx(1 / 3)
    assert first_relevant_rank(["d1", "d2", "g"], ["g"]) == 3


def test_mrr_is_zero_when_no_relevant_id_is_retrieved():
    assert mrr(["d1", "d2"], ["g"]) == 0.0
    assert mrr([], ["g"]) == 0.0
    assert mrr(["d1"], []) == 0.0


def test_ids_are_compared_exactly():
    assert mrr(["doc1", "Doc1"], ["Doc1"]) == 0.5
    assert mrr(["g ", "g"], ["g"]) == 0.5


def test_average_precision_divides_by_every_reference_id():
    # hits at ranks 2 and 4 of 5; reference ids a, b, c -> (1/2 + 2/4) / 3
    assert average_precision(["x", "a", "y", "b", "z"], ["a", "b", "c"]) == pytest.approx(1 / 3)


def test_map_retrieved_divides_by_the_hits_only():
    assert map_retrieved(["x", "a", "y", "b", "z"], ["a", "b", "c"]) == pytest.approx(0.5)
    assert map_retrieved(["x"], ["a"]) == 0.0


def test_both_maps_agree_when_every_reference_id_is_retrieved():
    retrieved, relevant = ["g1", "d1", "g2"], ["g1", "g2"]
    assert average_precision(retrieved, relevant) == map_retrieved(retrieved, relevant)
    assert average_precision(retrieved, relevant) == pytest.approx((1 + 2 / 3) / 2)


def test_repeated_retrieved_ids_count_once_in_trec_metrics_and_each_time_in_unitxt_ones():
    retrieved, relevant = ["d", "g", "g"], ["g"]
    assert average_precision(retrieved, relevant) == 0.5
    assert map_retrieved(retrieved, relevant) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert recall_at_k(["g", "g"], relevant, k=2) == 1.0
    assert precision_at_k(["g", "g"], relevant, k=2) == 1.0
    assert ndcg_at_k(["g", "g"], relevant, k=2) == 1.0


def test_repeated_reference_ids_count_once():
    assert average_precision(["d1", "g"], ["g", "g", "g"]) == 0.5
    assert recall_at_k(["g"], ["g", "g"], k=1) == 1.0


@pytest.mark.parametrize("metric", [average_precision, map_retrieved, mrr])
def test_no_reference_ids_give_zero(metric):
    assert metric(["d1", "d2"], []) == 0.0


@pytest.mark.parametrize("metric", AT_K)
def test_at_k_metrics_with_no_reference_ids_or_nothing_retrieved_give_zero(metric):
    assert metric(["d1", "d2"], [], k=3) == 0.0
    assert metric([], ["g"], k=3) == 0.0


def test_retrieval_and_hit_rate_at_k():
    retrieved, relevant = ["d1", "g1", "d2", "g2"], ["g1", "g2"]
    assert [retrieval_at_k(retrieved, relevant, k=k) for k in (1, 2, 10)] == [0.0, 1.0, 1.0]
    assert [hit_rate_at_k(retrieved, relevant, k=k) for k in (1, 2, 10)] == [0.0, 1.0, 1.0]


def test_precision_at_k_does_not_penalise_a_list_shorter_than_k():
    assert precision_at_k(["g1", "d1", "g2"], ["g1", "g2"], k=10) == pytest.approx(2 / 3)
    assert precision_at_k(["a", "b", "x", "y"], ["a", "b"], k=3) == pytest.approx(2 / 3)
    assert precision_at_k(["x", "a"], ["a"], k=1) == 0.0


def test_recall_at_k():
    retrieved, relevant = ["d1", "g1", "d2", "g2"], ["g1", "g2", "g3", "g4"]
    assert [recall_at_k(retrieved, relevant, k=k) for k in (1, 2, 4)] == [0.0, 0.25, 0.5]


def test_ndcg_at_k_with_binary_gains():
    # relevant at ranks 1 and 3: DCG = 1 + 1/log2(4); ideal = 1 + 1/log2(3)
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["g1", "d1", "g2"], ["g1", "g2"], k=3) == pytest.approx(expected)
    # ideal DCG is cut at k: one slot, one relevant id retrieved first -> 1
    assert ndcg_at_k(["g1", "d1", "g2"], ["g1", "g2"], k=1) == 1.0
    assert ndcg_at_k(["d1", "g1"], ["g1"], k=2) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k(["g1", "g2"], ["g1", "g2"], k=5) == 1.0


@pytest.mark.parametrize("metric", AT_K)
@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one_is_rejected_with_the_metric_name(metric, k):
    with pytest.raises(ConfigError) as info:
        metric(["a"], ["a"], k=k)
    assert str(info.value) == f"The 'k' parameter of {metric.__name__} must be >= 1. Got {k}."


@pytest.mark.parametrize("k", [1.5, "3", True, None])
def test_k_must_be_an_int(k):
    with pytest.raises(ConfigError, match=r"The 'k' parameter of recall_at_k must be an int"):
        recall_at_k(["a"], ["a"], k=k)  # type: ignore[arg-type]


def test_check_k_message_matches_the_house_style():
    with pytest.raises(
        ConfigError, match=r"^The 'k' parameter of recall_at_k must be >= 1\. Got 0\.$"
    ):
        check_k(0, "recall_at_k")
    assert check_k(3, "recall_at_k") == 3


def test_options_are_keyword_only():
    with pytest.raises(TypeError):
        recall_at_k(["a"], ["a"], 1)  # type: ignore[misc]


def test_integer_ids_work_like_strings():
    assert mrr([5, 3, 9], [9]) == pytest.approx(1 / 3)
    assert recall_at_k([5, 3, 9], {9}, k=3) == 1.0
