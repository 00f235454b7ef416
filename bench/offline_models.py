"""Speed and a quality check of the offline models, each against a peer measured in the same run.

1. Embeddings (int8 ONNX MiniLM, the offline default): sentences/s embedding the TruLens
   MS MARCO queries and passages in batches across samples, against a one-by-one loop over
   the same texts; the ratio. With ``--fp32`` also the fp32 sentence-transformers model.
2. Context relevance (SmolLM2-135M-Instruct, the offline default): (question, context)
   pairs/s batched through the ``context_relevance`` family against one pair per call on
   a subset; and its pairwise accuracy on ``../shared/data/trulens_msmarco_context_relevance``
   (the fraction of queries whose annotated passage scores above its hard negative; ties
   count half), the bar of the meta-evaluation being 0.75. Target speed: >= 8 pairs/s on 2
   cores.

Run from the project root (the first run converts the GGUF, about a minute)::

    PYTHONPATH=src python bench/offline_models.py --limit 200
    PYTHONPATH=src python bench/offline_models.py --limit 50 --dtype bfloat16
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragmeter.models._runtime import default_threads

DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "trulens_msmarco_context_relevance"
    / "ms_marco_hard_neg_balanced.csv"
)


THREADS = default_threads()


def load_pairs(path: Path, limit: int) -> list[tuple[str, str, str]]:
    """(query, positive passage, hard negative) for the first ``limit`` usable queries."""
    by_query: dict[str, dict[str, str]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            by_query.setdefault(row["query"], {})[row["expected_score"]] = row["expected_response"]
    triples = [(q, v["1"], v["0"]) for q, v in by_query.items() if "1" in v and "0" in v]
    return triples[:limit]


#: CPU seconds of the last :func:`timed` call (all threads of this process).
LAST_CPU = [0.0]


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Result and wall seconds of ``fn()``; its CPU seconds go to ``LAST_CPU``.

    On a shared machine wall time swings with the other processes; CPU time much less, so
    ``work / CPU seconds x threads`` estimates the rate the process would get on idle cores.
    """
    started, cpu = time.perf_counter(), time.process_time()
    out = fn()
    LAST_CPU[0] = time.process_time() - cpu
    return out, time.perf_counter() - started


def idle_rate(work: int, threads: int) -> str:
    return (
        f"(~{work / max(LAST_CPU[0], 1e-9) * threads:.1f}/s on {threads} idle cores from CPU time)"
    )


def bench_embeddings(texts: list[str], *, fp32: bool) -> None:
    import numpy as np

    from ragmeter.models.embeddings import make_embedder

    embedder, load = timed(lambda: make_embedder("offline"))
    embedder.embed(texts[:8])  # warm-up
    batched, t_batch = timed(lambda: embedder.embed(texts))
    rate_batch = idle_rate(len(texts), THREADS)
    loop, t_loop = timed(lambda: np.concatenate([embedder.embed([t]) for t in texts]))
    rate_loop = idle_rate(len(texts), THREADS)
    same = float(np.max(np.abs(batched - loop)))
    n = len(texts)
    print(f"embeddings  {embedder.name}: load {load:.2f} s, {n} texts")
    print(f"  batched across samples  {n / t_batch:8.1f} sentences/s {rate_batch}")
    print(f"  one-by-one loop         {n / t_loop:8.1f} sentences/s {rate_loop}")
    print(f"  ratio batched/loop      {t_loop / t_batch:8.2f}x   (max |diff| {same:.1e})")
    if fp32:
        st, st_load = timed(lambda: make_embedder("all-MiniLM-L6-v2"))
        st.embed(texts[:8])
        _, t_st = timed(lambda: st.embed(texts))
        print(f"  fp32 sentence-transformers {n / t_st:8.1f} sentences/s (load {st_load:.1f} s)")
        print(f"  ratio int8 ONNX / fp32 torch       {t_st / t_batch:8.2f}x")


def bench_relevance(triples: list[tuple[str, str, str]], *, dtype: str, loop_n: int) -> None:
    from ragmeter.metrics.context_relevance import ContextRelevanceFamily
    from ragmeter.models.lm_scorer import load_question_likelihood
    from ragmeter.types import Sample

    scorer = load_question_likelihood("offline", dtype=dtype)  # type: ignore[arg-type]
    _, load = timed(lambda: scorer.score(["warm up"], ["warm up?"]))
    family = ContextRelevanceFamily(scorer)
    samples = [Sample(question=q, contexts=(pos, neg)) for q, pos, neg in triples]
    rows, t_batch = timed(lambda: asyncio.run(family.score_batch(samples, ["context_relevance"])))
    pairs = 2 * len(samples)
    rate_batch = idle_rate(pairs, THREADS)
    wins = 0.0
    for row in rows:
        pos, neg = row["context_relevance"].details["context_scores"]
        wins += 1.0 if pos > neg else 0.5 if pos == neg else 0.0
    subset = [(q, c) for q, pos, neg in triples[: max(1, loop_n // 2)] for c in (pos, neg)]
    _, t_loop = timed(lambda: [scorer.score([c], [q]) for q, c in subset])
    rate_loop = idle_rate(len(subset), THREADS)
    _, t_sub = timed(lambda: scorer.score([c for _, c in subset], [q for q, _ in subset]))
    rate_sub = idle_rate(len(subset), THREADS)
    print(f"context relevance  {scorer.name} ({scorer.dtype}): first load+score {load:.1f} s")
    print(f"  {scorer.describe()}")
    print(f"  batched family, {pairs} pairs {pairs / t_batch:8.2f} pairs/s {rate_batch}; target 8")
    print(
        f"  one pair per call, {len(subset)} pairs {len(subset) / t_loop:8.2f} pairs/s {rate_loop}"
    )
    print(f"  same {len(subset)} pairs batched {len(subset) / t_sub:8.2f} pairs/s {rate_sub}")
    print(f"  ratio batched/one-by-one        {t_loop / t_sub:8.2f}x")
    print(
        f"  TruLens MS MARCO pairwise accuracy {wins / len(rows):.3f} over {len(rows)} queries "
        "(meta-evaluation bar 0.75)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200, help="TruLens queries (max 200)")
    parser.add_argument("--loop-pairs", type=int, default=16, help="pairs for the 1-by-1 peer")
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument("--fp32", action="store_true", help="also time sentence-transformers")
    parser.add_argument("--skip-embeddings", action="store_true")
    parser.add_argument("--skip-relevance", action="store_true")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if args.limit < 1:
        parser.error(f"--limit must be >= 1. Got {args.limit}.")
    if args.loop_pairs < 1:
        parser.error(f"--loop-pairs must be >= 1. Got {args.loop_pairs}.")

    print(f"threads {THREADS} (set RAGMETER_THREADS to change)")
    triples = load_pairs(args.data, args.limit)
    if not args.skip_embeddings:
        texts = [t for q, pos, neg in triples for t in (q, pos, neg)]
        bench_embeddings(texts, fp32=args.fp32)
    if not args.skip_relevance:
        bench_relevance(triples, dtype=args.dtype, loop_n=args.loop_pairs)


if __name__ == "__main__":
    main()
