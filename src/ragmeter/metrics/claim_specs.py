"""The claim metrics' specs (family "claims"): each metric's name, the fields it needs, its
direction and what it measures. Scored by :mod:`ragmeter.metrics.claims`.
"""

from __future__ import annotations

from ragmeter.types import MetricSpec

__all__ = ["FAMILY", "SPECS"]

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
