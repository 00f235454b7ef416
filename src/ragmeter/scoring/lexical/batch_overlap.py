"""Shared token counts of many text pairs at once, with numpy: no I/O, no Python loop
over texts.

A batch's texts are tokenised once into integer keys
(:class:`~ragmeter.scoring.lexical.token_batch.TokenBatch`); each group's prediction tokens
go into a hash table (:class:`~ragmeter.scoring.lexical.token_tables.TokenTables`) and every
lookup text's tokens are probed in it. The counts equal
:func:`ragmeter.scoring.lexical.overlap.token_overlap` pair by pair;
:mod:`ragmeter.scoring.lexical.scores` turns them into scores.
"""

from __future__ import annotations

import numpy as np

from ragmeter.scoring.lexical.token_batch import TokenBatch
from ragmeter.scoring.lexical.token_tables import IntArray, TokenTables

__all__ = ["batch_common"]

#: Above this many cells (lookup texts times prediction tokens) per token looked up, the
#: shared counts are gathered sparsely (a sort) instead of in one dense array.
_DENSE_LIMIT = 16


def batch_common(
    batch: TokenBatch, predictions: IntArray, lookups: IntArray, owners: IntArray
) -> IntArray:
    """Shared token counts (multiset intersection) of many text pairs of one batch.

    Group ``g`` has the prediction text ``predictions[g]`` of ``batch``; lookup text
    ``lookups[x]`` belongs to group ``owners[x]``. The result's ``x``-th entry is
    ``token_overlap(prediction, lookup).common`` for that pair, on SQuAD tokens. Texts
    that ``batch`` left out count as having no tokens. Consecutive lookup texts are read
    fastest.

    Examples
    --------
    >>> batch = TokenBatch.of(["yes yes no", "yes yes yes", "No.", "maybe"])
    >>> batch_common(batch, np.array([0]), np.array([1, 2, 3]), np.array([0, 0, 0])).tolist()
    [2, 1, 0]
    """
    # The prediction tokens, dropped ones left out, group after group, a table per group.
    found, counts = _tokens_of(batch, predictions)
    keep = ~batch.dropped[found]
    groups = np.repeat(np.arange(len(predictions), dtype=np.int64), counts)[keep]
    table = TokenTables(batch.keys[found][keep], np.bincount(groups, minlength=len(predictions)))
    kinds = table.kinds
    kind_start = np.zeros(len(predictions), dtype=np.int64)
    np.cumsum(kinds[:-1], out=kind_start[1:])

    # Every token of every lookup text, looked up in its group's table.
    found, counts = _tokens_of(batch, lookups)
    hits, kind = table.find(batch.keys[found], owners, counts)
    # One cell per (lookup text, distinct prediction token).
    width = kinds[owners]
    base = np.zeros(len(lookups) + 1, dtype=np.int64)
    np.cumsum(width, out=base[1:])
    cells = np.repeat(base[:-1] - kind_start[owners], counts)[hits]
    cells += kind
    total = int(base[-1])
    occurs = table.counts
    if total <= _DENSE_LIMIT * (len(hits) + len(occurs) + 64):
        shared = np.bincount(cells, minlength=total)
        which = np.arange(total, dtype=np.int64)
        which += np.repeat(kind_start[owners] - base[:-1], width)
        capped = np.minimum(shared, occurs[which])
        sums = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(capped, out=sums[1:])
        return sums[base[1:]] - sums[base[:-1]]
    cells, shared = np.unique(cells, return_counts=True)
    text = np.searchsorted(base, cells, side="right") - 1
    capped = np.minimum(shared, occurs[cells - base[text] + kind_start[owners[text]]])
    return np.bincount(text, weights=capped, minlength=len(lookups)).astype(np.int64)


def _tokens_of(batch: TokenBatch, texts: IntArray) -> tuple[IntArray | slice, IntArray]:
    """Token indices of ``texts`` in order (a slice when the texts are consecutive), and
    how many each text has."""
    offsets = batch.offsets
    first = offsets[texts]
    counts = offsets[texts + 1] - first
    if len(texts) == 0:
        return np.zeros(0, dtype=np.int64), counts
    start = int(texts[0])
    if int(texts[-1]) - start == len(texts) - 1 and (np.diff(texts) == 1).all():
        return slice(int(first[0]), int(offsets[start + len(texts)])), counts
    ends = np.cumsum(counts)
    out = np.arange(int(ends[-1]), dtype=np.int64)
    out += np.repeat(first - (ends - counts), counts)
    return out, counts
