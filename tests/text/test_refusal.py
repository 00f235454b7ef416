"""The offline refusal detector: refusals, answers that merely deny a fact, partial answers."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from ragmeter.text import refusal
from ragmeter.text.refusal import PARTIAL_VALUE, read_refusal

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "refusals.jsonl"


@pytest.mark.parametrize(
    "text",
    [
        "The documents do not say.",
        "I don't know.",
        "Sorry, none of the retrieved passages mention the author's birthplace.",
        "This question cannot be answered from the given context.",
        "There is no information about the warranty period in the retrieved documents.",
        "The context doesn’t specify.",  # a curly apostrophe
        "**Answer:** Not found in context.",
    ],
)
def test_a_refusal_is_read_as_one(text: str) -> None:
    reading = read_refusal(text)
    assert reading.kind == "refusal" and reading.value == 1.0 and reading.refuses
    assert reading.refusal


@pytest.mark.parametrize(
    "text",
    [
        "It is not in Paris but in Lyon.",
        "There is no fee for the first checked bag.",
        "The document does not require a notary signature; an ordinary signature is enough.",
        "No, the treaty was not signed in 1920; it was signed in 1919.",
        "I believe the answer is 42, as stated in the third paragraph.",
        "No information is collected from users under 13.",
        "",
    ],
)
def test_an_answer_that_denies_a_fact_or_hedges_is_an_answer(text: str) -> None:
    reading = read_refusal(text)
    assert reading.kind == "answer" and reading.value == 0.0 and not reading.refuses


@pytest.mark.parametrize(
    "text",
    [
        "I could not find it, but it may be 1969.",
        "The context doesn't say who won, though it suggests the home team was leading.",
        "The provided context does not specify the dosage for children. For adults, it is "
        "500 mg twice a day.",
    ],
)
def test_a_refusal_that_answers_anyway_is_partial_and_not_a_refusal(text: str) -> None:
    reading = read_refusal(text)
    assert reading.kind == "partial" and reading.value == PARTIAL_VALUE
    assert not reading.refuses  # a yes/no decision counts it as an answer
    assert reading.refusal and reading.answered


def test_the_hand_written_answers_are_read_with_high_precision_and_recall() -> None:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 300
    read = [(row["label"], read_refusal(row["answer"]).kind) for row in rows]
    tp = sum(label == kind == "refusal" for label, kind in read)
    precision = tp / sum(kind == "refusal" for _, kind in read)
    recall = tp / sum(label == "refusal" for label, _ in read)
    # bench/answer_refusal.py prints 0.961 and 0.974: a floor below them catches regressions.
    assert precision >= 0.95 and recall >= 0.95


def test_the_module_examples_run() -> None:
    assert doctest.testmod(refusal).failed == 0
