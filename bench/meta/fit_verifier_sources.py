"""Fit the offline verifier's combination (lexical support + the trained model) across
sources, and report leave-one-source-out numbers next to K-Precision's and the old
verifier's.

The verifier scores each (claim, premise) cell with ``sigmoid(w · features + b)``; a
claim's support is its best premise's; an item's (a sentence's or a hypothesis') predicted
support is the mean over its claims. Weights minimise the cross-entropy between that and the
item's target (each source weighs the same in total; L2 on the weights); the verdict
threshold then maximises the mean balanced accuracy over the fitted sources (an item is
predicted entailed when at least half of its claims are entailed, hard conflicts applied).

Sources (``verifier_sources.py``): fitted ``lfqa``, ``wice`` (held-out half), ``ragchecker``,
``snli`` (pairs the model never saw); checked only ``rte``, ``sick``, ``scifact``,
``healthver``, ``covidfact``, ``climate_fever``. For each fitted source the numbers come from
a fit without that source; the check-only sources are scored by the fit on all four.
LFQA is also scored leave-one-system-out (fit on the other sources and five LFQA systems),
the protocol of ``docs/validity.md``'s LFQA targets.

LFQA sentences are cut into claims with the shipped splitter (as at run time); the other
sources' hypotheses are one claim each. Features are cached under ``bench/out/``.

Run::

    PYTHONPATH=src python bench/meta/fit_verifier_sources.py [--features all|small]

and paste the printed ``Calibration(...)`` into ``src/ragmeter/judges/offline/calibration.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.stats import rankdata

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verifier_sources import CHECK_SOURCES, FIT_SOURCES, ROOT, Item, load

L2 = 1e-3
#: The content-share rule in force (``--min-share``): hard conflict at or below it, and the
#: model features zeroed there (the model is not run on those cells at run time).
SHARE = [0.5]
OUT = ROOT / "bench" / "out"

SMALL = (
    "token_precision",
    "content_precision",
    "idf_precision",
    "idf_window",
    "sentence_precision",
    "missing_content",
    "idf_missing",
    "missing_names",
    "negation_mismatch",
    "nli_entailment",
    "nli_contradiction",
    "nli_max_contradiction",
    "nli_checked",
)


# ----------------------------------------------------------------------------- features


def build(items: Sequence[Item], judge: Any, *, split: bool, batch: int = 64) -> dict:
    """Features of every claim against its item's premises (padded to the widest)."""
    from ragmeter.judges.base import ClaimBlock
    from ragmeter.metaeval.lfqa import sentence_claims

    texts = [it.text for it in items]
    claims = sentence_claims(judge, texts) if split else [[t] for t in texts]
    width = max(len(it.premises) for it in items)
    n_claims = sum(len(c) for c in claims)
    feats = None
    mask = np.zeros((n_claims, width), dtype=bool)
    claim_item = np.repeat(np.arange(len(items)), [len(c) for c in claims])
    row = 0
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        blocks = [
            ClaimBlock(tuple(c), tuple(it.premises))
            for c, it in zip(claims[start : start + batch], chunk, strict=True)
        ]
        for _block, f in zip(blocks, judge.features(blocks), strict=True):
            if feats is None:
                feats = np.zeros((n_claims, width, f.shape[-1]))
            k, m = f.shape[0], f.shape[1]
            feats[row : row + k, :m] = f
            mask[row : row + k, :m] = True
            row += k
    return {
        "x": feats,
        "mask": mask,
        "claim_item": claim_item,
        "y": np.array([it.target for it in items]),
    }


#: Features are built with the model gated at this content share (the lowest any variant
#: uses); a variant's own gate zeroes the model features above it (``fit_data``).
FEATURE_GATE = 0.25


def cache_key(source: str, items: Sequence[Item], model_name: str) -> str:
    from ragmeter.judges.offline.calibration import VERSION

    text = f"{source}|{len(items)}|{VERSION}|{model_name}|{items[0].text}|{items[-1].text}"
    return hashlib.sha256(f"{text}|gate{FEATURE_GATE}".encode()).hexdigest()[:16]


def cached_build(source: str, items: Sequence[Item], judge: Any) -> dict:
    from dataclasses import replace

    from ragmeter.judges.offline.judge import OfflineJudge

    model = judge._model_or_load()
    calibration = replace(judge.calibration, min_content_share=FEATURE_GATE)
    judge = OfflineJudge(calibration=calibration, model=model, skip_decided=False)
    key = cache_key(source, items, model.name)
    path = OUT / f"verifier-features-{source}-{key}.npz"
    if path.exists():
        with np.load(path) as f:
            return dict(f)
    t = time.time()
    before = judge.model_pairs
    data = build(items, judge, split=source == "lfqa")
    print(
        f"  {source}: {len(items)} items, {len(data['claim_item'])} claims, "
        f"{judge.model_pairs - before} model pairs, {time.time() - t:.0f} s",
        flush=True,
    )
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **data)
    return data


# ----------------------------------------------------------------------------- model


def _cells(params: np.ndarray, d: dict, columns: np.ndarray) -> np.ndarray:
    z = d["x"][..., columns] @ params[:-1] + params[-1]
    return np.where(d["mask"], 1.0 / (1.0 + np.exp(-z)), -1.0)


def item_mean(claim_values: np.ndarray, d: dict) -> np.ndarray:
    """Each item's mean over its claims of ``claim_values``."""
    n = len(d["y"])
    counts = np.bincount(d["claim_item"], minlength=n)
    return np.bincount(d["claim_item"], weights=claim_values, minlength=n) / counts


def item_support(params: np.ndarray, d: dict, columns: np.ndarray) -> np.ndarray:
    return item_mean(per_claim(params, None, d, columns), d)


def item_verdict(params: np.ndarray, threshold: float, d: dict, columns: np.ndarray) -> np.ndarray:
    """Share of each item's claims entailed (hard conflicts applied)."""
    return item_mean(per_claim(params, threshold, d, columns), d)


def _loss(params: np.ndarray, parts: Sequence[dict], columns: np.ndarray) -> tuple[float, Any]:
    total, grad = 0.0, np.zeros_like(params)
    for d in parts:
        p = _cells(params, d, columns)
        best = p.argmax(axis=1)
        pc = p[np.arange(len(p)), best]
        n = len(d["y"])
        counts = np.bincount(d["claim_item"], minlength=n)
        ps = np.bincount(d["claim_item"], weights=pc, minlength=n) / counts
        ps = np.clip(ps, 1e-6, 1 - 1e-6)
        y = d["y"]
        total += -np.mean(y * np.log(ps) + (1 - y) * np.log(1 - ps))
        dps = (ps - y) / (ps * (1 - ps)) / n
        dpc = dps[d["claim_item"]] / counts[d["claim_item"]]
        dz = dpc * pc * (1 - pc)
        xb = d["x"][np.arange(len(pc)), best][:, columns]
        grad[:-1] += dz @ xb
        grad[-1] += dz.sum()
    total += L2 * float(np.sum(params[:-1] ** 2))
    grad[:-1] += 2 * L2 * params[:-1]
    return total / 1.0, grad


def balanced_accuracy(pred: np.ndarray, y: np.ndarray) -> float:
    pos = y > 0.5
    if pos.all() or (~pos).all():
        return float((pred == pos).mean())
    return float((pred[pos].mean() + (~pred[~pos]).mean()) / 2)


def auroc(score: np.ndarray, y: np.ndarray) -> float:
    pos = y > 0.5
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if not n_pos or not n_neg:
        return float("nan")
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def fit(parts: Sequence[dict], columns: np.ndarray) -> tuple[np.ndarray, float]:
    start = np.zeros(len(columns) + 1)
    params = minimize(_loss, start, args=(parts, columns), jac=True, method="L-BFGS-B").x
    best_t, best_v = 0.5, -1.0
    for t in np.arange(0.20, 0.86, 0.01):
        v = np.mean(
            [
                balanced_accuracy(item_verdict(params, float(t), d, columns) >= 0.5, d["y"])
                for d in parts
            ]
        )
        if v > best_v:
            best_t, best_v = round(float(t), 2), float(v)
    return params, best_t


# ----------------------------------------------------------------------------- report


def evaluate(params: np.ndarray, threshold: float, d: dict, columns: np.ndarray) -> dict:
    from ragmeter.judges.offline.calibration import ALL_FEATURES

    kp = d["x"][..., ALL_FEATURES.index("token_precision")]
    kp = np.where(d["mask"], kp, -1).max(axis=1)
    n = len(d["y"])
    kp_item = item_mean(kp, d)
    verdict = item_verdict(params, threshold, d, columns)
    from ragmeter.judges.offline.calibration import LEXICAL_CALIBRATION as v2

    v2_columns = np.array([ALL_FEATURES.index(f) for f in v2.features])
    v2_params = np.array([*v2.weights, v2.bias])
    v2_verdict = item_verdict(v2_params, v2.threshold, d, v2_columns)
    return {
        "n": n,
        "auroc": auroc(item_support(params, d, columns), d["y"]),
        "balanced_accuracy": balanced_accuracy(verdict >= 0.5, d["y"]),
        "k_precision_auroc": auroc(kp_item, d["y"]),
        "v2_auroc": auroc(item_support(v2_params, d, v2_columns), d["y"]),
        "v2_balanced_accuracy": balanced_accuracy(v2_verdict >= 0.5, d["y"]),
    }


def subset(d: dict, keep_items: np.ndarray) -> dict:
    """The items where ``keep_items`` is True (their claims, renumbered)."""
    keep_claims = keep_items[d["claim_item"]]
    renumber = np.cumsum(keep_items) - 1
    return {
        "x": d["x"][keep_claims],
        "mask": d["mask"][keep_claims],
        "claim_item": renumber[d["claim_item"][keep_claims]],
        "y": d["y"][keep_items],
    }


def per_claim(params: np.ndarray, threshold: float | None, d: dict, columns: np.ndarray):
    """Each claim's support (``threshold`` None) or verdict (0/1, hard conflicts applied)."""
    from ragmeter.judges.offline.calibration import hard_conflicts

    p = _cells(params, d, columns)
    if threshold is None:
        return np.where(d["mask"], p, 0.0).max(axis=1)
    cell = (p >= threshold) & ~hard_conflicts(d["x"], SHARE[0]) & d["mask"]
    return cell.any(axis=1).astype(float)


def lfqa_spearman(claim_values: np.ndarray, d: dict) -> dict[str, float]:
    """LFQA's three numbers from per-claim values of every LFQA item (in load order):
    Spearman of answer scores (mean over the answer's claims) averaged over systems and
    pooled, and of sentence scores (mean over the sentence's claims), as
    ``bench/meta/lfqa.py`` computes them."""
    from lfqa_data import DATA, load_lfqa

    from ragmeter.metaeval.lfqa import correlations

    answers = load_lfqa(DATA)
    sentence = item_mean(claim_values, d)
    answer_of_item = np.repeat(np.arange(len(answers)), [len(a.sentences) for a in answers])
    claim_answer = answer_of_item[d["claim_item"]]
    whole = np.bincount(claim_answer, weights=claim_values, minlength=len(answers))
    whole /= np.bincount(claim_answer, minlength=len(answers))
    bounds = np.cumsum([0, *[len(a.sentences) for a in answers]])
    per_answer = [list(sentence[bounds[i] : bounds[i + 1]]) for i in range(len(answers))]
    return correlations(answers, list(whole), per_answer)


def lfqa_protocols(data: dict, columns: np.ndarray, systems: Sequence[str]) -> dict:
    """LFQA's numbers, support and verdicts, by a fit without LFQA (leave-one-source-out)
    and by fits without one LFQA system each (leave-one-system-out, the other sources in)."""
    others = [data[s] for s in FIT_SOURCES if s != "lfqa"]
    lfqa = data["lfqa"]
    out: dict[str, dict[str, float]] = {}
    params, threshold = fit(others, columns)
    out["support, leave-one-source-out"] = lfqa_spearman(
        per_claim(params, None, lfqa, columns), lfqa
    )
    out["verdicts, leave-one-source-out"] = lfqa_spearman(
        per_claim(params, threshold, lfqa, columns), lfqa
    )
    keys = np.array(systems)
    soft = np.zeros(len(lfqa["claim_item"]))
    hard = np.zeros(len(lfqa["claim_item"]))
    for system in dict.fromkeys(systems):
        test = keys == system
        params, threshold = fit([*others, subset(lfqa, ~test)], columns)
        claims = test[lfqa["claim_item"]]
        soft[claims] = per_claim(params, None, subset(lfqa, test), columns)
        hard[claims] = per_claim(params, threshold, subset(lfqa, test), columns)
    out["support, leave-one-system-out"] = lfqa_spearman(soft, lfqa)
    out["verdicts, leave-one-system-out"] = lfqa_spearman(hard, lfqa)
    return out


def fit_data(judge: Any, items: dict[str, Sequence[Item]], share: float) -> dict[str, dict]:
    """Features of each source's ``items`` (cached, built at ``FEATURE_GATE``), the model
    features zeroed where a verifier gated at ``share`` does not run the model; ``share``
    becomes the content-share rule in force (``SHARE``)."""
    from ragmeter.judges.offline.calibration import ALL_FEATURES
    from ragmeter.judges.offline.model_features import NLI_FEATURES

    data = {s: cached_build(s, its, judge) for s, its in items.items()}
    SHARE[0] = share
    nli = np.array([ALL_FEATURES.index(n) for n in NLI_FEATURES])
    from ragmeter.judges.offline.calibration import GATE_FEATURE

    content = ALL_FEATURES.index(GATE_FEATURE)
    for d in data.values():
        off = d["x"][..., content] <= share
        d["x"][..., nli] = np.where(off[..., None], 0.0, d["x"][..., nli])
    return data


def lfqa_leave_one_system_out(answers: Sequence[Any], judge: Any) -> dict[str, Any]:
    """``bench/meta/lfqa.py --loso`` for a judge with the trained model: the judge's
    features refitted on the other sources and five LFQA systems, scored on the sixth."""
    from ragmeter.judges.offline.calibration import ALL_FEATURES

    data = fit_data(judge, {s: load(s) for s in FIT_SOURCES}, judge.calibration.min_content_share)
    if len(answers) != len({it.group.rsplit("/", 1)[0] for it in load("lfqa")}):
        raise SystemExit("--loso with the trained model needs all 600 LFQA answers (no --limit).")
    columns = np.array([ALL_FEATURES.index(f) for f in judge.calibration.features])
    systems = [it.group.split("/")[0] for it in load("lfqa")]
    found = lfqa_protocols(data, columns, systems)
    return {
        "faithfulness, leave-one-system-out refit": found["verdicts, leave-one-system-out"],
        "faithfulness_support, leave-one-system-out refit": found["support, leave-one-system-out"],
        "faithfulness, leave-one-source-out fit": found["verdicts, leave-one-source-out"],
        "faithfulness_support, leave-one-source-out fit": found["support, leave-one-source-out"],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", default="all", help="all | small | a,b,c")
    parser.add_argument("--check", default=",".join(CHECK_SOURCES))
    parser.add_argument("--limit", type=int, default=0, help="at most N items a source (debug)")
    parser.add_argument("--min-share", type=float, default=0.5)
    parser.add_argument(
        "--no-rules",
        action="store_true",
        help="ablation: without the polarity, antonym and role conflict rules",
    )
    args = parser.parse_args(argv)

    from ragmeter.judges.offline.calibration import ALL_FEATURES, MODEL_CALIBRATION
    from ragmeter.judges.offline.features import ALL_LEXICAL_FEATURES
    from ragmeter.judges.offline.judge import OfflineJudge
    from ragmeter.judges.offline.model_features import NLI_FEATURES

    if args.features == "all":
        names = (*ALL_LEXICAL_FEATURES, *NLI_FEATURES)
    elif args.features == "small":
        names = SMALL
    else:
        names = tuple(args.features.split(","))
    columns = np.array([ALL_FEATURES.index(n) for n in names])
    judge = OfflineJudge(calibration=MODEL_CALIBRATION)
    print("features ...", flush=True)
    items = {s: load(s) for s in FIT_SOURCES}
    checks = [s for s in args.check.split(",") if s]
    items |= {s: load(s) for s in checks}
    if args.limit:
        items = {s: its[: args.limit] for s, its in items.items()}
    data = fit_data(judge, items, args.min_share)
    if args.no_rules:
        from ragmeter.judges.offline.conflicts import CONFLICT_RULE_FEATURES

        rules = [ALL_FEATURES.index(n) for n in CONFLICT_RULE_FEATURES]
        for d in data.values():
            d["x"][..., rules] = 0.0

    rows = []
    for held in FIT_SOURCES:
        parts = [data[s] for s in FIT_SOURCES if s != held]
        params, threshold = fit(parts, columns)
        rows.append(
            (held, "leave-one-source-out", evaluate(params, threshold, data[held], columns))
        )
    params, threshold = fit([data[s] for s in FIT_SOURCES], columns)
    for s in FIT_SOURCES:
        rows.append((s, "in-sample (all four)", evaluate(params, threshold, data[s], columns)))
    for s in checks:
        rows.append((s, "check only", evaluate(params, threshold, data[s], columns)))

    print(
        "\n| source | protocol | n | AUROC | balanced acc | K-Precision AUROC "
        "| lexical-only AUROC | lexical-only balanced acc |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for s, how, r in rows:
        print(
            f"| {s} | {how} | {r['n']} | {r['auroc']:.3f} | {r['balanced_accuracy']:.3f} | "
            f"{r['k_precision_auroc']:.3f} | {r['v2_auroc']:.3f} | "
            f"{r['v2_balanced_accuracy']:.3f} |"
        )

    weights = ", ".join(f"{w:.4f}" for w in params[:-1])
    if "lfqa" in data and not args.limit:
        systems = [it.group.split("/")[0] for it in items["lfqa"]]
        print("\n| LFQA Spearman | answer avg | pooled | sentence |")
        print("|---|---|---|---|")
        for how, r in lfqa_protocols(data, columns, systems).items():
            print(
                f"| {how} | {r['answer_average']['spearman']:.3f} | "
                f"{r['answer_pooled']['spearman']:.3f} | {r['sentence']['spearman']:.3f} |"
            )

    print("\nMODEL_CALIBRATION = Calibration(")
    print(f"    features={names!r},")
    print(f"    weights=({weights}),")
    print(f"    bias={params[-1]:.4f},")
    print(f"    threshold={threshold},")
    print(f"    min_content_share={args.min_share},")
    print(f"    data={', '.join(FIT_SOURCES)!r},")
    print('    note="fitted by bench/meta/fit_verifier_sources.py",')
    print(")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
