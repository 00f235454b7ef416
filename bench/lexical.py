"""Speed of the exact lexical + retrieval bundle against Unitxt, measured in the same run.

Builds 2,000 synthetic samples (5 contexts of ~100 words, a 50-word answer, one reference
answer, 5 retrieved context ids, 2 reference ids) and times k_precision + token_recall +
mrr + map two ways, in-process: through ragmeter's metric families alone (samples already
built), and through the public ``ragmeter.evaluate()`` on the rows as dicts (reading and
checking rows, samples, per-row results with reasons, and each metric's summary with its
bootstrap interval). When Unitxt is importable it also times, on the same samples and
interleaved with ragmeter's runs:

1. Unitxt's metric classes (TokenOverlap for K-Precision and token recall, MRR, MAP),
   instance scores only, and checks that every instance score agrees within 1e-9
   (Unitxt's MAP is ragmeter's ``map_retrieved``), for the families and for evaluate();
2. Unitxt's RAG catalog pipelines as its ``evaluate`` applies them (instance scores,
   global score, bootstrap interval) against ragmeter's families plus the run summary,
   and checks that the global means agree.

It prints samples/s and the ratios (wall time, best of ``--repeat``), the same ratios in CPU
time with the load average (short runs' wall time swells on a machine busy with other work;
CPU time much less), and the time of one normalise-and-split pass over all
the text: the floor of any tokenising that makes a Python string per token. ragmeter's
families go below it: a batch is tokenised at once into integer keys
(:class:`ragmeter.scoring.lexical.token_batch.TokenBatch`), whose time is printed too.

Run (Unitxt lives in its own venv, ragmeter from the source tree)::

    PYTHONPATH=src /work/venv-unitxt/bin/python bench/lexical.py
    PYTHONPATH=src python bench/lexical.py          # without Unitxt: ragmeter only
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import os
import random
import string
import time
from collections.abc import Callable, Sequence
from typing import Any

from ragmeter.metrics import lexical, retrieval
from ragmeter.metrics.base import RunContext
from ragmeter.scoring.lexical.token_batch import TokenBatch
from ragmeter.scoring.statistics import Summary, summarize
from ragmeter.text import tokens
from ragmeter.types import Sample

LEXICAL = ("k_precision", "token_recall")
RETRIEVAL = ("mrr", "map")


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    words = ["the", "a", "an", "of", "in", "and", "is", "was", "to", "for"]
    while len(words) < size:
        n = rng.randint(2, 10)
        words.append("".join(rng.choice(string.ascii_lowercase) for _ in range(n)))
    return words


def _zipf_words(rng: random.Random, vocab: Sequence[str], n: int) -> list[str]:
    # Zipf-like: low ranks (articles, function words) are frequent, as in real text.
    out = []
    for _ in range(n):
        rank = min(int(rng.paretovariate(1.1)) - 1, len(vocab) - 1)
        out.append(vocab[rank] if rng.random() < 0.5 else rng.choice(vocab))
    return out


def _sentence_text(rng: random.Random, words: list[str]) -> str:
    out = []
    start = True
    for w in words:
        if start:
            w = w.capitalize()
            start = False
        r = rng.random()
        if r < 0.08:
            w += "."
            start = True
        elif r < 0.14:
            w += ","
        elif r < 0.16:
            w = f"({w})"
        out.append(w)
    return " ".join(out) + "."


def make_samples(n: int = 2000, *, seed: int = 0) -> list[dict[str, Any]]:
    """Synthetic RAG rows: the answer borrows words from the contexts, ids overlap."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    rows = []
    for i in range(n):
        context_words = [_zipf_words(rng, vocab, rng.randint(90, 110)) for _ in range(5)]
        pool = [w for words in context_words for w in words]
        answer = [rng.choice(pool) if rng.random() < 0.7 else rng.choice(vocab) for _ in range(50)]
        reference = [
            rng.choice(answer) if rng.random() < 0.6 else rng.choice(pool) for _ in range(30)
        ]
        docs = [f"doc{rng.randrange(40)}" for _ in range(5)]
        rows.append(
            {
                "question_id": f"q{i}",
                "contexts": [_sentence_text(rng, words) for words in context_words],
                "answer": _sentence_text(rng, answer),
                "reference_answers": [_sentence_text(rng, reference)],
                "contexts_ids": docs,
                "reference_context_ids": [f"doc{rng.randrange(40)}" for _ in range(2)],
            }
        )
    return rows


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall time, CPU time of the process (all its threads) and result of one call."""
    gc.collect()
    cpu, start = time.process_time(), time.perf_counter()
    result = fn()
    return time.perf_counter() - start, time.process_time() - cpu, result


def _best_of(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    best = math.inf
    result = None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def run_ragmeter(samples: Sequence[Sample]) -> list[dict[str, float | None]]:
    """The bundle through the metric families, as the runner calls them."""
    ctx = RunContext()
    lex = lexical.build(ctx)
    ret = retrieval.build(ctx)

    async def go() -> list[dict[str, float | None]]:
        a = await lex.score_batch(samples, LEXICAL)
        b = await ret.score_batch(samples, RETRIEVAL)
        return [
            {name: outcome.value for name, outcome in {**x, **y}.items()}  # type: ignore[union-attr]
            for x, y in zip(a, b, strict=True)
        ]

    return asyncio.run(go())


def run_evaluate(rows: Sequence[dict[str, Any]]) -> list[dict[str, float | None]]:
    """The bundle through the public API, as a user calls it: rows in, RunResult out (its
    summaries, bootstrap intervals included, are computed before it returns)."""
    import ragmeter

    result = ragmeter.evaluate(list(rows), list(LEXICAL + RETRIEVAL), progress=False)
    return [dict(row.scores) for row in result.rows]


def run_ragmeter_with_summary(samples: Sequence[Sample]) -> dict[str, Summary]:
    """The bundle plus each metric's run summary (mean, median, std, 95 % BCa interval)."""
    rows = run_ragmeter(samples)
    return {
        name: summarize([v for row in rows if (v := row[name]) is not None])
        for name in LEXICAL + RETRIEVAL
    }


def _instances(rows: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Inputs of Unitxt's metric classes, wired as its RAG catalog entries wire them."""
    if kind == "faithfulness":  # references <- contexts, prediction <- answer
        return [{"prediction": r["answer"], "references": r["contexts"]} for r in rows]
    if kind == "correctness":  # references <- reference_answers
        return [{"prediction": r["answer"], "references": r["reference_answers"]} for r in rows]
    return [  # prediction <- context ids, references <- [reference ids]
        {"prediction": r["contexts_ids"], "references": [r["reference_context_ids"]]} for r in rows
    ]


def run_unitxt_classes(rows: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """Unitxt's metric classes, instance scores only (no aggregation, no interval)."""
    from unitxt.metrics import MAP, MRR, TokenOverlap

    scored = {
        "k_precision": (TokenOverlap(), "faithfulness", "precision"),
        "token_recall": (TokenOverlap(), "correctness", "recall"),
        "mrr": (MRR(), "ids", "mrr"),
        "map_retrieved": (MAP(), "ids", "map"),
    }
    results = {
        name: [
            s["score"]["instance"][key]
            for s in metric.compute_instance_scores(_instances(rows, kind))
        ]
        for name, (metric, kind, key) in scored.items()
    }
    return [{name: float(values[i]) for name, values in results.items()} for i in range(len(rows))]


UNITXT_CATALOG = {
    "k_precision": "metrics.rag.end_to_end.faithfulness.token_k_precision",
    "token_recall": "metrics.rag.end_to_end.answer_correctness.token_recall",
    "mrr": "metrics.rag.end_to_end.context_correctness.mrr",
    "map_retrieved": "metrics.rag.end_to_end.context_correctness.map",
}


def run_unitxt_pipelines(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Unitxt's RAG catalog metrics applied to a stream, as its evaluate() does: instance
    scores, the global score and its bootstrap interval. Returns the global scores."""
    from unitxt.artifact import fetch_artifact
    from unitxt.stream import MultiStream

    instances = [
        {
            "prediction": {
                "answer": r["answer"],
                "contexts": r["contexts"],
                "context_ids": r["contexts_ids"],
            },
            "references": [],
            "task_data": {
                "reference_answers": r["reference_answers"],
                "reference_context_ids": r["reference_context_ids"],
            },
        }
        for r in rows
    ]
    means = {}
    for name, artifact in UNITXT_CATALOG.items():
        metric, _ = fetch_artifact(artifact)
        # Each pipeline rewrites its instances in place: give it its own copy.
        stream = MultiStream.from_iterables({"test": instances}, copying=True)
        out = list(metric(stream)["test"])
        means[name] = float(out[0]["score"]["global"]["score"])
    return means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="number of samples (2000)")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings (3)")
    parser.add_argument(
        "--no-pipeline", action="store_true", help="skip Unitxt's catalog pipelines (slow)"
    )
    args = parser.parse_args()

    rows = make_samples(args.n)
    samples = [
        Sample(
            question_id=r["question_id"],
            contexts=tuple(r["contexts"]),
            answer=r["answer"],
            reference_answers=tuple(r["reference_answers"]),
            contexts_ids=tuple(r["contexts_ids"]),
            reference_context_ids=tuple(r["reference_context_ids"]),
        )
        for r in rows
    ]
    texts = [t for r in rows for t in (r["answer"], *r["contexts"], *r["reference_answers"])]
    n_words = sum(len(t.split()) for t in texts)
    print(f"{args.n} samples, {len(texts)} texts, {n_words} words; best of {args.repeat}")

    table = str.maketrans("", "", string.punctuation)
    floor, _ = _best_of(args.repeat, lambda: [t.lower().translate(table).split() for t in texts])
    floor_tokens, _ = _best_of(args.repeat, lambda: [tokens(t) for t in texts])
    batch_tokens, _ = _best_of(args.repeat, lambda: TokenBatch.of(texts))
    print(f"floor: lower + strip punctuation + split, all text   {floor * 1e3:9.1f} ms")
    print(f"       ragmeter.text.tokens, all text                  {floor_tokens * 1e3:9.1f} ms")
    print(f"       TokenBatch, all text at once                    {batch_tokens * 1e3:9.1f} ms")

    try:
        import unitxt
    except ImportError:
        unitxt = None

    # Interleave ragmeter and Unitxt so that both see the same machine load; best of each.
    run_evaluate(rows[:20])  # warm-up: first imports (the report's statistics, pandas...)
    load_before = os.getloadavg()[0]
    ours = public = theirs = math.inf
    # CPU time too: on a machine shared with other work, wall time of short runs swells
    # with the load; CPU time much less so.
    cpu = {"families": math.inf, "evaluate": math.inf, "unitxt": math.inf}
    our_scores: list[dict[str, float | None]] = []
    public_scores: list[dict[str, float | None]] = []
    their_scores: list[dict[str, float]] = []
    for _ in range(args.repeat):
        elapsed, used, our_scores = _timed(lambda: run_ragmeter(samples))
        ours, cpu["families"] = min(ours, elapsed), min(cpu["families"], used)
        elapsed, used, public_scores = _timed(lambda: run_evaluate(rows))
        public, cpu["evaluate"] = min(public, elapsed), min(cpu["evaluate"], used)
        if unitxt is not None:
            elapsed, used, their_scores = _timed(lambda: run_unitxt_classes(rows))
            theirs, cpu["unitxt"] = min(theirs, elapsed), min(cpu["unitxt"], used)
    load = f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    if public_scores != our_scores:
        raise SystemExit("evaluate() and the families gave different scores")

    def line(label: str, seconds: float) -> str:
        return f"{label:<52}{seconds * 1e3:9.1f} ms {args.n / seconds:9.0f} samples/s"

    bundle = "+".join(LEXICAL + RETRIEVAL)
    print(line(f"ragmeter families, {bundle}", ours) + f"  ({ours / floor:.2f}x the floor)")
    print(line("ragmeter.evaluate(), rows to RunResult (+ summaries)", public))
    if unitxt is None:
        print(
            f"CPU time ({load}): families {cpu['families'] * 1e3:.1f} ms, "
            f"evaluate() {cpu['evaluate'] * 1e3:.1f} ms"
        )
        print("Unitxt is not importable here: no comparison (see the module docstring).")
        return
    print(line(f"Unitxt {unitxt.__version__} metric classes, instance scores", theirs))
    print(f"ratio, instance scores: ragmeter's families are {theirs / ours:.1f}x faster")
    print(f"ratio, instance scores: ragmeter.evaluate() is {theirs / public:.1f}x faster")
    print(
        f"CPU time ({os.cpu_count()} cores, {load}): families {cpu['families'] * 1e3:.1f} ms, "
        f"evaluate() {cpu['evaluate'] * 1e3:.1f} ms, Unitxt {cpu['unitxt'] * 1e3:.1f} ms; "
        f"ratios {cpu['unitxt'] / cpu['families']:.1f}x and {cpu['unitxt'] / cpu['evaluate']:.1f}x"
    )

    # Agreement: Unitxt's MAP is ragmeter's map_retrieved (not the trec_eval map timed above).
    extra = asyncio.run(retrieval.build(RunContext()).score_batch(samples, ["map_retrieved"]))
    worst: dict[str, float] = {}
    for mine, extra_row, theirs_row in zip(our_scores, extra, their_scores, strict=True):
        values = {**mine, "map_retrieved": extra_row["map_retrieved"].value}  # type: ignore[union-attr]
        for name, value in theirs_row.items():
            worst[name] = max(worst.get(name, 0.0), abs(float(values[name]) - value))
    agree = all(d <= 1e-9 for d in worst.values())
    details = ", ".join(f"{k} {v:.1e}" for k, v in worst.items())
    print(f"instance scores agree within 1e-9: {agree} (largest differences: {details})")
    if not agree:
        raise SystemExit(1)

    if args.no_pipeline:
        return
    # Whole-run comparison: Unitxt's pipelines also aggregate and bootstrap an interval.
    # Warm both up first (imports of scipy.stats and of the catalog are one-time costs).
    run_ragmeter_with_summary(samples[:20])
    run_unitxt_pipelines(rows[:20])
    ours_run, summaries = _best_of(1, lambda: run_ragmeter_with_summary(samples))
    theirs_run, means = _best_of(1, lambda: run_unitxt_pipelines(rows))
    print(line("ragmeter families + summary (mean, BCa interval)", ours_run))
    print(line("Unitxt catalog pipelines (+ global score, interval)", theirs_run))
    print(f"ratio, whole run: ragmeter is {theirs_run / ours_run:.1f}x faster")
    ours_map = summarize([row["map_retrieved"].value for row in extra]).mean  # type: ignore[union-attr]
    diffs = {
        name: abs((ours_map if name == "map_retrieved" else summaries[name].mean) - mean)
        for name, mean in means.items()
    }
    print("global means agree within 1e-9:", all(d <= 1e-9 for d in diffs.values()))


if __name__ == "__main__":
    main()
