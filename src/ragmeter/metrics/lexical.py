"""Lexical metrics family: Unitxt's token-overlap metrics on SQuAD-normalised tokens.

A batch is tokenised at once (:class:`~ragmeter.scoring.lexical.token_batch.TokenBatch`):
each text once, whatever metrics are asked for, and the shared token counts of every
(answer, context) and (answer, reference) pair come from one vectorised pass
(:func:`ragmeter.scoring.lexical.batch_common`). Scores are built from those counts by the
same functions the single-sample path uses, so both give identical scores, reasons and
details. A sample with a text the batch leaves out (a token holding a control character)
is scored on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.scoring import lexical as lx
from ragmeter.scoring.lexical.token_batch import TokenBatch
from ragmeter.types import MetricSpec, Sample, Score

__all__ = ["SPECS", "LexicalFamily", "build"]

FAMILY = "lexical"
#: Samples tokenised together: the arrays of a batch this size stay small enough to be
#: fast (2,000 of bench/lexical.py's samples take 49.5 ms in batches of 256, 73.4 ms at once).
BATCH_SAMPLES = 256

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
        "new_token_precision",
        FAMILY,
        ("question", "answer", "reference_answers"),
        "token_precision counting only words the question does not contain: share of the "
        "answer's new words found in the best reference answer.",
    ),
    MetricSpec(
        "new_token_recall",
        FAMILY,
        ("question", "answer", "reference_answers"),
        "token_recall counting only words the question does not contain: share of the best "
        "reference's new words found in the answer.",
    ),
    MetricSpec(
        "new_token_f1",
        FAMILY,
        ("question", "answer", "reference_answers"),
        "token_f1 counting only words the question does not contain.",
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

IntArray = npt.NDArray[np.int64]


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
    "new_token_precision": lambda t: lx.new_token_score(
        "precision", t.question, t.answer, t.references
    ),
    "new_token_recall": lambda t: lx.new_token_score("recall", t.question, t.answer, t.references),
    "new_token_f1": lambda t: lx.new_token_score("f1", t.question, t.answer, t.references),
}
_NEW_MEASURES: dict[str, lx.Measure] = {
    "new_token_precision": "precision",
    "new_token_recall": "recall",
    "new_token_f1": "f1",
}


_REFERENCE_MEASURES: dict[str, lx.Measure] = {
    "token_recall": "recall",
    "token_precision": "precision",
    "token_f1": "f1",
}
#: Metrics that look texts up in the answer's tokens.
_ANSWER_SIDE = frozenset(
    {"k_precision", *_REFERENCE_MEASURES, "exact_match", "answer_token_recall", *_NEW_MEASURES}
)


class LexicalFamily:
    """Scores the lexical metrics of a batch; stateless, cheap to build."""

    def score_sample(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
        """Every requested metric of one sample, sharing its normalised texts."""
        texts = _Texts(sample)
        return {name: _SCORERS[name](texts) for name in metrics}

    def score_samples(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        """Every requested metric of every sample, tokenised ``BATCH_SAMPLES`` at a time."""
        if not samples or not metrics:
            return [{} for _ in samples]
        out: list[dict[str, Outcome]] = []
        for start in range(0, len(samples), BATCH_SAMPLES):
            chunk = samples[start : start + BATCH_SAMPLES]
            out += _LexicalBatch(chunk, metrics).run(self.score_sample)
        return out

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        check_metrics("lexical", metrics, NAMES)
        return self.score_samples(samples, metrics)


class _LexicalBatch:
    """The texts of a batch laid out for :func:`ragmeter.scoring.lexical.batch_common`:
    answers, then questions, then each sample's contexts and references, so that every
    text looked up in the answers is in one consecutive run."""

    def __init__(self, samples: Sequence[Sample], metrics: Sequence[str]) -> None:
        self.samples = samples
        self.metrics = list(metrics)
        wanted = set(metrics)
        self.answer_side = bool(wanted & _ANSWER_SIDE)
        self.use_question = bool(
            wanted & {"answer_token_recall", "context_token_precision", *_NEW_MEASURES}
        )
        self.use_contexts = bool(wanted & {"k_precision", "context_token_precision"})
        self.use_references = bool(wanted & {*_REFERENCE_MEASURES, "exact_match", *_NEW_MEASURES})

    def run(
        self, alone: Callable[[Sample, Sequence[str]], dict[str, Outcome]]
    ) -> list[dict[str, Outcome]]:
        """Score every sample; ``alone`` scores a sample the batch left a text of out."""
        samples = self.samples
        n = len(samples)
        texts: list[str] = [s.answer or "" for s in samples] if self.answer_side else []
        question_at = len(texts)
        if self.use_question:
            texts += [s.question or "" for s in samples]
        # Each sample's block: contexts, then references.
        block_at = len(texts)
        no_texts = [0] * n
        context_counts = [len(s.contexts or ()) for s in samples] if self.use_contexts else no_texts
        reference_counts = (
            [len(s.reference_answers or ()) for s in samples] if self.use_references else no_texts
        )
        for sample in samples:
            if self.use_contexts:
                texts += sample.contexts or ()
            if self.use_references:
                texts += sample.reference_answers or ()
        batch = TokenBatch.of(texts)
        block_size = np.asarray(context_counts, dtype=np.int64)
        block_size += np.asarray(reference_counts, dtype=np.int64)
        block_start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(block_size, out=block_start[1:])
        block_start += block_at
        everyone = np.arange(n, dtype=np.int64)
        owner = np.repeat(everyone, block_size)

        lengths = batch.lengths.tolist()
        answer_common: list[int] = []
        question_common: list[int] = []
        if self.answer_side:
            # Questions (if any) and every block, looked up in the answers.
            lookups = np.arange(question_at, len(texts), dtype=np.int64)
            lookup_owners = owner
            if self.use_question:
                lookup_owners = np.concatenate([everyone, owner])
            answer_common = lx.batch_common(batch, everyone, lookups, lookup_owners).tolist()
            if self.use_question:
                question_common, answer_common = answer_common[:n], answer_common[n:]
        context_common: list[int] = []
        if "context_token_precision" in self.metrics:
            contexts = _context_positions(block_start[:-1], context_counts)
            context_common = lx.batch_common(
                batch, everyone + question_at, contexts, np.repeat(everyone, context_counts)
            ).tolist()
            context_common = _scatter(context_common, block_start, context_counts, block_at)

        ok = batch.ok.tolist()
        starts = block_start.tolist()
        # Where each sample's contexts and references sit, in ``answer_common`` (``at``)
        # and in the batch (``first``).
        spans = [
            (starts[i] - block_at, starts[i], context_counts[i], reference_counts[i])
            for i in range(n)
        ]
        columns: list[list[Outcome]] = []
        for name in self.metrics:
            if name == "k_precision":
                score = lx.k_precision_from_counts
                column = [
                    score(answer_common[at : at + c], lengths[i])
                    for i, (at, _, c, _) in enumerate(spans)
                ]
            elif name in _REFERENCE_MEASURES:
                measure, score = _REFERENCE_MEASURES[name], lx.reference_score_from_counts
                column = [
                    score(
                        measure,
                        answer_common[at + c : at + c + r],
                        lengths[i],
                        lengths[first + c : first + c + r],
                    )
                    for i, (at, first, c, r) in enumerate(spans)
                ]
            elif name == "exact_match":
                column = [
                    self._exact_match(
                        batch, i, first + c, answer_common[at + c : at + c + r], lengths
                    )
                    for i, (at, first, c, r) in enumerate(spans)
                ]
            elif name in _NEW_MEASURES:
                # The batch's tokens, so no text is normalised twice.
                column = [
                    lx.new_token_score(
                        _NEW_MEASURES[name],
                        batch.tokens(question_at + i) or [],
                        batch.tokens(i) or [],
                        [batch.tokens(k) or [] for k in range(first + c, first + c + r)],
                    )
                    for i, (_, first, c, r) in enumerate(spans)
                ]
            elif name == "answer_token_recall":
                column = [
                    lx.answer_token_recall_from_counts(common, lengths[question_at + i])
                    for i, common in enumerate(question_common)
                ]
            else:  # context_token_precision
                column = [
                    lx.context_token_precision_from_counts(
                        context_common[at : at + c], lengths[question_at + i]
                    )
                    for i, (at, _, c, _) in enumerate(spans)
                ]
            columns.append(column)
        out = [dict(zip(self.metrics, row, strict=True)) for row in zip(*columns, strict=True)]
        if not all(ok):
            self._score_left_out_alone(out, ok, starts, question_at, alone)
        return out

    def _score_left_out_alone(
        self,
        out: list[dict[str, Outcome]],
        ok: list[bool],
        starts: list[int],
        question_at: int,
        alone: Callable[[Sample, Sequence[str]], dict[str, Outcome]],
    ) -> None:
        """Score alone, in ``out``, each sample with a text the batch left out (rare)."""
        for i, sample in enumerate(self.samples):
            first, last = starts[i], starts[i + 1]
            if (
                not all(ok[first:last])
                or (self.answer_side and not ok[i])
                or (self.use_question and not ok[question_at + i])
            ):
                out[i] = alone(sample, self.metrics)

    @staticmethod
    def _exact_match(
        batch: TokenBatch, answer: int, first: int, commons: list[int], lengths: list[int]
    ) -> Score:
        """The first reference whose tokens equal the answer's: only a reference with as
        many tokens, all shared, can; those few are compared token by token."""
        size = lengths[answer]
        for index, common in enumerate(commons):
            if (
                common == size
                and lengths[first + index] == size
                and batch.tokens(first + index) == batch.tokens(answer)
            ):
                return lx.exact_match_from_index(index, references=len(commons))
        return lx.exact_match_from_index(None, references=len(commons))


def _context_positions(block_start: IntArray, context_counts: list[int]) -> IntArray:
    """Text indices of every context, sample after sample."""
    counts = np.asarray(context_counts, dtype=np.int64)
    ends = np.cumsum(counts)
    out = np.arange(int(ends[-1]) if len(ends) else 0, dtype=np.int64)
    return out + np.repeat(block_start - (ends - counts), counts)


def _scatter(
    values: list[int], block_start: IntArray, context_counts: list[int], block_at: int
) -> list[int]:
    """Context values laid out like the blocks (references' places left at 0)."""
    out = [0] * int(block_start[-1] - block_at)
    k = 0
    for start, count in zip(block_start[:-1].tolist(), context_counts, strict=True):
        at = start - block_at
        out[at : at + count] = values[k : k + count]
        k += count
    return out


def build(ctx: RunContext) -> LexicalFamily:
    """The lexical family; needs no model, so ``ctx`` is not read."""
    del ctx
    return LexicalFamily()
