"""Answerability family: does the answer decline, and should it have?

``answer_refusal`` is 1 when the answer declines or says the context does not hold the answer,
0.5 when it declines and then answers anyway (a guess, outside knowledge, a part of what was
asked), 0 when it answers (:mod:`ragmeter.scoring.refusal`). ``answerability_accuracy`` compares
that decision with the row's ``is_answerable_label``: 1 when the answer refuses an
unanswerable question or answers an answerable one. A partial answer counts as answering
(the reader gets something to act on): right on an answerable question, wrong on an
unanswerable one. Its summary adds precision, recall and F1 of refusing unanswerable
questions and the false-refusal rate on answerable ones (:mod:`ragmeter.scoring.answerability`).

With the offline judge (the default) the answer is read by rules over its text, no model and
no judge call. With any other judge (an LLM, a Python judge) the reading is a part of the
judge's analysis of the sample (``refusal`` and ``refusal_quote``), asked in the same call as
the claims and questions of the other families; where a judge's analysis has no reading (a
Python judge that does not give one), the rules read the answer and the reason says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.errors import cap_text
from ragmeter.judges.base import Judge
from ragmeter.metrics._judged import judge_for, judge_ref, request_for, score_all
from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.metrics.progress import scored
from ragmeter.scoring.refusal import OTHER_LANGUAGES, RefusalReading, read_refusal
from ragmeter.types import MetricSpec, Sample, Score

__all__ = ["SPECS", "AnswerabilityFamily", "build"]

FAMILY = "answerability"
METHOD = "offline rules over the answer's text (ragmeter.scoring.refusal)"

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
#: What an answer may read as.
KINDS = ("answer", "refusal", "partial")


class AnswerabilityFamily:
    """Reads each answer once (by rules, or in the judge's analysis) and scores the requested
    answerability metrics."""

    def __init__(self, judge: Judge | None = None) -> None:
        self.judge = judge

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        check_metrics(FAMILY, metrics, NAMES)
        judge = self.judge
        if judge is None:
            out = [score_sample(sample, metrics) for sample in samples]
            scored(len(samples))
            return out

        async def judged(sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
            return await score_judged(judge, sample, metrics)

        return await score_all(samples, metrics, judged)


async def score_judged(judge: Judge, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
    """The requested metrics of one sample, read in ``judge``'s analysis of it."""
    if not (sample.answer or "").strip():
        return score_sample(sample, metrics)
    analysis = await judge.analyze(request_for(sample, ("refusal",)))
    if analysis.refusal not in KINDS:
        return score_sample(sample, metrics, note=f"the judge {judge.name} gave no reading")
    quote = analysis.refusal_quote or None
    reading = RefusalReading(
        analysis.refusal,  # type: ignore[arg-type]
        quote,
        quote if analysis.refusal == "partial" else None,
        quote,
    )
    method = {"method": "judge", **judge_ref(analysis.meta), "judge": judge.name}
    return score_sample(sample, metrics, reading=reading, method=method)


def score_sample(
    sample: Sample,
    metrics: Sequence[str],
    *,
    reading: RefusalReading | None = None,
    method: dict[str, Any] | None = None,
    note: str | None = None,
) -> dict[str, Outcome]:
    """The requested metrics of one sample, from ``reading`` (a judge's) or by the rules."""
    answer = sample.answer or ""
    if not answer.strip():
        empty = Score.undefined("The answer is empty: it neither answers nor refuses.")
        return {name: empty for name in metrics}
    if reading is None:
        reading = read_refusal(answer)
        method = {"method": METHOD if note is None else f"{METHOD}: {note}"}
    out: dict[str, Outcome] = {}
    if "answer_refusal" in metrics:
        out["answer_refusal"] = Score(
            reading.value, refusal_reason(reading), {"kind": reading.kind, **(method or {})}
        )
    if "answerability_accuracy" in metrics:
        out["answerability_accuracy"] = accuracy(reading, sample.is_answerable_label)
    return out


def refusal_reason(reading: RefusalReading) -> str:
    """Why ``answer_refusal`` is what it is, quoting the words that decided (and the language
    whose rules read them, when not English)."""
    quoted = cap_text(reading.sentence or "", 300)
    language = OTHER_LANGUAGES.get(reading.language or "")
    tail = "" if language is None else f" (read by the {language} rules)"
    if reading.kind == "refusal":
        return f'The answer declines ("{reading.refusal}"): "{quoted}"{tail}'
    if reading.kind == "partial" and reading.answered == reading.sentence:  # a judge's quote
        return (
            f'The answer declines but answers anyway: "{quoted}" Partial: 0.5, and answering '
            "in answerability_accuracy."
        )
    if reading.kind == "partial":
        return (
            f'The answer declines ("{reading.refusal}") but answers anyway ("{reading.answered}"): '
            f'"{quoted}"{tail} Partial: 0.5, and answering in answerability_accuracy.'
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
    """By rules with the offline judge (no judge is built); else in the judge's analysis."""
    judge = ctx.settings.judge
    if isinstance(judge, str) and judge.split(":", 1)[0] == "offline":
        return AnswerabilityFamily()
    return AnswerabilityFamily(judge_for(ctx, ("refusal",)))
