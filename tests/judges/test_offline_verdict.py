"""The offline verdict when the model decides: rules settle what the words can, the model
reads the rest, and every cell carries its evidence (support, what decided, spans,
uncertain). A scripted stand-in for the model keeps these tests about the decision logic."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges.base import ClaimBlock, Premise
from ragmeter.judges.offline.features import prepare_claim, prepare_premise
from ragmeter.judges.offline.judge import MODEL_DECISION, OfflineJudge
from ragmeter.judges.offline.verdict import (
    MODEL,
    RULE_NO_SHARED,
    RULE_NUMBER,
    RULE_RESTATES,
    RULE_VERBATIM,
    ModelDecision,
    content_share,
    sentence_spans,
    verbatim_span,
    window_span,
)
from ragmeter.models.claim_verifier import PairProbabilities

PREMISE = (
    "The Eiffel Tower is a lattice tower in Paris. It was completed in 1889. "
    "Gustave Eiffel's company designed it. The tower is 330 metres tall."
)


class ScriptedModel:
    """Returns p(entailment) by a rule over the claim; records what it was asked."""

    name = "scripted@0"

    def __init__(self, p_entail: float = 0.9, p_contra: float = 0.05) -> None:
        self.p_entail, self.p_contra = p_entail, p_contra
        self.asked: list[tuple[str, str]] = []

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> PairProbabilities:
        self.asked.extend(pairs)
        n = len(pairs)
        return PairProbabilities(
            np.full(n, self.p_entail), np.full(n, self.p_contra), np.full(n, self.p_contra)
        )


def cell(judge: OfflineJudge, claim: str, premise: str) -> dict:
    verification = judge.verify_sync([ClaimBlock((claim,), (premise,))])
    return verification.meta["evidence"][0][0][0]


def test_a_claim_sharing_no_content_word_is_not_entailed_without_asking_the_model() -> None:
    model = ScriptedModel(p_entail=0.99)
    judge = OfflineJudge(model=model, decision=MODEL_DECISION)
    evidence = cell(judge, "Bananas grow in Ecuador.", PREMISE)
    assert evidence["decided_by"] == RULE_NO_SHARED
    assert evidence["support"] == 0.0 and evidence["spans"] == []
    assert model.asked == []


def test_a_claim_the_premise_holds_word_for_word_is_entailed_with_its_span() -> None:
    model = ScriptedModel(p_entail=0.01)
    judge = OfflineJudge(model=model, decision=MODEL_DECISION)
    claim = "the tower is 330 metres tall"
    evidence = cell(judge, claim, PREMISE)
    assert evidence["decided_by"] == RULE_VERBATIM and evidence["support"] == 1.0
    [[start, end]] = evidence["spans"]
    assert PREMISE[start:end] == "The tower is 330 metres tall"
    assert model.asked == []


def test_every_other_cell_is_decided_by_the_model_on_its_evidence_window() -> None:
    judge = OfflineJudge(model=ScriptedModel(p_entail=0.9), decision=MODEL_DECISION)
    claim = "The Eiffel Tower was finished in 1889."
    verification = judge.verify_sync([ClaimBlock((claim,), (PREMISE,))])
    evidence = verification.meta["evidence"][0][0][0]
    assert evidence["decided_by"] == MODEL
    assert verification.matrices == (((True,),),)
    [[start, end]] = evidence["spans"]
    assert "completed in 1889" in PREMISE[start:end]
    share = content_share(prepare_claim(claim), prepare_premise(PREMISE))
    assert evidence["support"] == pytest.approx(MODEL_DECISION.support(0.9, 0.05, share), abs=1e-3)

    low = OfflineJudge(model=ScriptedModel(p_entail=0.02), decision=MODEL_DECISION)
    assert low.verify_sync([ClaimBlock((claim,), (PREMISE,))]).matrices == (((False,),),)


def test_a_support_in_the_band_is_an_uncertain_verdict() -> None:
    decision = ModelDecision(w_entail=1.0, w_contra=0.0, w_share=0.0, bias=0.0, band=(0.3, 0.7))
    judge = OfflineJudge(model=ScriptedModel(p_entail=0.55), decision=decision)
    evidence = cell(judge, "The Eiffel Tower was finished in 1889.", PREMISE)
    assert evidence["uncertain"] is True
    sure = OfflineJudge(model=ScriptedModel(p_entail=0.95), decision=decision)
    assert cell(sure, "The Eiffel Tower was finished in 1889.", PREMISE)["uncertain"] is False


def test_spans_in_an_answer_read_with_its_question_point_into_the_answer() -> None:
    premise = Premise("It was completed in 1889.", "When was the Eiffel Tower completed?")
    judge = OfflineJudge(model=ScriptedModel(p_entail=0.9), decision=MODEL_DECISION)
    evidence = cell(judge, "The Eiffel Tower was completed in 1889 in Paris.", premise)
    [[start, end]] = evidence["spans"]
    assert premise.text[start:end] == "It was completed in 1889."


def test_the_model_reads_the_question_before_an_answer_and_the_whole_claim() -> None:
    model = ScriptedModel()
    question = "Who painted the Sistine Chapel ceiling?"
    judge = OfflineJudge(model=model, decision=MODEL_DECISION)
    judge.verify_sync(
        [ClaimBlock(("Michelangelo painted the ceiling.",), (Premise("Michelangelo.", question),))]
    )
    [(window, claim)] = model.asked
    assert window.startswith(question) and window.endswith("Michelangelo.")
    assert claim == "Michelangelo painted the ceiling."


def test_a_claim_restating_the_question_gets_no_support_from_its_answer() -> None:
    question = "What is the boiling point of water at sea level in Celsius?"
    premise = Premise("100 degrees Celsius.", question)
    evidence = cell(
        OfflineJudge(model=ScriptedModel(p_entail=0.99), decision=MODEL_DECISION),
        "The boiling point of water at sea level in Celsius.",
        premise,
    )
    assert evidence["decided_by"] == RULE_RESTATES and evidence["support"] == 0.0


def test_the_judge_names_the_decision_and_its_rules() -> None:
    judge = OfflineJudge(model=ScriptedModel(), decision=MODEL_DECISION)
    described = judge.describe()
    assert judge.name.endswith("+nli-decides") and "decision" in described
    assert set(described["rules"]) == {RULE_RESTATES, RULE_NO_SHARED, RULE_VERBATIM}


def test_decision_constants_are_checked() -> None:
    with pytest.raises(ValueError, match="threshold"):
        ModelDecision(w_entail=1, w_contra=0, w_share=0, bias=0, threshold=1.0)
    with pytest.raises(ValueError, match="band"):
        ModelDecision(w_entail=1, w_contra=0, w_share=0, bias=0, band=(0.6, 0.7))
    with pytest.raises(ValueError, match="min_share"):
        ModelDecision(w_entail=1, w_contra=0, w_share=0, bias=0, min_share=1.0)


def test_support_rises_with_the_models_entailment_probability() -> None:
    values = [MODEL_DECISION.support(p, 0.1, 0.5) for p in (0.05, 0.3, 0.6, 0.95)]
    assert values == sorted(values) and values[0] < values[-1]
    assert all(0.0 < v < 1.0 for v in values)


def test_verbatim_needs_whole_words_in_order() -> None:
    assert verbatim_span("tower is tall", "The tower is tall.") == (4, 17)
    assert verbatim_span("tower is tal", "The tower is tall.") is None
    assert verbatim_span("is tall tower", "The tower is tall.") is None
    assert verbatim_span("tall", "The tower is tall.") is None  # too short to settle


def test_content_share_and_windows_follow_the_claims_words() -> None:
    premise = prepare_premise("A cat sat. The dog barked loudly. A bird sang.")
    claim = prepare_claim("The dog barked at the bird.")
    assert content_share(claim, premise) == 1.0
    assert content_share(prepare_claim("The dog slept."), premise) == 0.5
    assert window_span(claim.content, premise, width=2) == (1, 3)
    spans = sentence_spans(premise)
    assert [premise.text[a:b] for a, b in spans] == list(premise.sentences)


def test_the_lexical_verifier_gives_evidence_too() -> None:
    judge = OfflineJudge(model=None)
    verification = judge.verify_sync([ClaimBlock(("The tower is 330 metres tall.",), (PREMISE,))])
    evidence = verification.meta["evidence"][0][0][0]
    assert evidence["decided_by"] in ("calibrated", "rule:hard_conflict")
    [[start, end]] = evidence["spans"]
    assert "330 metres" in PREMISE[start:end]
    assert evidence["support"] == verification.meta["support"][0][0][0]


def test_the_decision_needs_the_model_and_is_not_the_default() -> None:
    with pytest.raises(ConfigError, match="decision= needs the trained claim verifier"):
        OfflineJudge(model=None, decision=MODEL_DECISION)
    assert OfflineJudge(model=ScriptedModel()).decision is None


def test_calibrated_verdicts_near_the_threshold_are_uncertain() -> None:
    judge = OfflineJudge(model=None)
    threshold = judge.calibration.threshold
    assert judge.calibration.uncertain(threshold + 0.01)
    assert not judge.calibration.uncertain(min(0.99, threshold + 0.4))


def test_the_number_rule_reads_quantities_with_their_units_as_the_calibrated_verdict() -> None:
    decision = ModelDecision(
        w_entail=MODEL_DECISION.w_entail,
        w_contra=MODEL_DECISION.w_contra,
        w_share=MODEL_DECISION.w_share,
        bias=MODEL_DECISION.bias,
        data="test",
        number_rule=True,
    )
    judge = OfflineJudge(model=ScriptedModel(p_entail=0.99), decision=decision)
    premise = "The Team plan includes 10 members and 2 TB of shared storage per team."
    # The number 10 is in the premise, but bound to members, not to gigabytes.
    wrong = cell(judge, "The Team plan includes 10 GB of shared storage.", premise)
    assert wrong["decided_by"] == RULE_NUMBER
    # 2 TB written as 2,000 GB is the premise's quantity: the model decides.
    right = cell(judge, "The Team plan includes 2,000 GB of shared storage per team.", premise)
    assert right["decided_by"] == MODEL
