"""Claims bound to their subject and values; short references read as answers (issue 35)."""

from __future__ import annotations

import pytest

from ragmeter.judges.base import ClaimBlock, Premise
from ragmeter.judges.offline.answer_reading import read_as_answer
from ragmeter.judges.offline.binding import claim_names, kind_words, subject_conflict
from ragmeter.judges.offline.features import prepare_claim, prepare_premise
from ragmeter.judges.offline.quantities import quantities, unbound_quantities


@pytest.mark.parametrize(
    ("claim", "premise", "unbound"),
    [
        ("The Enterprise plan gets 10 GB.", "It offers 1000 GB for up to 10 members.", 1),
        ("The plan has 1000 members.", "It offers 1000 GB for up to 10 members.", 1),
        ("The plan allows 10 members.", "It offers 1000 GB for up to 10 members.", 0),
        (
            "Light travels at about 300,000 kilometres per second.",
            "Light travels at exactly 299,792,458 metres per second.",
            0,
        ),
        ("Light travels at 300,000 metres per second.", "It travels at 299,792,458 m/s.", 1),
        ("About 70,400 people live there.", "The town has 70,412 inhabitants.", 0),
        ("Exactly 70,400 people live there.", "The town has 70,412 inhabitants.", 1),
        ("The population is 2.3 million.", "About 2,300,000 people live there.", 0),
        ("Water boils at 100 degrees Celsius.", "Water boils at 212 °F.", 0),
        ("It was completed in 1889.", "It was completed in 1889 as an arch.", 0),
        ("Mars has two moons.", "Mars has two small moons.", 0),
        ("It weighs 3 kg.", "It weighs 3 pounds.", 1),
        ("It carries 1,948 m³/s.", "It carries 1,948 cubic metres per second.", 0),
        ("It carries 1,948 m³/s.", "It carries 1,948 litres per second.", 1),
        ("The lake covers 12 km².", "The lake covers 1,200 hectares.", 0),
        # in one unit, a claim may round or cut the passage's number, not give another
        ("It took in $541 million.", "It took in $538 million.", 1),
        ("It has 1.6 billion users.", "It has 1.61 billion users.", 0),
        ("It hangs at 99%.", "It hangs at 99.9%.", 0),
        ("It was built in 1890.", "It was built in 1889.", 1),
        ("It has 262 pages.", "It has 263 pages.", 1),
        ("Versions are kept for sixty days.", "Versions are kept for 61 days.", 1),
    ],
)
def test_a_quantity_is_bound_to_its_unit_converted_and_hedged(claim, premise, unbound) -> None:
    assert unbound_quantities(claim, premise) == unbound


def test_quantities_read_scale_words_currency_and_units() -> None:
    found = quantities("It weighs 2.5 kg, costs $40 and earns 1.2 billion euros.")
    assert [(q.value, q.dimension) for q in found] == [
        (2500.0, "mass"),
        (40.0, "money"),
        (1.2e9, "money_eur"),
    ]


QUESTION = "How much storage does a Notewise workspace on the Pro plan get?"


@pytest.mark.parametrize(
    ("claim", "question", "reference", "entailed"),
    [
        (
            "A Notewise workspace on the Pro plan gets 2000 GB of shared storage.",
            QUESTION,
            "2000 GB.",
            True,
        ),
        ("A Notewise workspace on the Pro plan gets 1000 GB.", QUESTION, "2000 GB.", False),
        ("Japan uses the yen.", "What currency is used in Japan?", "The Japanese yen.", True),
        ("Fe is the symbol for iron.", "Which element has the chemical symbol Fe?", "Iron.", True),
        ("Iron is element number 26.", "Which element has the chemical symbol Fe?", "Iron.", False),
        ("The Amazon flows through Cairo.", "Which river flows through Cairo?", "The Nile.", False),
        (
            "Miradex is used to treat high cholesterol.",
            "What condition is Miradex used to treat?",
            "plaque psoriasis.",
            False,
        ),
        (
            "Miradex is used to treat plaque psoriasis.",
            "What condition is Miradex used to treat?",
            "plaque psoriasis.",
            True,
        ),
        (
            "Wexcombe is home to roughly 70,400 people.",
            "What is the population of Wexcombe?",
            "About 70,400.",
            True,
        ),
        ("The warbler is endangered.", "Is the warbler endangered?", "Yes.", True),
        ("The warbler is not endangered.", "Is the warbler endangered?", "Yes.", False),
        (
            "The Eiffel Tower was completed for the World's Fair.",
            "When was the Eiffel Tower completed?",
            "It was completed in 1889.",
            False,
        ),
        ("The Eiffel Tower is in Paris.", "Where is the Eiffel Tower?", "The Eiffel Tower.", False),
        (
            "The provinces along the River Ellet are Miret.",
            "Which provinces does the River Ellet flow through?",
            "Lunhal, Miret and Ostria.",
            True,
        ),
    ],
)
def test_a_short_reference_is_read_as_the_answer_to_its_question(
    claim, question, reference, entailed
) -> None:
    reading = read_as_answer(claim, question, reference)
    assert reading.entailed is entailed
    assert (reading.support >= 0.5) is entailed
    assert reading.why


def test_a_claim_that_only_restates_the_question_is_not_entailed_by_an_answer() -> None:
    reading = read_as_answer("The Pro plan gets storage.", QUESTION, "2000 GB.")
    assert not reading.entailed


def test_the_offline_judge_decides_short_references_by_the_answer_reading() -> None:
    from ragmeter.judges.offline.judge import OfflineJudge

    premise = Premise("2000 GB.", QUESTION)
    claims = (
        "A Notewise workspace on the Pro plan gets 2000 GB of shared storage.",
        "A Notewise workspace on the Pro plan gets 1000 GB.",
    )
    result = OfflineJudge(model=None).verify_sync([ClaimBlock(claims, (premise,))])
    assert result.matrices == (((True,), (False,)),)
    cells = [row[0] for row in result.meta["evidence"][0]]
    assert [c["decided_by"] for c in cells] == ["rule:answer", "rule:answer"]
    assert all(c["why"] for c in cells)


TOWNS = (
    "Ashford is a market town in the north. Its lanes draw walkers. "
    "Ashford traditionally lived from tin mining."
)
WEXCOMBE = (
    "Wexcombe is a market town in the hills. Its lanes draw walkers. "
    "The town traditionally lived from tin mining."
)


def test_a_claim_about_another_town_is_not_bound_to_a_passage_about_ashford() -> None:
    claim = prepare_claim("Wexcombe traditionally lived from tin mining.")
    names = claim_names("In fact Wexcombe traditionally lived from tin mining.")
    assert names == ("wexcombe",)
    assert subject_conflict(names, claim, prepare_premise(TOWNS))
    # "the town" is read with the entity its passage is about
    assert not subject_conflict(names, claim, prepare_premise(WEXCOMBE))


def test_a_name_is_found_in_its_other_forms() -> None:
    premise = prepare_premise(
        "The National Aeronautics and Space Administration delayed the launch. "
        "In 1990 the canvas was sold to a collector from Türkiye. The Federal Reserve met."
    )
    for name in ("nasa", "turkish", "fed"):
        claim = prepare_claim(f"The {name.upper() if name == 'nasa' else name.title()} x.")
        assert not subject_conflict((name,), claim, premise), name
    assert subject_conflict(("esa",), prepare_claim("The ESA x."), premise)


def test_a_claim_needs_its_subjects_names_and_half_of_the_others() -> None:
    claim = prepare_claim("Tupac's mother is Afeni Shakur.")
    names = ("tupac", "afeni", "shakur")
    subject = frozenset({"tupac", "mother"})
    afeni = prepare_premise("Tupac grew up in New York. Afeni raised him alone.")
    assert not subject_conflict(names, claim, afeni, subject=subject)
    nobody = prepare_premise("Tupac grew up in New York with his family.")
    assert subject_conflict(names, claim, nobody, subject=subject)
    other = prepare_premise("Afeni Shakur was an activist in New York.")
    assert subject_conflict(names, claim, other, subject=subject)


def test_a_sentence_opening_with_a_common_noun_names_no_other_subject() -> None:
    claim = prepare_claim("Lemmazole is prescribed for asthma.")
    premise = prepare_premise(
        "Lemmazole is a prescription medicine. Doctors prescribe the drug for asthma."
    )
    assert not subject_conflict(("lemmazole",), claim, premise)


def test_the_offline_judge_refuses_a_claim_bound_to_another_subject() -> None:
    from ragmeter.judges.offline.judge import OfflineJudge

    judge = OfflineJudge()
    claims = ("Wexcombe traditionally lived from tin mining.",)
    result = judge.verify_sync([ClaimBlock(claims, (TOWNS, WEXCOMBE))])
    assert result.matrices == (((False, True),),)


def test_a_name_in_the_question_and_a_hyphenated_word_are_read_as_the_question_reads_them():
    from ragmeter.judges.offline.judge import OfflineJudge

    judge = OfflineJudge()
    # "Tide" in the question is the stem "tid": the claim's answer is the name the passage
    # gives, not an "author" the passage lacks.
    book = (
        "The Hollow Tide is one of the better-known novels of its decade. "
        "The Hollow Tide was written by Tobias Nyberg. It is set in the port city of Halbrook."
    )
    claim = "Tobias Nyberg is the author of The Hollow Tide."
    block = ClaimBlock((claim,), (book,), question="Who wrote The Hollow Tide?")
    assert judge.verify_sync([block]).matrices == (((True,),),)
    # "moss-eared" is one word of the question, not "moss" and "eared" of the claim's own
    words = judge._words_of(["Peat bogs are the home of the moss-eared marten."])
    assert "mossear" in next(iter(words.values())).values


def _answer_conflict(claim: str, question: str, premise: str) -> bool:
    from ragmeter.judges.offline.binding import answer_conflict
    from ragmeter.judges.offline.judge import OfflineJudge

    words = OfflineJudge()._words_of([claim])[claim]
    asked = frozenset(prepare_claim(question).content)
    return answer_conflict(words, prepare_claim(claim), asked, prepare_premise(premise))


def test_the_answer_rule_reads_only_claims_about_what_the_question_asks() -> None:
    river = "The River Ellet flows into Lake Corvane. Its banks are lined with willows."
    question = "Into which body of water does the River Ellet flow?"
    # A long answer's other fact about the same river answers no question of it.
    assert not _answer_conflict("Boats are unable to travel on the River Ellet.", question, river)
    assert _answer_conflict("The River Ellet flows into a shallow lagoon.", question, river)
    # An adverb before the verb is no subject: "commonly" is what the question asks.
    drug = "Quorvarin is a statin. The drug commonly causes dizziness, rash and insomnia."
    side_effects = "What are the common side effects of Quorvarin?"
    assert _answer_conflict("Quorvarin commonly causes dry mouth.", side_effects, drug)
    # The claim's grammatical subject may be the attribute asked, not what the claim is about.
    velvarin = "Velvarin is a medicine. Common side effects of the drug include dry mouth and rash."
    asked = "What are the common side effects of Velvarin?"
    assert _answer_conflict("The common side effects of Velvarin are nausea.", asked, velvarin)


def test_a_name_the_passage_lacks_answers_otherwise_where_its_sentence_names_another() -> None:
    book = (
        "The Copper Harbour is a novel. The Copper Harbour was written by Halvard Polstead. "
        "It is set in Lunsford."
    )
    author = "Who is the author of The Copper Harbour?"
    assert _answer_conflict("The Copper Harbour was written by Halvard Castellan.", author, book)
    assert not _answer_conflict("The Copper Harbour was written by Halvard Polstead.", author, book)
    assert not _answer_conflict("Halvard Polstead wrote The Copper Harbour.", author, book)
    town = "Mardene is a market town. Mardene stands on the banks of the River Dovan."
    river = "Which river flows through Mardene?"
    assert _answer_conflict("Mardene stands on the River Brule.", river, town)
    # no sentence says the rest of the claim: the rule has no other answer to read
    assert not _answer_conflict("Mardene was founded by Tobias Crane.", "Who founded it?", town)


def test_a_hyphenated_kind_is_the_subject_not_a_verb() -> None:
    from ragmeter.judges.offline.judge import OfflineJudge

    # "eared" of "ember-eared" is tagged a participle; the subject runs to "is"
    claim = "Yes, the ember-eared salamander is protected by law."
    words = OfflineJudge()._words_of([claim])[claim]
    assert {"emberear", "salamander"} <= set(words.subject)
    premise = "The ember-eared salamander is a salamander. It is not protected by any law."
    block = ClaimBlock((claim,), (premise,), question="Is the salamander protected by law?")
    assert OfflineJudge().verify_sync([block]).matrices == (((False,),),)


def test_a_kind_is_bound_by_its_modifier_and_its_noun() -> None:
    claim = prepare_claim("No law protects the slate-eared plover.")
    kinds = kind_words(claim.text)
    assert kinds == ("slateeared", "plover")
    frog = prepare_premise("The slate-eared tree frog is a frog. The species is not protected.")
    assert subject_conflict((), claim, frog, kinds)
    plovers = prepare_premise("Slate-eared plovers nest on cliffs. No law protects them.")
    assert not subject_conflict((), claim, plovers, kinds)


def test_a_quantity_the_passage_gives_anywhere_binds_the_answer() -> None:
    book = (
        "The Silent Garden is a novel. Readers often point to its long descriptions of "
        "weather. The novel runs to 596 pages."
    )
    question = "How long is The Silent Garden in pages?"
    claim = "At 596 pages, The Silent Garden is a substantial read."
    assert not _answer_conflict(claim, question, book)


def test_the_answer_rule_reads_a_yes_no_question_too() -> None:
    from ragmeter.judges.offline.judge import OfflineJudge

    # Its answer adds words the passage lacks ("barges", "length") where the sentence that
    # answers the question says "not": the polarity rule alone does not see it, as no clause
    # holds the whole claim.
    premise = "The River Tev rises in the hills. It is not navigable by boats."
    question = "Is the River Tev navigable?"
    wrong = "The River Tev is navigable by barges for most of its length."
    right = "The River Tev is not navigable by boats."
    result = OfflineJudge().verify_sync([ClaimBlock((wrong, right), (premise,), question=question)])
    assert result.matrices == (((False,), (True,)),)


def test_a_copula_read_the_other_way_round_is_no_role_conflict() -> None:
    from ragmeter.judges.offline.judge import OfflineJudge

    premise = "Iron is a chemical element with symbol Fe and atomic number 26."
    result = OfflineJudge().verify_sync([ClaimBlock(("Fe is the symbol for iron.",), (premise,))])
    assert result.matrices == (((True,),),)


@pytest.mark.parametrize(
    ("question", "reference", "statement"),
    [
        (
            "Does the Ferndoc Pro plan include single sign-on?",
            "No.",
            "The Ferndoc Pro plan does not include single sign-on.",
        ),
        (
            "Is there a railway station in Kilstow?",
            "No",
            "There is not a railway station in Kilstow.",
        ),
        ("Is the River Lisse navigable?", "Yes.", "The River Lisse is navigable."),
        (
            "Is Brightvane Robotics listed on a stock exchange?",
            "No.",
            "Brightvane Robotics is not listed on a stock exchange.",
        ),
        ("What is the capital of France?", "No.", None),
        ("Is the River Lisse navigable?", "Yes, for small boats.", None),
    ],
)
def test_a_bare_yes_or_no_is_read_as_the_statement_it_answers(question, reference, statement):
    pytest.importorskip("spacy")
    from ragmeter.judges.offline.reference_reading import yes_no_statement
    from ragmeter.models.syntax import load_parser

    assert yes_no_statement(question, reference, load_parser()) == statement


def test_a_statement_of_a_yes_no_question_is_read_by_its_polarity() -> None:
    question = "Does the Ferndoc Pro plan include single sign-on?"
    statement = "The Ferndoc Pro plan does not include single sign-on."
    assert read_as_answer(statement, question, "The plan comes without single sign-on.").entailed
    assert not read_as_answer(statement, question, "Yes, the plan includes it.").entailed
    assert read_as_answer(
        "The plan is protected.", "Is the plan protected?", "Yes, it is."
    ).entailed
