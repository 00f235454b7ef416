"""Context relevance family: Unitxt's question likelihood given each retrieved context.

Each context is scored by :class:`ragmeter.models.relevance.torch_scorer.QuestionLikelihood`: the
geometric mean of the probabilities a language model gives the question's tokens (and its
end token) when asked to ``Generate a question based on the given content: {context}``.

- ``context_relevance``: the best context's score (max over contexts), as Unitxt.
- ``context_relevance_at_k`` for K in 1, 3, 5: the mean score of the first K contexts in
  retrieval order (of all of them when fewer than K were retrieved).

All (question, context) pairs of a batch of samples are scored together; a pair's score
does not depend on the pairs it is scored with (see :mod:`ragmeter.models.relevance.runtime`).
Per-context scores are rounded to 6 decimals (a seq2seq model's float32 padded batches differ
in the last bits, about 1e-8).

Numerics (``Settings.relevance_dtype``): the offline default (a GGUF
model on onnxruntime) runs in int8 (``"auto"``; every weight matrix in int8, one pair per
call), measured against float32 on MS MARCO and WikiEval in docs/speed.md; ``"float32"`` gives
Unitxt's float32 numerics. The ``context_relevance`` details record the model and its numerics
(dtype, method), and the run record holds the same under ``models.context_relevance``. The
model is found in ``build``, so a missing model rejects the run before any work; it loads on
first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.metrics.base import Outcome, RunContext, check_metrics, in_chunks
from ragmeter.models.relevance.loader import load_question_likelihood
from ragmeter.models.relevance.runtime import QuestionScorer
from ragmeter.types import MetricSpec, Sample, Score

__all__ = ["SPECS", "ContextRelevanceFamily", "build"]

FAMILY = "context_relevance"
KS: tuple[int, ...] = (1, 3, 5)

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "context_relevance",
        FAMILY,
        ("question", "contexts"),
        "Best context's likelihood of evoking the question: exp(-mean token cross-entropy) of "
        "the question given 'Generate a question based on the given content: {context}' "
        "(Unitxt's perplexity context relevance, max over contexts).",
    ),
    *(
        MetricSpec(
            f"context_relevance_at_{k}",
            FAMILY,
            ("question", "contexts"),
            f"Mean context relevance of the first {k} retrieved contexts (all of them when "
            f"fewer than {k} were retrieved).",
        )
        for k in KS
    ),
)

NAMES: frozenset[str] = frozenset(spec.name for spec in SPECS)
_DECIMALS = 6


def _outcomes(
    scores: Sequence[float], metrics: Sequence[str], about: dict[str, Any]
) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    for name in metrics:
        if name == "context_relevance":
            best = max(range(len(scores)), key=lambda i: scores[i])
            n = len(scores)
            reason = (
                f"Context {best} of {n} makes the question most likely: geometric-mean token "
                f"probability {scores[best]:.3f}."
                if n > 1
                else f"The question's geometric-mean token probability given the context is "
                f"{scores[0]:.3f}."
            )
            out[name] = Score(
                max(scores),
                reason,
                details={**about, "context_scores": list(scores), "best_context": best},
            )
        else:
            k = int(name.rsplit("_", 1)[1])
            head = scores[:k]
            shown = ", ".join(f"{v:.3f}" for v in head)
            reason = f"Mean over the first {len(head)} of {len(scores)} contexts ({shown})."
            out[name] = Score(sum(head) / len(head), reason)
    return out


class ContextRelevanceFamily:
    """Scores the context-relevance metrics of a batch with one question-likelihood model."""

    def __init__(self, scorer: QuestionScorer) -> None:
        self.scorer = scorer
        self.scored = False

    def describe(self) -> dict[str, Any]:
        """The model and numerics behind this run's scores (the name alone before any pair
        was scored: describing the numerics loads the model)."""
        describe = getattr(self.scorer, "describe", None)
        if self.scored and callable(describe):
            return dict(describe())
        return {"model": getattr(self.scorer, "name", type(self.scorer).__name__)}

    def score_samples(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        """Synchronous core of :meth:`score_batch`: one model pass over every pair."""
        check_metrics("context_relevance", metrics, NAMES)
        contexts: list[str] = []
        questions: list[str] = []
        spans: list[tuple[int, int] | str] = []
        for sample in samples:
            question = sample.question or ""
            found = tuple(sample.contexts or ())
            if not question.strip():
                spans.append("The question is empty, so no context can evoke it.")
            elif not found:
                spans.append("No contexts were retrieved for this question.")
            else:
                spans.append((len(contexts), len(contexts) + len(found)))
                contexts.extend(found)
                questions.extend([question] * len(found))
        scores = [round(value, _DECIMALS) for value in self.scorer.score(contexts, questions)]
        self.scored = self.scored or bool(contexts)
        about: dict[str, Any] = {"model": self.scorer.name}
        numerics = getattr(self.scorer, "numerics", None)
        if contexts and callable(numerics):
            about.update(numerics())
        out: list[dict[str, Outcome]] = []
        for span in spans:
            if isinstance(span, str):
                out.append({name: Score.undefined(span) for name in metrics})
            else:
                out.append(_outcomes(scores[span[0] : span[1]], metrics, about))
        return out

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        return await in_chunks(self.score_samples, samples, metrics)


def build(ctx: RunContext) -> ContextRelevanceFamily:
    """Find ``ctx.settings.relevance_model``; raises ModelUnavailableError when it is missing.

    The numerics are ``ctx.settings.relevance_dtype`` (see
    :func:`~ragmeter.models.relevance.loader.load_question_likelihood`); the run record
    describes them (``ctx.models``).
    """
    settings = ctx.settings
    family = ContextRelevanceFamily(
        load_question_likelihood(settings.relevance_model, dtype=settings.relevance_dtype)
    )
    ctx.models[FAMILY] = family.describe
    return family
