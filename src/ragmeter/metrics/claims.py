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
:func:`~ragmeter.judges.offline.claim_split.is_noncommittal`, the patterns ``response_relevancy``
uses) the reason says so (``NONCOMMITTAL_ANSWER``) instead of "the answer has no claims".

Each claim in the details carries ``evidence`` when the judge gives more than the verdict
(:mod:`ragmeter.metrics.claim_evidence`: the premises the verdict rests on, spans, support,
what decided, whether uncertain). An uncertain verdict counts as the judge decided; each
defined score's details give ``verdict_count`` and ``uncertain_verdicts`` (when the judge says
which are uncertain) and its reason says how many were. The reference-based metrics' reasons
say when the references are much shorter than the answer
(:mod:`ragmeter.scoring.reference_length`; details ``short_reference``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judges.base import Analysis, ClaimBlock, Premise, Verification, Want
from ragmeter.judges.offline.claim_split import is_noncommittal
from ragmeter.metrics._judged import judge_for, judge_ref, request_for, score_all
from ragmeter.metrics.base import Outcome, RunContext, check_metrics
from ragmeter.metrics.claim_evidence import block_cells, relation
from ragmeter.metrics.claim_specs import SPECS
from ragmeter.scoring import claims as C
from ragmeter.scoring.reference_length import SHORT_REFERENCE_NOTE, reference_much_shorter
from ragmeter.types import Failure, Sample, Score

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

#: The verdicts each metric rests on, by (whose claims, against what): the uncertain ones
#: among them are counted in its details and reason.
_RELATIONS: dict[str, tuple[tuple[str, str], ...]] = {
    name: tuple(
        rel
        for rel, names in (
            (("answer", "contexts"), _ANSWER_VS_CONTEXTS),
            (("answer", "references"), _ANSWER_VS_REFERENCES),
            (("reference", "contexts"), _REFERENCE_VS_CONTEXTS),
            (("reference", "answer"), _REFERENCE_VS_ANSWER),
        )
        if name in names
    )
    for name in _NAMES
}
#: Metrics that read the reference answers as what is correct: their reasons say so when the
#: references are much shorter than the answer (:mod:`ragmeter.scoring.reference_length`).
_REFERENCE_BASED = _NS | {
    "claim_precision",
    "claim_precision_support",
    "claim_recall",
    "claim_f1",
    "hallucination",
    "self_knowledge",
}


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
        asked = ctx.requested & _NAMES or _NAMES
        self.judge = judge_for(ctx, _Plan.for_metrics(set(asked)).wants())

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
        read = tuple(map(Premise, contexts))
        premises_a = (read if plan.answer_vs_contexts else ()) + (
            tuple(Premise(r, question) for r in references) if plan.answer_vs_references else ()
        )
        premises_r = (read if plan.reference_vs_contexts else ()) + (
            (Premise(sample.answer or "", question),) if plan.reference_vs_answer else ()
        )
        blocks = [ClaimBlock(answer_claims, premises_a, question=question)]
        blocks += [ClaimBlock(claims, premises_r, question=question) for claims in reference_claims]
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
            short_reference=bool(references)
            and reference_much_shorter(sample.answer or "", references),
        )
        cells = block_cells(
            verification,
            0,
            blocks[0],
            support=support if support_source == "judge support" else None,
        )
        for verdicts, row in zip(a, cells, strict=True):
            found = {}
            if plan.answer_vs_contexts:
                found["contexts"] = relation(verdicts[:k], row[:k], range(k))
            if plan.answer_vs_references:
                found["references"] = relation(verdicts[k:], row[k:], range(len(references)))
            store.answer_evidence.append({key: v for key, v in found.items() if v is not None})
        kr = len(contexts) if plan.reference_vs_contexts else 0
        for r, block in enumerate(blocks[1:]):
            m = _check_matrix(verification.matrices[r + 1], block, f"reference {r + 1}'s claims")
            store.reference_in_contexts.append(
                tuple(row[:kr] for row in m) if plan.reference_vs_contexts else None
            )
            store.reference_in_answer.append(
                tuple(row[kr] for row in m) if plan.reference_vs_answer else None
            )
            r_support, r_source = _support_matrix(verification, r + 1, m)
            r_cells = block_cells(
                verification,
                r + 1,
                block,
                support=r_support if r_source == "judge support" else None,
            )
            claims_evidence = []
            for verdicts, row in zip(m, r_cells, strict=True):
                found = {}
                if plan.reference_vs_contexts:
                    found["contexts"] = relation(verdicts[:kr], row[:kr], range(kr))
                if plan.reference_vs_answer:
                    found["answer"] = relation(verdicts[kr:], row[kr:], (0,))
                claims_evidence.append({key: v for key, v in found.items() if v is not None})
            store.reference_evidence.append(claims_evidence)
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
    #: The references are much shorter than the answer (:mod:`ragmeter.scoring.reference_length`).
    short_reference: bool = False
    reference_in_contexts: list[tuple[tuple[bool, ...], ...] | None] = field(default_factory=list)
    reference_in_answer: list[tuple[bool, ...] | None] = field(default_factory=list)
    #: Per answer claim, what its verdicts rest on, by what it was checked against
    #: ("contexts", "references"; :func:`~ragmeter.metrics.claim_evidence.relation`).
    answer_evidence: list[dict[str, dict[str, Any]]] = field(default_factory=list)
    #: Per reference, per claim, the same ("contexts", "answer").
    reference_evidence: list[list[dict[str, dict[str, Any]]]] = field(default_factory=list)

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
            if self.answer_evidence and self.answer_evidence[i]:
                item["evidence"] = self.answer_evidence[i]
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
                evidence = self.reference_evidence[r][i] if r < len(self.reference_evidence) else {}
                if evidence:
                    item["evidence"] = evidence
                rows.append(item)
            out.append(rows)
        return out

    def uncertain_count(self, name: str) -> tuple[int, int] | None:
        """``(uncertain, verdicts)`` among the verdicts metric ``name`` rests on whose
        uncertainty the judge gave; ``None`` when it gave none."""
        known = uncertain = 0
        for whose, against in _RELATIONS[name]:
            if whose == "answer":
                items: list[dict[str, dict[str, Any]]] = self.answer_evidence
            else:
                items = [e for claims in self.reference_evidence for e in claims]
            for evidence in items:
                verdict = evidence.get(against)
                if verdict is not None and "uncertain" in verdict:
                    known += 1
                    uncertain += bool(verdict["uncertain"])
        return (uncertain, known) if known else None


def _metric(name: str, s: _Store) -> Score:
    score = _metric_score(name, s)
    if score.value is None:
        return score
    notes: list[str] = []
    details = dict(score.details or {})
    counted = s.uncertain_count(name)
    if counted is not None:
        uncertain, known = counted
        details["verdict_count"] = known
        details["uncertain_verdicts"] = uncertain
        if uncertain:
            notes.append(
                f"{uncertain} of {known} {'verdict' if known == 1 else 'verdicts'} "
                f"{'is' if uncertain == 1 else 'are'} uncertain."
            )
    if name in _REFERENCE_BASED and s.short_reference:
        details["short_reference"] = True
        notes.append(SHORT_REFERENCE_NOTE)
    reason = " ".join([score.reason or "", *notes]).strip() if notes else score.reason
    return Score(score.value, reason=reason, details=details)


def _metric_score(name: str, s: _Store) -> Score:
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
