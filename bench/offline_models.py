"""Speed and a quality check of the offline models, each against a peer measured in the same run.

1. Embeddings (int8 ONNX MiniLM, the offline default): sentences/s embedding the TruLens
   MS MARCO queries (short: all 200) and queries and passages (``--limit`` of each) in
   batches across samples, against a one-by-one loop over the same texts, alternated
   ``--repeats`` times (best and median: the machine is shared); the ratio. With ``--fp32``
   also the fp32 sentence-transformers model.
2. Context relevance (the offline default model, ``--relevance-model`` to pick another),
   for each of ``--runtimes`` (default: the default ONNX runtime, float32, and the torch
   path in its default numerics, bfloat16 on CPUs with native bfloat16, in the same run;
   ``torch:float32`` for Unitxt's float32 on torch): (question, context) pairs/s batched
   through the ``context_relevance`` family and
   one pair per call on a subset; whether a pair's score is the same alone, in the batch
   and in reversed order; its pairwise accuracy on
   ``../shared/data/trulens_msmarco_context_relevance`` (the fraction of queries whose
   annotated passage scores above its hard negative; ties count half), the bar of the
   meta-evaluation being 0.75; then the distribution of |score(first) - score(second)| and
   the speed ratio. Target: the ONNX runtime at least as fast as the torch default.

Run from the project root (the first run converts the GGUF, about a minute)::

    PYTHONPATH=src python bench/offline_models.py --limit 200
    PYTHONPATH=src python bench/offline_models.py --limit 50 --runtimes onnx,torch:float32
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


def bench_embeddings(texts: list[str], *, fp32: bool, repeats: int) -> None:
    """Batched against one-by-one, alternated ``repeats`` times: best and median rates."""
    import numpy as np

    from ragmeter.models.embeddings import make_embedder

    embedder, load = timed(lambda: make_embedder("offline"))
    embedder.embed(texts)  # warm-up: the session's memory arena grows to the largest batch
    tokens = [len(e.ids) for e in embedder._tokenizer.encode_batch(texts)]
    n = len(texts)
    times: dict[str, list[float]] = {"batched": [], "loop": []}
    for _ in range(repeats):
        batched, t_batch = timed(lambda: embedder.embed(texts))
        times["batched"].append(t_batch)
        loop, t_loop = timed(lambda: np.concatenate([embedder.embed([t]) for t in texts]))
        times["loop"].append(t_loop)
    same = float(np.max(np.abs(batched - loop)))
    print(
        f"embeddings  {embedder.name}: load {load:.2f} s, {n} texts of {min(tokens)}-"
        f"{max(tokens)} tokens (mean {np.mean(tokens):.0f}), batches of <= "
        f"{embedder.batch_size} texts and <= {embedder.max_batch_tokens} tokens"
    )
    for label, name in (("batched across samples", "batched"), ("one-by-one loop", "loop")):
        spent = sorted(times[name])
        print(
            f"  {label:24s} {n / spent[0]:8.1f} sentences/s best, "
            f"{n / spent[len(spent) // 2]:8.1f} median of {repeats}"
        )
    ratio = min(times["loop"]) / min(times["batched"])
    print(f"  ratio batched/loop (best) {ratio:8.2f}x   (max |diff| {same:.1e})")
    if fp32:
        st, st_load = timed(lambda: make_embedder("all-MiniLM-L6-v2"))
        st.embed(texts[:8])
        _, t_st = timed(lambda: st.embed(texts))
        print(f"  fp32 sentence-transformers {n / t_st:8.1f} sentences/s (load {st_load:.1f} s)")
        print(f"  ratio int8 ONNX / fp32 torch       {t_st / min(times['batched']):8.2f}x")


def bench_relevance(
    triples: list[tuple[str, str, str]], *, variants: list[str], model: str, loop_n: int
) -> None:
    """Each runtime[:dtype] through the family, one pair per call, and its accuracy; then
    the gaps between the first two."""
    import numpy as np

    from ragmeter.metrics.context_relevance import ContextRelevanceFamily
    from ragmeter.models.relevance.loader import load_question_likelihood
    from ragmeter.types import Sample

    samples = [Sample(question=q, contexts=(pos, neg)) for q, pos, neg in triples]
    contexts = [c for _, pos, neg in triples for c in (pos, neg)]
    questions = [q for q, _, _ in triples for _ in (0, 1)]
    subset = list(zip(contexts, questions, strict=True))[:loop_n]
    pairs = len(contexts)
    per_variant: dict[str, np.ndarray] = {}
    rates: dict[str, float] = {}
    for variant in variants:
        runtime, _, dtype = variant.partition(":")
        scorer = load_question_likelihood(
            model,
            runtime=runtime,
            dtype=dtype or "auto",  # type: ignore[arg-type]
        )
        _, load = timed(lambda s=scorer: s.score(["warm up"], ["warm up?"]))
        family = ContextRelevanceFamily(scorer)
        rows, t_batch = timed(
            lambda f=family: asyncio.run(f.score_batch(samples, ["context_relevance"]))
        )
        rate_batch = idle_rate(pairs, THREADS)
        rates[variant] = pairs / t_batch
        scores = np.array(
            [s for row in rows for s in row["context_relevance"].details["context_scores"]]
        )
        per_variant[variant] = scores
        wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in scores.reshape(-1, 2))
        alone, t_loop = timed(lambda s=scorer: [s.score([c], [q])[0] for c, q in subset])
        rate_loop = idle_rate(len(subset), THREADS)
        backwards = scorer.score([c for c, _ in subset][::-1], [q for _, q in subset][::-1])[::-1]
        same = np.array_equal(np.round(alone, 6), scores[: len(subset)]) and alone == backwards
        print(
            f"context relevance  {scorer.name} {variant}: {scorer.numerics()}, "
            f"load+score {load:.1f} s"
        )
        print(f"  batched family, {pairs} pairs {pairs / t_batch:8.2f} pairs/s {rate_batch}")
        n = len(subset)
        print(f"  one pair per call, {n} pairs {n / t_loop:8.2f} pairs/s {rate_loop}")
        print(f"  a pair's score alone = in the batch = in reversed order: {same}")
        print(
            f"  TruLens MS MARCO pairwise accuracy {wins / len(triples):.3f} over {len(triples)} "
            "queries (meta-evaluation bar 0.75)"
        )
    if len(variants) >= 2:
        first, second = variants[:2]
        gap = np.abs(per_variant[first] - per_variant[second])
        rel = gap / np.maximum(per_variant[second], 1e-12)
        print(
            f"  |{first} - {second}| over {pairs} pairs: mean {gap.mean():.1e}, median "
            f"{np.median(gap):.1e}, p95 {np.quantile(gap, 0.95):.1e}, max {gap.max():.1e} "
            f"(relative: median {np.median(rel):.3f}, max {rel.max():.3f})"
        )
        print(f"  ratio {first}/{second} pairs/s {rates[first] / rates[second]:8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200, help="TruLens queries (max 200)")
    parser.add_argument("--loop-pairs", type=int, default=16, help="pairs for the 1-by-1 peer")
    parser.add_argument(
        "--runtimes",
        default="onnx,torch:auto",
        help="context-relevance runtime[:dtype] to compare, comma-separated (onnx, "
        "torch:auto, torch:float32, torch:bfloat16)",
    )
    parser.add_argument("--relevance-model", default="offline", help="'offline' or a key/path")
    parser.add_argument("--fp32", action="store_true", help="also time sentence-transformers")
    parser.add_argument("--repeats", type=int, default=3, help="embedding timing repeats")
    parser.add_argument("--skip-embeddings", action="store_true")
    parser.add_argument("--skip-relevance", action="store_true")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if args.limit < 1:
        parser.error(f"--limit must be >= 1. Got {args.limit}.")
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1. Got {args.repeats}.")
    if args.loop_pairs < 1:
        parser.error(f"--loop-pairs must be >= 1. Got {args.loop_pairs}.")

    print(f"threads {THREADS} (set RAGMETER_THREADS to change)")
    triples = load_pairs(args.data, args.limit)
    if not args.skip_embeddings:
        queries = [q for q, _, _ in load_pairs(args.data, 200)]
        bench_embeddings(queries, fp32=False, repeats=args.repeats)  # short texts
        texts = [t for q, pos, neg in triples for t in (q, pos, neg)]
        bench_embeddings(texts, fp32=args.fp32, repeats=args.repeats)
    if not args.skip_relevance:
        variants = [d.strip() for d in args.runtimes.split(",") if d.strip()]
        bench_relevance(
            triples, variants=variants, model=args.relevance_model, loop_n=args.loop_pairs
        )


if __name__ == "__main__":
    main()
