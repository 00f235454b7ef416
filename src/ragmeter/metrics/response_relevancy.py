"""Family "response_relevancy": Ragas' answer relevancy, one shared analysis per sample.

With an LLM judge (Ragas' semantics, unchanged): the judge writes N questions
(``Settings.response_relevancy_n``, default 3) that the answer would answer and says whether
the answer is noncommittal. The score is the mean cosine similarity between the embedding of
the user's question and those of the generated questions, clipped at 0; a noncommittal answer
scores 0 (a real score, with that reason).

Offline (a judge whose analysis declares ``questions_method`` starting with ``"offline"``, such
as :class:`ragmeter.judges.offline.judge.OfflineJudge`, which cannot generate questions), the score
is the documented variant ``details["method"] == OFFLINE_METHOD`` (``"offline-typed-coverage"``):

    score = max(0, cos(question, whole answer)) * completeness

- ``cos(question, whole answer)`` stands for the cosine between the question and a question
  generated from the whole answer: it drops when the answer drifts off topic.
- ``completeness`` penalises incomplete answers. The question is cut into parts ("When was X
  founded and where is it based?" -> two parts, at "and" / "," before a wh-word or an
  auxiliary). A part whose wh-word sets an expected answer type (when -> a time, who -> a
  name, where -> a place, how many / what year... -> a number) is answered to the degree
  ``r = best cosine(part, answer sentence holding that type) / best cosine(part, any answer
  sentence)`` (0 when no sentence holds it); it counts ``0.5 + 0.5 * r``. Parts of other types
  ("what", "how", "why") count 1: their answers cannot be checked without a generator.
  ``completeness`` is the mean over parts, so it lies in [0.5, 1]. A type is held by a number or
  a capitalised name (for time: also month, weekday, "century"...) that the question lacks.
- noncommittal answers (by the offline judge's patterns: "I don't know", "have not been
  provided", "is currently unknown"...) score 0, as with an LLM judge.

The text heuristics (question parts, expected answer types, whether a sentence holds one)
live in :mod:`ragmeter.text.questions`, the part credits in
:mod:`ragmeter.scoring.typed_coverage`; this module is the metric's adapter.

On the 10 labelled WikiEval pairs this variant reaches 0.80 pairwise accuracy (the answer
sentences taken as questions reached 0.20; Ragas with GPT-3.5 reports 0.78 on all 50); see
``docs/validity.md``. Embeddings of a whole batch are computed in one call in both paths.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError, EndpointError, UnavailableError, failure_cause
from ragmeter.judges.base import Analysis
from ragmeter.metrics._judged import failure_message, judge_for, judge_ref, request_for, score_all
from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.metrics.progress import scored
from ragmeter.scoring.typed_coverage import part_credits
from ragmeter.text.questions import answer_sentences, question_parts
from ragmeter.types import Failure, MetricSpec, Sample, Score

FAMILY = "response_relevancy"
NAME = "response_relevancy"
#: ``details["method"]`` of scores computed with a judge that cannot generate questions.
OFFLINE_METHOD = (
    "offline-typed-coverage: cos(question, answer) x completeness of the question's parts "
    "by expected answer type; noncommittal by patterns"
)

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
        check_metrics("response_relevancy", metrics, (NAME,))
        # A row waiting for the batch's embeddings is not done: rows are reported scored
        # once they have their score (the others at once, the waiting ones after embedding).
        staged = await score_all(samples, metrics, self._analyze_one, report=False)
        pending = [
            (i, outcome[NAME])
            for i, outcome in enumerate(staged)
            if isinstance(outcome[NAME], _Pending | _OfflinePending)
        ]
        scored(len(samples) - len(pending))
        if pending:
            try:
                outcomes = await self._embedded([p for _, p in pending])
            except UnavailableError:
                raise  # the embedder's endpoint stops the run
            except Exception as exc:
                if _endpoint_failed(exc):
                    # No row would fare better alone: no reply, a reply past its cap, a 5xx
                    # after the retries. Each row failing on its own costs every row retries.
                    failed = _embedding_failure(exc)
                    outcomes = [failed for _ in pending]
                else:
                    # A text the embedder rejects fails its own row, not the batch: row by row.
                    outcomes = []
                    for _, p in pending:
                        try:
                            outcomes.extend(await self._embedded([p]))
                        except UnavailableError:
                            raise
                        except Exception as exc_one:
                            outcomes.append(_embedding_failure(exc_one))
            for (i, _), outcome in zip(pending, outcomes, strict=True):
                staged[i] = {NAME: outcome}
            scored(len(pending))
        return staged

    async def _embedded(self, pending: Sequence[_Pending | _OfflinePending]) -> list[Outcome]:
        """Embed the texts of every pending row at once; score each row."""
        texts: list[str] = []
        for p in pending:
            texts.extend(p.texts)
        vectors = await asyncio.to_thread(self.embedder.embed, texts)
        vectors = _normalised(np.asarray(vectors, dtype=np.float64), len(texts))
        outcomes: list[Outcome] = []
        row = 0
        for p in pending:
            count = len(p.texts)
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
        offline = str(analysis.meta.get("questions_method", "")).startswith("offline")
        if offline and analysis.noncommittal is not None and not analysis.questions:
            # The offline questions are the answer's sentences: an answer of punctuation alone
            # ("?", "...") has none, which is a property of the data, not a judge failure.
            return {NAME: Score.undefined("the answer has no sentence with a word in it")}
        if analysis.noncommittal is None or not analysis.questions:
            return {NAME: Failure(NAME, "The judge returned no questions or no noncommittal flag.")}
        details: dict[str, Any] = {
            **judge_ref(analysis.meta),
            "noncommittal": analysis.noncommittal,
        }
        if offline:
            details["method"] = OFFLINE_METHOD
        else:
            details["questions"] = list(analysis.questions)
        if analysis.noncommittal:
            return {
                NAME: Score(0.0, reason="the judge found the answer noncommittal", details=details)
            }
        if offline:
            return {NAME: _OfflinePending(sample.question or "", sample.answer or "", details)}
        return {NAME: _Pending(sample.question or "", analysis, details)}


class _Pending:
    """A sample waiting for the batch's embeddings."""

    __slots__ = ("analysis", "details", "question", "texts")

    def __init__(self, question: str, analysis: Analysis, details: dict[str, Any]) -> None:
        self.question = question
        self.analysis = analysis
        self.details = details
        self.texts = (question, *analysis.questions)

    def score(self, vectors: np.ndarray, embedder: Any) -> Score:
        cosines = vectors[1:] @ vectors[0]
        mean = float(np.mean(cosines))
        details = {
            **self.details,
            "cosines": [round(float(c), 6) for c in cosines],
            "embedder": getattr(embedder, "name", type(embedder).__name__),
        }
        n = len(cosines)
        reason = (
            f"Mean cosine {mean:.3f} between the question and {n} question"
            f"{'' if n == 1 else 's'} generated from the answer."
        )
        return Score(min(max(mean, 0.0), 1.0), reason, details)


class _OfflinePending:
    """A sample waiting for the batch's embeddings, scored by :data:`OFFLINE_METHOD`."""

    __slots__ = ("details", "parts", "question", "sentences", "texts")

    def __init__(self, question: str, answer: str, details: dict[str, Any]) -> None:
        self.question = question
        self.parts = question_parts(question)
        self.sentences = answer_sentences(answer)
        self.details = details
        # question, whole answer, the question's parts, the answer's sentences
        self.texts = (question, answer, *self.parts, *self.sentences)

    def score(self, vectors: np.ndarray, embedder: Any) -> Score:
        n_parts = len(self.parts)
        cosine = max(float(vectors[1] @ vectors[0]), 0.0)
        parts_v = vectors[2 : 2 + n_parts]
        sentences_v = vectors[2 + n_parts :]
        similarity = np.clip(sentences_v @ parts_v.T, 0.0, 1.0)  # sentences x parts
        credits, types = part_credits(self.question, self.parts, self.sentences, similarity)
        completeness = float(np.mean(credits))
        details = {
            **self.details,
            "cosine": round(cosine, 6),
            "completeness": round(completeness, 6),
            "question_parts": list(self.parts),
            "expected_types": types,
            "part_credits": [round(c, 6) for c in credits],
            "embedder": getattr(embedder, "name", type(embedder).__name__),
        }
        missed = [
            (part, kind)
            for part, kind, credit in zip(self.parts, types, credits, strict=True)
            if kind is not None and credit < 1.0
        ]
        reason = f"Cosine {cosine:.3f} of question and answer x completeness {completeness:.3f}"
        if missed:
            part, kind = missed[0]
            reason += f" (the answer does not clearly give the {kind} asked for in {part!r})."
        else:
            reason += "."
        return Score(min(max(cosine * completeness, 0.0), 1.0), reason, details)


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


def _endpoint_failed(exc: BaseException) -> bool:
    """Whether an embedder's endpoint failed the request as a whole (no reply, a reply past
    its cap, a 5xx or 429 after the retries), not one of its texts (a 4xx)."""
    if not isinstance(exc, EndpointError):
        return False
    return exc.status is None or not 400 <= exc.status < 500 or exc.status == 429


def _embedding_failure(exc: BaseException) -> Failure:
    return Failure(NAME, f"Embedding failed: {failure_message(exc)}", cause=failure_cause(exc))
