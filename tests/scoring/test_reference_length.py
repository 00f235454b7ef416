"""The short-reference rule: references much shorter than the answer."""

from __future__ import annotations

import doctest

import pytest

from ragmeter.scoring import reference_length
from ragmeter.scoring.reference_length import content_words, reference_much_shorter


def test_the_modules_examples_hold() -> None:
    failures, tried = doctest.testmod(reference_length)
    assert tried > 0
    assert failures == 0


def test_content_words_skip_stop_words_articles_and_punctuation() -> None:
    assert content_words("It was completed in 1889.") == 2
    assert content_words("The, the; a an.") == 0


@pytest.mark.parametrize(
    ("answer", "references", "expected"),
    [
        # the shipped example's short references (7 vs 2, 6 vs 1, 4 vs 1 content words)
        ("The Eiffel Tower was completed in 1889 for the World's Fair.", ["It was in 1889."], True),
        ("Fe is the symbol for iron, element number 26.", ["Iron."], True),
        ("Michelangelo painted it between 1508 and 1512.", ["Michelangelo."], True),
        # an answer of fewer than 4 content words is never much longer
        ("Japan uses the yen.", ["Yen."], False),
        # exactly half is not fewer than half
        ("Mars has two moons, Phobos and Deimos.", ["Two: Phobos and Deimos."], False),
        # the longest of several references decides
        (
            "Michelangelo painted it between 1508 and 1512.",
            ["Michelangelo.", "Michelangelo painted it from 1508 to 1512."],
            False,
        ),
        ("Michelangelo painted it between 1508 and 1512.", [], False),
        ("", ["Michelangelo."], False),
    ],
)
def test_reference_much_shorter(answer: str, references: list[str], expected: bool) -> None:
    assert reference_much_shorter(answer, references) is expected


def test_the_cut_and_the_minimum_are_options() -> None:
    answer = "Michelangelo painted it between 1508 and 1512."  # 4 content words
    assert reference_much_shorter(answer, ["Michelangelo painted."], shorter_than=1.0)
    assert not reference_much_shorter(answer, ["Michelangelo."], min_answer_words=5)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"shorter_than": 0.0}, "'shorter_than' parameter of reference_much_shorter must be in"),
        ({"shorter_than": 1.5}, "Got 1.5"),
        ({"min_answer_words": 0}, "'min_answer_words' parameter of reference_much_shorter"),
    ],
)
def test_bad_options_are_rejected_with_their_name(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        reference_much_shorter("a b c d", ["a"], **options)
