"""Atomic claims keep their meaning: each keeps a subject and a predicate of the text it
comes from (``ragmeter.judges.offline.claim_split``, issue 24 part 4)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragmeter.errors import ModelUnavailableError
from ragmeter.judges.offline import claim_split
from ragmeter.judges.offline.claim_split import atomic_claims

EXAMPLE = Path(__file__).parents[2] / "examples" / "rag_sample.jsonl"


@pytest.fixture(scope="module")
def nlp() -> Any:
    try:
        return claim_split.load_parser()
    except (ImportError, ModelUnavailableError) as error:
        pytest.skip(f"spaCy's English model is not installed: {error}")


def claims(nlp: Any, text: str) -> list[str]:
    return list(atomic_claims([text], nlp)[0])


def test_a_list_without_a_final_comma_gives_one_claim_per_item(nlp) -> None:
    assert claims(nlp, "The Nile flows through Uganda, Sudan and Egypt.") == [
        "The Nile flows through Uganda.",
        "The Nile flows through Sudan.",
        "The Nile flows through Egypt.",
    ]
    assert claims(nlp, "Shakespeare wrote Hamlet, Macbeth and Othello.") == [
        "Shakespeare wrote Hamlet.",
        "Shakespeare wrote Macbeth.",
        "Shakespeare wrote Othello.",
    ]


def test_a_list_without_a_verb_stays_whole(nlp) -> None:
    # "Two: Phobos." and "Two: Deimos." would each say that there is one moon.
    assert claims(nlp, "Two: Phobos and Deimos.") == ["Two: Phobos and Deimos."]


def test_element_number_after_a_comma_is_an_appositive_of_the_noun_before_it(nlp) -> None:
    assert claims(nlp, "Fe is the symbol for iron, element number 26.") == [
        "Fe is the symbol for iron.",
        "Iron is element number 26.",
    ]
    assert claims(nlp, "Iron, element number 26, is a metal.") == [
        "Iron is a metal.",
        "Iron is element number 26.",
    ]
    assert claims(nlp, "Au is the symbol for gold, element 79.") == [
        "Au is the symbol for gold.",
        "Gold is element 79.",
    ]


def test_a_list_after_a_comma_is_not_read_as_an_appositive(nlp) -> None:
    assert claims(nlp, "The mine produces iron, copper and 3 other metals.") == [
        "The mine produces iron.",
        "The mine produces copper.",
        "The mine produces 3 other metals.",
    ]


def test_an_appositive_keeps_its_subject_and_a_possessive_takes_the_name_before_it(nlp) -> None:
    assert claims(
        nlp, "Barack Obama, the 44th president of the United States, was born in Hawaii."
    ) == [
        "Barack Obama was born in Hawaii.",
        "Barack Obama was the 44th president of the United States.",
    ]
    assert claims(nlp, "The capital of Australia is Sydney, its largest city.") == [
        "The capital of Australia is Sydney.",
        "Sydney is Australia's largest city.",
    ]


def test_coordinated_predicates_share_the_subject_and_auxiliary(nlp) -> None:
    assert claims(nlp, "Python was created by Guido van Rossum and first released in 1991.") == [
        "Python was created by Guido van Rossum.",
        "Python was first released in 1991.",
    ]
    assert claims(nlp, "Frankenstein was written by Bram Stoker and published in 1897.") == [
        "Frankenstein was written by Bram Stoker.",
        "Frankenstein was published in 1897.",
    ]


def test_a_relative_clause_is_a_claim_about_its_antecedent(nlp) -> None:
    assert claims(nlp, "Marie Curie, who was born in Warsaw, won two Nobel Prizes.") == [
        "Marie Curie won two Nobel Prizes.",
        "Marie Curie was born in Warsaw.",
    ]
    assert claims(nlp, "The chapel takes its name from Pope Sixtus IV, who restored it.")[1] == (
        "Pope Sixtus IV restored it."
    )


def test_a_participle_after_an_object_is_said_of_the_object(nlp) -> None:
    # Said of the subject, "Mary Shelley was first published in 1818" swaps who is who.
    assert claims(nlp, "Mary Shelley wrote Frankenstein, first published in 1818.") == [
        "Mary Shelley wrote Frankenstein.",
        "Frankenstein was first published in 1818.",
    ]
    assert claims(nlp, "She left the city, saddened by the news.") == [
        "She left the city.",
        "She was saddened by the news.",
    ]


def test_what_the_subject_has_keeps_its_owner(nlp) -> None:
    assert claims(nlp, "Mars has two moons, called Phobos and Deimos.") == [
        "Mars has two moons.",
        "Mars's two moons are called Phobos and Deimos.",
    ]


def test_a_dated_participle_is_in_the_past(nlp) -> None:
    assert claims(nlp, "The Eiffel Tower, completed in 1889, is 330 metres tall.") == [
        "The Eiffel Tower is 330 metres tall.",
        "The Eiffel Tower was completed in 1889.",
    ]


def test_a_date_and_a_purpose_become_two_claims_and_a_named_place_a_third(nlp) -> None:
    assert claims(nlp, "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.") == [
        "The Eiffel Tower was completed in 1889.",
        "The Eiffel Tower was completed for the World's Fair.",
        "The World's Fair was in Paris.",
    ]
    assert claims(nlp, "Neil Armstrong was born in 1930 in Ohio.") == [
        "Neil Armstrong was born in 1930.",
        "Neil Armstrong was born in Ohio.",
    ]


def test_adjuncts_without_a_date_or_under_a_negation_stay_together(nlp) -> None:
    for text in (
        "Water boils at 100 degrees Celsius at sea level.",
        "The tower was not completed in 1889 for the World's Fair.",
        "Sydney is the largest city in Australia.",
    ):
        assert claims(nlp, text) == [text]


_ADDED = {"is", "are", "was", "were", "s"}


def _stems(text: str) -> set[str]:
    """Words without their inflection ("flowing", "flows" → "flow")."""
    return {re.sub(r"(?:ing|ed|es|s)$", "", w.lower()) or w for w in re.findall(r"\w+", text)}


SENTENCES = [
    "The Nile flows through Tanzania, Uganda, Rwanda, Burundi, Sudan and Egypt.",
    "Paris, the capital of France, hosts the Olympics.",
    "Microsoft, which was founded in 1975, makes Windows.",
    "Michelangelo painted the Sistine Chapel ceiling between 1508 and 1512, "
    "commissioned by Pope Julius II.",
    "Iron is a chemical element with symbol Fe and atomic number 26.",
    "The Amazon is the largest river in South America, flowing through Brazil, Peru and Colombia.",
    "Tokyo is the capital of Japan, a country in East Asia.",
    "Einstein developed the theory of relativity and won the Nobel Prize in 1921.",
    "Apollo 11 landed on the Moon on July 20, 1969, and Neil Armstrong became the first "
    "person to walk on its surface.",
]


def _texts_with_verbs() -> list[str]:
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    return [row["answer"] for row in rows] + SENTENCES


@pytest.mark.parametrize("text", _texts_with_verbs())
def test_no_claim_loses_its_subject_or_says_words_the_text_does_not(nlp, text: str) -> None:
    source = _stems(text)
    for claim in claims(nlp, text):
        doc = nlp(claim)
        root = next(iter(doc.sents)).root
        subjects = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass", "expl")]
        assert subjects, f"{claim!r} (from {text!r}) has no subject"
        assert subjects[0].i < root.i, f"{claim!r} does not open with its subject"
        invented = _stems(claim) - source - _stems(" ".join(_ADDED))
        assert not invented, f"{claim!r} says {invented} that {text!r} does not"
