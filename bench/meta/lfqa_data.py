"""The team's copy of the LFQA-Verification data and what the lfqa scripts share: the data
folder beside the checkout (:data:`DATA`, :func:`load_lfqa`), the split of the questions in two
halves (:func:`question_split`) and the offline embedder with an on-disk cache
(:class:`CachedEmbedder`).

``lfqa.py`` (the suite's variants), ``fit_verifier.py``, ``fit_verifier_sources.py``,
``verifier_sources.py`` and ``lfqa_ablations.py`` import it; it imports none of them.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragmeter.metaeval import lfqa as suite
from ragmeter.metaeval.lfqa import Answer

__all__ = ["DATA", "ROOT", "CachedEmbedder", "load_lfqa", "question_split"]

ROOT = Path(__file__).resolve().parents[2]
#: The team's data folder, beside the checkout.
DATA = ROOT.parent / "shared" / "data" / suite.FOLDER


def load_lfqa(data: Path = DATA) -> list[Answer]:
    """The 600 annotated answers, each with the documents its annotators saw."""
    if not data.is_dir():
        raise SystemExit(f"LFQA data not found at {data}; expected ../shared/data beside the repo.")
    return suite.load_answers(data)


def question_split(answers: Sequence[Answer], *, seed: int = 0) -> tuple[set[int], set[int]]:
    """Question ids split in two halves (fit, held out), the same for every system."""
    ids = sorted({a.question_id for a in answers})
    random.Random(seed).shuffle(ids)
    half = len(ids) // 2
    return set(ids[:half]), set(ids[half:])


# ----------------------------------------------------------------------------- embeddings


class CachedEmbedder:
    """The offline embedder with an on-disk cache, so reruns skip the slow MiniLM pass.

    The cache is a ``.npz`` of texts and rows in ``$RAGMETER_CACHE_DIR`` (else
    ``~/.cache/ragmeter``)/bench; it belongs to one embedder (the file name says which).
    """

    def __init__(self, name: str = "offline") -> None:
        from ragmeter.models.embeddings import make_embedder

        root = Path(os.environ.get("RAGMETER_CACHE_DIR", Path.home() / ".cache" / "ragmeter"))
        self.path = root / "bench" / f"lfqa-embeddings-{name}.npz"
        self.inner = make_embedder(name)
        self.rows: dict[str, np.ndarray] = {}
        if self.path.is_file():
            with np.load(self.path, allow_pickle=False) as saved:
                self.rows = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.rows))
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self.rows[text] = np.asarray(row, dtype=np.float32)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(
                self.path,
                texts=np.array(list(self.rows), dtype=str),
                vectors=np.stack(list(self.rows.values())),
            )
        return np.stack([self.rows[t] for t in texts]) if texts else np.zeros((0, 384))
