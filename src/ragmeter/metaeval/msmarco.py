"""Suite ``msmarco``: context relevance on MS MARCO passages with hard negatives.

TruLens' balanced set has 200 MS MARCO queries, each with the passage annotators selected
(label 1) and an unselected hard negative (label 0). Each (query, passage) is scored as a
sample with ``question`` and one context. Reported: pairwise accuracy (the selected passage
scores above its negative; a tie counts one half) and AUROC over all 400 passages. The labels
are noisy (some negatives are relevant, a few are identical to the positive), so the ceiling
is below 1.

Besides the registered metrics, ``minilm_cosine`` is measured as an offline alternative: the
cosine between the query's and the passage's embeddings from the run's embedder (MiniLM by
default). It is not a registered metric; it shows what plain semantic similarity achieves.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.metaeval.common import (
    Scored,
    SuiteOptions,
    SuiteResult,
    data_file,
    run_info,
    score_samples,
)
from ragmeter.metaeval.stats import auroc, pairwise_accuracy

FILE = "trulens_msmarco_context_relevance/ms_marco_hard_neg_balanced.csv"
COSINE = "minilm_cosine"
DEFAULT_METRICS = ("context_relevance", "context_token_precision", COSINE)
SUPPORTED = (*DEFAULT_METRICS,)
TARGET = 0.75


def load(data_dir: Path) -> list[dict[str, Any]]:
    """One item per query: ``{"query", "positive", "negative"}`` (file order)."""
    with data_file(data_dir, FILE).open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    items: dict[str, dict[str, Any]] = {}
    for row in rows:
        item = items.setdefault(row["query"], {"query": row["query"]})
        key = "positive" if row["expected_score"].strip() == "1" else "negative"
        if key in item:
            raise ValueError(f"Query {row['query']!r} has two {key} passages in {FILE}.")
        item[key] = row["expected_response"]
    incomplete = [q for q, item in items.items() if len(item) != 3]
    if incomplete:
        raise ValueError(f"{len(incomplete)} queries lack a positive or a negative passage.")
    return list(items.values())


def cosine_scores(samples: list[dict[str, Any]], options: SuiteOptions) -> Scored:
    """Cosine of question and (single) context embeddings, from the run's embedder."""
    from ragmeter.errors import RagmeterError
    from ragmeter.models.embeddings import make_embedder

    out = Scored()
    started = time.perf_counter()
    try:
        settings = options.run_settings()
        embedder = make_embedder(settings.embedder, settings)
        questions = embedder.embed([s["question"] for s in samples])
        passages = embedder.embed([s["contexts"][0] for s in samples])
    except (RagmeterError, ImportError) as exc:
        out.unavailable[COSINE] = str(exc)
        return out
    cos = np.sum(np.asarray(questions) * np.asarray(passages), axis=1)
    out.values[COSINE] = [float(c) for c in cos]
    out.failures[COSINE] = [None] * len(samples)
    out.judge["embedder"] = getattr(embedder, "name", type(embedder).__name__)
    out.seconds = time.perf_counter() - started
    return out


def run(data_dir: Path, options: SuiteOptions | None = None) -> SuiteResult:
    """Pairwise accuracy and AUROC of each metric on the MS MARCO pairs."""
    options = options or SuiteOptions()
    started = time.perf_counter()
    metrics = options.choose("msmarco", DEFAULT_METRICS, SUPPORTED)
    items = options.take(load(data_dir))
    samples = [
        {"question": item["query"], "contexts": [item[side]]}
        for item in items
        for side in ("positive", "negative")
    ]
    labels = [1, 0] * len(items)
    # One run per metric, so each metric's time is its own.
    scored = Scored()
    timings: dict[str, float] = {}
    for metric in (m for m in metrics if m != COSINE):
        one = score_samples(samples, [metric], options)
        scored.values.update(one.values)
        scored.failures.update(one.failures)
        scored.unavailable.update(one.unavailable)
        scored.judge.update(one.judge)
        if metric in one.values:
            timings[metric] = round(one.seconds, 1)
    if COSINE in metrics:
        cos = cosine_scores(samples, options)
        scored.values.update(cos.values)
        scored.failures.update(cos.failures)
        scored.unavailable.update(cos.unavailable)
        scored.judge.update(cos.judge)
        if COSINE in cos.values:
            timings[COSINE] = round(cos.seconds, 1)

    rows: list[dict[str, Any]] = []
    for metric in metrics:
        if metric not in scored.values:
            continue
        values = scored.values[metric]
        pos, neg, kept_scores, kept_labels = [], [], [], []
        for i in range(len(items)):
            a, b = values[2 * i], values[2 * i + 1]
            if a is not None and b is not None:
                pos.append(a)
                neg.append(b)
        for v, y in zip(values, labels, strict=True):
            if v is not None:
                kept_scores.append(v)
                kept_labels.append(y)
        acc = pairwise_accuracy(pos, neg)
        rows.append(
            {
                "metric": metric,
                "pairs": len(pos),
                "pairwise accuracy": acc,
                "strict (ties lose)": pairwise_accuracy(pos, neg, tie=0.0),
                "ties": int(np.sum(np.asarray(pos) == np.asarray(neg))) if pos else 0,
                "AUROC": auroc(kept_scores, kept_labels),
                "undefined": sum(v is None for v in values),
                "meets 0.75": None if acc is None else acc >= TARGET,
                "seconds": timings.get(metric),
            }
        )
    result = SuiteResult(
        suite="msmarco",
        title="msmarco: context relevance, selected passage vs hard negative",
        columns=[
            "metric",
            "pairs",
            "pairwise accuracy",
            "strict (ties lose)",
            "ties",
            "AUROC",
            "undefined",
            "meets 0.75",
            "seconds",
        ],
        rows=rows,
        notes=[
            f"Data: TruLens' MS MARCO hard-negative balanced set, {len(items)} queries x "
            "(selected passage, unselected hard negative); labels are noisy, the ceiling is "
            "below 1.",
            "Pairwise accuracy counts a tie as one half (strict: as a loss); AUROC over all "
            f"{len(samples)} passages. Target for the offline default: pairwise >= {TARGET}.",
            "context_token_precision: share of the query's tokens found in the passage "
            "(K-Precision style); minilm_cosine: cosine of MiniLM embeddings (not a registered "
            "metric, shown as an offline alternative).",
        ],
        unavailable=scored.unavailable,
    )
    result.info = run_info(options, n=len(items), started=started, judge_detail=scored.judge)
    return result
