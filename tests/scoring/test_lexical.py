from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.scoring.lexical import (
    Bag,
    Overlap,
    Tokens,
    answer_token_recall,
    batch_common,
    batch_overlap,
    best_overlap,
    context_token_precision,
    exact_match,
    hash_slots,
    k_precision,
    k_precision_from_counts,
    new_token_score,
    token_f1,
    token_overlap,
    token_precision,
    token_recall,
)
from ragmeter.scoring.lexical.token_batch import TokenBatch


def test_overlap_clips_repeated_tokens_to_the_smaller_count():
    o = token_overlap("yes yes yes no", "yes yes")
    assert (o.common, o.prediction_length, o.reference_length) == (2, 4, 2)
    assert o.precision == 0.5
    assert o.recall == 1.0
    assert o.f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)


def test_overlap_is_zero_on_every_measure_when_nothing_is_shared_or_a_side_is_empty():
    for pred, ref in [("a b", "c d"), ("", "c"), ("c", ""), ("", "")]:
        o = token_overlap(pred, ref)
        assert (o.precision, o.recall, o.f1) == (0.0, 0.0, 0.0)


def test_inputs_may_be_text_tokens_bags_or_lookup_tokens_with_the_same_result():
    answer, context = "The cat sat on the mat, the end.", "A cat; a mat, an end!"
    expected = token_overlap(answer, context)
    for pred in (answer, Bag.of(answer), ["cat", "sat", "on", "mat", "end"]):
        for ref in (context, Bag.of(context), Tokens.of(context), ["cat", "mat", "end"]):
            assert token_overlap(pred, ref) == expected


def test_pre_tokenised_input_is_taken_as_is():
    # Tokens given as a list are not normalised again: "The" stays a token.
    assert token_overlap(["The", "cat"], ["cat"]).precision == 0.5


def test_articles_in_a_pre_tokenised_prediction_never_match_dropped_articles():
    assert token_overlap(["the", "cat"], "The cat").common == 1
    assert token_overlap(["the", "cat"], Tokens.of("The cat")).common == 1


def test_tokens_keep_articles_only_for_lookup():
    t = Tokens.of("The cat and a dog")
    assert t.lookup == ["the", "cat", "and", "a", "dog"]
    assert t.exact == ["cat", "and", "dog"]
    assert len(t) == 3


def test_bag_splits_single_and_repeated_tokens():
    bag = Bag.of("to be or not to be")
    assert bag.singles == {"or", "not"}
    assert bag.repeated == {"to": 2, "be": 2}


def test_best_overlap_takes_each_measure_separately():
    refs = ["Paris", "Paris is in France and Europe"]
    assert best_overlap("Paris France", refs, measure="recall")[0] == 0
    assert best_overlap("Paris France", refs, measure="precision")[0] == 1
    assert best_overlap("x", [], measure="f1") is None


def test_best_overlap_keeps_the_first_reference_on_ties():
    assert best_overlap("x b", ["b", "b"], measure="precision") == (
        0,
        Overlap(common=1, prediction_length=2, reference_length=1),
    )


def test_k_precision_takes_the_best_single_context_not_the_union():
    score = k_precision("Paris Berlin", ["Paris is in France", "Berlin is in Germany"])
    assert score.value == 0.5
    assert score.details == {"best_context": 0, "common_tokens": 1, "answer_tokens": 2}


def test_k_precision_reports_the_best_context_index_and_counts():
    score = k_precision("cat sat", ["dog", "The cat sat down"])
    assert score.value == 1.0
    assert score.details["best_context"] == 1
    assert score.reason == "2 of 2 answer tokens found in context 1."


def test_k_precision_of_an_empty_answer_is_zero_with_a_reason():
    score = k_precision("", ["Some context text here."])
    assert score.value == 0.0
    assert score.reason == "The answer has no tokens after normalisation."


def test_k_precision_against_only_empty_contexts_is_zero():
    assert k_precision("Paris", ["", "  "]).value == 0.0


def test_k_precision_without_contexts_is_undefined():
    score = k_precision("Paris", [])
    assert score.value is None
    assert "No contexts" in score.reason


def test_token_recall_precision_f1_on_a_hand_computed_case():
    # answer tokens: president was barack obama (4); reference: barack obama in 2009 (4)
    answer, refs = "The president was Barack Obama.", ["Barack Obama, in 2009"]
    assert token_recall(answer, refs).value == 0.5
    assert token_precision(answer, refs).value == 0.5
    assert token_f1(answer, refs).value == 0.5


def test_token_recall_takes_the_best_reference_and_names_it():
    score = token_recall("Rome", ["", "Rome Italy", "Milan"])
    assert score.value == 0.5
    assert score.details["best_reference"] == 1
    assert score.reason == "1 of 2 tokens of reference 1 found in the answer."


def test_token_recall_against_empty_references_is_zero_with_a_reason():
    score = token_recall("Paris", ["", "the"])
    assert score.value == 0.0
    assert score.reason == "Every reference answer is empty after normalisation."


@pytest.mark.parametrize("metric", [token_recall, token_precision, token_f1, exact_match])
def test_reference_metrics_without_references_are_undefined(metric):
    score = metric("Paris", [])
    assert score.value is None
    assert "No reference answers" in score.reason


def test_exact_match_compares_normalised_token_sequences():
    assert exact_match("The Beatles!", ["beatles"]).value == 1.0
    assert exact_match("Beatles the", ["the beatles"]).value == 1.0
    assert exact_match("man bites dog", ["dog bites man"]).value == 0.0
    assert exact_match("", [""]).value == 1.0
    assert exact_match("x", [Tokens.of("X."), Bag.of("y")]).details == {"matched_reference": 0}


def test_context_token_precision_uses_the_question_against_each_context():
    score = context_token_precision("why why why", ["why not"])
    assert score.value == pytest.approx(1 / 3)
    assert score.details["question_tokens"] == 3
    assert context_token_precision("why", []).value is None


def test_answer_token_recall_is_the_share_of_question_tokens_in_the_answer():
    assert answer_token_recall("What is it?", "it is what it is").value == 1.0
    assert answer_token_recall("Who wrote Hamlet?", "Shakespeare.").value == 0.0
    empty = answer_token_recall("?", "anything")
    assert empty.value == 0.0
    assert "question has no tokens" in empty.reason


# --- batch_common: shared counts of a whole batch at once ----------------------------------

BATCH_WORDS = st.sampled_from(
    ["the", "A", "an", "cat", "Cat,", "cat", "mat", "x" * 12, "X" * 12 + "!", "é", "the—end", "1,0"]
)
BATCH_TEXT = st.lists(BATCH_WORDS, max_size=10).map(" ".join)
GROUP = st.tuples(BATCH_TEXT, st.lists(BATCH_TEXT, max_size=4))


def _check_batch_common(groups):
    texts, predictions, lookups, owners = [], [], [], []
    for g, (prediction, others) in enumerate(groups):
        predictions.append(len(texts))
        texts.append(prediction)
        for other in others:
            lookups.append(len(texts))
            owners.append(g)
            texts.append(other)
    batch = TokenBatch.of(texts)
    got = batch_common(
        batch,
        np.array(predictions, dtype=np.int64),
        np.array(lookups, dtype=np.int64),
        np.array(owners, dtype=np.int64),
    )
    expected = [
        token_overlap(texts[predictions[g]], texts[x]).common
        for x, g in zip(lookups, owners, strict=True)
    ]
    assert got.tolist() == expected


@given(st.lists(GROUP, min_size=1, max_size=6))
def test_batch_common_equals_the_overlap_of_each_pair(groups):
    _check_batch_common(groups)


@given(st.lists(GROUP, min_size=1, max_size=4))
def test_batch_common_counts_sparsely_with_the_same_result(groups):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(batch_overlap, "_DENSE_LIMIT", -1)
        _check_batch_common(groups)


@given(st.lists(GROUP, min_size=1, max_size=4))
def test_batch_common_is_exact_when_every_key_lands_on_one_slot(groups):
    # Every key of a group hashes to the same slot: linear probing does all the work.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hash_slots, "_SLOT_MIX", np.uint64(0))
        _check_batch_common(groups)


def test_batch_common_reads_lookups_in_any_order_and_empty_texts():
    batch = TokenBatch.of(["yes yes no", "", "no yes yes yes", "yes", "The a an"])
    got = batch_common(batch, np.array([0, 3]), np.array([4, 2, 1, 0]), np.array([0, 1, 0, 0]))
    assert got.tolist() == [0, 1, 0, 3]


@pytest.mark.parametrize(
    ("commons", "answer", "expected"),
    [
        ([], 3, None),
        ([0, 0], 0, 0.0),
        ([1, 2, 2], 4, 0.5),
    ],
)
def test_k_precision_from_counts_matches_k_precision(commons, answer, expected):
    score = k_precision_from_counts(commons, answer)
    assert score.value == expected
    if commons:
        assert score.details["best_context"] == commons.index(max(commons))


# --- new_token_score: the question's words left out ---------------------------------------


def test_words_that_repeat_the_question_earn_no_precision():
    question = "Which company makes QuickBooks accounting software?"
    reference = "QuickBooks accounting software is made by Intuit."
    wrong = "QuickBooks accounting software is made by Sage."
    right = "Intuit makes QuickBooks."
    # Plain token precision prefers the wrong answer that restates the question.
    assert token_precision(wrong, [reference]).value == pytest.approx(6 / 7)
    assert token_precision(right, [reference]).value == pytest.approx(2 / 3)
    wrong_new = new_token_score("precision", question, wrong, [reference])
    right_new = new_token_score("precision", question, right, [reference])
    assert wrong_new.value == pytest.approx(3 / 4)  # is, made, by found; sage not
    assert right_new.value == 1.0  # intuit
    assert wrong_new.details["answer_tokens_in_question"] == 3
    assert "3 answer tokens that repeat the question not counted" in wrong_new.reason
    assert "of 4 new answer tokens" in wrong_new.reason


def test_an_answer_that_only_restates_the_question_scores_zero_and_says_why():
    question = "Sage Instant Accounts or QuickBooks?"
    for measure in ("precision", "recall", "f1"):
        score = new_token_score(measure, question, "Sage Instant Accounts or QuickBooks?", ["Sage"])
        assert score.value == 0.0
        assert score.reason


def test_empty_answer_and_missing_references():
    score = new_token_score("precision", "Who?", "", ["Ann"])
    assert score.value == 0.0
    assert score.reason.startswith("The answer has no tokens beyond the question's")
    none = new_token_score("recall", "Who?", "Ann", [])
    assert none.value is None
    assert "new-token recall" in none.reason


def test_recall_drops_the_question_words_from_the_reference_too():
    question = "When did the Berlin Wall fall?"
    reference = "The Berlin Wall fell in November 1989."
    assert token_recall("1989", [reference]).value == pytest.approx(1 / 6)
    score = new_token_score("recall", question, "1989", [reference])
    assert score.value == pytest.approx(1 / 4)  # fell, in, november, 1989
    assert score.details["reference_tokens"] == 4


def test_best_reference_is_chosen_on_the_new_words():
    question = "capital of France"
    score = new_token_score("f1", question, "Paris is the capital", ["capital of France", "Paris"])
    assert score.details["best_reference"] == 1
    assert score.value == pytest.approx(2 * 0.5 * 1 / 1.5)


@given(
    st.lists(
        st.sampled_from(["paris", "the", "capital", "France", "is", "x", "1,000"]), max_size=6
    ),
    st.lists(
        st.lists(st.sampled_from(["paris", "capital", "France", "of", "y"]), max_size=6),
        max_size=3,
    ),
)
def test_with_a_question_sharing_no_word_it_is_the_plain_token_score(answer, references):
    answer_text = " ".join(answer)
    refs = [" ".join(r) for r in references]
    for measure, plain in (
        ("precision", token_precision),
        ("recall", token_recall),
        ("f1", token_f1),
    ):
        new = new_token_score(measure, "zzz qqq", answer_text, refs)
        assert new.value == plain(answer_text, refs).value
