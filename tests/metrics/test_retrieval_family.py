"""The retrieval family shares equal Scores within a batch: sharing never mixes samples up,
and every value is the pure ranking function's, bit for bit."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.errors import ConfigError
from ragmeter.metrics import retrieval
from ragmeter.scoring import ranking
from ragmeter.types import Sample, Score

IDS = st.lists(st.sampled_from(["d1", "d2", "d3", "d4", "D1", "d1 "]), max_size=7).map(tuple)
SAMPLES = st.lists(
    st.builds(Sample, contexts_ids=st.one_of(st.none(), IDS), reference_context_ids=IDS),
    min_size=1,
    max_size=12,
)
NAMES = [*sorted(retrieval.NAMES), "recall_at_2", "ndcg_at_7", "precision_at_20"]
PURE = {
    "mrr": ranking.mrr,
    "map": ranking.average_precision,
    "map_retrieved": ranking.map_retrieved,
}
AT_K = {
    "retrieval": ranking.retrieval_at_k,
    "recall": ranking.recall_at_k,
    "precision": ranking.precision_at_k,
    "ndcg": ranking.ndcg_at_k,
    "hit_rate": ranking.hit_rate_at_k,
}


def pure_value(name: str, sample: Sample) -> float:
    retrieved = sample.contexts_ids or ()
    relevant = sample.reference_context_ids or ()
    if name in PURE:
        return PURE[name](retrieved, relevant)
    kind, _, k = name.rpartition("_at_")
    return AT_K[kind](retrieved, relevant, k=int(k))


def score_batch(samples: list[Sample], names: list[str]) -> list[dict[str, object]]:
    return asyncio.run(retrieval.RetrievalFamily().score_batch(samples, names))


@settings(max_examples=200, deadline=None)
@given(samples=SAMPLES, names=st.lists(st.sampled_from(NAMES), min_size=1, unique=True))
def test_a_batch_scores_each_sample_as_it_scores_alone(
    samples: list[Sample], names: list[str]
) -> None:
    batch = score_batch(samples, names)
    alone = [score_batch([sample], names)[0] for sample in samples]
    assert batch == alone
    assert batch == [retrieval.RetrievalFamily().score_sample(s, names) for s in samples]


@settings(max_examples=200, deadline=None)
@given(samples=SAMPLES)
def test_every_value_is_the_pure_functions_bit_for_bit(samples: list[Sample]) -> None:
    for sample, row in zip(samples, score_batch(samples, NAMES), strict=True):
        for name in NAMES:
            outcome = row[name]
            assert isinstance(outcome, Score)
            assert outcome.value is not None
            assert outcome.value.hex() == pure_value(name, sample).hex(), name


def test_samples_with_equal_numbers_share_one_score_and_others_do_not() -> None:
    first = Sample(contexts_ids=("a", "g"), reference_context_ids=("g",))
    same_rank = Sample(contexts_ids=("b", "h"), reference_context_ids=("h", "x"))
    other_rank = Sample(contexts_ids=("g", "a"), reference_context_ids=("g",))
    rows = score_batch([first, same_rank, other_rank], ["mrr", "map"])
    assert rows[0]["mrr"] is rows[1]["mrr"]
    assert rows[0]["mrr"] == Score(0.5, "First reference id at rank 2.", {"first_relevant_rank": 2})
    assert rows[2]["mrr"] == Score(1.0, "First reference id at rank 1.", {"first_relevant_rank": 1})
    # map differs: one reference id of one against one of two
    assert rows[0]["map"].details == {"relevant_retrieved": 1, "reference_ids": 1}
    assert rows[1]["map"].details == {"relevant_retrieved": 1, "reference_ids": 2}
    assert (rows[0]["map"].value, rows[1]["map"].value) == (0.5, 0.25)


def test_a_miss_says_how_many_ids_were_retrieved() -> None:
    rows = score_batch(
        [
            Sample(contexts_ids=("a", "b"), reference_context_ids=("g",)),
            Sample(contexts_ids=("a", "b", "c"), reference_context_ids=("g",)),
        ],
        ["mrr", "map", "map_retrieved", "hit_rate_at_1"],
    )
    assert rows[0]["mrr"].reason == "None of the 2 retrieved ids is a reference id."
    assert rows[1]["mrr"].reason == "None of the 3 retrieved ids is a reference id."
    assert rows[1]["map_retrieved"].reason == "None of the 3 retrieved ids is a reference id."
    assert rows[0]["map"].details == {"relevant_retrieved": 0, "reference_ids": 1}
    assert rows[0]["hit_rate_at_1"].reason == "No reference id among the first 1 retrieved."


def test_an_unknown_name_is_rejected_before_any_sample_is_scored() -> None:
    sample = Sample(contexts_ids=("a",), reference_context_ids=())
    with pytest.raises(ConfigError, match="no metric 'mrr_at_3'"):
        score_batch([sample], ["mrr", "mrr_at_3"])
    with pytest.raises(ConfigError, match="must be >= 1"):
        score_batch([sample], ["recall_at_0"])
