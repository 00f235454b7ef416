"""The context_relevance family: max and @K aggregation, batching, undefined cases, build."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from ragmeter.errors import ModelUnavailableError
from ragmeter.metrics import context_relevance as family
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.metrics.registry import all_specs
from ragmeter.types import Sample

ALL = ["context_relevance", "context_relevance_at_1", "context_relevance_at_3",
       "context_relevance_at_5"]  # fmt: skip


class ScriptedScorer:
    """Scores a context by a table; records every call, to check batching."""

    name = "scripted"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.calls: list[int] = []

    def score(self, contexts: Sequence[str], questions: Sequence[str]) -> list[float]:
        assert len(contexts) == len(questions)
        self.calls.append(len(contexts))
        return [self.table[c] for c in contexts]


TABLE = {"a": 0.1, "b": 0.6, "c": 0.2, "d": 0.3, "e": 0.05, "f": 0.9}


def run(scorer: ScriptedScorer, samples: list[Sample], metrics: list[str]) -> list[dict]:
    fam = family.ContextRelevanceFamily(scorer)  # type: ignore[arg-type]
    return asyncio.run(fam.score_batch(samples, metrics))


def test_max_and_mean_of_first_k_contexts() -> None:
    scorer = ScriptedScorer(TABLE)
    (row,) = run(scorer, [Sample(question="q", contexts=("a", "b", "c", "d", "e", "f"))], ALL)
    assert row["context_relevance"].value == pytest.approx(0.9)
    assert row["context_relevance"].details["best_context"] == 5
    assert row["context_relevance_at_1"].value == pytest.approx(0.1)
    assert row["context_relevance_at_3"].value == pytest.approx((0.1 + 0.6 + 0.2) / 3)
    assert row["context_relevance_at_5"].value == pytest.approx((0.1 + 0.6 + 0.2 + 0.3 + 0.05) / 5)
    assert row["context_relevance"].reason == (
        "Context 5 of 6 makes the question most likely: geometric-mean token probability 0.900."
    )
    assert row["context_relevance_at_3"].reason == (
        "Mean over the first 3 of 6 contexts (0.100, 0.600, 0.200)."
    )


def test_fewer_than_k_contexts_average_all_of_them() -> None:
    (row,) = run(ScriptedScorer(TABLE), [Sample(question="q", contexts=("b", "c"))], ALL)
    assert row["context_relevance_at_5"].value == pytest.approx(0.4)
    assert row["context_relevance_at_3"].value == pytest.approx(0.4)


def test_all_pairs_of_a_batch_go_to_the_model_in_one_call() -> None:
    scorer = ScriptedScorer(TABLE)
    samples = [
        Sample(question="q1", contexts=("a", "b")),
        Sample(question="", contexts=("c",)),
        Sample(question="q3", contexts=()),
        Sample(question="q4", contexts=("f", "e", "d")),
    ]
    rows = run(scorer, samples, ["context_relevance"])
    assert scorer.calls == [5]
    assert rows[0]["context_relevance"].value == pytest.approx(0.6)
    assert rows[3]["context_relevance"].value == pytest.approx(0.9)
    assert rows[1]["context_relevance"].value is None
    assert "question is empty" in rows[1]["context_relevance"].reason
    assert rows[2]["context_relevance"].value is None
    assert "No contexts" in rows[2]["context_relevance"].reason


def test_specs_are_registered_and_need_question_and_contexts() -> None:
    specs = all_specs()
    for name in ALL:
        assert specs[name].family == "context_relevance"
        assert specs[name].requires == ("question", "contexts")
    assert specs["answer_reward"].requires == ("question", "answer")


def _tiny_t5(tmp_path: Path) -> Path:
    """A tiny random T5 folder (built by the model tests' helper)."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
    try:
        from test_lm_scorer import tiny_t5
    finally:
        sys.path.pop(0)
    return tiny_t5(tmp_path / "t5")


def test_build_rejects_the_run_when_the_model_is_missing(tmp_path: Path) -> None:
    settings = Settings(relevance_model=str(tmp_path / "no-such-model"))
    with pytest.raises(ModelUnavailableError, match="relevance_model"):
        family.build(RunContext(settings=settings))


def test_build_with_a_local_seq2seq_model_scores_real_pairs(tmp_path: Path) -> None:
    folder = _tiny_t5(tmp_path)
    fam = family.build(RunContext(settings=Settings(relevance_model=str(folder))))
    samples = [Sample(question="when was it built ?", contexts=("the eiffel tower", "plants"))]
    (row,) = asyncio.run(fam.score_batch(samples, ALL))
    per_context = fam.scorer.score(["the eiffel tower", "plants"], ["when was it built ?"] * 2)
    assert row["context_relevance"].value == pytest.approx(max(per_context), abs=1e-6)
    details = row["context_relevance"].details
    assert details["model"] == str(folder)
    assert (details["dtype"], details["method"]) == ("float32", "padded")  # seq2seq: Unitxt's
    assert row["context_relevance_at_1"].value == pytest.approx(per_context[0], abs=1e-6)
    assert 0.0 < row["context_relevance"].value <= 1.0


def test_build_takes_the_dtype_from_the_settings(tmp_path: Path) -> None:
    folder = _tiny_t5(tmp_path)
    settings = Settings(relevance_model=str(folder), relevance_dtype="bfloat16")
    fam = family.build(RunContext(settings=settings))
    (row,) = asyncio.run(fam.score_batch([Sample(question="q ?", contexts=("a b",))], ALL))
    assert row["context_relevance"].details["dtype"] == "bfloat16"


def test_a_bad_dtype_is_a_config_error_naming_the_choices() -> None:
    from ragmeter.errors import ConfigError

    with pytest.raises(ConfigError, match="float32"):
        family.build(RunContext(settings=Settings(relevance_dtype="fp8")))
