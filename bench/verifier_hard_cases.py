"""The claim verifier's model on fresh hard cases (``training/hard_cases.py``), by kind.

Draws about 1,500 pairs with seed 99 from 600 shuffled source paragraphs (the training half of
WiCE's evidence and negation_nli's MNLI premises, as training does with seed 13): new
sentences and edits, though a sentence may also have been drawn for training. Prints each
model's accuracy (entailed vs not at p(entailment) >= 0.5) overall and by kind, so the kinds
a model has and has not learnt are visible; compare the shipped model with an earlier one.

Run::

    PYTHONPATH=src .venv/bin/python bench/verifier_hard_cases.py [MODEL_DIR ...]
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "training"))

import numpy as np  # noqa: E402
import verifier_data  # noqa: E402

from ragmeter.models.claim_verifier import ClaimVerifierModel  # noqa: E402


def main(folders: list[str]) -> int:
    paragraphs = verifier_data.source_paragraphs(ROOT.parent / "shared" / "data" / "nli")
    random.Random(5).shuffle(paragraphs)
    pairs = verifier_data.hard_pairs(paragraphs[:600], n=1500, seed=99)
    for folder in folders or [None]:
        model = ClaimVerifierModel(folder)
        p = model.probabilities([(x.premise, x.hypothesis) for x in pairs]).entailment
        right: dict[str, list[bool]] = defaultdict(list)
        for pair, value in zip(pairs, p, strict=True):
            right[pair.source.split(":")[1].split("+")[0]].append(
                (pair.label == 0) == (value >= 0.5)
            )
        overall = np.mean([x for v in right.values() for x in v])
        print(f"{model.name}: accuracy {overall:.3f} on {len(pairs)} pairs")
        print("  " + " ".join(f"{k}={np.mean(v):.2f}" for k, v in sorted(right.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
