"""The premise-clause conflict rules of the offline verifier (polarity, antonym, roles)."""

from __future__ import annotations

import pytest

from ragmeter.judges.offline.conflicts import (
    clauses_of,
    conflict_features,
    covering_sentences,
    role_conflicts,
)
from ragmeter.judges.offline.features import prepare_claim, prepare_premise


def features(claim: str, premise: str) -> tuple[float, float]:
    return conflict_features(prepare_claim(claim), prepare_premise(premise))


def test_a_claim_that_drops_the_premise_negation_conflicts():
    premise = "The bridge is not open to trucks. Cars may cross it at any hour."
    assert features("The bridge is open to trucks.", premise) == (1.0, 0.0)
    assert features("The bridge is not open to trucks.", premise) == (0.0, 0.0)


def test_a_negated_claim_against_an_affirmative_clause_conflicts():
    premise = "The vaccine was approved in March; it is not sold abroad."
    assert features("The vaccine was not approved in March.", premise)[0] == 1.0


def test_the_clause_about_the_claim_decides_not_the_sentence():
    # The negation sits in another clause: the claim's own clause is affirmative.
    premise = "Oslo is the capital of Norway, but Bergen is not its largest port."
    assert features("Oslo is the capital of Norway.", premise) == (0.0, 0.0)
    # A claim that no clause covers has no polarity conflict (other rules handle it).
    assert features("Canberra is the capital of Norway.", premise) == (0.0, 0.0)


def test_a_clause_opening_with_an_article_may_name_the_subject_as_the_firm():
    # The tokens drop "the": the opening is read from the clause's text.
    premise = "Wyncourt Foods was founded in 1968. The firm is not listed on any stock exchange."
    claim = prepare_claim("Wyncourt Foods is listed on a stock exchange.")
    names = frozenset({"wyncourt", "food"})
    assert conflict_features(claim, prepare_premise(premise), names) == (1.0, 0.0)
    assert [c.anaphoric for c in clauses_of(("The firm is not listed.", "Firms are listed."))] == [
        True,
        False,
    ]


def test_not_only_is_no_negation():
    premise = "The tool not only parses logs but also ships them."
    assert features("The tool parses logs.", premise) == (0.0, 0.0)


def test_an_antonym_of_the_premise_word_conflicts():
    premise = "Exports rose by a third after the treaty, and imports stayed flat."
    assert features("Exports fell by a third after the treaty.", premise) == (0.0, 1.0)
    assert features("Exports rose by a third after the treaty.", premise) == (0.0, 0.0)


def test_an_antonym_pair_present_in_the_premise_is_no_conflict():
    premise = "Prices rose in spring and fell in autumn."
    assert features("Prices fell in autumn.", premise)[1] == 0.0


def test_clauses_split_at_semicolons_and_contrasting_conjunctions():
    premise = prepare_premise("Ann is tall; Bob is short, although he is not older.")
    found = clauses_of(premise.sentences)
    assert len(found) == 3
    assert [c.negated_stems for c in found] == [frozenset(), frozenset(), {"older"}]


def test_a_negation_bears_only_on_the_words_just_after_it():
    premise = "The Kelvin scale is used by physicists, not by most engineers."
    assert features("The Kelvin scale is used by physicists.", premise) == (0.0, 0.0)


def test_covering_sentences_hold_every_content_word():
    premise = prepare_premise("Cats purr softly. Dogs bark loudly at night.")
    assert covering_sentences(prepare_claim("Dogs bark at night."), premise) == (
        "Dogs bark loudly at night.",
    )
    assert covering_sentences(prepare_claim("Cats bark."), premise) == ()


@pytest.fixture(scope="module")
def nlp():
    syntax = pytest.importorskip("ragmeter.models.syntax")
    from ragmeter.errors import ModelUnavailableError

    try:
        return syntax.load_parser()
    except ModelUnavailableError as error:
        pytest.skip(str(error))


def test_swapped_subject_and_object_conflict(nlp):
    premise = ("Microsoft bought GitHub in 2018.",)
    found = role_conflicts(
        nlp,
        [
            ("GitHub bought Microsoft in 2018.", premise),
            ("Microsoft bought GitHub in 2018.", premise),
        ],
    )
    assert found == [True, False]


def test_a_passive_premise_keeps_its_logical_subject(nlp):
    premise = ("The castle was besieged by the Swedish army in 1658.",)
    found = role_conflicts(
        nlp,
        [
            ("The castle besieged the Swedish army in 1658.", premise),
            ("The Swedish army besieged the castle in 1658.", premise),
        ],
    )
    assert found == [True, False]
