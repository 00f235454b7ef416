"""Properties of the exact metrics and of the run summary, over generated inputs."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.scoring import lexical as lx
from ragmeter.scoring import ranking
from ragmeter.scoring.statistics import summarize

WORDS = st.sampled_from(["the", "a", "Paris", "paris,", "Berlin", "x", "y.", "1,000", "“q”", "é"])
TEXT = st.lists(WORDS, max_size=12).map(" ".join)
IDS = st.lists(st.sampled_from(["d1", "d2", "d3", "g1", "g2", "G1"]), max_size=8)
KS = st.integers(min_value=1, max_value=12)


def _in_unit_interval(value: float | None) -> bool:
    return value is not None and 0.0 <= value <= 1.0 and not math.isnan(value)


@given(TEXT, st.lists(TEXT, min_size=1, max_size=4))
def test_lexical_scores_are_in_the_unit_interval(answer, others):
    for metric in (lx.k_precision, lx.token_recall, lx.token_precision, lx.token_f1):
        assert _in_unit_interval(metric(answer, others).value)
    assert lx.exact_match(answer, others).value in (0.0, 1.0)
    assert _in_unit_interval(lx.answer_token_recall(others[0], answer).value)


@given(IDS, IDS, KS)
def test_ranking_scores_are_in_the_unit_interval(retrieved, relevant, k):
    for metric in (ranking.mrr, ranking.average_precision, ranking.map_retrieved):
        assert _in_unit_interval(metric(retrieved, relevant))
    for metric in (
        ranking.retrieval_at_k,
        ranking.hit_rate_at_k,
        ranking.precision_at_k,
        ranking.recall_at_k,
        ranking.ndcg_at_k,
    ):
        assert _in_unit_interval(metric(retrieved, relevant, k=k))


@given(TEXT)
def test_k_precision_of_a_text_against_itself_is_one(text):
    score = lx.k_precision(text, [text])
    if lx.Bag.of(text).tokens:
        assert score.value == 1.0
    else:  # nothing left after normalisation: defined as 0, as Unitxt
        assert score.value == 0.0


@given(TEXT, st.lists(TEXT, max_size=3), st.lists(TEXT, max_size=3))
def test_k_precision_of_a_text_among_other_contexts_is_one(text, before, after):
    if lx.Bag.of(text).tokens:
        assert lx.k_precision(text, [*before, text, *after]).value == 1.0


@given(
    st.lists(st.sampled_from(["d1", "d2", "d3", "d4", "d5"]), min_size=1, max_size=8, unique=True),
    st.data(),
)
def test_mrr_does_not_drop_when_a_relevant_id_moves_up(retrieved, data):
    relevant = data.draw(st.sets(st.sampled_from(retrieved), min_size=1))
    i = data.draw(st.integers(0, len(retrieved) - 1))
    if retrieved[i] not in relevant or i == 0:
        return
    moved = list(retrieved)
    moved[i - 1], moved[i] = moved[i], moved[i - 1]
    assert ranking.mrr(moved, relevant) >= ranking.mrr(retrieved, relevant)
    # and strictly rises when it is the first relevant id
    if ranking.first_relevant_rank(retrieved, relevant) == i + 1:
        assert ranking.mrr(moved, relevant) > ranking.mrr(retrieved, relevant)


@given(IDS, IDS)
def test_trec_average_precision_never_exceeds_unitxt_map(retrieved, relevant):
    assert ranking.average_precision(retrieved, relevant) <= (
        ranking.map_retrieved(list(dict.fromkeys(retrieved)), relevant) + 1e-12
    )


@settings(deadline=None, max_examples=40)
@given(
    st.lists(st.floats(min_value=0, max_value=1), max_size=30),
    st.randoms(use_true_random=False),
)
def test_summary_does_not_depend_on_the_order_of_scores(values, rnd):
    shuffled = list(values)
    rnd.shuffle(shuffled)
    assert summarize(shuffled, undefined=2) == summarize(values, undefined=2)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=30))
def test_summary_statistics_stay_within_the_scores(values):
    s = summarize(values)
    assert s.count == len(values)
    assert s.min <= s.median <= s.max
    assert s.min - 1e-12 <= s.mean <= s.max + 1e-12
    if s.ci_low is not None:
        assert s.min - 1e-9 <= s.ci_low <= s.ci_high <= s.max + 1e-9
