"""Fit how the offline verifier turns its model's probabilities into verdicts
(``ragmeter.judges.offline.judge.MODEL_DECISION``), across sources, and print leave-one-source-out
numbers next to K-Precision's.

Sources (``verifier_sources``): LFQA answer sentences against their documents (human labels),
WiCE's held-out half, RAGChecker's examples (LLM labels), SNLI pairs the model never trained
on; the check-only NLI sets are never fitted on. The claim probes are not read here.

Each item's support is the best premise's; a cell is settled by a rule where the words
settle it, else ``sigmoid(w_entail * logit(p_entail) + w_contra * p_contradiction
+ w_share * share + bias)`` (see ``ragmeter.judges.offline.verdict``). The loss is the mean
over sources of each source's cross-entropy against its (graded) target, so no source
dominates. Printed per source: AUROC of the graded support against K-Precision's on the same
items, and balanced accuracy at the threshold, first with each source left out of the fit,
then the check-only sets with the fit on all four.

Run (reads the model's probabilities once per source into ``build/decision-cache``)::

    PYTHONPATH=src .venv/bin/python bench/meta/fit_model_decision.py [--model DIR] [--limit N]
        [--number-rule]

LFQA is read whole (3,993 sentences, for its answer-level numbers); other sources at most
``--limit`` items (a seeded sample).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_verifier_sources import auroc, balanced_accuracy
from verifier_sources import CHECK_SOURCES, FIT_SOURCES, ROOT, Item, load

CACHE = ROOT / "build" / "decision-cache"


def read_source(items: Sequence[Item], judge) -> dict:
    """Per item, its cells: fixed supports (rules) and model reads (p_e, p_c, share)."""
    from ragmeter.judges.base import ClaimBlock

    fixed: list[list[float]] = []
    reads: list[list[tuple[float, float, float, bool]]] = []
    for start in range(0, len(items), 64):
        part = items[start : start + 64]
        blocks = [ClaimBlock((it.text,), tuple(it.premises)) for it in part]
        supports, evidence, cells = judge.read_cells(blocks)
        by_block: dict[int, list[tuple[float, float, float, bool]]] = {}
        for (b, _, _, _), value in cells.items():
            by_block.setdefault(b, []).append(value)
        for b in range(len(part)):
            settled = [
                float(supports[b][0, j])
                for j, cell in enumerate(evidence[b][0])
                if cell  # a rule filled it
            ]
            fixed.append(settled)
            reads.append(by_block.get(b, []))
    return {
        "fixed": fixed,
        "reads": reads,
        "target": [it.target for it in items],
        "kprec": [k_precision(it) for it in items],
    }


def k_precision(item: Item) -> float:
    from ragmeter.scoring.lexical import k_precision as kp

    value = kp(item.text, list(item.premises)).value
    return float(value) if value is not None else 0.0


def cached_read(source: str, items: Sequence[Item], judge) -> dict:
    key = hashlib.sha256(
        (judge.name + (judge._model_description() or "") + source + str(len(items))).encode()
    ).hexdigest()[:16]
    path = CACHE / f"{source}-{key}.json"
    if path.is_file():
        return json.loads(path.read_text())
    data = read_source(items, judge)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return data


#: Whether ``item_support`` applies the number rule (``--number-rule``).
NUMBER_RULE = False


def item_support(params: np.ndarray, d: dict) -> np.ndarray:
    w_e, w_c, w_s, bias = params
    out = np.zeros(len(d["target"]))
    for k, (fixed, reads) in enumerate(zip(d["fixed"], d["reads"], strict=True)):
        best = max(fixed, default=0.0)
        for p_e, p_c, share, missing in reads:
            if NUMBER_RULE and missing:
                continue
            p = min(max(p_e, 1e-6), 1 - 1e-6)
            z = w_e * np.log(p / (1 - p)) + w_c * p_c + w_s * share + bias
            best = max(best, float(1 / (1 + np.exp(-z))))
        out[k] = best
    return out


def loss(params: np.ndarray, parts: Sequence[dict]) -> float:
    total = 0.0
    for d in parts:
        s = np.clip(item_support(params, d), 1e-6, 1 - 1e-6)
        y = np.asarray(d["target"], dtype=float)
        total += float(-(y * np.log(s) + (1 - y) * np.log(1 - s)).mean())
    return total / len(parts) + 1e-3 * float(np.sum(params[1:] ** 2))


def fit(parts: Sequence[dict]) -> np.ndarray:
    result = minimize(
        loss,
        np.array([1.0, 0.0, 0.0, 0.0]),
        args=(parts,),
        method="Nelder-Mead",
        options={"maxiter": 400, "xatol": 1e-3, "fatol": 1e-5},
    )
    return result.x


def subset(d: dict, keep: Sequence[int]) -> dict:
    return {key: [values[k] for k in keep] for key, values in d.items()}


def lfqa_leave_one_system_out(items: Sequence[Item], d: dict, others: Sequence[dict]) -> str:
    """LFQA's three Spearman numbers (answer: mean over its sentences, averaged over systems
    and pooled; sentence), each system scored by a fit on the other sources and the other
    five systems. Each sentence is one claim here (the faithfulness metric splits it)."""
    from scipy.stats import spearmanr

    systems = [it.group.split("/")[0] for it in items]
    support = np.zeros(len(items))
    for held in sorted(set(systems)):
        test = [k for k, s in enumerate(systems) if s == held]
        train = [k for k, s in enumerate(systems) if s != held]
        params = fit([*others, subset(d, train)])
        support[test] = item_support(params, subset(d, test))
    human = np.asarray(d["target"], dtype=float)
    answers: dict[str, list[int]] = {}
    for k, it in enumerate(items):
        answers.setdefault(it.group.rsplit("/", 1)[0], []).append(k)
    lines = []
    for name, values in (("support", support), ("verdicts", (support >= 0.5).astype(float))):
        keys = sorted(answers)
        a_score = np.array([values[answers[key]].mean() for key in keys])
        a_human = np.array([human[answers[key]].mean() for key in keys])
        a_system = [key.split("/")[0] for key in keys]
        per_system = [
            spearmanr(
                a_score[[i for i, s in enumerate(a_system) if s == held]],
                a_human[[i for i, s in enumerate(a_system) if s == held]],
            ).statistic
            for held in sorted(set(a_system))
        ]
        pooled = spearmanr(a_score, a_human).statistic
        sentence = spearmanr(values, human).statistic
        lines.append(
            f"{name:9s} answer rho avg {np.nanmean(per_system):.3f}  pooled {pooled:.3f}  "
            f"sentence rho {sentence:.3f}"
        )
    return "\n".join(lines)


def report(name: str, params: np.ndarray, d: dict, threshold: float = 0.5) -> str:
    s = item_support(params, d)
    y = np.asarray(d["target"], dtype=float)
    a, kp = auroc(s, y), auroc(np.asarray(d["kprec"]), y)
    ba = balanced_accuracy(s >= threshold, y)
    fmt = lambda v: "  n/a" if np.isnan(v) else f"{v:.3f}"  # noqa: E731
    gap = "" if np.isnan(a) or np.isnan(kp) else f"{a - kp:+.3f}"
    return f"{name:14s} {len(y):5d}  AUROC {fmt(a)}  K-Precision {fmt(kp)}  ({gap})  BA {ba:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="model folder (default: the shipped model)")
    parser.add_argument("--limit", type=int, default=1200, help="items per source at most")
    parser.add_argument("--lfqa-limit", type=int, default=0, help="LFQA sentences (0: all)")
    parser.add_argument(
        "--number-rule", action="store_true", help="a claim number missing: not entailed"
    )
    args = parser.parse_args(argv)
    global NUMBER_RULE
    NUMBER_RULE = args.number_rule

    from ragmeter.judges.offline.judge import MODEL_DECISION, OfflineJudge
    from ragmeter.models.claim_verifier import ClaimVerifierModel

    model = ClaimVerifierModel(args.model) if args.model else "shipped"
    judge = OfflineJudge(model=model, decision=MODEL_DECISION)
    data = {}
    lfqa_items: list[Item] = []
    for source in (*FIT_SOURCES, *CHECK_SOURCES):
        items = load(source)
        if source == "lfqa":  # every sentence: the answer-level numbers need whole answers
            items = items[: args.lfqa_limit] if args.lfqa_limit else items
            lfqa_items = items
        elif len(items) > args.limit:
            items = random.Random(7).sample(items, args.limit)
        data[source] = cached_read(source, items, judge)
        print(f"read {source}: {len(items)} items", file=sys.stderr, flush=True)
    full = fit([data[s] for s in FIT_SOURCES])
    rule = "; number rule on" if NUMBER_RULE else ""
    print(f"verifier {judge.name}; model {judge._model_description()}{rule}")
    names = "w_entail, w_contra, w_share, bias"
    print(f"fit on {', '.join(FIT_SOURCES)}: {names} = {', '.join(f'{v:.4f}' for v in full)}")
    print("\nleave one source out (fitted on the other three):")
    for left in FIT_SOURCES:
        params = fit([data[s] for s in FIT_SOURCES if s != left])
        print(report(left, params, data[left]))
    print("\nLFQA, leave-one-system-out (fit on the other three sources and five systems):")
    others = [data[s] for s in FIT_SOURCES if s != "lfqa"]
    print(lfqa_leave_one_system_out(lfqa_items, data["lfqa"], others))
    print("\nnever fitted on (fit on all four):")
    for source in CHECK_SOURCES:
        print(report(source, full, data[source]))
    print("\np(entailment) alone (no fit), every source:")
    for source in (*FIT_SOURCES, *CHECK_SOURCES):
        print(report(source, np.array([1.0, 0.0, 0.0, 0.0]), data[source]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
