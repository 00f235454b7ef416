"""What ``ragmeter.evaluate()`` spends per row outside the lexical family and the summaries.

On bench/lexical.py's 2,000 rows (k_precision + token_recall + mrr + map), best of N, each
part on its own:

- reading the rows (``open_rows``: each row checked for nesting, one ``Row`` each);
- making samples (``to_samples`` over batches of 256, as the runner does, when it exists);
- the retrieval family's mrr + map on every sample;
- ``BatchScorer.score`` on every batch (samples, the families' calls, checking, recording;
  the lexical family's outcomes precomputed, so its time is not in it);
- ``evaluate()`` whole, with the lexical family's outcomes precomputed and the summaries
  left out: reading, samples, retrieval, bookkeeping, results, the run record.

The lexical family and the summaries have their own benches (bench/lexical.py,
bench/summary_speed.py). Run from the repository root::

    PYTHONPATH=src python bench/row_overhead.py
    # the same parts of another tree, e.g. an older commit's:
    git archive COMMIT src | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old/src python bench/row_overhead.py
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import ragmeter
import ragmeter.runner.core as core
from ragmeter.io import columns
from ragmeter.io.readers import open_rows
from ragmeter.metrics import lexical, retrieval
from ragmeter.metrics.base import RunContext
from ragmeter.types import Sample

sys.path.insert(0, str(Path(__file__).parent))
from lexical import make_samples  # bench/lexical.py, beside this file

METRICS = ["k_precision", "token_recall", "mrr", "map"]
BATCH = 256


def best_ms(repeat: int, fn: Callable[[], Any]) -> float:
    best = math.inf
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def precomputed_lexical(samples: Sequence[Sample]) -> Callable[..., Any]:
    """A stand-in for ``LexicalFamily.score_batch``: the outcomes computed once, by id."""
    family = lexical.build(RunContext())
    names = METRICS[:2]
    outcomes = asyncio.run(family.score_batch(samples, names))
    by_id = {s.question_id: o for s, o in zip(samples, outcomes, strict=True)}

    async def score_batch(self: Any, batch: Sequence[Sample], metrics: Sequence[str]) -> Any:
        return [by_id[s.question_id] for s in batch]

    return score_batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="number of rows (2000)")
    parser.add_argument("--repeat", type=int, default=30, help="best of N timings (30)")
    args = parser.parse_args()

    rows = make_samples(args.n)
    cmap = columns.ColumnMap.from_any(None)
    samples = [columns.to_sample(row, cmap)[0] for row in rows]
    batches = [rows[i : i + BATCH] for i in range(0, len(rows), BATCH)]
    print(f"{args.n} rows of bench/lexical.py, {', '.join(METRICS)}; best of {args.repeat}")

    def line(label: str, ms: float) -> None:
        print(f"  {label:<58}{ms:8.2f} ms {ms * 1e3 / args.n:7.2f} us/row")

    line("open_rows: every row read", best_ms(args.repeat, lambda: list(open_rows(rows))))
    line(
        "to_sample: every row",
        best_ms(args.repeat, lambda: [columns.to_sample(row, cmap) for row in rows]),
    )
    to_samples = getattr(columns, "to_samples", None)
    if to_samples is not None:
        line(
            f"to_samples: batches of {BATCH}",
            best_ms(args.repeat, lambda: [to_samples(batch, cmap) for batch in batches]),
        )
    family = retrieval.build(RunContext())
    line(
        "retrieval family: mrr + map, every sample",
        best_ms(args.repeat, lambda: asyncio.run(family.score_batch(samples, ["mrr", "map"]))),
    )

    real_score_batch = lexical.LexicalFamily.score_batch
    real_summaries = core._summaries
    lexical.LexicalFamily.score_batch = precomputed_lexical(samples)  # type: ignore[method-assign]
    core._summaries = lambda acc, resamples: {}
    try:
        source = open_rows(rows)
        plan = core.Plan.make(METRICS, cmap, source)
        ctx = RunContext()
        plan.build_families(ctx)
        scorer = core.BatchScorer(plan, cmap, ctx)
        read = list(source)
        row_batches = [read[i : i + BATCH] for i in range(0, len(read), BATCH)]

        async def score_all() -> None:
            for batch in row_batches:
                await scorer.score(batch)

        line(
            "BatchScorer.score: every batch (lexical precomputed)",
            best_ms(args.repeat, lambda: asyncio.run(score_all())),
        )
        ragmeter.evaluate(rows[:20], METRICS, progress=False)  # first imports
        line(
            "evaluate(): lexical precomputed, no summaries",
            best_ms(args.repeat, lambda: ragmeter.evaluate(rows, METRICS, progress=False)),
        )
    finally:
        lexical.LexicalFamily.score_batch = real_score_batch  # type: ignore[method-assign]
        core._summaries = real_summaries


if __name__ == "__main__":
    main()
