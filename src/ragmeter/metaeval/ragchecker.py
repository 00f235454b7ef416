"""Suite ``ragchecker``: answer-level metrics vs RAGChecker's pairwise human preferences.

RAGChecker's meta-evaluation (Ru et al. 2024) has 280 pairs of answers to one question with a
reference answer; two annotators each say which answer is better (-2..2) for correctness,
completeness and overall. Its procedure (``data/meta_evaluation/meta_eval.py`` of the
RAGChecker repository), followed here:

1. score both answers; take ``score(model2) - score(model1)`` per pair (280 deltas);
2. replace an undefined delta by the median of the defined ones; min-max scale onto [-2, 2]
   (a linear map: the correlations do not change);
3. repeat each delta for both annotators' labels (560 rows) and report Pearson and Spearman
   x 100 against the labels.

RAGChecker maps its claim precision to correctness, claim recall to completeness and claim
F1 to overall. Its own scores (with a 70B LLM, shipped in ``baseline_ragchecker.json``) are
recomputed through the same code as a check of the procedure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.metaeval.common import (
    SuiteOptions,
    SuiteResult,
    data_file,
    run_info,
    score_samples,
)
from ragmeter.metaeval.stats import correlation, impute_median, minmax_to_range

FOLDER = "ragchecker_meta_eval"
ASPECTS = ("correctness", "completeness", "overall")
#: The metric RAGChecker reports for each human aspect.
MATCHED = {"claim_precision": "correctness", "claim_recall": "completeness", "claim_f1": "overall"}
DEFAULT_METRICS = (
    "claim_precision",
    "claim_precision_support",
    "claim_recall",
    "claim_f1",
    "token_recall",
    "token_precision",
    "token_f1",
    "new_token_precision",
    "new_token_recall",
    "new_token_f1",
)
NOISE_METRICS = ("noise_sensitivity_relevant", "noise_sensitivity_irrelevant")
SUPPORTED = (*DEFAULT_METRICS, *NOISE_METRICS)

#: Published (Ru et al. 2024, recomputed from the repository's files): Pearson, Spearman x 100.
PUBLISHED: dict[str, dict[str, tuple[float, float]]] = {
    "RAGChecker, 70B judge (published)": {
        "correctness": (49.66, 46.95),
        "completeness": (60.67, 58.11),
        "overall": (61.93, 60.90),
    },
    "annotator A vs B (published)": {
        "correctness": (63.67, 59.19),
        "completeness": (71.91, 68.36),
        "overall": (70.09, 68.89),
    },
}


def delta_correlation(
    first: Sequence[float | None], second: Sequence[float | None], labels: Sequence[float]
) -> dict[str, Any]:
    """RAGChecker's procedure for one metric and one aspect.

    ``first[i]`` and ``second[i]`` score the two answers of pair ``i``; ``labels`` holds two
    human labels per pair (rows ``2i`` and ``2i + 1``). Returns Pearson and Spearman x 100
    and how many deltas were imputed.
    """
    if len(labels) != 2 * len(first) or len(first) != len(second):
        raise ValueError(
            f"Expected two labels per pair: {len(first)} and {len(second)} scores, "
            f"{len(labels)} labels."
        )
    deltas = [None if a is None or b is None else b - a for a, b in zip(first, second, strict=True)]
    if all(d is None for d in deltas):
        return {"pearson": None, "spearman": None, "imputed": len(deltas)}
    filled, imputed = impute_median(deltas)
    scaled = minmax_to_range(filled)
    corr = correlation(np.repeat(scaled, 2), labels)
    return {
        "pearson": None if corr.pearson is None else 100 * corr.pearson,
        "spearman": None if corr.spearman is None else 100 * corr.spearman,
        "imputed": imputed,
    }


def load(data_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The 280 pairs (with both labels per aspect) and RAGChecker's own scores per pair."""
    human = json.loads(data_file(data_dir, f"{FOLDER}/human_labeled_data.json").read_text("utf-8"))
    baseline = json.loads(
        data_file(data_dir, f"{FOLDER}/baseline_ragchecker.json").read_text("utf-8")
    )
    if len(human) != 2 * len(baseline):
        raise ValueError(
            f"Expected two human rows per pair: {len(human)} human rows, {len(baseline)} pairs."
        )
    pairs = []
    for i, base in enumerate(baseline):
        a, b = human[2 * i], human[2 * i + 1]
        if not str(a["instance_id"]) == str(b["instance_id"]) == str(base["instance_id"]):
            raise ValueError(f"Pair {i}: the human rows and the baseline row do not line up.")
        pairs.append(
            {
                "query": a["query"],
                "gt_answer": a["gt_answer"],
                "dataset": a["dataset"],
                "responses": (a["model1"]["response"], a["model2"]["response"]),
                "labels": {asp: (a[f"{asp}_label"], b[f"{asp}_label"]) for asp in ASPECTS},
                "ragchecker": {
                    asp: (
                        base["model1"]["ragchecker"][f"{asp}_label"],
                        base["model2"]["ragchecker"][f"{asp}_label"],
                    )
                    for asp in ASPECTS
                },
            }
        )
    return pairs, baseline


def _nan_to_none(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if np.isnan(value) else value


def run(data_dir: Path, options: SuiteOptions | None = None) -> SuiteResult:
    """Correlate each metric's score difference with the human preference labels."""
    options = options or SuiteOptions()
    started = time.perf_counter()
    metrics = options.choose("ragchecker", DEFAULT_METRICS, SUPPORTED)
    pairs_all, _ = load(data_dir)
    pairs = options.take(pairs_all)
    labels = {asp: [label for p in pairs for label in p["labels"][asp]] for asp in ASPECTS}

    # Score each distinct (question, reference, answer) once.
    index: dict[tuple[str, str, str], int] = {}
    samples: list[dict[str, Any]] = []
    for pair in pairs:
        for response in pair["responses"]:
            key = (pair["query"], pair["gt_answer"], response)
            if key not in index:
                index[key] = len(samples)
                samples.append(
                    {
                        "question": pair["query"],
                        "answer": response,
                        "reference_answers": [pair["gt_answer"]],
                    }
                )
    runnable = [m for m in metrics if m not in NOISE_METRICS]
    scored = score_samples(samples, runnable, options)
    for metric in metrics:
        if metric in NOISE_METRICS:
            scored.unavailable[metric] = (
                "the RAGChecker meta-evaluation data has no retrieved contexts, and noise "
                "sensitivity needs them (answer claims entailed by a context)"
            )

    rows: list[dict[str, Any]] = []
    for metric in metrics:
        if metric not in scored.values:
            continue
        values = scored.values[metric]
        first = [values[index[(p["query"], p["gt_answer"], p["responses"][0])]] for p in pairs]
        second = [values[index[(p["query"], p["gt_answer"], p["responses"][1])]] for p in pairs]
        row: dict[str, Any] = {"metric": metric, "undefined": scored.n_undefined(metric)}
        row["failed"] = scored.n_failed(metric)
        for asp in ASPECTS:
            res = delta_correlation(first, second, labels[asp])
            row[f"{asp} r"] = res["pearson"]
            row[f"{asp} ρ"] = res["spearman"]
            row["imputed"] = res["imputed"]
        row["RAGChecker's aspect"] = MATCHED.get(metric, "")
        rows.append(row)

    # RAGChecker's own scores through the same code: a check of the procedure.
    own: dict[str, Any] = {"metric": "RAGChecker's scores, recomputed here"}
    for asp in ASPECTS:
        first = [_nan_to_none(p["ragchecker"][asp][0]) for p in pairs]
        second = [_nan_to_none(p["ragchecker"][asp][1]) for p in pairs]
        res = delta_correlation(first, second, labels[asp])
        own[f"{asp} r"], own[f"{asp} ρ"] = res["pearson"], res["spearman"]
    rows.append(own)
    annot: dict[str, Any] = {"metric": "annotator A vs B, recomputed here"}
    for asp in ASPECTS:
        corr = correlation(labels[asp][0::2], labels[asp][1::2])
        annot[f"{asp} r"] = None if corr.pearson is None else 100 * corr.pearson
        annot[f"{asp} ρ"] = None if corr.spearman is None else 100 * corr.spearman
    rows.append(annot)
    if options.limit is None:
        for name, numbers in PUBLISHED.items():
            pub: dict[str, Any] = {"metric": name}
            for asp in ASPECTS:
                pub[f"{asp} r"], pub[f"{asp} ρ"] = numbers[asp]
            rows.append(pub)

    columns = ["metric", *(f"{asp} {s}" for asp in ASPECTS for s in ("r", "ρ"))]
    columns += ["undefined", "imputed", "RAGChecker's aspect"]
    result = SuiteResult(
        suite="ragchecker",
        title="ragchecker: score differences vs pairwise human preferences (x 100)",
        columns=columns,
        rows=rows,
        notes=[
            f"Data: RAGChecker's meta-evaluation, {len(pairs)} answer pairs x 2 annotators = "
            f"{2 * len(pairs)} labels per aspect; {len(samples)} distinct answers scored, each "
            "against the pair's reference answer (no retrieved contexts in the data).",
            "r = Pearson, ρ = Spearman, both x 100, of score(answer 2) - score(answer 1) with "
            "the human label (-2..2), RAGChecker's procedure: undefined deltas replaced by the "
            "median, each delta repeated for both annotators.",
            "Targets: correctness Pearson >= 45 (RAGChecker with a 70B judge: 49.66; token "
            "recall alone is reported near 29.5).",
            "new_token_* are token_* with every word of the question left out of the answer "
            "and the reference (an answer that restates the question shares those words with "
            "a reference that restates it). The idea came from reading this data's "
            "disagreements, so these rows are not an independent test of it; no constant was "
            "fitted. Run bench/meta/ragchecker_new_tokens.py for its bootstrap interval and "
            "per-dataset numbers.",
        ],
        unavailable=scored.unavailable,
        digits=2,
    )
    result.info = run_info(
        options,
        n=len(pairs),
        started=started,
        answers_scored=len(samples),
        scoring_seconds=round(scored.seconds, 1),
        judge_detail=scored.judge,
    )
    return result
