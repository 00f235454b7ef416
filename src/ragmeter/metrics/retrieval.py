"""Retrieval metrics family: ranking metrics over retrieved and reference context ids.

The arithmetic lives in :mod:`ragmeter.scoring.ranking`, which states how repeated ids
are counted. Registered cut-offs are ``DEFAULT_KS``; a name such as ``recall_at_5``
carries its ``k``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

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


def _no_reference(n_retrieved: int) -> Score:
    return Score(
        0.0,
        "No reference context ids were given, so no retrieved id can be relevant "
        "(0, as Unitxt and trec_eval).",
        {"retrieved": n_retrieved, "reference_ids": 0},
    )


# Each metric in two steps: the numbers that decide its Score, computed from the ids, and
# the Score made from those numbers alone, so that a batch makes each distinct Score once.


def _mrr(retrieved: Sequence[str], relevant: frozenset[str]) -> tuple[int | None, int]:
    return ranking.first_relevant_rank(retrieved, relevant), len(retrieved)


def _mrr_score(rank: int | None, n_retrieved: int) -> Score:
    if rank is None:
        return Score(
            0.0,
            f"None of the {n_retrieved} retrieved ids is a reference id.",
            {"first_relevant_rank": None},
        )
    return Score(1.0 / rank, f"First reference id at rank {rank}.", {"first_relevant_rank": rank})


def _map(retrieved: Sequence[str], relevant: frozenset[str]) -> tuple[float, int, int]:
    value = ranking.average_precision(retrieved, relevant)
    found = len(relevant.intersection(retrieved)) if value else 0  # > 0 with any id found
    return value, found, len(relevant)


def _map_score(value: float, found: int, n_relevant: int) -> Score:
    return Score(
        value,
        f"{found} of {n_relevant} reference ids retrieved; average precision over all "
        f"{n_relevant}.",
        {"relevant_retrieved": found, "reference_ids": n_relevant},
    )


def _map_retrieved(retrieved: Sequence[str], relevant: frozenset[str]) -> tuple[Any, ...]:
    value = ranking.map_retrieved(retrieved, relevant)
    hits = sum(1 for item in retrieved if item in relevant)
    return value, hits, len(retrieved), len(relevant)


def _map_retrieved_score(value: float, hits: int, n_retrieved: int, n_relevant: int) -> Score:
    if hits == 0:
        reason = f"None of the {n_retrieved} retrieved ids is a reference id."
    else:
        reason = f"Average precision over the {hits} relevant retrieved positions."
    return Score(value, reason, {"relevant_hits": hits, "reference_ids": n_relevant})


def _at_k(kind: str, k: int, retrieved: Sequence[str], relevant: frozenset[str]) -> tuple[Any, ...]:
    value = _AT_K[kind][0](retrieved, relevant, k=k)
    top = retrieved[:k]
    if kind == "precision":
        return kind, k, value, sum(1 for item in top if item in relevant), len(top), None
    found = len(relevant.intersection(top))
    if kind == "recall":
        return kind, k, value, found, len(relevant), None
    if kind == "ndcg":
        return kind, k, value, found, min(k, len(relevant)), None
    rank = ranking.first_relevant_rank(top, relevant) if found else None
    return kind, k, value, found, None, rank


def _at_k_score(
    kind: str, k: int, value: float, found: int, size: int | None, rank: int | None
) -> Score:
    """``found``: hits in the first ``k`` for precision (``size``: their number), reference
    ids found there for the others (``size``: all reference ids for recall, the ideal
    ranking's length for ndcg); ``rank``: the first relevant one's, for retrieval and
    hit_rate."""
    if kind == "precision":
        reason = f"{found} of the first {size} retrieved ids are reference ids."
        return Score(value, reason, {"k": k, "hits": found})
    if kind == "recall":
        reason = f"{found} of {size} reference ids among the first {k} retrieved."
    elif kind == "ndcg":
        reason = (
            f"{found} reference ids among the first {k} retrieved; the ideal ranking has "
            f"{size} first."
        )
    elif found:
        reason = f"A reference id is among the first {k} retrieved (rank {rank})."
    else:
        reason = f"No reference id among the first {k} retrieved."
    return Score(value, reason, {"k": k, "found": found})


#: Per metric: the numbers that decide its Score, and the Score made from them.
Measure = Callable[[Sequence[str], frozenset[str]], tuple[Any, ...]]
_STEPS: dict[str, tuple[Measure, Callable[..., Score]]] = {
    "mrr": (_mrr, _mrr_score),
    "map": (_map, _map_score),
    "map_retrieved": (_map_retrieved, _map_retrieved_score),
}


def _steps(name: str) -> tuple[Measure, Callable[..., Score]]:
    """The two steps of metric ``name``; raises ``ConfigError`` for a name not of this family."""
    kind, k = _parse(name)
    if name in _STEPS:
        return _STEPS[name]
    return functools.partial(_at_k, kind, k), _at_k_score


class RetrievalFamily:
    """Scores the id-based retrieval metrics of a batch; stateless."""

    def score_sample(self, sample: Sample, metrics: Sequence[str]) -> dict[str, Outcome]:
        return _Scorer(metrics).score(sample)

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        score = _Scorer(metrics).score
        return [score(sample) for sample in samples]


class _Scorer:
    """Scores samples with some metrics. Equal Scores are made once and shared (a Score is
    a frozen value, its details only read): the samples of a batch mostly get one of a few
    (first reference id at rank 1, 2, ... or none)."""

    def __init__(self, metrics: Sequence[str]) -> None:
        #: Per metric: its name, its two steps, and the Scores made so far by their numbers.
        self.steps = [(name, *_steps(name), {}) for name in metrics]
        self.no_reference: dict[int, Score] = {}

    def score(self, sample: Sample) -> dict[str, Outcome]:
        retrieved = sample.contexts_ids or ()
        relevant = frozenset(sample.reference_context_ids or ())
        if not relevant:
            n = len(retrieved)
            none = self.no_reference.get(n)
            if none is None:
                none = self.no_reference[n] = _no_reference(n)
            return dict.fromkeys((name for name, *_ in self.steps), none)
        out: dict[str, Outcome] = {}
        for name, measure, make, made in self.steps:
            numbers = measure(retrieved, relevant)
            score = made.get(numbers)
            if score is None:
                score = made[numbers] = make(*numbers)
            out[name] = score
        return out


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
