"""The offline judge's analyses and verdicts are computed once: a rerun reads them back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Settings, evaluate
from ragmeter.cache import JudgeCache
from ragmeter.judges.base import AnalyzeRequest, ClaimBlock
from ragmeter.judges.offline.calibration import LEXICAL_CALIBRATION
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.models.claim_verifier import ClaimVerifierModel, shipped_model_available

needs_model = pytest.mark.skipif(
    not shipped_model_available(), reason="the claim verifier needs onnxruntime"
)

CONTEXTS = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. It was "
    "designed by the company of Gustave Eiffel and finished in 1889 for the World's Fair.",
    "Gustave Eiffel's engineers planned the tower for the 1889 exhibition in the French "
    "capital; critics at first called the iron structure an eyesore.",
)
ANSWER = (
    "The Eiffel Tower, built by Gustave Eiffel's company, stands in Paris. "
    "It was completed for the 1889 World's Fair and is made of iron."
)
REFERENCE = "The tower in Paris was finished in 1889 by Eiffel's firm."
ROWS = [
    {
        "question": "Who built the Eiffel Tower and when?",
        "contexts": list(CONTEXTS),
        "answer": ANSWER,
        "reference_answers": [REFERENCE],
    },
    {
        "question": "What is the Eiffel Tower made of?",
        "contexts": [CONTEXTS[1], CONTEXTS[0]],
        "answer": "The tower is an iron lattice structure that critics called an eyesore.",
        "reference_answers": ["It is made of wrought iron."],
    },
]
METRICS = ["faithfulness", "claim_recall", "noise_sensitivity_relevant"]


class SpyModel:
    """The shipped claim verifier, counting the pairs it is asked to read."""

    def __init__(self) -> None:
        self.inner = ClaimVerifierModel()
        self.name = self.inner.name
        self.calls = 0

    def probabilities(self, pairs: Any) -> Any:
        self.calls += 1
        return self.inner.probabilities(pairs)


def _request() -> AnalyzeRequest:
    return AnalyzeRequest(
        question=ROWS[0]["question"],
        answer=ANSWER,
        references=(REFERENCE,),
        contexts=CONTEXTS,
        wants=frozenset({"answer_claims", "reference_claims", "entities"}),
    )


def _blocks(judge: OfflineJudge) -> list[ClaimBlock]:
    claims = judge.analyze_sync(_request()).answer_claims
    return [ClaimBlock(claims, CONTEXTS), ClaimBlock((REFERENCE,), CONTEXTS)]


@needs_model
def test_a_second_judge_on_the_same_inputs_reads_everything_and_runs_no_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = JudgeCache(tmp_path / "judge.sqlite3")
    first_model = SpyModel()
    first = OfflineJudge(model=first_model, cache=cache)
    blocks = _blocks(OfflineJudge(model=None, calibration=LEXICAL_CALIBRATION))
    analysis = asyncio.run(first.analyze(_request()))
    verification = asyncio.run(first.verify(blocks))
    assert first_model.calls > 0, "the rows must make the model work for this test to mean much"
    assert analysis.meta["cached"] is False and verification.meta["cached"] is False

    second_model = SpyModel()
    second = OfflineJudge(model=second_model, cache=cache)

    def no_parse(request: AnalyzeRequest) -> None:
        raise AssertionError("a cached analysis was computed again")

    monkeypatch.setattr(second, "analyze_sync", no_parse)
    again = asyncio.run(second.analyze(_request()))
    reverified = asyncio.run(second.verify(blocks))
    assert second_model.calls == 0
    assert again.meta["cached"] is True and reverified.meta["cached"] is True
    assert again.answer_claims == analysis.answer_claims
    assert again.reference_claims == analysis.reference_claims
    assert again.context_entities == analysis.context_entities
    assert reverified.matrices == verification.matrices
    assert reverified.meta["support"] == verification.meta["support"]
    assert reverified.meta["evidence"] == verification.meta["evidence"]


@needs_model
def test_only_the_blocks_not_seen_before_are_computed(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "judge.sqlite3")
    model = SpyModel()
    judge = OfflineJudge(model=model, cache=cache)
    blocks = _blocks(judge)
    alone = asyncio.run(judge.verify(blocks[:1]))
    store = judge.store()
    assert store is not None and (store.hits, store.misses) == (0, 1)
    both = asyncio.run(judge.verify([blocks[1], blocks[0]]))
    assert (store.hits, store.misses) == (1, 2)
    assert both.meta["cached"] is False
    assert both.matrices[1] == alone.matrices[0]
    fresh = OfflineJudge(model=SpyModel()).verify_sync([blocks[1], blocks[0]])
    assert both.matrices == fresh.matrices
    assert both.meta["support"] == fresh.meta["support"]


@needs_model
def test_a_judge_with_other_settings_or_another_model_misses(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "judge.sqlite3")
    judge = OfflineJudge(model=SpyModel(), cache=cache)
    blocks = _blocks(judge)
    asyncio.run(judge.verify(blocks))
    lexical = OfflineJudge(model=None, calibration=LEXICAL_CALIBRATION, cache=cache)
    asyncio.run(lexical.verify(blocks))
    assert lexical.store() is not None and lexical.store().hits == 0

    renamed = SpyModel()
    renamed.name = "claim-verifier@000000000000"
    other = OfflineJudge(model=renamed, cache=cache)
    asyncio.run(other.verify(blocks))
    assert renamed.calls > 0 and other.store().hits == 0


def test_a_model_or_embedder_without_a_name_is_never_cached(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "judge.sqlite3")

    class Nameless:
        def embed(self, texts: list[str]) -> Any:
            raise AssertionError("not called")

    judge = OfflineJudge(embedder=Nameless(), cache=cache)
    assert judge.cache_identity() is None and judge.store() is None


@needs_model
def test_a_stored_entry_of_the_wrong_shape_is_computed_again(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "judge.sqlite3")
    judge = OfflineJudge(model=SpyModel(), cache=cache)
    blocks = _blocks(judge)
    store = judge.store()
    assert store is not None
    cache.put(
        store.block_key(blocks[0]),
        json.dumps({"matrix": [[True]], "support": [[1.0]], "evidence": None}),
        model=judge.name,
        prompt="offline-verify",
    )
    computed = asyncio.run(judge.verify(blocks[:1]))
    assert store.misses == 1
    assert len(computed.matrices[0]) == len(blocks[0].claims)


@needs_model
def test_a_rerun_of_evaluate_reads_the_cache_and_scores_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = ClaimVerifierModel.probabilities

    def counted(self: ClaimVerifierModel, pairs: Any) -> Any:
        calls.append(len(pairs))
        return real(self, pairs)

    monkeypatch.setattr(ClaimVerifierModel, "probabilities", counted)
    settings = Settings(cache_path=str(tmp_path / "judge.sqlite3"))
    first = evaluate(ROWS, METRICS, settings=settings, progress=False)
    made = len(calls)
    assert made > 0
    second = evaluate(ROWS, METRICS, settings=settings, progress=False)
    assert len(calls) == made, "the rerun called the claim verifier"
    for a, b in zip(first.rows, second.rows, strict=True):
        assert a.scores == b.scores
        assert a.reasons == b.reasons
    details = second.rows[0].details["faithfulness"]
    assert details["analyze"]["cached"] is True and details["verify"]["cached"] is True
    assert first.rows[0].details["faithfulness"]["verify"]["cached"] is False

    no_cache = evaluate(ROWS, METRICS, settings=Settings(use_cache=False), progress=False)
    assert len(calls) > made
    assert [r.scores for r in no_cache.rows] == [r.scores for r in first.rows]
