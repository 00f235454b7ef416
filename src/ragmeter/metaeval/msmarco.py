"""Suite ``msmarco``: context relevance on MS MARCO passages with hard negatives.

TruLens' balanced set has 200 MS MARCO queries, each with the passage annotators selected
(label 1) and an unselected hard negative (label 0). Each (query, passage) is scored as a
sample with ``question`` and one context. Reported: pairwise accuracy (the selected passage
scores above its negative; a tie counts one half) and AUROC over all 400 passages. The labels
are noisy (some negatives are relevant, a few are identical to the positive), so the ceiling
is below 1.

Besides the registered metrics, offline alternatives are measured (none is a registered
metric; they show what plain signals achieve, and none clearly beats ``minilm_cosine``):

- ``minilm_cosine``: cosine between the query's and the passage's embeddings from the run's
  embedder (MiniLM by default).
- ``minilm_best_sentence``: the highest cosine between the query and one sentence of the
  passage; ``minilm_best_window``: the same over windows of two consecutive sentences;
  ``minilm_whole_sentence_mean``: the mean of ``minilm_cosine`` and ``minilm_best_sentence``.
- ``bm25``: Okapi BM25 (k1 1.2, b 0.75) over its ceiling, and ``idf_coverage``: the
  IDF-weighted share of the query's terms found in the passage; both take IDF from the
  suite's own passages (all that are scored in the run), see
  :mod:`ragmeter.scoring.query_relevance`.
- ``lm_pmi`` (not in the defaults; it needs the relevance LM): ``log context_relevance(q, c) -
  log p(q)``, with ``p(q)`` the same LM's question likelihood given an empty content (the
  per-token pointwise mutual information). Within a pair it orders like
  ``context_relevance`` (same query); it changes AUROC, which compares across queries.
"""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Sequence
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
from ragmeter.scoring.query_relevance import (
    bm25_fraction,
    idf_coverage,
    inverse_document_frequencies,
)
from ragmeter.text import split_sentences, tokens

FILE = "trulens_msmarco_context_relevance/ms_marco_hard_neg_balanced.csv"
COSINE = "minilm_cosine"
EMBEDDING_ALTERNATIVES = (
    COSINE,
    "minilm_best_sentence",
    "minilm_best_window",
    "minilm_whole_sentence_mean",
)
LEXICAL_ALTERNATIVES = ("bm25", "idf_coverage")
PMI = "lm_pmi"
ALTERNATIVES = (*EMBEDDING_ALTERNATIVES, *LEXICAL_ALTERNATIVES, PMI)
DEFAULT_METRICS = (
    "context_relevance",
    "context_token_precision",
    *EMBEDDING_ALTERNATIVES,
    *LEXICAL_ALTERNATIVES,
)
SUPPORTED = (*DEFAULT_METRICS, PMI)
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


def _windows(sentences: list[str], size: int) -> list[str]:
    if len(sentences) <= size:
        return [" ".join(sentences)]
    return [" ".join(sentences[i : i + size]) for i in range(len(sentences) - size + 1)]


def embedding_scores(
    samples: list[dict[str, Any]], options: SuiteOptions, metrics: Sequence[str]
) -> Scored:
    """Cosines of the question with the (single) context, its sentences and 2-sentence windows.

    One embedder call for every text of the run; the run's embedder (MiniLM by default).
    """
    from ragmeter.errors import RagmeterError
    from ragmeter.models.embeddings import make_embedder

    out = Scored()
    started = time.perf_counter()
    parts: list[tuple[list[str], list[str]]] = []
    for sample in samples:
        passage = sample["contexts"][0]
        sentences = [x for x in split_sentences(passage) if x.strip()] or [passage]
        parts.append((sentences, _windows(sentences, 2)))
    texts: list[str] = []
    for sample, (sentences, windows) in zip(samples, parts, strict=True):
        texts.extend([sample["question"], sample["contexts"][0], *sentences, *windows])
    try:
        settings = options.run_settings()
        embedder = make_embedder(settings.embedder, settings)
        vectors = np.asarray(embedder.embed(texts), dtype=np.float64)
    except (RagmeterError, ImportError) as exc:
        for name in metrics:
            out.unavailable[name] = str(exc)
        return out
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    values: dict[str, list[float | None]] = {name: [] for name in EMBEDDING_ALTERNATIVES}
    row = 0
    for sentences, windows in parts:
        question, whole = vectors[row], vectors[row + 1]
        row += 2
        best_sentence = float(np.max(vectors[row : row + len(sentences)] @ question))
        row += len(sentences)
        best_window = float(np.max(vectors[row : row + len(windows)] @ question))
        row += len(windows)
        cosine = float(whole @ question)
        values[COSINE].append(cosine)
        values["minilm_best_sentence"].append(best_sentence)
        values["minilm_best_window"].append(best_window)
        values["minilm_whole_sentence_mean"].append((cosine + best_sentence) / 2)
    for name in metrics:
        out.values[name] = values[name]
        out.failures[name] = [None] * len(samples)
    out.judge["embedder"] = getattr(embedder, "name", type(embedder).__name__)
    out.seconds = time.perf_counter() - started
    return out


def lexical_scores(samples: list[dict[str, Any]], metrics: Sequence[str]) -> Scored:
    """BM25 over its ceiling and IDF-weighted query coverage, IDF from the run's passages."""
    out = Scored()
    if not samples:
        return out
    started = time.perf_counter()
    passages = [tokens(sample["contexts"][0]) for sample in samples]
    queries = [tokens(sample["question"]) for sample in samples]
    idf = inverse_document_frequencies(passages)
    average = max(float(np.mean([len(p) for p in passages])), 1.0)
    for name in metrics:
        if name == "bm25":
            out.values[name] = [
                bm25_fraction(q, p, idf, average_length=average)
                for q, p in zip(queries, passages, strict=True)
            ]
        else:
            out.values[name] = [
                idf_coverage(q, p, idf) for q, p in zip(queries, passages, strict=True)
            ]
        out.failures[name] = [None] * len(samples)
    out.seconds = time.perf_counter() - started
    return out


def pmi_scores(
    samples: list[dict[str, Any]], options: SuiteOptions, conditional: list[float | None] | None
) -> Scored:
    """``log p(q | c) - log p(q | empty content)`` per question token, from the relevance LM.

    ``conditional`` reuses the run's ``context_relevance`` values when it was measured.
    """
    from ragmeter.errors import RagmeterError
    from ragmeter.models.relevance.loader import load_question_likelihood

    out = Scored()
    started = time.perf_counter()
    try:
        scorer = load_question_likelihood(options.run_settings().relevance_model)
        questions = sorted({sample["question"] for sample in samples})
        prior = dict(zip(questions, scorer.score([""] * len(questions), questions), strict=True))
        if conditional is None:
            conditional = list(
                scorer.score(
                    [sample["contexts"][0] for sample in samples],
                    [sample["question"] for sample in samples],
                )
            )
    except (RagmeterError, ImportError) as exc:
        out.unavailable[PMI] = str(exc)
        return out
    values: list[float | None] = []
    for sample, cond in zip(samples, conditional, strict=True):
        p = prior[sample["question"]]
        values.append(None if cond is None or cond <= 0 or p <= 0 else math.log(cond / p))
    out.values[PMI] = values
    out.failures[PMI] = [None] * len(samples)
    out.judge["relevance_model"] = scorer.name
    out.seconds = time.perf_counter() - started
    return out


def _merge(into: Scored, one: Scored, timings: dict[str, float], names: Sequence[str]) -> None:
    into.values.update(one.values)
    into.failures.update(one.failures)
    into.unavailable.update(one.unavailable)
    into.judge.update(one.judge)
    for name in names:
        if name in one.values:
            timings[name] = round(one.seconds, 1)


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
    for metric in (m for m in metrics if m not in ALTERNATIVES):
        _merge(scored, score_samples(samples, [metric], options), timings, [metric])
    embedding = [m for m in metrics if m in EMBEDDING_ALTERNATIVES]
    if embedding:
        # One embedder pass for all of them: each row's seconds is that shared pass.
        _merge(scored, embedding_scores(samples, options, embedding), timings, embedding)
    lexical = [m for m in metrics if m in LEXICAL_ALTERNATIVES]
    if lexical:
        _merge(scored, lexical_scores(samples, lexical), timings, lexical)
    if PMI in metrics:
        conditional = scored.values.get("context_relevance")
        _merge(scored, pmi_scores(samples, options, conditional), timings, [PMI])

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
            "(K-Precision style). Offline alternatives, not registered metrics: minilm_cosine "
            "(query vs whole passage), minilm_best_sentence / minilm_best_window (best "
            "sentence / 2-sentence window), minilm_whole_sentence_mean (mean of the two), "
            "bm25 / idf_coverage (IDF from this run's passages), lm_pmi (log "
            "context_relevance minus log of the question's likelihood given empty content). "
            "Embedding rows share one embedder pass: their seconds is that pass.",
        ],
        unavailable=scored.unavailable,
    )
    result.info = run_info(options, n=len(items), started=started, judge_detail=scored.judge)
    return result
