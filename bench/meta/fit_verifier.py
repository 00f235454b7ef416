"""Fit the offline verifier's calibration on LFQA and print the constants for offline.py.

The verifier scores each (claim, document) cell with ``sigmoid(w · features + b)``; a claim's
support is its best document's; a sentence's predicted support is the mean over its claims.
The weights minimise the cross-entropy between that prediction and the human sentence score
(supported 1, partially 0.5, not_supported 0) with a small L2 penalty, on the *fit* half of
the questions (``lfqa.question_split``: the same questions for all six systems). The verdict
threshold is then chosen on the fit half to maximise the mean of three Spearman correlations
of the claim-verdict faithfulness (sentence level, answer level averaged over systems, answer
level pooled), with the hard conflict rules (``offline.hard_conflicts``) applied. Both halves
are reported, and a two-fold cross-fitted estimate over all answers.

Run::

    PYTHONPATH=src python bench/meta/fit_verifier.py [--semantic] [--no-clauses]
        [--no-pronouns]

and paste the printed ``Calibration(...)`` into ``src/ragmeter/judges/offline.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lfqa import Answer, CachedEmbedder, correlations, load_lfqa, question_split

from ragmeter.judges.offline import hard_conflicts

L2 = 1e-3


def build(
    answers: Sequence[Answer], judge: Any, *, clauses: bool, pronouns: bool
) -> dict[str, np.ndarray]:
    """Stack every claim's features against its answer's documents (padded to the widest)."""
    from ragmeter.judges.base import ClaimBlock
    from ragmeter.judges.offline_features import claims_by_sentence

    blocks, claim_sentence, sentence_answer = [], [], []
    sentence = 0
    for ai, a in enumerate(answers):
        per = claims_by_sentence(a.sentences, clauses=clauses, resolve_pronouns=pronouns)
        claims = []
        for cs in per:
            if not cs:  # no tokens: keep the sentence with one empty claim (scores 0)
                cs = [""]
            claims += cs
            claim_sentence += [sentence] * len(cs)
            sentence_answer.append(ai)
            sentence += 1
        blocks.append(ClaimBlock(claims, a.documents))
    feats = judge.features(blocks)
    width = max(f.shape[1] for f in feats)
    n_claims = sum(f.shape[0] for f in feats)
    x = np.zeros((n_claims, width, feats[0].shape[2]))
    mask = np.zeros((n_claims, width), dtype=bool)
    row = 0
    for f in feats:
        x[row : row + f.shape[0], : f.shape[1]] = f
        mask[row : row + f.shape[0], : f.shape[1]] = True
        row += f.shape[0]
    return {
        "x": x,
        "mask": mask,
        "claim_sentence": np.asarray(claim_sentence),
        "sentence_answer": np.asarray(sentence_answer),
        "y": np.asarray([h for a in answers for h in a.human]),
    }


def _predict(params: np.ndarray, d: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    w, b = params[:-1], params[-1]
    p = 1.0 / (1.0 + np.exp(-(d["x"] @ w + b)))
    p = np.where(d["mask"], p, -1.0)
    best = p.argmax(axis=1)
    pc = p[np.arange(len(p)), best]
    counts = np.bincount(d["claim_sentence"], minlength=len(d["y"]))
    ps = np.bincount(d["claim_sentence"], weights=pc, minlength=len(d["y"])) / counts
    return pc, ps, best, counts


def _loss(params: np.ndarray, d: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
    pc, ps, best, counts = _predict(params, d)
    y = d["y"]
    ps = np.clip(ps, 1e-6, 1 - 1e-6)
    loss = -np.mean(y * np.log(ps) + (1 - y) * np.log(1 - ps)) + L2 * np.sum(params[:-1] ** 2)
    dps = (ps - y) / (ps * (1 - ps)) / len(y)
    dpc = dps[d["claim_sentence"]] / counts[d["claim_sentence"]]
    dz = dpc * pc * (1 - pc)
    xb = d["x"][np.arange(len(pc)), best]
    grad = np.concatenate([dz @ xb + 2 * L2 * params[:-1], [dz.sum()]])
    return float(loss), grad


def scores(
    params: np.ndarray, threshold: float | None, d: dict[str, np.ndarray]
) -> tuple[list[float], list[list[float]]]:
    """Answer and sentence scores: soft (threshold None) or verdict faithfulness."""
    w, b = params[:-1], params[-1]
    p = 1.0 / (1.0 + np.exp(-(d["x"] @ w + b)))
    if threshold is None:
        cell = np.where(d["mask"], p, 0.0)
    else:
        cell = ((p >= threshold) & ~hard_conflicts(d["x"]) & d["mask"]).astype(float)
    per_claim = cell.max(axis=1)
    n_sent = len(d["y"])
    counts = np.bincount(d["claim_sentence"], minlength=n_sent)
    sent = np.bincount(d["claim_sentence"], weights=per_claim, minlength=n_sent) / counts
    claim_answer = d["sentence_answer"][d["claim_sentence"]]
    n_ans = d["sentence_answer"].max() + 1
    answer = np.bincount(claim_answer, weights=per_claim, minlength=n_ans) / np.bincount(
        claim_answer, minlength=n_ans
    )
    bounds = np.searchsorted(d["sentence_answer"], np.arange(n_ans + 1))
    return list(answer), [list(sent[bounds[i] : bounds[i + 1]]) for i in range(n_ans)]


def _summary(c: dict[str, Any]) -> tuple[float, float, float]:
    return (
        c["answer_average"]["spearman"] or 0.0,
        c["answer_pooled"]["spearman"] or 0.0,
        c["sentence"]["spearman"] or 0.0,
    )


def fit(answers: Sequence[Answer], d: dict[str, np.ndarray]) -> tuple[np.ndarray, float]:
    """Weights (last: bias) by cross-entropy, then the verdict threshold on the same data."""
    start = np.zeros(d["x"].shape[2] + 1)
    params = minimize(_loss, start, args=(d,), jac=True, method="L-BFGS-B").x
    best_t, best_v = 0.5, -1.0
    for t in np.arange(0.20, 0.81, 0.02):
        c = correlations(answers, *scores(params, float(t), d))
        v = float(np.mean(_summary(c)))
        if v > best_v:
            best_t, best_v = float(round(t, 2)), v
    return params, best_t


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", action="store_true", help="fit the MiniLM variant")
    parser.add_argument("--no-clauses", action="store_true")
    parser.add_argument("--no-pronouns", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    from ragmeter.judges.offline import (
        LEXICAL_CALIBRATION,
        SEMANTIC_CALIBRATION,
        Calibration,
        OfflineJudge,
    )

    base = SEMANTIC_CALIBRATION if args.semantic else LEXICAL_CALIBRATION
    embedder = CachedEmbedder() if args.semantic else None
    judge = OfflineJudge(embedder=embedder, calibration=base)
    answers = load_lfqa()
    fit_ids, held_ids = question_split(answers)
    halves = {
        "fit": [a for a in answers if a.question_id in fit_ids],
        "heldout": [a for a in answers if a.question_id in held_ids],
    }
    t0 = time.perf_counter()
    data = {
        k: build(v, judge, clauses=not args.no_clauses, pronouns=not args.no_pronouns)
        for k, v in halves.items()
    }
    print(f"features in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    params, best_t = fit(halves["fit"], data["fit"])

    print("| questions | scores | answer ρ avg | answer ρ pooled | sentence ρ |")
    print("|---|---|---|---|---|")
    for half in ("fit", "heldout"):
        for label, t in (("soft support", None), (f"verdicts (t={best_t})", best_t)):
            c = correlations(halves[half], *scores(params, t, data[half]))
            a, p, s = _summary(c)
            print(f"| {half} half | {label} | {a:.3f} | {p:.3f} | {s:.3f} |")
    # Two-fold cross-fitting: each half scored by the model fitted on the other half, so
    # all 600 answers get an out-of-sample score (less noisy than one half's 50 per system).
    other = {"fit": "heldout", "heldout": "fit"}
    for soft in (True, False):
        answer_scores: list[float] = []
        sentence_scores: list[list[float]] = []
        ordered: list[Answer] = []
        for half in ("fit", "heldout"):
            p_other, t_other = fit(halves[other[half]], data[other[half]])
            a_s, s_s = scores(p_other, None if soft else t_other, data[half])
            answer_scores += a_s
            sentence_scores += s_s
            ordered += halves[half]
        a, p, s = _summary(correlations(ordered, answer_scores, sentence_scores))
        label = "soft support" if soft else "verdicts"
        print(f"| all, 2-fold out-of-sample | {label} | {a:.3f} | {p:.3f} | {s:.3f} |")

    cal = Calibration(
        features=base.features,
        weights=tuple(round(float(v), 4) for v in params[:-1]),
        bias=round(float(params[-1]), 4),
        threshold=best_t,
        data=base.data,
        note="fitted by bench/meta/fit_verifier.py",
    )
    print("\n# paste into src/ragmeter/judges/offline.py")
    print(repr(cal))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
