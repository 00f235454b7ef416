"""How much leaving the question's words out changes the token metrics on RAGChecker's data.

``new_token_precision`` / ``_recall`` / ``_f1`` are ``token_*`` with every word of the
question dropped from the answer and the reference. This prints, for both versions:

* Pearson x 100 with the human labels per aspect (RAGChecker's procedure, as the suite);
* correctness Pearson per source dataset;
* a paired bootstrap (pairs resampled, 2,000 draws) of the gain in correctness Pearson;
* agreement with RAGChecker's own per-answer precision (its 70B judge), Pearson and
  Spearman over the answers it scored.

Run::

    PYTHONPATH=src python bench/meta/ragchecker_new_tokens.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, spearmanr

from ragmeter.metaeval.common import shared_data_dir
from ragmeter.metaeval.ragchecker import ASPECTS, delta_correlation, load
from ragmeter.metrics.lexical import LexicalFamily
from ragmeter.types import Sample

#: The team's data folder, beside the checkout.
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

PAIRS = (
    ("token_precision", "new_token_precision"),
    ("token_recall", "new_token_recall"),
    ("token_f1", "new_token_f1"),
)


def _pearson(deltas: np.ndarray, labels: np.ndarray) -> float:
    return float(np.corrcoef(np.repeat(deltas, 2), labels)[0, 1] * 100)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help=f"data folder (default {DATA})")
    parser.add_argument("--draws", type=int, default=2000)
    args = parser.parse_args(argv)
    pairs, _ = load(shared_data_dir(args.data))

    samples = [
        Sample(question=p["query"], answer=r, reference_answers=(p["gt_answer"],))
        for p in pairs
        for r in p["responses"]
    ]
    names = [n for pair in PAIRS for n in pair]
    rows = LexicalFamily().score_samples(samples, names)
    values = {n: np.array([row[n].value for row in rows], dtype=float) for n in names}
    if any(np.isnan(v).any() for v in values.values()):
        raise SystemExit("An undefined score: every answer here has a reference.")
    deltas = {n: v[1::2] - v[0::2] for n, v in values.items()}
    labels = {a: np.array([x for p in pairs for x in p["labels"][a]], float) for a in ASPECTS}

    print(f"RAGChecker meta-evaluation: {len(pairs)} pairs, Pearson x 100 (suite's procedure)\n")
    print("| metric | " + " | ".join(ASPECTS) + " |")
    print("|---|" + "---|" * len(ASPECTS))
    for name in names:
        first, second = values[name][0::2].tolist(), values[name][1::2].tolist()
        cells = [
            f"{delta_correlation(first, second, labels[a].tolist())['pearson']:.2f}"
            for a in ASPECTS
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")

    datasets = sorted({p["dataset"].split("/")[0] for p in pairs})
    print("\nCorrectness Pearson x 100 per source dataset\n")
    print("| dataset | pairs | token_precision | new_token_precision |")
    print("|---|---|---|---|")
    for ds in datasets:
        idx = np.array([i for i, p in enumerate(pairs) if p["dataset"].split("/")[0] == ds])
        lab = labels["correctness"].reshape(-1, 2)[idx].reshape(-1)
        old = _pearson(deltas["token_precision"][idx], lab)
        new = _pearson(deltas["new_token_precision"][idx], lab)
        print(f"| {ds} | {len(idx)} | {old:.1f} | {new:.1f} |")

    rng = np.random.default_rng(0)
    by_pair = labels["correctness"].reshape(-1, 2)
    gains: dict[str, list[float]] = {old: [] for old, _ in PAIRS}
    for _ in range(args.draws):
        idx = rng.integers(0, len(pairs), len(pairs))
        lab = by_pair[idx].reshape(-1)
        for old, new in PAIRS:
            gains[old].append(_pearson(deltas[new][idx], lab) - _pearson(deltas[old][idx], lab))
    print(f"\nGain in correctness Pearson x 100, paired bootstrap ({args.draws} draws, seed 0)\n")
    print("| new vs old | mean gain | 95 % interval | share of draws > 0 |")
    print("|---|---|---|---|")
    for old, new in PAIRS:
        g = np.asarray(gains[old])
        lo, hi = np.percentile(g, [2.5, 97.5])
        print(f"| {new} vs {old} | {g.mean():.2f} | [{lo:.2f}, {hi:.2f}] | {(g > 0).mean():.3f} |")

    judged = [
        (2 * i + k, float(v))
        for i, p in enumerate(pairs)
        for k, v in enumerate(p["ragchecker"]["correctness"])
        if v is not None and v == v
    ]
    where = np.array([i for i, _ in judged])
    theirs = np.array([v for _, v in judged])
    print(f"\nAgreement with RAGChecker's per-answer precision (70B judge, {len(judged)} rows)\n")
    print("| metric | Pearson | Spearman |")
    print("|---|---|---|")
    for name in ("token_precision", "new_token_precision"):
        ours = values[name][where]
        print(
            f"| {name} | {pearsonr(ours, theirs).statistic:.3f} "
            f"| {spearmanr(ours, theirs).statistic:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
