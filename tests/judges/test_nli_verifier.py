"""The nli: verifier on tiny random checkpoints built here: windows and their maximum, the
verdict threshold, the cache (a rerun makes no model call), joining concurrent calls."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from ragmeter.cache import JudgeCache
from ragmeter.errors import ConfigError
from ragmeter.judges.base import ClaimBlock, Premise
from ragmeter.judges.hf_entailment import NLIVerifier, _PairBatcher
from ragmeter.models.hf_classifier import HFClassifier
from ragmeter.testing.tiny_classifiers import tiny_classifier

LONG = " ".join(f"w{i}" for i in range(150)) + " Paris is the capital of France."
BLOCKS = [
    ClaimBlock(
        ["Paris is in France.", "The tower opened in 1889."],
        ["Paris is the capital of France.", LONG, "The Eiffel tower was completed in 1889."],
    ),
    ClaimBlock(["Water boils at 100 degrees."], ["Water boils at 100 degrees Celsius."]),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_classifier(tmp_path_factory.mktemp("nli") / "bert", "bert")


def test_a_long_premise_is_checked_window_by_window_and_the_best_window_counts(folder):
    verifier = NLIVerifier(HFClassifier(str(folder)))
    model = verifier.model
    claim = "Paris is in France."
    budget = model.max_length - model.claim_tokens([claim])[0]
    windows = model.windows(LONG, budget)
    assert len(windows) > 2
    best = float(model.probabilities([(w, claim) for w in windows]).max())
    result = verifier.verify_sync([ClaimBlock([claim], [LONG])])
    assert result.meta["support"][0][0][0] == pytest.approx(best, abs=1e-4)
    assert result.matrices[0][0][0] == (best >= 0.5)


def test_verdicts_are_the_support_at_or_above_the_threshold(folder):
    model = HFClassifier(str(folder))
    low = NLIVerifier(model, threshold=0.01).verify_sync(BLOCKS)
    high = NLIVerifier(model, threshold=0.99).verify_sync(BLOCKS)
    assert low.meta["support"] == high.meta["support"]
    for block in low.meta["support"]:
        for row in block:
            assert all(0.0 <= v <= 1.0 for v in row)
    assert [[list(r) for r in m] for m in low.matrices] == [
        [[v >= 0.01 for v in row] for row in block] for block in low.meta["support"]
    ]
    assert [[list(r) for r in m] for m in high.matrices] == [
        [[v >= 0.99 for v in row] for row in block] for block in high.meta["support"]
    ]
    assert high.meta["threshold"] == 0.99
    assert high.meta["judge"] == model.name


def test_a_rerun_reads_every_probability_from_the_cache(folder, tmp_path):
    path = tmp_path / "cache" / "judge.sqlite3"
    first = NLIVerifier(HFClassifier(str(folder)), cache=JudgeCache(path))
    done = first.verify_sync(BLOCKS)
    assert first.model.pairs_scored > 0 and done.meta["cached"] is False
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = NLIVerifier(HFClassifier(str(folder)), threshold=0.3, cache=JudgeCache(path))
    redone = again.verify_sync(BLOCKS)
    assert again.model.forward_calls == 0
    assert again.pairs_computed == 0 and again.pairs_cached == first.pairs_computed
    assert redone.meta["cached"] is True
    assert redone.meta["support"] == done.meta["support"]


def test_another_model_does_not_read_the_first_models_probabilities(folder, tmp_path):
    path = tmp_path / "judge.sqlite3"
    NLIVerifier(HFClassifier(str(folder)), cache=JudgeCache(path)).verify_sync(BLOCKS)
    other = tiny_classifier(tmp_path / "other", "bert", seed=1)
    second = NLIVerifier(HFClassifier(str(other)), cache=JudgeCache(path))
    second.verify_sync(BLOCKS)
    assert second.pairs_cached == 0 and second.model.forward_calls > 0


def test_empty_claims_premises_and_blank_premises_have_the_right_shape(folder):
    verifier = NLIVerifier(HFClassifier(str(folder)))
    result = verifier.verify_sync(
        [
            ClaimBlock([], ["Paris is the capital of France."]),
            ClaimBlock(["Paris is in France."], []),
            ClaimBlock(["Paris is in France."], ["   ", "Paris is the capital of France."]),
        ]
    )
    assert result.matrices[0] == ()
    assert result.matrices[1] == ((),)
    assert result.meta["support"][2][0][0] == 0.0  # a blank premise supports nothing
    assert len(result.matrices[2][0]) == 2


def test_a_long_reference_answer_keeps_its_question_in_every_window(folder):
    verifier = NLIVerifier(HFClassifier(str(folder)))
    premise = Premise(LONG, "Where is Paris?")
    plan = verifier.plan([ClaimBlock(["Paris is in France."], [premise])])
    windows = [pair[0] for pair in plan.pairs]
    assert len(windows) > 2
    assert all(w.startswith("Question: Where is Paris?\nAnswer: ") for w in windows)


def test_concurrent_calls_give_what_one_call_gives(folder):
    verifier = NLIVerifier(HFClassifier(str(folder), batch_size=64))

    async def main():
        return await asyncio.gather(*(verifier.verify([b]) for b in BLOCKS * 3))

    results = asyncio.run(main())
    alone = NLIVerifier(HFClassifier(str(folder))).verify_sync(BLOCKS)
    for i, result in enumerate(results):
        assert result.meta["support"][0] == alone.meta["support"][i % 2]


def test_the_batcher_joins_the_pairs_of_concurrent_callers_into_one_run():
    calls: list[list[tuple[str, str]]] = []

    def score(pairs):
        calls.append(pairs)
        return np.array([len(p[0]) / 100 for p in pairs]), np.zeros(len(pairs), bool)

    batcher = _PairBatcher(score)

    async def main():
        return await asyncio.gather(
            batcher.run([("a", "x"), ("bb", "x")]),
            batcher.run([("bb", "x"), ("ccc", "y")]),
        )

    first, second = asyncio.run(main())
    assert len(calls) == 1 and sorted(calls[0]) == [("a", "x"), ("bb", "x"), ("ccc", "y")]
    assert [p for p, _ in first] == [0.01, 0.02]
    assert [p for p, _ in second] == [0.02, 0.03]


def test_a_failed_run_fails_every_caller_waiting_for_it():
    def score(pairs):
        raise RuntimeError("the model broke")

    batcher = _PairBatcher(score)

    async def main():
        return await asyncio.gather(
            batcher.run([("a", "x")]), batcher.run([("b", "x")]), return_exceptions=True
        )

    assert all(isinstance(r, RuntimeError) for r in asyncio.run(main()))


@pytest.mark.parametrize("threshold", [0.0, 1.0, -0.1, float("nan")])
def test_a_threshold_outside_zero_one_is_refused(folder, threshold):
    with pytest.raises(ConfigError, match="The 'verifier_threshold' setting must be"):
        NLIVerifier(HFClassifier(str(folder)), threshold=threshold)


def test_describe_names_the_model_revision_threshold_and_label(folder):
    verifier = NLIVerifier(HFClassifier(str(folder)), threshold=0.7)
    verifier.verify_sync(BLOCKS[:1])
    info = verifier.describe()
    assert info["name"] == verifier.name and "@" in info["name"]
    assert info["threshold"] == 0.7
    assert info["revision"] in info["name"]
    assert "entailment" in info["label"]
    assert info["max_length"] == 64
    assert info["device"] == "cpu"
