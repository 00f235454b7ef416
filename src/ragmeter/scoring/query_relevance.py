"""Lexical query-passage relevance without a trained model: pure functions, no I/O.

These are the lexical candidates the ``msmarco`` meta-evaluation measures next to
``context_relevance`` (see :mod:`ragmeter.metaeval.msmarco`). Texts are token lists
(for instance :func:`ragmeter.text.tokens`); term weights are inverse document frequencies
computed from a collection the caller chooses (the suite uses its own passages) — no corpus
statistic is built in.

* :func:`inverse_document_frequencies`: BM25's IDF, ``ln(1 + (N - df + 0.5) / (df + 0.5))``,
  always > 0, as :class:`TermWeights`.
* :func:`bm25_fraction`: Okapi BM25 of the passage for the query divided by the most the
  query could reach (every distinct query term with a saturated term frequency), so it lies
  in [0, 1].
* :func:`idf_coverage`: the IDF-weighted share of the query's distinct terms that occur in
  the passage, in [0, 1].

>>> docs = [["paris", "is", "capital"], ["rome", "is", "old"], ["paris", "has", "museums"]]
>>> idf = inverse_document_frequencies(docs)
>>> round(idf("is"), 3), round(idf("rome"), 3), round(idf("london"), 3)
(0.47, 0.981, 2.079)
>>> round(idf_coverage(["capital", "is", "rome"], docs[1], idf), 3)
0.597
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "TermWeights",
    "bm25_fraction",
    "idf_coverage",
    "inverse_document_frequencies",
]


@dataclass(frozen=True, slots=True)
class TermWeights:
    """A weight per term, and the weight of any term not listed (``unseen``)."""

    weights: Mapping[str, float]
    unseen: float

    def __call__(self, term: str) -> float:
        return self.weights.get(term, self.unseen)


def inverse_document_frequencies(documents: Iterable[Sequence[str]]) -> TermWeights:
    """BM25 inverse document frequency of every term in ``documents``.

    Parameters
    ----------
    documents : iterable of token sequences
        The collection; a term counts once per document it occurs in.

    Returns
    -------
    TermWeights
        term -> ``ln(1 + (N - df + 0.5) / (df + 0.5))``; a term absent from the collection
        weighs as ``df = 0``.

    Raises
    ------
    ValueError
        ``documents`` is empty.
    """
    frequency: Counter[str] = Counter()
    n = 0
    for document in documents:
        frequency.update(set(document))
        n += 1
    if n == 0:
        raise ValueError(
            "The collection for inverse document frequencies is empty. Got 0 documents."
        )
    weights = {term: _idf(n, df) for term, df in frequency.items()}
    return TermWeights(weights, _idf(n, 0))


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def bm25_fraction(
    query: Sequence[str],
    passage: Sequence[str],
    idf: TermWeights,
    *,
    average_length: float,
    k1: float = 1.2,
    b: float = 0.75,
) -> float:
    """Okapi BM25 of ``passage`` for ``query`` over its ceiling, in [0, 1].

    ``BM25 = sum over distinct query terms t of idf(t) * f(t) * (k1 + 1) / (f(t) + k1 * (1 - b
    + b * |passage| / average_length))`` with ``f(t)`` the term's count in the passage; the
    ceiling is ``sum idf(t) * (k1 + 1)``. A query without terms scores 0.

    Raises
    ------
    ValueError
        ``average_length`` <= 0, ``k1`` < 0 or ``b`` outside [0, 1].

    Examples
    --------
    >>> idf = TermWeights({"red": 1.0, "car": 2.0}, unseen=3.0)
    >>> round(bm25_fraction(["red", "car"], ["a", "red", "car"], idf, average_length=3.0), 4)
    0.4545
    """
    if not average_length > 0:
        raise ValueError(f"The 'average_length' parameter must be > 0. Got {average_length!r}.")
    if not k1 >= 0:
        raise ValueError(f"The 'k1' parameter must be >= 0. Got {k1!r}.")
    if not 0 <= b <= 1:
        raise ValueError(f"The 'b' parameter must be in [0, 1]. Got {b!r}.")
    terms = sorted(set(query))  # a fixed order: sums do not depend on the hash seed
    if not terms:
        return 0.0
    counts = Counter(passage)
    norm = k1 * (1 - b + b * len(passage) / average_length)
    score = ceiling = 0.0
    for term in terms:
        weight = idf(term)
        f = counts.get(term, 0)
        ceiling += weight * (k1 + 1)
        if f:
            score += weight * f * (k1 + 1) / (f + norm)
    return min(max(score / ceiling, 0.0), 1.0) if ceiling > 0 else 0.0


def idf_coverage(query: Sequence[str], passage: Sequence[str], idf: TermWeights) -> float:
    """IDF-weighted share of the query's distinct terms found in ``passage``, in [0, 1].

    A query without terms scores 0.

    Examples
    --------
    >>> idf = TermWeights({"red": 1.0, "car": 3.0}, unseen=3.0)
    >>> idf_coverage(["red", "car"], ["a", "red", "bike"], idf)
    0.25
    >>> idf_coverage([], ["a"], idf)
    0.0
    """
    terms = set(query)
    present = set(passage)
    # fsum is exactly rounded, so the result does not depend on the set's (hash-seeded)
    # order: two passages covering the same terms tie in every process.
    total = math.fsum(idf(t) for t in terms)
    if total <= 0:
        return 0.0
    found = math.fsum(idf(t) for t in terms if t in present)
    return min(max(found / total, 0.0), 1.0)
