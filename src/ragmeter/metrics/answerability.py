"""Answerability family: does the answer decline, and should it have?

``answer_refusal`` is 1 when the answer declines or says the context does not hold the answer,
0.5 when it declines and then answers anyway (a guess, outside knowledge, a part of what was
asked), 0 when it answers (:mod:`ragmeter.text.refusal`). ``answerability_accuracy`` compares
that decision with the row's ``is_answerable_label``: 1 when the answer refuses an
unanswerable question or answers an answerable one. A partial answer counts as answering
(the reader gets something to act on): right on an answerable question, wrong on an
unanswerable one. Its summary adds precision, recall and F1 of refusing unanswerable
questions and the false-refusal rate on answerable ones (:mod:`ragmeter.scoring.answerability`).

The offline reading is rules over the answer's text, no model; a judge that reads refusals
itself (an :class:`~ragmeter.types.Analysis` with ``refusal``) replaces it where it says.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.errors import cap_text
from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.metrics.progress import scored
from ragmeter.text.refusal import RefusalReading, read_refusal
from ragmeter.types import MetricSpec, Sample, Score

__all__ = ["SPECS", "AnswerabilityFamily", "build"]

FAMILY = "answerability"
METHOD = "offline rules over the answer's text (ragmeter.text.refusal)"

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "answer_refusal",
        FAMILY,
        ("answer",),
        "1 when the answer declines or says the context does not hold the answer, 0.5 when it "
        "declines and answers anyway, 0 when it answers.",
        higher_is_better=False,
    ),
    MetricSpec(
        "answerability_accuracy",
        FAMILY,
        ("answer", "is_answerable_label"),
        "1 when the answer refuses an unanswerable question or answers an answerable one "
        "(a partial answer answers); the summary adds precision / recall / F1 of refusing "
        "unanswerable questions and the false-refusal rate.",
    ),
)
NAMES = tuple(spec.name for spec in SPECS)


class AnswerabilityFamily:
    """Reads each answer once and scores the requested answerability metrics."""

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        check_metrics(FAMILY, metrics, NAMES)
        out = [score_sample(sample, metrics) for sample in samples]
        scored(len(samples))
        return out


def score_sample(sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
    """The requested metrics of one sample."""
    answer = sample.answer or ""
    if not answer.strip():
        empty = Score.undefined("The answer is empty: it neither answers nor refuses.")
        return {name: empty for name in metrics}
    reading = read_refusal(answer)
    out: dict[str, Outcome] = {}
    if "answer_refusal" in metrics:
        out["answer_refusal"] = Score(
            reading.value, refusal_reason(reading), {"kind": reading.kind, "method": METHOD}
        )
    if "answerability_accuracy" in metrics:
        out["answerability_accuracy"] = accuracy(reading, sample.is_answerable_label)
    return out


def refusal_reason(reading: RefusalReading) -> str:
    """Why ``answer_refusal`` is what it is, quoting the words that decided."""
    quoted = cap_text(reading.sentence or "", 300)
    if reading.kind == "refusal":
        return f'The answer declines ("{reading.refusal}"): "{quoted}"'
    if reading.kind == "partial":
        return (
            f'The answer declines ("{reading.refusal}") but answers anyway ("{reading.answered}"): '
            f'"{quoted}" Partial: 0.5, and answering in answerability_accuracy.'
        )
    return "The answer answers: no words of declining or of a context without the answer."


def accuracy(reading: RefusalReading, answerable: bool | None) -> Score:
    """``answerability_accuracy`` of one row: the refusal decision against the label."""
    if answerable is None:
        return Score.undefined("The row has no is_answerable_label.")
    refused = reading.refuses
    right = refused != answerable
    did = {
        "refusal": "refuses",
        "partial": "declines but answers anyway (counted as answering)",
        "answer": "answers",
    }[reading.kind]
    question = "answerable" if answerable else "unanswerable"
    verdict = "right" if right else ("a false refusal" if answerable else "a missed refusal")
    return Score(
        1.0 if right else 0.0,
        f"The question is {question} and the answer {did}: {verdict}.",
        {"refused": refused, "answerable": answerable, "kind": reading.kind},
    )


def build(ctx: RunContext) -> AnswerabilityFamily:
    return AnswerabilityFamily()
