"""What every embedder does with its rows: texts run in length order (a batch pads little)
and returned in the caller's order, and rows L2-normalised."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.models._runtime import encodable

__all__ = ["in_length_order", "l2_normalise"]


def l2_normalise(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    # An all-zero row stays zero instead of becoming NaN.
    return rows / np.maximum(norms, np.float32(1e-12))


def in_length_order(
    texts: Sequence[str],
    batch_size: int,
    run: Callable[[list[str]], np.ndarray],
    dim: int | None = None,
) -> np.ndarray:
    """Run ``run`` on batches of texts sorted by length; rows come back in input order."""
    if batch_size < 1:
        raise ConfigError(f"The embeddings batch_size must be >= 1. Got {batch_size}.")
    texts = encodable(texts)
    if not texts:
        return np.zeros((0, dim or 0), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    chunks = []
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        chunks.append(run([texts[i] for i in chunk]))
    stacked = np.concatenate(chunks, axis=0)
    out = np.empty_like(stacked)
    out[np.asarray(order)] = stacked
    return out
