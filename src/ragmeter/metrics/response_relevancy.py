"""Family "response_relevancy": Ragas' answer relevancy, one shared analysis per sample.

The judge writes N questions (``Settings.response_relevancy_n``, default 3) that the answer
would answer and says whether the answer is noncommittal. The score is the mean cosine
similarity between the embedding of the user's question and those of the generated questions,
clipped at 0; a noncommittal answer scores 0 (a real score, with that reason). Embeddings of a
whole batch are computed in one call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.judges.base import Analysis
from ragmeter.metrics._judged import failure_message, judge_for, judge_ref, request_for, score_all
from ragmeter.metrics.base import Outcome, RunContext
from ragmeter.types import Failure, MetricSpec, Sample, Score

FAMILY = "response_relevancy"
NAME = "response_relevancy"

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name=NAME,
        family=FAMILY,
        requires=("question", "answer"),
        description="Mean cosine between the question and questions the answer would answer; "
        "0 for a noncommittal answer.",
        needs_judge=True,
    ),
)


class ResponseRelevancyFamily:
    def __init__(self, ctx: RunContext) -> None:
        n = ctx.settings.response_relevancy_n
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ConfigError(f"The 'response_relevancy_n' setting must be >= 1. Got {n!r}.")
        self.n = n
        self.judge = judge_for(ctx, ("questions",))
        self.embedder = ctx.embedder()

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        if set(metrics) - {NAME}:
            raise ValueError(f"The response_relevancy family has no metric(s) {sorted(metrics)}.")
        staged = await score_all(samples, metrics, self._analyze_one)
        pending = [
            (i, outcome[NAME])
            for i, outcome in enumerate(staged)
            if isinstance(outcome[NAME], _Pending)
        ]
        if pending:
            try:
                outcomes = await self._embedded([p for _, p in pending])
            except Exception:
                # A text the embedder rejects fails its own row, not the batch: row by row.
                outcomes = []
                for _, p in pending:
                    try:
                        outcomes.extend(await self._embedded([p]))
                    except Exception as exc:
                        message = f"Embedding failed: {failure_message(exc)}"
                        outcomes.append(Failure(NAME, message))
            for (i, _), outcome in zip(pending, outcomes, strict=True):
                staged[i] = {NAME: outcome}
        return staged

    async def _embedded(self, pending: Sequence[_Pending]) -> list[Outcome]:
        """Embed the question and generated questions of every pending row at once; score."""
        texts: list[str] = []
        for p in pending:
            texts.append(p.question)
            texts.extend(p.analysis.questions)
        vectors = await asyncio.to_thread(self.embedder.embed, texts)
        vectors = _normalised(np.asarray(vectors, dtype=np.float64), len(texts))
        outcomes: list[Outcome] = []
        row = 0
        for p in pending:
            count = 1 + len(p.analysis.questions)
            outcomes.append(p.score(vectors[row : row + count], self.embedder))
            row += count
        return outcomes

    async def _analyze_one(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Any]:
        for fld in ("question", "answer"):
            if getattr(sample, fld) is None:
                return {NAME: Failure(NAME, f"the sample has no {fld}", field=fld)}
        if not (sample.question or "").strip():
            return {NAME: Score.undefined("the question is empty")}
        if not (sample.answer or "").strip():
            return {NAME: Score.undefined("the answer is empty")}
        analysis = await self.judge.analyze(request_for(sample, ("questions",), self.n))
        if analysis.noncommittal is None or not analysis.questions:
            return {NAME: Failure(NAME, "The judge returned no questions or no noncommittal flag.")}
        details = {
            **judge_ref(analysis.meta),
            "questions": list(analysis.questions),
            "noncommittal": analysis.noncommittal,
        }
        if analysis.noncommittal:
            return {
                NAME: Score(0.0, reason="the judge found the answer noncommittal", details=details)
            }
        return {NAME: _Pending(sample.question or "", analysis, details)}


class _Pending:
    """A sample waiting for the batch's embeddings."""

    __slots__ = ("analysis", "details", "question")

    def __init__(self, question: str, analysis: Analysis, details: dict[str, Any]) -> None:
        self.question = question
        self.analysis = analysis
        self.details = details

    def score(self, vectors: np.ndarray, embedder: Any) -> Score:
        cosines = vectors[1:] @ vectors[0]
        mean = float(np.mean(cosines))
        details = {
            **self.details,
            "cosines": [round(float(c), 6) for c in cosines],
            "embedder": getattr(embedder, "name", type(embedder).__name__),
        }
        return Score(min(max(mean, 0.0), 1.0), details=details)


def _normalised(vectors: np.ndarray, n: int) -> np.ndarray:
    if vectors.ndim != 2 or vectors.shape[0] != n:
        raise ValueError(f"the embedder returned shape {vectors.shape} for {n} texts")
    if not np.all(np.isfinite(vectors)):
        raise ValueError("the embedder returned non-finite values")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("the embedder returned a zero vector")
    return vectors / norms


def build(ctx: RunContext) -> ResponseRelevancyFamily:
    return ResponseRelevancyFamily(ctx)
