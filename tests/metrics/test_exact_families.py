"""The lexical and retrieval families: specs, shared tokenisation, outcomes per sample."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import ConfigError
from ragmeter.metrics import lexical, retrieval
from ragmeter.metrics.base import MetricFamily, RunContext
from ragmeter.metrics.registry import all_specs
from ragmeter.scoring import lexical as scoring_lexical
from ragmeter.scoring.lexical import overlap as scoring_overlap
from ragmeter.types import Sample, Score

SAMPLE = Sample(
    question="Who wrote Hamlet?",
    answer="Shakespeare wrote Hamlet around 1600.",
    contexts=("Hamlet is a tragedy by William Shakespeare.", "It was written around 1600."),
    reference_answers=("William Shakespeare", "Shakespeare wrote it"),
    contexts_ids=("d3", "d7", "d9"),
    reference_context_ids=("d7", "d1"),
)


def _score(family, samples, names):
    return asyncio.run(family.build(RunContext()).score_batch(samples, names))


def test_families_are_registered_with_what_they_need():
    specs = all_specs()
    assert specs["k_precision"].requires == ("answer", "contexts")
    for name in ("token_recall", "token_precision", "token_f1", "exact_match"):
        assert specs[name].requires == ("answer", "reference_answers")
    assert specs["context_token_precision"].requires == ("question", "contexts")
    assert specs["answer_token_recall"].requires == ("question", "answer")
    for name in ("new_token_precision", "new_token_recall", "new_token_f1"):
        assert specs[name].requires == ("question", "answer", "reference_answers")
    for kind in ("retrieval", "recall", "precision", "ndcg", "hit_rate"):
        for k in (1, 3, 5, 10):
            assert specs[f"{kind}_at_{k}"].requires == ("contexts_ids", "reference_context_ids")
    for name in ("mrr", "map", "map_retrieved"):
        assert specs[name].family == "retrieval"
    exact = [*lexical.SPECS, *retrieval.SPECS]
    assert all(s.higher_is_better and (s.lower, s.upper) == (0.0, 1.0) for s in exact)
    assert not any(s.needs_judge for s in exact)


def test_built_families_follow_the_protocol():
    assert isinstance(lexical.build(RunContext()), MetricFamily)
    assert isinstance(retrieval.build(RunContext()), MetricFamily)


def test_every_metric_gives_a_score_with_a_reason_for_every_sample():
    samples = [
        SAMPLE,
        Sample(
            answer="",
            contexts=("",),
            reference_answers=("",),
            question="",
            contexts_ids=(),
            reference_context_ids=(),
        ),
    ]
    for family in (lexical, retrieval):
        names = [s.name for s in family.SPECS]
        rows = _score(family, samples, names)
        assert len(rows) == 2
        for row in rows:
            assert list(row) == names
            for outcome in row.values():
                assert isinstance(outcome, Score)
                assert outcome.reason
                assert outcome.value is None or 0.0 <= outcome.value <= 1.0


def test_each_text_of_a_sample_is_normalised_once_for_all_lexical_metrics(monkeypatch):
    batches: list[list[str]] = []
    real_of = lexical.TokenBatch.of

    def spy(texts):
        batches.append(list(texts))
        return real_of(texts)

    monkeypatch.setattr(lexical.TokenBatch, "of", spy)
    rows = _score(lexical, [SAMPLE], [s.name for s in lexical.SPECS])
    assert rows[0]["k_precision"].value == pytest.approx(2 / 5)
    texts = [SAMPLE.question, SAMPLE.answer, *SAMPLE.contexts, *SAMPLE.reference_answers]
    assert len(batches) == 1
    assert Counter(batches[0]) == Counter(texts)


def test_a_single_sample_is_normalised_once_per_text(monkeypatch):
    seen: Counter[str] = Counter()
    real_tokens = scoring_overlap._tokens
    real_lookup = scoring_overlap._tokens_for_lookup

    def count_tokens(text):
        seen[text] += 1
        return real_tokens(text)

    def count_lookup(text):
        seen[text] += 1
        return real_lookup(text)

    monkeypatch.setattr(scoring_overlap, "_tokens", count_tokens)
    monkeypatch.setattr(scoring_overlap, "_tokens_for_lookup", count_lookup)
    lexical.LexicalFamily().score_sample(SAMPLE, [s.name for s in lexical.SPECS])
    texts = [SAMPLE.question, SAMPLE.answer, *SAMPLE.contexts, *SAMPLE.reference_answers]
    assert set(seen) == set(texts)
    assert max(seen.values()) == 1


WORD = st.sampled_from(
    [
        *("the", "a", "An", "Paris", "paris,", "Berlin", "x", "y.", "1,000", "“q”", "é"),
        *("the—end", "internationalization", "Internationalization!", "what?", "is", "it"),
        *("a\x01b", "İ"),
    ]
)
TEXT = st.lists(WORD, max_size=8).map(" ".join)
SAMPLES = st.lists(
    st.builds(
        Sample,
        question=TEXT,
        answer=TEXT,
        contexts=st.lists(TEXT, max_size=3).map(tuple),
        reference_answers=st.lists(TEXT, max_size=3).map(tuple),
    ),
    min_size=1,
    max_size=5,
)
LEXICAL_NAMES = [s.name for s in lexical.SPECS]


@given(SAMPLES, st.lists(st.sampled_from(LEXICAL_NAMES), min_size=1, unique=True))
def test_a_batch_scores_exactly_as_each_sample_alone(samples, names):
    family = lexical.LexicalFamily()
    batch = asyncio.run(family.score_batch(samples, names))
    assert batch == [family.score_sample(sample, names) for sample in samples]


@given(SAMPLES)
def test_a_batch_scores_exactly_as_the_pure_functions(samples):
    rows = lexical.LexicalFamily().score_samples(samples, LEXICAL_NAMES)
    for sample, row in zip(samples, rows, strict=True):
        answer, question = sample.answer, sample.question
        contexts, references = sample.contexts, sample.reference_answers
        assert row["k_precision"] == scoring_lexical.k_precision(answer, contexts)
        assert row["token_recall"] == scoring_lexical.token_recall(answer, references)
        assert row["token_precision"] == scoring_lexical.token_precision(answer, references)
        assert row["token_f1"] == scoring_lexical.token_f1(answer, references)
        assert row["exact_match"] == scoring_lexical.exact_match(answer, references)
        assert row["context_token_precision"] == scoring_lexical.context_token_precision(
            question, contexts
        )
        assert row["answer_token_recall"] == scoring_lexical.answer_token_recall(question, answer)
        for measure in ("precision", "recall", "f1"):
            assert row[f"new_token_{measure}"] == scoring_lexical.new_token_score(
                measure, question, answer, references
            )


def test_a_call_longer_than_a_batch_scores_as_each_sample_alone(monkeypatch):
    monkeypatch.setattr(lexical, "BATCH_SAMPLES", 3)  # 10 samples: batches of 3, 3, 3, 1
    odd = Sample(answer="a\x01b cat", contexts=("\x01b cat",), reference_answers=("cat",))
    samples = [SAMPLE, odd, Sample(answer="x"), *[SAMPLE] * 6, odd]
    family = lexical.LexicalFamily()
    rows = family.score_samples(samples, LEXICAL_NAMES)
    assert rows == [family.score_sample(sample, LEXICAL_NAMES) for sample in samples]


def test_a_sample_the_batch_cannot_carry_is_scored_alone():
    odd = Sample(answer="a\x01b cat", contexts=("\x01b cat",), reference_answers=("cat",))
    rows = _score(lexical, [SAMPLE, odd], ["k_precision", "token_recall", "exact_match"])
    assert rows[1]["k_precision"].value == 1.0  # tokens "\x01b", "cat" in both
    assert rows[1]["token_recall"].value == 1.0
    assert rows[0]["k_precision"].value == pytest.approx(2 / 5)


def test_retrieval_family_scores_and_details():
    row = _score(retrieval, [SAMPLE], ["mrr", "map", "map_retrieved", "recall_at_3", "ndcg_at_1"])[
        0
    ]
    assert row["mrr"] == Score(0.5, "First reference id at rank 2.", {"first_relevant_rank": 2})
    assert row["map"].value == pytest.approx(0.25)
    assert row["map_retrieved"].value == pytest.approx(0.5)
    assert row["recall_at_3"].value == 0.5
    assert row["recall_at_3"].details == {"k": 3, "found": 1}
    assert row["ndcg_at_1"].value == 0.0


def test_no_reference_ids_give_zero_and_say_why():
    sample = Sample(contexts_ids=("d1",), reference_context_ids=())
    row = _score(retrieval, [sample], ["mrr", "map", "precision_at_5"])[0]
    for outcome in row.values():
        assert outcome.value == 0.0
        assert "No reference context ids" in outcome.reason


def test_empty_lists_give_undefined_lexical_scores_with_a_reason():
    sample = Sample(answer="Paris", contexts=(), reference_answers=())
    row = _score(lexical, [sample], ["k_precision", "token_recall", "exact_match"])[0]
    assert all(o.value is None and o.reason.startswith("No ") for o in row.values())


@pytest.mark.parametrize(
    ("family", "name", "message"),
    [
        (lexical, "k_precison", "The lexical family has no metric 'k_precison'"),
        (retrieval, "recall_at_x", "The retrieval family has no metric 'recall_at_x'"),
        (retrieval, "recall_at_0", "The 'k' parameter of recall_at_k must be >= 1. Got 0."),
    ],
)
def test_unknown_names_are_rejected_before_scoring(family, name, message):
    with pytest.raises(ConfigError, match=message):
        _score(family, [SAMPLE], [name])


def test_a_cut_off_outside_the_registered_ones_still_scores():
    assert _score(retrieval, [SAMPLE], ["recall_at_2"])[0]["recall_at_2"].value == 0.5


def test_check_metrics_names_every_unknown_metric_and_what_the_family_has():
    from ragmeter.metrics.base import check_metrics

    check_metrics("claims", ["faithfulness"], {"faithfulness", "claim_recall"})
    with pytest.raises(ConfigError) as caught:
        check_metrics("claims", ["faithfulness", "faithfulnes", "x"], {"faithfulness"})
    assert str(caught.value) == (
        "The claims family has no metric 'faithfulnes', 'x'. It has: faithfulness."
    )
