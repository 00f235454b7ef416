"""A reference read as the answer to its question.

(``ragmeter.judges.offline.reference_reading``)
"""

from __future__ import annotations

from typing import Any

import pytest

from ragmeter.errors import ModelUnavailableError
from ragmeter.judges.base import AnalyzeRequest
from ragmeter.judges.offline import claim_split
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.judges.offline.reference_reading import (
    question_subject,
    read_reference,
    read_references,
)


@pytest.fixture(scope="module")
def nlp() -> Any:
    try:
        return claim_split.load_parser()
    except (ImportError, ModelUnavailableError) as error:
        pytest.skip(f"spaCy's English model is not installed: {error}")


EIFFEL = "When was the Eiffel Tower completed?"


@pytest.mark.parametrize("parsed", [True, False], ids=["spacy", "patterns"])
def test_it_takes_the_subject_of_the_question(parsed: bool, request) -> None:
    nlp = request.getfixturevalue("nlp") if parsed else None
    assert (
        read_reference(EIFFEL, "It was completed in 1889.", nlp)
        == "The Eiffel Tower was completed in 1889."
    )


@pytest.mark.parametrize("parsed", [True, False], ids=["spacy", "patterns"])
def test_he_and_his_take_a_persons_name(parsed: bool, request) -> None:
    nlp = request.getfixturevalue("nlp") if parsed else None
    question = "Where was Albert Einstein born?"
    assert (
        read_reference(question, "He was born in Ulm.", nlp) == "Albert Einstein was born in Ulm."
    )
    assert read_reference(question, "His birthplace is Ulm.", nlp) == (
        "Albert Einstein's birthplace is Ulm."
    )


def test_he_takes_a_person_noun_phrase(nlp) -> None:
    assert read_reference("Who is the CEO of Apple?", "He is Tim Cook.", nlp) == (
        "The CEO of Apple is Tim Cook."
    )


@pytest.mark.parametrize("parsed", [True, False], ids=["spacy", "patterns"])
def test_they_takes_a_plural_subject(parsed: bool, request) -> None:
    nlp = request.getfixturevalue("nlp") if parsed else None
    assert read_reference("When did the Beatles form?", "They formed in 1960.", nlp) == (
        "The Beatles formed in 1960."
    )


def test_they_does_not_take_a_singular_subject_nor_he_a_thing(nlp) -> None:
    assert read_reference(EIFFEL, "They finished it in 1889.", nlp) == "They finished it in 1889."
    assert read_reference(EIFFEL, "He completed it in 1889.", nlp) == "He completed it in 1889."


@pytest.mark.parametrize("parsed", [True, False], ids=["spacy", "patterns"])
def test_a_passive_reference_to_a_who_question_takes_its_object(parsed: bool, request) -> None:
    nlp = request.getfixturevalue("nlp") if parsed else None
    question = "Who painted the Mona Lisa?"
    assert read_reference(question, "It was painted by Leonardo da Vinci.", nlp) == (
        "The Mona Lisa was painted by Leonardo da Vinci."
    )
    # "It" and "He" name whoever is asked for here, not the painting.
    assert read_reference(question, "It was Leonardo da Vinci.", nlp) == "It was Leonardo da Vinci."
    assert read_reference(question, "He painted it in 1503.", nlp) == "He painted it in 1503."


@pytest.mark.parametrize(
    "reference",
    ["In 1889.", "The tower was completed in 1889.", "This tower was completed in 1889.", ""],
)
def test_a_reference_without_a_leading_pronoun_is_unchanged(nlp, reference: str) -> None:
    assert read_reference(EIFFEL, reference, nlp) == reference
    assert read_reference(EIFFEL, reference) == reference


@pytest.mark.parametrize(
    "question",
    [
        "Which element has the chemical symbol Fe?",  # the subject is what is asked
        "What currency is used in Japan?",
        "What is it?",
        "",
        None,
    ],
)
def test_a_question_whose_subject_cannot_be_found_leaves_the_reference_unchanged(
    nlp, question: str | None
) -> None:
    assert read_reference(question, "It is iron.", nlp) == "It is iron."
    assert read_reference(question, "It is iron.") == "It is iron."


def test_it_was_in_a_year_answering_when_is_about_the_event(nlp) -> None:
    assert read_reference(EIFFEL, "It was in 1889.", nlp) == "It was in 1889."


def test_the_pattern_fallback_finds_only_capitalised_names() -> None:
    assert question_subject("Where is Lake Geneva?") == "Lake Geneva"
    assert question_subject("When was the tower completed?") is None
    assert question_subject("How tall is the Eiffel Tower?") == "the Eiffel Tower"


def test_each_reference_is_read_and_only_the_first_word_changes(nlp) -> None:
    found = read_references(EIFFEL, ["It was completed in 1889. It is tall.", "In 1889."], nlp)
    assert found == ["The Eiffel Tower was completed in 1889. It is tall.", "In 1889."]


def test_the_offline_judge_makes_reference_claims_from_the_reading(nlp) -> None:
    request = AnalyzeRequest(
        question=EIFFEL,
        answer="The Eiffel Tower was completed in 1889.",
        references=["It was completed in 1889.", "The tower opened in 1889."],
        wants=frozenset({"reference_claims"}),
    )
    analysis = OfflineJudge().analyze_sync(request)
    assert analysis.reference_claims == (
        ("The Eiffel Tower was completed in 1889.",),
        ("The tower opened in 1889.",),
    )
