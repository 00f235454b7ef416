"""Atomic claims of the offline judge (``ragmeter.judges.offline.claim_split``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import ModelUnavailableError
from ragmeter.judges.base import AnalyzeRequest
from ragmeter.judges.offline import claim_split
from ragmeter.judges.offline.claim_split import (
    ATOMIC_METHOD,
    REGEX_METHOD,
    atomic_claims,
    regex_claims,
    strip_artefacts,
    strip_framing,
)
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.scoring.claims import NO_ANSWER_CLAIMS, NONCOMMITTAL_ANSWER


@pytest.fixture(scope="module")
def nlp() -> Any:
    try:
        return claim_split.load_parser()
    except (ImportError, ModelUnavailableError) as error:
        pytest.skip(f"spaCy's English model is not installed: {error}")


def claims(nlp: Any, text: str) -> list[str]:
    return list(atomic_claims([text], nlp)[0])


def test_coordinated_clauses_become_one_claim_each_with_the_pronoun_resolved(nlp) -> None:
    assert claims(nlp, "The Eiffel Tower was built in 1889 and it is 300 m tall.") == [
        "The Eiffel Tower was built in 1889.",
        "The Eiffel Tower is 300 m tall.",
    ]


def test_neither_nor_stays_one_claim(nlp) -> None:
    # Split, "nor disbelieves" would become the opposite claim "Disbelieves in a god".
    assert claims(nlp, "An agnostic neither believes nor disbelieves in a god.") == [
        "An agnostic neither believes nor disbelieves in a god."
    ]


def test_a_coordinated_participle_keeps_the_subject_and_auxiliary(nlp) -> None:
    found = claims(
        nlp,
        "The tower was designed by Gustave Eiffel's company and completed in 1889 for the Fair.",
    )
    assert found == [
        "The tower was designed by Gustave Eiffel's company.",
        "The tower was completed in 1889.",
        "The tower was completed for the Fair.",
    ]


def test_an_appositive_becomes_an_is_claim(nlp) -> None:
    assert claims(nlp, "Paris, the capital of France, hosts the Olympics.") == [
        "Paris hosts the Olympics.",
        "Paris is the capital of France.",
    ]


def test_a_participial_clause_is_a_claim_about_the_subject(nlp) -> None:
    found = claims(
        nlp,
        "The Life Insurance Corporation of India is the largest insurer in India, "
        "known for its vast portfolio of investments.",
    )
    assert found == [
        "The Life Insurance Corporation of India is the largest insurer in India.",
        "The Life Insurance Corporation of India is known for its vast portfolio of investments.",
    ]


def test_a_non_restrictive_relative_clause_is_a_claim_about_its_antecedent(nlp) -> None:
    assert claims(nlp, "Microsoft, which was founded in 1975, makes Windows.") == [
        "Microsoft makes Windows.",
        "Microsoft was founded in 1975.",
    ]


def test_a_list_gives_one_claim_per_item_but_an_or_list_does_not(nlp) -> None:
    found = claims(nlp, "The Nile flows through Uganda, Sudan, and Egypt.")
    assert found == [
        "The Nile flows through Uganda.",
        "The Nile flows through Sudan.",
        "The Nile flows through Egypt.",
    ]
    assert len(claims(nlp, "France, Spain and Italy are members of the EU.")) == 3
    assert claims(nlp, "The flag is red or blue.") == ["The flag is red or blue."]


def test_a_leading_pronoun_or_possessive_takes_the_previous_subject(nlp) -> None:
    found = claims(nlp, "The Nile is a river. It flows north. Its basin covers eleven countries.")
    assert found == [
        "The Nile is a river.",
        "The Nile flows north.",
        "The Nile's basin covers eleven countries.",
    ]
    # "we" is no noun phrase to refer back to: the pronoun stays.
    assert claims(nlp, "We saw the tower. It was tall.")[-1] == "It was tall."


def test_framing_lines_are_dropped_and_frame_prefixes_cut_off(nlp) -> None:
    text = (
        "Here is a summary of the passage: The passage discusses the Eiffel Tower. "
        "According to the provided documents, the tower is 330 metres tall. "
        "In summary, it is in Paris."
    )
    expected = ["The tower is 330 metres tall.", "The tower is in Paris."]
    assert claims(nlp, text) == expected
    assert regex_claims(text) == expected
    assert strip_framing("Based on the context, water boils at 100 C.") == "Water boils at 100 C."
    assert strip_framing("I hope this helps.") == ""


@pytest.mark.parametrize(
    "answer",
    [
        "I'm sorry, I don't know.",
        "The context does not provide information about the tower.",
        "Based on the context, I cannot answer this question.",
    ],
)
def test_a_refusal_has_no_claims(nlp, answer: str) -> None:
    assert claims(nlp, answer) == []
    assert regex_claims(answer) == []


def test_a_hedge_inside_a_substantive_answer_is_dropped(nlp) -> None:
    assert claims(nlp, "The tower is tall. However, its exact age is unknown.") == [
        "The tower is tall."
    ]


def test_claim_metrics_of_a_refusal_are_undefined_and_say_it_is_noncommittal() -> None:
    rows = [
        {
            "question": "How tall is the Eiffel Tower?",
            "answer": "I'm sorry, the context does not provide information about its height.",
            "contexts": ["The Eiffel Tower is 330 metres tall."],
            "ground_truth": "It is 330 metres tall.",
        },
        {
            "question": "How tall is the Eiffel Tower?",
            "answer": "...",
            "contexts": ["The Eiffel Tower is 330 metres tall."],
            "ground_truth": "It is 330 metres tall.",
        },
    ]
    metrics = ["faithfulness", "claim_precision", "hallucination"]
    refusal, empty = ragmeter.evaluate(rows, metrics, progress=False).rows
    for name in metrics:
        assert refusal.scores[name] is None
        assert refusal.reasons[name] == NONCOMMITTAL_ANSWER
        assert empty.reasons[name] == NO_ANSWER_CLAIMS


def test_generation_artefacts_are_stripped_before_splitting(nlp) -> None:
    text = "The tower is in Paris.</s><pad><pad> It is tall.<|endoftext|>"
    assert strip_artefacts(text) == "The tower is in Paris. It is tall."
    assert claims(nlp, text) == ["The tower is in Paris.", "The tower is tall."]


def test_without_spacy_the_judge_falls_back_to_the_regex_splitter_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> Any:
        raise ImportError("No module named 'spacy'")

    monkeypatch.setattr(claim_split, "load_parser", missing)
    judge = OfflineJudge()
    request = AnalyzeRequest(
        question=None,
        answer="Here is a summary: The tower is in Paris, and it was built in 1889.</s>",
        wants=frozenset({"answer_claims"}),
    )
    analysis = judge.analyze_sync(request)
    assert analysis.meta["claims_method"] == REGEX_METHOD
    assert "regex-fallback" in analysis.meta["method"]
    assert analysis.answer_claims == ("The tower is in Paris.", "The tower was built in 1889.")


def test_the_judge_names_the_parser_method_when_spacy_is_installed(nlp) -> None:
    request = AnalyzeRequest(None, "The tower is in Paris.", wants=frozenset({"answer_claims"}))
    assert OfflineJudge().analyze_sync(request).meta["claims_method"] == ATOMIC_METHOD


def test_the_lic_answer_of_the_noise_sensitivity_seed_gives_three_claims(nlp, shared: Path) -> None:
    paths = sorted((shared / "seeds").glob("000_*.txt"))
    if len(paths) != 1:
        pytest.skip(f"expected one seed 000_*.txt in {shared / 'seeds'}")
    seed = paths[0].read_text(encoding="utf-8")
    match = re.search(r'"answer":\s*\["(.+?)"\]', seed)
    assert match is not None
    found = claims(nlp, match.group(1))
    total = int(re.search(r"Total claims:\s*(\d+)", seed).group(1))
    assert len(found) == total == 3
    assert any(c.endswith("known for its vast portfolio of investments.") for c in found)
