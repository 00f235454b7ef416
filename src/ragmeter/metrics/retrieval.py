"""Retrieval metrics family: ranking metrics over retrieved and reference context ids.

The arithmetic lives in :mod:`ragmeter.scoring.ranking`, which states how repeated ids
are counted. Registered cut-offs are ``DEFAULT_KS``; a name such as ``recall_at_5``
carries its ``k``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragmeter.errors import ConfigError
from ragmeter.metrics.base import Outcome, RunContext
from ragmeter.scoring import ranking
from ragmeter.types import MetricSpec, Sample, Score

__all__ = ["DEFAULT_KS", "SPECS", "RetrievalFamily", "build"]

FAMILY = "retrieval"
REQUIRES = ("contexts_ids", "reference_context_ids")
DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)

_AT_K = {
    "retrieval": (
        ranking.retrieval_at_k,
        "1 when a reference id is among the first {k} retrieved ids (Unitxt's match_at_{k}).",
    ),
    "recall": (
        ranking.recall_at_k,
        "Share of the distinct reference ids found among the first {k} retrieved ids.",
    ),
    "precision": (
        ranking.precision_at_k,
        "Share of the first {k} retrieved ids that are reference ids (Unitxt's precision_at_{k}).",
    ),
    "ndcg": (
        ranking.ndcg_at_k,
        "Normalised DCG of the first {k} retrieved ids, binary gains.",
    ),
    "hit_rate": (
        ranking.hit_rate_at_k,
        "1 when at least one reference id is among the first {k} retrieved ids.",
    ),
}
_AT_K_RE = re.compile(r"^(retrieval|recall|precision|ndcg|hit_rate)_at_(\d+)$")

SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "mrr",
        FAMILY,
        REQUIRES,
        "Reciprocal rank of the first retrieved id that is a reference id, else 0.",
    ),
    MetricSpec(
        "map",
        FAMILY,
        REQUIRES,
        "Average precision as trec_eval: precision at each relevant hit, summed, divided by "
        "the number of reference ids.",
    ),
    MetricSpec(
        "map_retrieved",
        FAMILY,
        REQUIRES,
        "Unitxt's MAP: precision at each relevant hit, averaged over the relevant ids retrieved.",
    ),
    *(
        MetricSpec(f"{kind}_at_{k}", FAMILY, REQUIRES, description.format(k=k))
        for kind, (_, description) in _AT_K.items()
        for k in DEFAULT_KS
    ),
)

NAMES: frozenset[str] = frozenset(spec.name for spec in SPECS)


def _no_reference(retrieved: Sequence[str]) -> Score:
    return Score(
        0.0,
        "No reference context ids were given, so no retrieved id can be relevant "
        "(0, as Unitxt and trec_eval).",
        {"retrieved": len(retrieved), "reference_ids": 0},
    )


def _mrr(retrieved: Sequence[str], relevant: frozenset[str]) -> Score:
    rank = ranking.first_relevant_rank(retrieved, relevant)
    if rank is None:
        return Score(
            0.0,
            f"None of the {len(retrieved)} retrieved ids is a reference id.",
            {"first_relevant_rank": None},
        )
    return Score(1.0 / rank, f"First reference id at rank {rank}.", {"first_relevant_rank": rank})


def _map(retrieved: Sequence[str], relevant: frozenset[str]) -> Score:
    value = ranking.average_precision(retrieved, relevant)
    found = len(relevant.intersection(retrieved))
    return Score(
        value,
        f"{found} of {len(relevant)} reference ids retrieved; average precision over all "
        f"{len(relevant)}.",
        {"relevant_retrieved": found, "reference_ids": len(relevant)},
    )


def _map_retrieved(retrieved: Sequence[str], relevant: frozenset[str]) -> Score:
    value = ranking.map_retrieved(retrieved, relevant)
    hits = sum(1 for item in retrieved if item in relevant)
    if hits == 0:
        reason = f"None of the {len(retrieved)} retrieved ids is a reference id."
    else:
        reason = f"Average precision over the {hits} relevant retrieved positions."
    return Score(value, reason, {"relevant_hits": hits, "reference_ids": len(relevant)})


def _at_k(kind: str, k: int, retrieved: Sequence[str], relevant: frozenset[str]) -> Score:
    value = _AT_K[kind][0](retrieved, relevant, k=k)
    top = retrieved[:k]
    if kind == "precision":
        hits = sum(1 for item in top if item in relevant)
        reason = f"{hits} of the first {len(top)} retrieved ids are reference ids."
        return Score(value, reason, {"k": k, "hits": hits})
    found = len(relevant.intersection(top))
    if kind == "recall":
        reason = f"{found} of {len(relevant)} reference ids among the first {k} retrieved."
    elif kind == "ndcg":
        reason = (
            f"{found} reference ids among the first {k} retrieved; the ideal ranking has "
            f"{min(k, len(relevant))} first."
        )
    elif found:
        rank = ranking.first_relevant_rank(top, relevant)
        reason = f"A reference id is among the first {k} retrieved (rank {rank})."
    else:
        reason = f"No reference id among the first {k} retrieved."
    return Score(value, reason, {"k": k, "found": found})


class RetrievalFamily:
    """Scores the id-based retrieval metrics of a batch; stateless."""

    def score_sample(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
        retrieved = sample.contexts_ids or ()
        relevant = frozenset(sample.reference_context_ids or ())
        out: dict[str, Outcome] = {}
        for name in metrics:
            if not relevant:
                out[name] = _no_reference(retrieved)
            elif name == "mrr":
                out[name] = _mrr(retrieved, relevant)
            elif name == "map":
                out[name] = _map(retrieved, relevant)
            elif name == "map_retrieved":
                out[name] = _map_retrieved(retrieved, relevant)
            else:
                kind, k = _parse(name)
                out[name] = _at_k(kind, k, retrieved, relevant)
        return out

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        for name in metrics:
            _parse(name)
        score = self.score_sample
        return [score(sample, metrics) for sample in samples]


def _parse(name: str) -> tuple[str, int]:
    """Validate a metric name of this family; for ``kind_at_k`` return (kind, k)."""
    if name in ("mrr", "map", "map_retrieved"):
        return name, 0
    match = _AT_K_RE.match(name)
    if match is None:
        raise ConfigError(
            f"The retrieval family has no metric {name!r}. It has: {', '.join(sorted(NAMES))}."
        )
    kind, k = match.group(1), int(match.group(2))
    ranking.check_k(k, f"{kind}_at_k")
    return kind, k


def build(ctx: RunContext) -> RetrievalFamily:
    """The retrieval family; needs no model, so ``ctx`` is not read."""
    del ctx
    return RetrievalFamily()
