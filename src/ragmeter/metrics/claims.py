"""Family "claims": RAGChecker's claim metrics from one claim store per sample.

Per sample, at most two judge requests: one *analyze* (claims of the answer and of each
reference, shared with the other judge families) and one *verify* (each answer claim against
each context and the references; each reference claim against each context and the answer).
Only the parts the requested metrics need are asked for. Every metric is then a pure function
of the resulting matrices (:mod:`ragmeter.scoring.claims`).

With several reference answers, an answer claim is correct when any reference entails it,
reference claims are pooled for context relevance, context precision (Ragas' and
RAGChecker's), context claim recall and context claim utilization, and ``claim_recall`` (and
the recall inside ``claim_f1``) is the best over the references.

Two names are Ragas' and RAGChecker's at once, with different formulas: ``context_precision``
and ``context_utilization`` are Ragas' (average precision over the ranked contexts of a
per-context verdict, here read off the claim verdicts), and RAGChecker's are
``context_claim_precision`` and ``context_claim_utilization``
(:data:`ragmeter.metrics.registry.CHANGED_MEANING` says so to runs recorded before).

An answer with no claims leaves the answer-claim metrics undefined; when it only evades or
refuses (the judge flags it noncommittal, or its text matches
:func:`~ragmeter.judges.claim_split.is_noncommittal`, the patterns ``response_relevancy``
uses) the reason says so (``NONCOMMITTAL_ANSWER``) instead of "the answer has no claims".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judges.base import Analysis, ClaimBlock, Verification, Want, answer_premise
from ragmeter.judges.claim_split import is_noncommittal
from ragmeter.metrics._judged import judge_for, judge_ref, request_for, score_all
from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.scoring import claims as C
from ragmeter.types import Failure, MetricSpec, Sample, Score

FAMILY = "claims"

_ANS_CTX = ("answer", "contexts", "reference_answers")


def _spec(name: str, requires: tuple[str, ...], description: str, *, lower: bool = False):
    return MetricSpec(
        name=name,
        family=FAMILY,
        requires=requires,
        description=description,
        higher_is_better=not lower,
        optional=("question",),
        needs_judge=True,
    )


SPECS: tuple[MetricSpec, ...] = (
    _spec(
        "noise_sensitivity_relevant",
        _ANS_CTX,
        "Share of answer claims that are wrong and entailed by a relevant context "
        "(lower is better).",
        lower=True,
    ),
    _spec(
        "noise_sensitivity_irrelevant",
        _ANS_CTX,
        "Share of answer claims that are wrong and entailed only by irrelevant contexts "
        "(lower is better).",
        lower=True,
    ),
    _spec("faithfulness", ("answer", "contexts"), "Share of answer claims entailed by a context."),
    _spec(
        "faithfulness_support",
        ("answer", "contexts"),
        "Graded faithfulness: mean over answer claims of the judge's support that the best "
        "context entails the claim (the offline verifier's calibrated probability; equals "
        "faithfulness with a judge that gives only verdicts).",
    ),
    _spec(
        "claim_precision",
        ("answer", "reference_answers"),
        "Share of answer claims the reference entails.",
    ),
    _spec(
        "claim_precision_support",
        ("answer", "reference_answers"),
        "Graded claim precision: mean over answer claims of the judge's support that the "
        "reference entails the claim (the offline verifier's calibrated probability; equals "
        "claim_precision with a judge that gives only verdicts).",
    ),
    _spec(
        "claim_recall",
        ("answer", "reference_answers"),
        "Share of reference claims the answer entails.",
    ),
    _spec(
        "claim_f1", ("answer", "reference_answers"), "Harmonic mean of claim precision and recall."
    ),
    _spec(
        "context_utilization",
        ("answer", "contexts"),
        "Ragas' context utilization: average precision over the ranked contexts, a context "
        "counting as used when it entails an answer claim (RAGChecker's context_utilization "
        "is context_claim_utilization).",
    ),
    _spec(
        "context_claim_utilization",
        _ANS_CTX,
        "RAGChecker's context_utilization: of the reference claims found in the contexts, the "
        "share the answer states.",
    ),
    _spec(
        "hallucination",
        _ANS_CTX,
        "Share of answer claims that are wrong and entailed by no context (lower is better).",
        lower=True,
    ),
    _spec(
        "self_knowledge",
        _ANS_CTX,
        "Share of answer claims that are correct but entailed by no context (lower is better).",
        lower=True,
    ),
    _spec(
        "context_precision",
        ("contexts", "reference_answers"),
        "Ragas' context precision: average precision over the ranked contexts, a context "
        "counting as useful when it entails a reference claim (RAGChecker's context_precision "
        "is context_claim_precision).",
    ),
    _spec(
        "context_claim_precision",
        ("contexts", "reference_answers"),
        "RAGChecker's context_precision: share of contexts that entail at least one reference "
        "claim, whatever their rank.",
    ),
    _spec(
        "context_claim_recall",
        ("contexts", "reference_answers"),
        "Share of reference claims entailed by at least one context (retriever recall).",
    ),
)

_NAMES = frozenset(s.name for s in SPECS)
_NS = {"noise_sensitivity_relevant", "noise_sensitivity_irrelevant"}
_NEEDS_ANSWER_CLAIMS = _NAMES - {
    "context_precision",
    "context_claim_precision",
    "context_claim_recall",
}
_NEEDS_REFERENCE_CLAIMS = _NS | {
    "claim_recall",
    "claim_f1",
    "context_claim_utilization",
    "context_precision",
    "context_claim_precision",
    "context_claim_recall",
}
_ANSWER_VS_CONTEXTS = _NS | {
    "faithfulness",
    "faithfulness_support",
    "hallucination",
    "self_knowledge",
    "context_utilization",
}
_ANSWER_VS_REFERENCES = _NS | {
    "claim_precision",
    "claim_precision_support",
    "claim_f1",
    "hallucination",
    "self_knowledge",
}
_REFERENCE_VS_CONTEXTS = _NS | {
    "context_claim_utilization",
    "context_precision",
    "context_claim_precision",
    "context_claim_recall",
}
_REFERENCE_VS_ANSWER = {"claim_recall", "claim_f1", "context_claim_utilization"}
_REQUIRES = {s.name: s.requires for s in SPECS}


@dataclass(frozen=True, slots=True)
class _Plan:
    answer_claims: bool
    reference_claims: bool
    answer_vs_contexts: bool
    answer_vs_references: bool
    reference_vs_contexts: bool
    reference_vs_answer: bool

    @classmethod
    def for_metrics(cls, names: set[str]) -> _Plan:
        return cls(
            answer_claims=bool(names & _NEEDS_ANSWER_CLAIMS),
            reference_claims=bool(names & _NEEDS_REFERENCE_CLAIMS),
            answer_vs_contexts=bool(names & _ANSWER_VS_CONTEXTS),
            answer_vs_references=bool(names & _ANSWER_VS_REFERENCES),
            reference_vs_contexts=bool(names & _REFERENCE_VS_CONTEXTS),
            reference_vs_answer=bool(names & _REFERENCE_VS_ANSWER),
        )

    def wants(self) -> tuple[Want, ...]:
        out: list[Want] = []
        if self.answer_claims:
            out.append("answer_claims")
        if self.reference_claims:
            out.append("reference_claims")
        return tuple(out)


def _empty_field_reason(name: str, sample: Sample) -> str | None:
    for fld in _REQUIRES[name]:
        value = getattr(sample, fld)
        if value is None:
            return None  # the runner never sends this; answered below as a failure
        if fld == "contexts" and len(value) == 0:
            return "no contexts were retrieved"
        if fld == "reference_answers" and len(value) == 0:
            return "no reference answers were given"
    return None


def _support_matrix(
    verification: Verification, index: int, verdicts: tuple[tuple[bool, ...], ...]
) -> tuple[tuple[tuple[float, ...], ...], str]:
    """The judge's graded support for block ``index`` when it gives one that fits the
    verdicts' shape (``meta["support"]``, values in [0, 1]); else the verdicts as 0 / 1."""
    support = (verification.meta or {}).get("support")
    try:
        rows = tuple(tuple(float(x) for x in row) for row in support[index])
    except (TypeError, IndexError, KeyError, ValueError):
        rows = None
    if (
        rows is not None
        and len(rows) == len(verdicts)
        and all(len(r) == len(v) for r, v in zip(rows, verdicts, strict=True))
        and all(0.0 <= x <= 1.0 for r in rows for x in r)
    ):
        return rows, "judge support"
    return tuple(tuple(float(x) for x in row) for row in verdicts), "verdicts (0/1)"


def _check_matrix(matrix: Any, block: ClaimBlock, what: str) -> tuple[tuple[bool, ...], ...]:
    rows = tuple(tuple(bool(x) for x in row) for row in matrix)
    if len(rows) != len(block.claims) or any(len(r) != len(block.premises) for r in rows):
        raise ValueError(
            f"The judge's verification of {what} is misaligned: expected {len(block.claims)} "
            f"rows of {len(block.premises)} verdicts, got {[len(r) for r in rows]}."
        )
    return rows


class ClaimsFamily:
    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.judge = judge_for(ctx, ("answer_claims", "reference_claims"))

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        check_metrics("claims", metrics, _NAMES)
        return await score_all(samples, metrics, self._score_one)

    async def _score_one(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        active: set[str] = set()
        for name in metrics:
            missing = [f for f in _REQUIRES[name] if getattr(sample, f) is None]
            if missing:
                out[name] = Failure(name, f"the sample has no {missing[0]}", field=missing[0])
                continue
            reason = _empty_field_reason(name, sample)
            if reason is not None:
                out[name] = Score.undefined(reason)
                continue
            active.add(name)
        if not active:
            return out
        plan = _Plan.for_metrics(active)
        analysis = await self.judge.analyze(request_for(sample, plan.wants()))
        store = await self._verify(sample, plan, analysis)
        for name in active:
            out[name] = _metric(name, store)
        return out

    async def _verify(self, sample: Sample, plan: _Plan, analysis: Analysis) -> _Store:
        contexts = tuple(sample.contexts or ())
        references = tuple(sample.reference_answers or ())
        answer_claims = tuple(analysis.answer_claims) if plan.answer_claims else ()
        reference_claims: tuple[tuple[str, ...], ...] = ()
        if plan.reference_claims:
            reference_claims = tuple(tuple(c) for c in analysis.reference_claims)
            if len(reference_claims) != len(references):
                raise ValueError(
                    f"The judge returned claims for {len(reference_claims)} reference answers; "
                    f"the sample has {len(references)}."
                )
        question = sample.question
        premises_a = (contexts if plan.answer_vs_contexts else ()) + (
            tuple(answer_premise(question, r) for r in references)
            if plan.answer_vs_references
            else ()
        )
        premises_r = (contexts if plan.reference_vs_contexts else ()) + (
            (answer_premise(question, sample.answer or ""),) if plan.reference_vs_answer else ()
        )
        blocks = [ClaimBlock(answer_claims, premises_a)]
        blocks += [ClaimBlock(claims, premises_r) for claims in reference_claims]
        verification: Verification = await self.judge.verify(blocks)
        if len(verification.matrices) != len(blocks):
            raise ValueError(
                f"The judge returned {len(verification.matrices)} verification matrices for "
                f"{len(blocks)} claim blocks."
            )
        a = _check_matrix(verification.matrices[0], blocks[0], "the answer claims")
        k = len(contexts) if plan.answer_vs_contexts else 0
        support, support_source = _support_matrix(verification, 0, a)
        store = _Store(
            n_contexts=len(contexts),
            answer_claims=answer_claims,
            answer_in_contexts=tuple(row[:k] for row in a) if plan.answer_vs_contexts else None,
            answer_correct=tuple(any(row[k:]) for row in a) if plan.answer_vs_references else None,
            reference_claims=reference_claims,
            meta={
                "analyze": judge_ref(analysis.meta),
                "verify": judge_ref(verification.meta),
            },
            answer_support_in_contexts=(
                tuple(row[:k] for row in support) if plan.answer_vs_contexts else None
            ),
            answer_support_correct=(
                tuple(max(row[k:], default=0.0) for row in support)
                if plan.answer_vs_references
                else None
            ),
            support_source=support_source,
            noncommittal=plan.answer_claims
            and not answer_claims
            and (analysis.noncommittal is True or is_noncommittal(sample.answer or "")),
        )
        kr = len(contexts) if plan.reference_vs_contexts else 0
        for r, block in enumerate(blocks[1:]):
            m = _check_matrix(verification.matrices[r + 1], block, f"reference {r + 1}'s claims")
            store.reference_in_contexts.append(
                tuple(row[:kr] for row in m) if plan.reference_vs_contexts else None
            )
            store.reference_in_answer.append(
                tuple(row[kr] for row in m) if plan.reference_vs_answer else None
            )
        return store


@dataclass(slots=True)
class _Store:
    n_contexts: int
    answer_claims: tuple[str, ...]
    answer_in_contexts: tuple[tuple[bool, ...], ...] | None
    answer_correct: tuple[bool, ...] | None
    reference_claims: tuple[tuple[str, ...], ...]
    meta: dict[str, Any]
    answer_support_in_contexts: tuple[tuple[float, ...], ...] | None = None
    answer_support_correct: tuple[float, ...] | None = None
    support_source: str = "verdicts (0/1)"
    #: The answer has no claims because it only evades or refuses.
    noncommittal: bool = False
    reference_in_contexts: list[tuple[tuple[bool, ...], ...] | None] = field(default_factory=list)
    reference_in_answer: list[tuple[bool, ...] | None] = field(default_factory=list)

    def pooled_reference_in_contexts(self) -> tuple[tuple[bool, ...], ...]:
        return tuple(row for m in self.reference_in_contexts if m is not None for row in m)

    def pooled_reference_in_answer(self) -> tuple[bool, ...]:
        return tuple(x for v in self.reference_in_answer if v is not None for x in v)

    def best_reference_in_answer(self) -> tuple[bool, ...]:
        """The reference-in-answer flags of the reference with the highest claim recall
        (the first on ties); empty when no reference has claims."""
        best: tuple[bool, ...] = ()
        best_value = -1.0
        for flags in self.reference_in_answer:
            value = C.claim_recall(flags or ()).value
            if value is not None and value > best_value:
                best, best_value = flags or (), value
        return best

    def best_of_note(self, score: Score) -> Score:
        """``score`` with a note on its reason when the recall is the best of several
        references."""
        n = len(self.reference_in_answer)
        if score.value is None or n < 2:
            return score
        return Score(score.value, reason=f"{score.reason} Recall is the best of {n} references.")

    def answer_details(self) -> list[dict[str, Any]]:
        rows = []
        for i, claim in enumerate(self.answer_claims):
            item: dict[str, Any] = {"claim": claim}
            if self.answer_correct is not None:
                item["correct"] = self.answer_correct[i]
            if self.answer_in_contexts is not None:
                item["contexts"] = [j for j, e in enumerate(self.answer_in_contexts[i]) if e]
            rows.append(item)
        return rows

    def reference_details(self) -> list[list[dict[str, Any]]]:
        out = []
        for r, claims in enumerate(self.reference_claims):
            in_ctx = self.reference_in_contexts[r]
            in_ans = self.reference_in_answer[r]
            rows = []
            for i, claim in enumerate(claims):
                item: dict[str, Any] = {"claim": claim}
                if in_ans is not None:
                    item["in_answer"] = in_ans[i]
                if in_ctx is not None:
                    item["contexts"] = [j for j, e in enumerate(in_ctx[i]) if e]
                rows.append(item)
            out.append(rows)
        return out


def _metric(name: str, s: _Store) -> Score:
    ref_ctx = s.pooled_reference_in_contexts()
    if name in _NS:
        score = C.noise_sensitivity(
            answer_correct=s.answer_correct or (),
            answer_in_contexts=s.answer_in_contexts or (),
            reference_in_contexts=ref_ctx,
            mode="relevant" if name == "noise_sensitivity_relevant" else "irrelevant",
        )
        if ref_ctx:
            relevant = C.relevant_contexts(ref_ctx, s.n_contexts)
            extra: dict[str, Any] = {"relevant_contexts": [j for j, r in enumerate(relevant) if r]}
        else:
            extra = {}
        return _with(score, s, answer=True, reference=True, **extra)
    if name == "faithfulness":
        return _with(C.faithfulness(s.answer_in_contexts or ()), s, answer=True)
    if name == "faithfulness_support":
        rows = s.answer_support_in_contexts or ()
        score = C.faithfulness_support(rows)
        best = [round(max(r), 4) if r else None for r in rows]
        score = _verdicts_note(score, s)
        return _with(score, s, answer=True, support=s.support_source, claim_support=best)
    if name == "claim_precision":
        return _with(C.claim_precision(s.answer_correct or ()), s, answer=True)
    if name == "claim_precision_support":
        values = s.answer_support_correct or ()
        score = C.claim_precision_support(values)
        claim_support = [round(v, 4) for v in values]
        score = _verdicts_note(score, s)
        return _with(score, s, answer=True, support=s.support_source, claim_support=claim_support)
    if name == "claim_recall":
        score = s.best_of_note(C.claim_recall(s.best_reference_in_answer()))
        return _with(score, s, reference=True)
    if name == "claim_f1":
        score = C.claim_f1(s.answer_correct or (), s.best_reference_in_answer())
        return _with(s.best_of_note(score), s, answer=True, reference=True)
    if name == "context_utilization":
        used = s.answer_in_contexts or ()
        score = C.context_utilization(used, s.n_contexts)
        return _with(score, s, answer=True)
    if name == "context_claim_utilization":
        score = C.context_claim_utilization(ref_ctx, s.pooled_reference_in_answer())
        return _with(score, s, reference=True)
    if name == "hallucination":
        score = C.hallucination(s.answer_correct or (), s.answer_in_contexts or ())
        return _with(score, s, answer=True)
    if name == "self_knowledge":
        score = C.self_knowledge(s.answer_correct or (), s.answer_in_contexts or ())
        return _with(score, s, answer=True)
    if name == "context_precision":
        return _with(C.context_precision(ref_ctx, s.n_contexts), s, reference=True)
    if name == "context_claim_precision":
        return _with(C.context_claim_precision(ref_ctx, s.n_contexts), s, reference=True)
    if name == "context_claim_recall":
        return _with(C.context_claim_recall(ref_ctx), s, reference=True)
    raise ValueError(f"Unknown claim metric {name!r}.")


def _verdicts_note(score: Score, s: _Store) -> Score:
    """Say so when the supports are the judge's 0/1 verdicts rather than graded support."""
    if score.value is None or s.support_source == "judge support":
        return score
    return Score(score.value, reason=f"{score.reason} The judge gave verdicts only (0/1).")


def _with(score: Score, s: _Store, *, answer: bool = False, reference: bool = False, **extra: Any):
    if score.value is None and score.reason == C.NO_ANSWER_CLAIMS and s.noncommittal:
        score = Score.undefined(C.NONCOMMITTAL_ANSWER)
    details: dict[str, Any] = dict(s.meta)
    if answer:
        details["answer_claims"] = s.answer_details()
    if reference:
        details["reference_claims"] = s.reference_details()
    details.update(extra)
    return Score(score.value, reason=score.reason, details=details)


def build(ctx: RunContext) -> ClaimsFamily:
    return ClaimsFamily(ctx)
