"""The offline refusal detector: refusals, answers that merely deny a fact, partial answers."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from ragmeter.scoring import refusal
from ragmeter.scoring.refusal import PARTIAL_VALUE, read_refusal

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


#: Issue 37, item 9: "Je ne sais pas." was read as an answer. Per language: refusals, answers
#: that deny a fact (not refusals), and a refusal that goes on with a guess (partial).
OTHER_LANGUAGES = {
    "fr": (
        [
            "Je ne sais pas.",
            "Le contexte ne mentionne pas la date.",
            "Aucune information sur ce sujet dans les documents.",
            "Je ne peux pas répondre à cette question.",
        ],
        ["La TVA n'est pas incluse.", "Le musée est fermé le lundi."],
        "Je ne sais pas exactement, mais probablement en 1969.",
    ),
    "de": (
        [
            "Ich weiß es nicht.",
            "Der Kontext enthält keine Informationen dazu.",
            "Das kann ich anhand der Dokumente nicht beantworten.",
            "Der Preis wird im Text nicht erwähnt.",
        ],
        [
            "Die Mehrwertsteuer ist nicht enthalten.",
            "Er wurde nicht in Berlin geboren, sondern in Hamburg.",
        ],
        "Ich weiß es nicht genau, aber vermutlich war es 1969.",
    ),
    "es": (
        [
            "No lo sé.",
            "No hay información sobre eso en el contexto.",
            "El documento no menciona la fecha.",
            "No puedo responder a esa pregunta.",
        ],
        ["No se permite fumar en el edificio.", "El tratado no se firmó en 1920."],
        "No lo sé con certeza, pero probablemente fue en 1969.",
    ),
    "pt": (
        [
            "Não sei.",
            "Não há informação sobre isso no contexto.",
            "O documento não menciona a data.",
            "Não consigo responder a essa pergunta.",
        ],
        ["Não é permitido fumar.", "O tratado não foi assinado em 1920."],
        "Não sei ao certo, mas provavelmente foi em 1969.",
    ),
    "it": (
        [
            "Non lo so.",
            "Non ci sono informazioni su questo nel contesto.",
            "Il documento non menziona la data.",
            "Non posso rispondere a questa domanda.",
        ],
        ["Non è consentito fumare.", "Il museo non apre il lunedì."],
        "Non lo so con certezza, ma probabilmente era il 1969.",
    ),
    "nl": (
        [
            "Ik weet het niet.",
            "Er is geen informatie over in de context.",
            "Het document vermeldt de datum niet.",
            "Ik kan deze vraag niet beantwoorden.",
        ],
        ["Het museum is op maandag niet open.", "Roken is niet toegestaan."],
        "Ik weet het niet zeker, maar waarschijnlijk was het in 1969.",
    ),
    "zh": (
        ["我不知道。", "上下文中没有相关信息。", "文档没有提及日期。", "无法回答这个问题。"],
        ["博物馆周一不开放。", "很多人不知道这座桥建于1889年。"],
        "我不确定，但可能是1969年发生的。",
    ),
    "ja": (
        [
            "わかりません。",
            "文書には記載がありません。",
            "その情報はありません。",
            "お答えできません。",
        ],
        ["月曜日は休館です。", "東京タワーは1958年に完成しました。"],
        "わかりませんが、おそらく1969年の出来事です。",
    ),
}


@pytest.mark.parametrize("language", sorted(OTHER_LANGUAGES))
def test_refusals_in_the_common_languages_of_rag_deployments_are_read(language: str) -> None:
    refusals, answers, partial = OTHER_LANGUAGES[language]
    for text in refusals:
        reading = read_refusal(text)
        assert (reading.kind, reading.language) == ("refusal", language), text
    for text in answers:
        assert read_refusal(text).kind == "answer", text
    reading = read_refusal(partial)
    assert (reading.kind, reading.language) == ("partial", language), partial
    assert set(refusal.OTHER_LANGUAGES) == set(OTHER_LANGUAGES)


def test_the_reason_names_the_language_whose_rules_read_the_refusal() -> None:
    from ragmeter.metrics.answerability import refusal_reason

    reason = refusal_reason(read_refusal("Je ne sais pas."))
    assert (
        reason
        == 'The answer declines ("je ne sais pas"): "Je ne sais pas." (read by the French rules)'
    )
    assert "rules" not in refusal_reason(read_refusal("I don't know."))
