"""Open-addressing hash tables of token keys, one per group, built and probed in
vectorised numpy rounds: the lookup structure of
:func:`ragmeter.scoring.lexical.batch_overlap.batch_common`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragmeter.scoring.lexical.hash_slots import home_slots, insert_keys

__all__ = ["IntArray", "TokenTables"]

#: Arrays of indices and counts.
IntArray = npt.NDArray[np.int64]


class TokenTables:
    """One open-addressing hash table of token keys per group, side by side in one
    array, built and probed in vectorised numpy rounds (:mod:`ragmeter.scoring.lexical.hash_slots`;
    each group's part a power of two at least four times its tokens).

    Keys identify tokens (:class:`~ragmeter.scoring.lexical.token_batch.TokenBatch`), and 0
    marks an empty slot.
    Lookups come group after group, so each probes a small part that stays in cache.
    ``kinds[g]`` is the number of distinct tokens of group ``g``; ``counts[k]`` how often
    the ``k``-th distinct token occurs (numbered group after group).

    Examples
    --------
    >>> t = TokenTables(np.array([5, 7, 5, 5], dtype=np.uint64), np.array([3, 1]))
    >>> t.kinds.tolist(), sorted(t.counts.tolist())
    ([2, 1], [1, 1, 2])
    """

    def __init__(self, keys: npt.NDArray[np.uint64], sizes: IntArray) -> None:
        part = np.left_shift(1, np.ceil(np.log2(4 * sizes + 4)).astype(np.int64))
        self.part = part
        self.start = np.zeros(len(sizes), dtype=np.int64)
        np.cumsum(part[:-1], out=self.start[1:])
        self.slot_key = np.zeros(int(part.sum()), dtype=np.uint64)
        slots = insert_keys(
            self.slot_key, keys, np.repeat(self.start, sizes), np.repeat(part - 1, sizes)
        )
        used = self.slot_key != 0
        self.rank = np.cumsum(used) - 1
        self.kinds = np.add.reduceat(used, self.start).astype(np.int64)
        self.counts = np.bincount(self.rank[slots], minlength=int(self.kinds.sum()))

    def find(
        self, keys: npt.NDArray[np.uint64], groups: IntArray, counts: IntArray
    ) -> tuple[IntArray, IntArray]:
        """Look up ``keys``, those of text ``x`` (``counts[x]`` of them) in the part of
        group ``groups[x]``: the positions found and the numbers of their distinct tokens.
        """
        start = np.repeat(self.start[groups], counts)
        mask = np.repeat(self.part[groups] - 1, counts)
        slot = home_slots(keys, start, mask)
        slot_key = self.slot_key
        # First round over every key at once, without compacting.
        found = slot_key[slot]
        equal = found == keys
        hits, slots = [np.flatnonzero(equal)], []
        slots.append(slot[hits[0]])
        # Probe on past a slot that holds another key (most keys find theirs or an empty one).
        occupied = found != 0
        occupied &= ~equal
        pending = np.flatnonzero(occupied)
        start, mask, where, wanted = start[pending], mask[pending], slot[pending], keys[pending]
        while len(pending):
            where = ((where - start + 1) & mask) + start
            found = slot_key[where]
            equal = found == wanted
            hit = np.flatnonzero(equal)
            hits.append(pending[hit])
            slots.append(where[hit])
            go_on = np.flatnonzero(found != 0)
            go_on = go_on[~equal[go_on]]
            pending, start, mask = pending[go_on], start[go_on], mask[go_on]
            where, wanted = where[go_on], wanted[go_on]
        if len(hits) == 1:
            return hits[0], self.rank[slots[0]]
        return np.concatenate(hits), self.rank[np.concatenate(slots)]
