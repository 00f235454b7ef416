"""Open-addressing hash tables of non-zero ``uint64`` keys, filled in vectorised numpy
rounds: one table, or one part per group side by side in one array (linear probing inside
each part, a power of two long). 0 marks an empty slot.

Used by :class:`~ragmeter.scoring.lexical.token_batch.TokenBatch` (which tokens share a hash) and by
:class:`~ragmeter.scoring.lexical.token_tables.TokenTables` (each group's distinct tokens).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["home_slots", "insert_keys"]

IntArray = npt.NDArray[np.int64]
KeyArray = npt.NDArray[np.uint64]

_SLOT_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(32)


def home_slots(keys: KeyArray, start: IntArray, mask: IntArray) -> IntArray:
    """The first slot each key probes: a mix of its bits, inside the part that begins at
    ``start`` and is ``mask + 1`` slots long."""
    mixed = keys * _SLOT_MIX
    mixed >>= _SHIFT
    home = mixed.view(np.int64)
    home &= mask
    home += start
    return home


def insert_keys(slot_key: KeyArray, keys: KeyArray, start: IntArray, mask: IntArray) -> IntArray:
    """Put every key in its part of ``slot_key`` (in place) and return the slot of each:
    equal keys get the same slot, and a slot holds one key."""
    slot = home_slots(keys, start, mask)
    pending = np.arange(len(keys), dtype=np.int64)
    while len(pending):
        where = slot[pending]
        free = slot_key[where] == 0
        if free.any():
            # Several keys may claim one free slot: one wins, the others probe on.
            slot_key[where[free]] = keys[pending[free]]
        pending = pending[slot_key[where] != keys[pending]]
        slot[pending] = ((slot[pending] - start[pending] + 1) & mask[pending]) + start[pending]
    return slot
