"""Lexical metrics family: Unitxt's token-overlap metrics on SQuAD-normalised tokens.

Each text of a sample is normalised once, whatever metrics are asked for, and its tokens
are shared by all of them. The arithmetic lives in :mod:`ragmeter.scoring.lexical`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragmeter.errors import ConfigError
from ragmeter.metrics.base import Outcome, RunContext
from ragmeter.scoring import lexical as lx
from ragmeter.types import MetricSpec, Sample, Score

__all__ = ["SPECS", "LexicalFamily", "build"]

FAMILY = "lexical"

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "k_precision",
        FAMILY,
        ("answer", "contexts"),
        "Share of answer tokens found in the best single context (Unitxt's token "
        "K-Precision faithfulness).",
    ),
    MetricSpec(
        "token_recall",
        FAMILY,
        ("answer", "reference_answers"),
        "Share of reference-answer tokens found in the answer, best reference (Unitxt's "
        "token-recall answer correctness).",
    ),
    MetricSpec(
        "token_precision",
        FAMILY,
        ("answer", "reference_answers"),
        "Share of answer tokens found in the best reference answer.",
    ),
    MetricSpec(
        "token_f1",
        FAMILY,
        ("answer", "reference_answers"),
        "Token F1 of the answer against the best reference answer (SQuAD).",
    ),
    MetricSpec(
        "exact_match",
        FAMILY,
        ("answer", "reference_answers"),
        "1 when the normalised answer equals a normalised reference answer (SQuAD).",
    ),
    MetricSpec(
        "context_token_precision",
        FAMILY,
        ("question", "contexts"),
        "Share of question tokens found in the best single context (Unitxt's "
        "context_relevance.token_precision).",
    ),
    MetricSpec(
        "answer_token_recall",
        FAMILY,
        ("question", "answer"),
        "Share of question tokens found in the answer (Unitxt's answer_relevance.token_recall).",
    ),
)

NAMES: frozenset[str] = frozenset(spec.name for spec in SPECS)


class _Texts:
    """The normalised texts of one sample, each computed on first use, then shared."""

    __slots__ = ("_answer", "_contexts", "_question", "_references", "sample")

    def __init__(self, sample: Sample) -> None:
        self.sample = sample
        self._answer: lx.Bag | None = None
        self._question: lx.Bag | None = None
        self._contexts: list[lx.Tokens] | None = None
        self._references: list[lx.Tokens] | None = None

    @property
    def answer(self) -> lx.Bag:
        if self._answer is None:
            self._answer = lx.Bag.of(self.sample.answer or "")
        return self._answer

    @property
    def question(self) -> lx.Bag:
        if self._question is None:
            self._question = lx.Bag.of(self.sample.question or "")
        return self._question

    @property
    def contexts(self) -> list[lx.Tokens]:
        if self._contexts is None:
            self._contexts = [lx.Tokens.of(text) for text in self.sample.contexts or ()]
        return self._contexts

    @property
    def references(self) -> list[lx.Tokens]:
        if self._references is None:
            self._references = [lx.Tokens.of(text) for text in self.sample.reference_answers or ()]
        return self._references


_SCORERS: dict[str, Callable[[_Texts], Score]] = {
    "k_precision": lambda t: lx.k_precision(t.answer, t.contexts),
    "token_recall": lambda t: lx.token_recall(t.answer, t.references),
    "token_precision": lambda t: lx.token_precision(t.answer, t.references),
    "token_f1": lambda t: lx.token_f1(t.answer, t.references),
    "exact_match": lambda t: lx.exact_match(t.answer, t.references),
    "context_token_precision": lambda t: lx.context_token_precision(t.question, t.contexts),
    "answer_token_recall": lambda t: lx.answer_token_recall(t.question.tokens, t.answer),
}


class LexicalFamily:
    """Scores the lexical metrics of a batch; stateless, cheap to build."""

    def score_sample(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
        """Every requested metric of one sample, sharing its normalised texts."""
        texts = _Texts(sample)
        return {name: _SCORERS[name](texts) for name in metrics}

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        unknown = [name for name in metrics if name not in NAMES]
        if unknown:
            raise ConfigError(
                f"The lexical family has no metric {', '.join(map(repr, unknown))}. "
                f"It has: {', '.join(sorted(NAMES))}."
            )
        score = self.score_sample
        return [score(sample, metrics) for sample in samples]


def build(ctx: RunContext) -> LexicalFamily:
    """The lexical family; needs no model, so ``ctx`` is not read."""
    del ctx
    return LexicalFamily()
