"""Ranking metrics over retrieved ids: pure functions, no I/O.

``retrieved`` is the ranked list of retrieved ids (best first); ``relevant`` holds the
reference ids. Ids are compared exactly (``"Doc1" != "doc1"``, ``"g " != "g"``);
duplicate reference ids count once.

Two conventions meet here, and each function states which one it follows:

* **Unitxt** (``mrr``, ``map_retrieved``, ``retrieval_at_k``, ``precision_at_k``): every
  retrieved position is scored, so a relevant id retrieved twice is a hit twice.
* **IR / trec_eval** (``average_precision``, ``recall_at_k``, ``ndcg_at_k``,
  ``hit_rate_at_k``): a document is retrieved once, so repeated ids after their first
  position are ignored, and recall can never exceed 1.

With no reference id every function returns 0.0, as Unitxt and trec_eval do (nothing
relevant can be found); the metric family says so in the score's reason.

>>> mrr(["d1", "g", "d2"], ["g"])
0.5
>>> average_precision(["x", "a", "y", "b", "z"], ["a", "b", "c"])  # (1/2 + 2/4) / 3
0.3333333333333333
>>> map_retrieved(["x", "a", "y", "b", "z"], ["a", "b", "c"])  # (1/2 + 2/4) / 2
0.5
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from functools import cache

from ragmeter.errors import ConfigError

__all__ = [
    "average_precision",
    "check_k",
    "first_relevant_rank",
    "hit_rate_at_k",
    "map_retrieved",
    "mrr",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "retrieval_at_k",
]


def check_k(k: int, metric: str) -> int:
    """Validate a cut-off ``k`` for ``metric``; return it.

    Examples
    --------
    >>> check_k(0, "recall_at_k")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: The 'k' parameter of recall_at_k must be >= 1. Got 0.
    """
    if isinstance(k, bool) or not isinstance(k, int):
        raise ConfigError(
            f"The 'k' parameter of {metric} must be an int >= 1. Got {k!r} ({type(k).__name__})."
        )
    if k < 1:
        raise ConfigError(f"The 'k' parameter of {metric} must be >= 1. Got {k}.")
    return k


_SETS = (set, frozenset)


def _as_set(relevant: Iterable[Hashable]) -> AbstractSet[Hashable]:
    return relevant if isinstance(relevant, _SETS) else set(relevant)


def _unique(retrieved: Iterable[Hashable]) -> list[Hashable]:
    """Retrieved ids without repeats, each at its first position."""
    return list(dict.fromkeys(retrieved))


def first_relevant_rank(retrieved: Sequence[Hashable], relevant: Iterable[Hashable]) -> int | None:
    """1-based rank of the first retrieved id that is relevant, ``None`` if none is.

    Examples
    --------
    >>> first_relevant_rank(["doc1", "Doc1"], ["Doc1"])
    2
    >>> first_relevant_rank([], ["g"]) is None
    True
    """
    rel = _as_set(relevant)
    if rel.isdisjoint(retrieved):  # the usual miss, without a Python loop
        return None
    for rank, item in enumerate(retrieved, 1):
        if item in rel:
            return rank
    return None


def mrr(retrieved: Sequence[Hashable], relevant: Iterable[Hashable]) -> float:
    """Reciprocal rank of the first relevant retrieved id; 0.0 when none is retrieved.

    Parameters
    ----------
    retrieved : sequence of hashable
        Retrieved ids, best first.
    relevant : iterable of hashable
        Reference ids.

    Returns
    -------
    float
        ``1 / rank`` in (0, 1], or 0.0.

    Examples
    --------
    >>> mrr(["d1", "d2", "d3", "d4", "d5"], ["d3"])
    0.3333333333333333
    >>> mrr(["d1"], [])
    0.0
    """
    rank = first_relevant_rank(retrieved, relevant)
    return 0.0 if rank is None else 1.0 / rank


def average_precision(retrieved: Sequence[Hashable], relevant: Iterable[Hashable]) -> float:
    """Average precision as trec_eval's ``map``: the sum of precision@rank at each
    relevant hit divided by the number of distinct reference ids.

    Repeated retrieved ids count at their first position only.

    Examples
    --------
    >>> average_precision(["g1", "d1", "g2"], ["g1", "g2", "g3"])  # (1/1 + 2/3) / 3
    0.5555555555555555
    >>> average_precision(["d", "g", "g"], ["g"])
    0.5
    """
    rel = _as_set(relevant)
    if not rel or rel.isdisjoint(retrieved):
        return 0.0
    hits = 0
    total = 0.0
    for rank, item in enumerate(dict.fromkeys(retrieved), 1):  # each id at its first position
        if item in rel:
            hits += 1
            total += hits / rank
    return total / len(rel)


def map_retrieved(retrieved: Sequence[Hashable], relevant: Iterable[Hashable]) -> float:
    """Unitxt's MAP: the sum of precision@rank at each relevant hit divided by the number
    of hits, so relevant ids never retrieved do not lower it.

    Every position counts, a repeated relevant id is a hit each time (as Unitxt).

    Examples
    --------
    >>> map_retrieved(["d1", "g1", "d2"], ["g1", "g2", "g3"])
    0.5
    >>> map_retrieved(["d", "g", "g"], ["g"])  # (1/2 + 2/3) / 2
    0.5833333333333333
    """
    rel = _as_set(relevant)
    if not rel or rel.isdisjoint(retrieved):
        return 0.0
    hits = 0
    total = 0.0
    for rank, item in enumerate(retrieved, 1):
        if item in rel:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


def _hits_at_k(retrieved: Sequence[Hashable], rel: Collection[Hashable], k: int) -> int:
    return sum(1 for item in retrieved[:k] if item in rel)


def retrieval_at_k(retrieved: Sequence[Hashable], relevant: Iterable[Hashable], *, k: int) -> float:
    """Unitxt's ``match_at_k``: 1.0 when a relevant id is among the first ``k``, else 0.0.

    Examples
    --------
    >>> retrieval_at_k(["d1", "g1", "d2", "g2"], ["g1", "g2"], k=1)
    0.0
    >>> retrieval_at_k(["d1", "g1", "d2", "g2"], ["g1", "g2"], k=3)
    1.0
    """
    check_k(k, "retrieval_at_k")
    return 1.0 if _hits_at_k(retrieved, _as_set(relevant), k) else 0.0


def hit_rate_at_k(retrieved: Sequence[Hashable], relevant: Iterable[Hashable], *, k: int) -> float:
    """1.0 when at least one relevant id is among the first ``k`` retrieved, else 0.0.

    Equal to :func:`retrieval_at_k`; kept under the name most IR tools use.

    Examples
    --------
    >>> hit_rate_at_k(["a", "b"], ["b"], k=1)
    0.0
    """
    check_k(k, "hit_rate_at_k")
    return 1.0 if _hits_at_k(retrieved, _as_set(relevant), k) else 0.0


def precision_at_k(retrieved: Sequence[Hashable], relevant: Iterable[Hashable], *, k: int) -> float:
    """Share of the first ``min(k, len(retrieved))`` positions that hold a relevant id.

    As Unitxt: a list shorter than ``k`` is not penalised for its missing positions, a
    repeated relevant id fills a position each time, and an empty list scores 0.0.

    Examples
    --------
    >>> precision_at_k(["a", "b", "x", "y"], ["a", "b"], k=3)
    0.6666666666666666
    >>> precision_at_k(["g1", "d1", "g2"], ["g1", "g2"], k=10)
    0.6666666666666666
    """
    check_k(k, "precision_at_k")
    n = min(k, len(retrieved))
    if n == 0:
        return 0.0
    return _hits_at_k(retrieved, _as_set(relevant), k) / n


def recall_at_k(retrieved: Sequence[Hashable], relevant: Iterable[Hashable], *, k: int) -> float:
    """Share of the distinct reference ids found among the first ``k`` retrieved.

    Repeated retrieved ids count once, so the value never exceeds 1 (Unitxt's
    ``recall_at_k`` counts repeats and can reach 2).

    Examples
    --------
    >>> recall_at_k(["d1", "g1", "d2", "g2"], ["g1", "g2"], k=3)
    0.5
    >>> recall_at_k(["g", "g", "d"], ["g"], k=3)
    1.0
    """
    check_k(k, "recall_at_k")
    rel = _as_set(relevant)
    if not rel:
        return 0.0
    found = {item for item in retrieved[:k] if item in rel}
    return len(found) / len(rel)


@cache
def _discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


def ndcg_at_k(retrieved: Sequence[Hashable], relevant: Iterable[Hashable], *, k: int) -> float:
    """Normalised discounted cumulative gain at ``k`` with binary gains.

    DCG sums ``1 / log2(rank + 1)`` over relevant ids in the first ``k`` (each id at its
    first position only); the ideal DCG places ``min(k, number of reference ids)``
    relevant ids first.

    Examples
    --------
    >>> ndcg_at_k(["g1", "d1", "g2"], ["g1", "g2"], k=3)  # (1 + 1/2) / (1 + 1/log2(3))
    0.9197207891481876
    >>> ndcg_at_k(["d1", "g1"], ["g1"], k=1)
    0.0
    """
    check_k(k, "ndcg_at_k")
    rel = _as_set(relevant)
    if not rel:
        return 0.0
    dcg = sum(_discount(rank) for rank, item in enumerate(_unique(retrieved)[:k], 1) if item in rel)
    ideal = sum(_discount(rank) for rank in range(1, min(k, len(rel)) + 1))
    return dcg / ideal
