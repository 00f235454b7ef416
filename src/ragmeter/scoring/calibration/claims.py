"""The claim metrics calibrated from claim-level labels, by re-aggregation.

Every metric that is a share of claims (:data:`CLAIM_METRICS`) is computed again on a labelled
row with each labelled claim's verdict replaced by the people's (the share of them who said
supported), each unlabelled claim's by the corrected verdict rate (:func:`verdict_rates`: the
share of labelled claims people called supported among those the judge called supported, or
among those it did not, smoothed toward the judge's verdict by one pseudo-claim), and the
verdicts of kinds nobody labelled kept as the judge gave them (:func:`recomputed_value`).

The claims are read from a row's details as the claims family records them
(``answer_claims``, ``reference_claims``, each claim's ``contexts``, ``correct``,
``in_answer`` and ``evidence``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.scoring.calibration import ppi

__all__ = [
    "A_CTX",
    "A_REF",
    "CLAIM_METRICS",
    "R_ANS",
    "R_CTX",
    "Kind",
    "claims_of",
    "judge_support",
    "judge_verdict",
    "kind_agreement",
    "kind_name",
    "recomputed_value",
    "verdict_rates",
]

#: A verdict kind: (whose claims, checked against what).
Kind = tuple[str, str]
A_CTX: Kind = ("answer", "contexts")
A_REF: Kind = ("answer", "reference")
R_ANS: Kind = ("reference", "answer")
R_CTX: Kind = ("reference", "contexts")

#: Claim-share metrics: whose claims they average over and the verdict kinds they read.
CLAIM_METRICS: dict[str, tuple[str, tuple[Kind, ...]]] = {
    "faithfulness": ("answer", (A_CTX,)),
    "faithfulness_support": ("answer", (A_CTX,)),
    "claim_precision": ("answer", (A_REF,)),
    "claim_precision_support": ("answer", (A_REF,)),
    "hallucination": ("answer", (A_REF, A_CTX)),
    "self_knowledge": ("answer", (A_REF, A_CTX)),
    "noise_sensitivity_relevant": ("answer", (A_REF, A_CTX)),
    "noise_sensitivity_irrelevant": ("answer", (A_REF, A_CTX)),
    "claim_recall": ("reference", (R_ANS,)),
    "context_claim_recall": ("reference", (R_CTX,)),
}


def kind_name(kind: Kind) -> str:
    return f"{kind[0]} claims against the {kind[1]}"


def claims_of(details: Mapping[str, Any], source: str) -> list[Mapping[str, Any]] | None:
    """The ``source`` ("answer" or "reference") claims of one metric's details, or ``None``
    when it records none."""
    if source == "answer":
        items = details.get("answer_claims")
        return list(items) if isinstance(items, list) else None
    refs = details.get("reference_claims")
    if not isinstance(refs, list):
        return None
    return [c for ref in refs if isinstance(ref, list) for c in ref]


def judge_verdict(claim: Mapping[str, Any], kind: Kind) -> bool | None:
    """The judge's verdict of ``kind`` on ``claim``, or ``None`` when it recorded none."""
    if kind[1] == "contexts":
        ctx = claim.get("contexts")
        return None if not isinstance(ctx, list) else bool(ctx)
    key = "correct" if kind == A_REF else "in_answer"
    value = claim.get(key)
    return None if not isinstance(value, bool) else value


def judge_support(evidence: Any, against: str, verdict: bool) -> float:
    """The judge's support for a verdict: the best premise's, else the verdict (0/1)."""
    key = {"contexts": "contexts", "reference": "references", "answer": "answer"}[against]
    part = evidence.get(key) if isinstance(evidence, Mapping) else None
    rests = part.get("rests_on") if isinstance(part, Mapping) else None
    supports = [r.get("support") for r in rests or () if isinstance(r, Mapping)]
    supports = [float(s) for s in supports if isinstance(s, int | float)]
    return max(supports) if supports else float(verdict)


def verdict_rates(y: np.ndarray, verdicts: np.ndarray) -> dict[bool, float]:
    """The corrected verdict rate for each judge's verdict: the share of labelled claims that
    people called supported among those the judge gave that verdict, smoothed toward the
    judge's verdict by one pseudo-claim (a class with few labels moves little, one with none
    keeps the judge's verdict)."""
    return {
        c: float((y[verdicts == float(c)].sum() + float(c)) / ((verdicts == float(c)).sum() + 1))
        for c in (True, False)
    }


def kind_agreement(y: np.ndarray, verdicts: np.ndarray, supports: np.ndarray) -> dict[str, Any]:
    """The judge's agreement with the people on the labelled claims of one kind (``y``: the
    share of people who said supported; claims they split evenly on are left out of the
    verdict statistics)."""
    observed = {
        c: float(y[verdicts == float(c)].mean()) if (verdicts == float(c)).any() else None
        for c in (True, False)
    }
    decided = (y != 0.5).nonzero()[0]
    yb = (y[decided] > 0.5).astype(float)
    return {
        "n": int(y.size),
        "balanced_accuracy": ppi.balanced_accuracy(yb, verdicts[decided]),
        "cohen_kappa": ppi.cohen_kappa(yb, verdicts[decided]),
        "auroc": ppi.auroc(yb, supports[decided]),
        "people_supported_when_judge_supported": observed[True],
        "people_supported_when_judge_did_not": observed[False],
    }


def _row_value(
    metric: str,
    claims: Sequence[Mapping[str, Any]],
    verdicts: Callable[[int, Kind], float],
    relevant: set[int] | None,
) -> float | None:
    """``metric`` of one row, with each claim's probability of each verdict kind."""
    values = []
    for i, claim in enumerate(claims):
        if metric in ("hallucination", "self_knowledge") or metric.startswith("noise"):
            correct, in_ctx = verdicts(i, A_REF), verdicts(i, A_CTX)
            if metric == "hallucination":
                values.append((1 - correct) * (1 - in_ctx))
            elif metric == "self_knowledge":
                values.append(correct * (1 - in_ctx))
            else:
                entailing = set(claim.get("contexts") or ())
                # The judge's entailing contexts say whether a relevant one is among them;
                # where the judge found none, any relevant context of the row is assumed.
                rel = bool(entailing & relevant) if entailing else bool(relevant)
                rel_share = float(rel) if metric.endswith("_relevant") else float(not rel)
                values.append((1 - correct) * in_ctx * rel_share)
        else:
            values.append(verdicts(i, CLAIM_METRICS[metric][1][0]))
    return float(np.mean(values)) if values else None


def recomputed_value(
    metric: str,
    details: Mapping[str, Any],
    people: Mapping[tuple[Kind, int], Sequence[float]],
    rates: Mapping[Kind, Mapping[bool, float]],
) -> float | None:
    """``metric`` of one labelled row (its ``details``) with the people's verdicts on its
    labelled claims (``people``: by kind and claim index), the corrected verdict rates of the
    kinds in ``rates`` on the others, and the judge's verdicts of the other kinds."""
    claims = claims_of(details, CLAIM_METRICS[metric][0]) or []
    relevant = set(details.get("relevant_contexts") or ())

    def verdict_of(i: int, kind: Kind) -> float:
        values = people.get((kind, i))
        if values:
            return float(np.mean(values))
        judged = judge_verdict(claims[i], kind)
        if judged is None:
            return 0.0
        return rates[kind][judged] if kind in rates else float(judged)

    return _row_value(metric, claims, verdict_of, relevant)
