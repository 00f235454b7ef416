"""The shipped claim verifier model on onnxruntime: windows, probabilities, identity."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from ragmeter.errors import ModelUnavailableError
from ragmeter.models.claim_verifier import (
    ClaimVerifierModel,
    default_model_dir,
    model_name,
    shipped_model_available,
)

PREMISE = "Mars has two small moons, Phobos and Deimos. They were discovered in 1877."


@pytest.fixture(scope="module")
def model() -> ClaimVerifierModel:
    return ClaimVerifierModel(threads=1)


def test_the_shipped_model_is_in_the_package_with_its_card() -> None:
    folder = default_model_dir()
    assert shipped_model_available()
    assert (folder / "MODEL_CARD.md").is_file()
    assert (folder / "model.onnx").stat().st_size < 30 * 2**20
    assert model_name().startswith("claim-verifier@")


def test_probabilities_are_a_distribution_and_entailment_beats_a_contradiction(model) -> None:
    probs = model.window_probabilities(
        [(PREMISE, "Mars has two moons."), (PREMISE, "Mars has no moons.")]
    )
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    assert probs[0, 0] > 0.5 > probs[1, 0]


def test_a_pairs_probabilities_do_not_depend_on_its_batch_mates(model) -> None:
    pairs = [(PREMISE, "Mars has two moons."), (PREMISE * 6, "Phobos is a moon of Mars.")]
    together = model.window_probabilities(pairs)
    alone = model.window_probabilities(pairs[:1])
    np.testing.assert_array_equal(together[0], alone[0])


def test_a_long_premise_is_cut_into_overlapping_sentence_windows(model) -> None:
    sentences = [f"Sentence number {i} says that item {i} is blue." for i in range(80)]
    windows = model.windows(" ".join(sentences), claim_tokens=10)
    assert len(windows) > 1
    for left, right in itertools.pairwise(windows):
        assert left.split(". ")[-1].rstrip(".") in right  # one shared sentence
    assert windows[0].startswith(sentences[0]) and windows[-1].endswith(sentences[-1])
    found = model.probabilities([(" ".join(sentences), "Item 77 is blue.")])
    assert found.entailment.shape == (1,)


def test_a_folder_without_the_model_says_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="model.onnx, tokenizer.json"):
        ClaimVerifierModel(tmp_path)


def test_text_that_is_not_valid_utf8_is_scored_not_raised(model) -> None:
    long = "Paris is in France. " * 40 + "Lone \ud800 surrogate. " + "Berlin is in Germany. " * 40
    found = model.probabilities([(long, "Paris is in \ud800 France.")])
    assert 0.0 <= found.entailment[0] <= 1.0


def test_concurrent_callers_are_batched_together_and_each_gets_its_own_pairs(model) -> None:
    from concurrent.futures import ThreadPoolExecutor

    claims = [
        "Mars has two moons.",
        "Mars has no moons.",
        "Phobos was discovered in 1877.",
        "Deimos is a moon of Jupiter.",
    ] * 4
    alone = [model.window_probabilities([(PREMISE, c)]) for c in claims]
    calls: list[int] = []
    run = model._session.run

    def counting_run(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(args[1]["input_ids"]))
        time.sleep(0.05)  # the other callers arrive while this call runs
        return run(*args, **kwargs)

    model._session.run = counting_run
    try:
        with ThreadPoolExecutor(8) as pool:
            together = list(pool.map(lambda c: model.window_probabilities([(PREMISE, c)]), claims))
    finally:
        del model._session.run
    for a, t in zip(alone, together, strict=True):
        np.testing.assert_allclose(t, a, atol=1e-6)
    assert sum(calls) == len(claims)
    assert len(calls) < len(claims)  # some callers' pairs ran in one call


def test_a_failed_batch_raises_in_every_caller_it_held() -> None:
    from ragmeter.models.claim_verifier import _RowBatcher

    class Broken:
        def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise RuntimeError("onnxruntime failed")

    batcher = _RowBatcher(Broken())
    with pytest.raises(RuntimeError, match="onnxruntime failed"):
        batcher.logits([([101, 7, 102], [0, 0, 0])], batch_size=4)
    # the batcher is free again after a failure
    with pytest.raises(RuntimeError, match="onnxruntime failed"):
        batcher.logits([([101, 8, 102], [0, 0, 0])], batch_size=4)
