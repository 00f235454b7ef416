"""Fit the offline verifier's calibration on LFQA and print the constants for offline.py.

The verifier scores each (claim, document) cell with ``sigmoid(w · features + b)``; a claim's
support is its best document's; a sentence's predicted support is the mean over its claims.
The weights minimise the cross-entropy between that prediction and the human sentence score
(supported 1, partially 0.5, not_supported 0) with a small L2 penalty. The verdict threshold
is then chosen on the same data to maximise the mean of three Spearman correlations of the
claim-verdict faithfulness (sentence level, answer level averaged over systems, answer level
pooled), with the hard conflict rules (``offline.hard_conflicts``) applied.

The shipped constants are fitted on all 600 answers (3,993 sentences). The script prints
those in-sample numbers next to two out-of-sample estimates of the same procedure:

* leave one system out: fit on five of the six systems, score the sixth, for each system;
* two folds of questions (``lfqa.question_split``): fit on one half, score the other.

``soft support`` is ``faithfulness_support`` (mean support probability), ``verdicts`` is
``faithfulness`` (share of claims entailed).

Run::

    PYTHONPATH=src python bench/meta/fit_verifier.py [--features all|v1|a,b,c] [--semantic]
        [--no-clauses] [--no-pronouns] [--no-2fold]

and paste the printed ``Calibration(...)`` into ``src/ragmeter/judges/offline/calibration.py``.
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

from lfqa_data import CachedEmbedder, load_lfqa, question_split

from ragmeter.judges.offline.calibration import hard_conflicts
from ragmeter.metaeval.lfqa import Answer, correlations

L2 = 1e-3


def build(
    answers: Sequence[Answer], judge: Any, *, clauses: bool, pronouns: bool
) -> dict[str, np.ndarray]:
    """Stack every claim's features against its answer's documents (padded to the widest)."""
    from ragmeter.judges.base import ClaimBlock
    from ragmeter.judges.offline.regex_claims import claims_by_sentence

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


def select(d: dict[str, np.ndarray], columns: Sequence[int]) -> dict[str, np.ndarray]:
    """``d`` with only the feature ``columns`` in ``x`` (the full array kept as ``full``)."""
    out = dict(d)
    out["full"] = d.get("full", d["x"])
    out["x"] = out["full"][..., list(columns)]
    return out


def subset(d: dict[str, np.ndarray], answers: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of ``d`` that belong to the answers flagged in ``answers`` (a boolean mask)."""
    keep_sentence = answers[d["sentence_answer"]]
    keep_claim = keep_sentence[d["claim_sentence"]]
    new_sentence = np.cumsum(keep_sentence) - 1
    new_answer = np.cumsum(answers) - 1
    out = {k: v[keep_claim] for k, v in d.items() if k in ("x", "mask", "full")}
    out["claim_sentence"] = new_sentence[d["claim_sentence"][keep_claim]]
    out["sentence_answer"] = new_answer[d["sentence_answer"][keep_sentence]]
    out["y"] = d["y"][keep_sentence]
    return out


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
        conflicts = hard_conflicts(d.get("full", d["x"]))
        cell = ((p >= threshold) & ~conflicts & d["mask"]).astype(float)
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


def _presets() -> dict[str, tuple[str, ...]]:
    """Named feature sets: the first verifier's (``v1``) and every lexical feature."""
    from ragmeter.judges.offline.features import ALL_LEXICAL_FEATURES, LEXICAL_FEATURES

    return {"v1": LEXICAL_FEATURES, "all": ALL_LEXICAL_FEATURES}


def out_of_sample(
    answers: Sequence[Answer], data: dict[str, np.ndarray], groups: Sequence[Any]
) -> dict[str, tuple[list[float], list[list[float]]]]:
    """Scores of every answer by the model fitted without its group (soft and verdicts)."""
    keys = np.asarray(groups)
    out: dict[str, tuple[list[float], list[list[float]]]] = {}
    answer_scores: dict[str, list[float]] = {"soft": [0.0] * len(answers), "verdicts": []}
    answer_scores["verdicts"] = [0.0] * len(answers)
    sentence_scores: dict[str, list[list[float]]] = {
        "soft": [[] for _ in answers],
        "verdicts": [[] for _ in answers],
    }
    for group in dict.fromkeys(groups):
        test = keys == group
        train_answers = [a for a, t in zip(answers, test, strict=True) if not t]
        params, threshold = fit(train_answers, subset(data, ~test))
        rows = np.flatnonzero(test)
        for label, t in (("soft", None), ("verdicts", threshold)):
            a_s, s_s = scores(params, t, subset(data, test))
            for row, a_v, s_v in zip(rows, a_s, s_s, strict=True):
                answer_scores[label][row] = a_v
                sentence_scores[label][row] = s_v
    for label in ("soft", "verdicts"):
        out[label] = (answer_scores[label], sentence_scores[label])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", action="store_true", help="fit the MiniLM variant")
    parser.add_argument("--no-clauses", action="store_true")
    parser.add_argument("--no-pronouns", action="store_true")
    parser.add_argument(
        "--features",
        default="all",
        help="'v1', 'all' (every lexical feature) or a comma-separated list of feature names",
    )
    parser.add_argument("--no-2fold", action="store_true", help="skip the question 2-fold")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

    from ragmeter.judges.offline.calibration import ALL_FEATURES, Calibration
    from ragmeter.judges.offline.judge import OfflineJudge

    presets = _presets()
    names = presets.get(args.features) or tuple(
        f.strip() for f in args.features.split(",") if f.strip()
    )
    if args.semantic:
        names = (*names, "semantic")
    # A probe calibration that asks for every feature, so one pass computes them all.
    probe_names = tuple(f for f in ALL_FEATURES if f != "semantic" or args.semantic)
    probe = Calibration(
        features=probe_names,
        weights=(0.0,) * len(probe_names),
        bias=0.0,
        threshold=0.5,
        data="probe",
        note="computes every feature",
    )
    embedder = CachedEmbedder() if args.semantic else None
    judge = OfflineJudge(embedder=embedder, calibration=probe)
    answers = load_lfqa()
    t0 = time.perf_counter()
    full = build(answers, judge, clauses=not args.no_clauses, pronouns=not args.no_pronouns)
    print(f"features in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    data = select(full, [ALL_FEATURES.index(n) for n in names])

    print(f"features: {', '.join(names)}\n")
    print("| fitted on | scored on | scores | answer ρ avg | answer ρ pooled | sentence ρ |")
    print("|---|---|---|---|---|---|")

    def line(fitted: str, scored: str, label: str, c: dict[str, Any]) -> None:
        a, p, s = _summary(c)
        print(f"| {fitted} | {scored} | {label} | {a:.3f} | {p:.3f} | {s:.3f} |")

    params, best_t = fit(answers, data)
    for label, t in (("soft support", None), (f"verdicts (t={best_t})", best_t)):
        c = correlations(answers, *scores(params, t, data))
        line("all 600", "the same 600 (in-sample)", label, c)
    loso = out_of_sample(answers, data, [a.system for a in answers])
    for label, (a_s, s_s) in loso.items():
        line("5 systems", "the 6th, each in turn", label, correlations(answers, a_s, s_s))
    if not args.no_2fold:
        fit_ids, _ = question_split(answers)
        halves = ["fit" if a.question_id in fit_ids else "heldout" for a in answers]
        two = out_of_sample(answers, data, halves)
        for label, (a_s, s_s) in two.items():
            line("half the questions", "the other half", label, correlations(answers, a_s, s_s))

    cal = Calibration(
        features=names,
        weights=tuple(round(float(v), 4) for v in params[:-1]),
        bias=round(float(params[-1]), 4),
        threshold=best_t,
        data="lfqa_verification (Chen et al. 2023), all 600 answers / 3,993 sentences",
        note="fitted by bench/meta/fit_verifier.py"
        + (f" --features {args.features}" if args.features != "all" else ""),
    )
    print("\n# paste into src/ragmeter/judges/offline/calibration.py")
    print(repr(cal))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
