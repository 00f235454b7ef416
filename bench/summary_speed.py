"""Speed of a run's summaries: the four lexical metrics of 2,000 rows, each summarised with
its 95 % BCa interval (1,000 resamples, seed 42), the metrics sharing one
:class:`~ragmeter.scoring.statistics.Resamples` as the runner shares it.

Times two ways in the same run, best of ``--repeat``, interleaved:

* ``counts``: ``summarize`` as it is (indices drawn once per batch with
  ``Generator.integers`` and counted per resample, then one matrix-vector product per
  metric and batch);
* ``gather``: the same ``summarize`` given a ``Resamples`` that does the straightforward
  thing: indices drawn once, then ``values[indices].mean()`` per metric, as
  ``scipy.stats.bootstrap`` computes them (ragmeter before the counts).

It also times the shared draw alone both ways, and the four summaries on a draw kept from
an earlier call (what keeping draws across runs would give; ragmeter does not). It checks
that both ways give intervals within 1e-9 and prints the largest difference. The scores are
those of ``bench/lexical.py``'s synthetic rows (k_precision, token_recall, mrr, map), or
uniform random ones with ``--synthetic``. With ``--evaluate WAY`` it times instead the runner's
summaries inside ``ragmeter.evaluate()`` on those rows, one way per process (``counts``,
``gather``) or runs of ``both`` alternating.

Run::

    PYTHONPATH=src python bench/summary_speed.py
    PYTHONPATH=src python bench/summary_speed.py --evaluate counts --repeat 20
    PYTHONPATH=src python bench/summary_speed.py --evaluate gather --repeat 20
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Sequence
from statistics import median as statistics_median
from typing import Any

import numpy as np

from ragmeter.scoring import statistics
from ragmeter.scoring.statistics import BOOTSTRAP_BATCH, Resamples, Summary, summarize


class GatherResamples(Resamples):
    """Shared draws averaged the straightforward way: a gather per metric."""

    def prepare(self, n: int, *, n_resamples: int = 1000, seed: int = 42) -> None:
        """Nothing drawn ahead (the runner draws the counts' way while rows score)."""

    def means(self, values: np.ndarray, *, n_resamples: int, seed: int) -> np.ndarray:
        n = values.size
        key = (n, n_resamples, seed)
        if getattr(self, "_gather_key", None) != key:
            rng = np.random.default_rng(seed)
            self._draws = [
                rng.integers(0, n, (min(BOOTSTRAP_BATCH, n_resamples - start), n))
                for start in range(0, n_resamples, BOOTSTRAP_BATCH)
            ]
            self._gather_key = key
        return np.concatenate([values[indices].mean(axis=-1) for indices in self._draws])


def lexical_scores(n: int) -> list[np.ndarray]:
    """The defined scores of each metric of ``bench/lexical.py``'s bundle on ``n`` rows."""
    from lexical import LEXICAL, RETRIEVAL, make_samples, run_ragmeter

    from ragmeter.types import Sample

    rows = run_ragmeter([Sample(**row) for row in make_samples(n)])
    return [
        np.array([v for row in rows if (v := row[name]) is not None])
        for name in LEXICAL + RETRIEVAL
    ]


def summaries(columns: Sequence[np.ndarray], resamples: Resamples) -> list[Summary]:
    return [summarize(c, resamples=resamples) for c in columns]


def time_ms(repeat: int, fns: dict[str, Callable[[], Any]]) -> dict[str, tuple[float, float]]:
    """Best and median time of each function, the functions run in turn ``repeat`` times."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            gc.collect()
            start = time.perf_counter()
            fn()
            times[name].append(1000 * (time.perf_counter() - start))
    return {name: (min(t), statistics_median(t)) for name, t in times.items()}


def in_evaluate(n: int, repeat: int, way: str) -> None:
    """Time the runner's summaries inside ``ragmeter.evaluate()`` on ``bench/lexical.py``'s
    rows, one way or both (runs alternating; the runner's ``Resamples`` swapped for the
    gather). One way per process is what a user's process sees: memory is reused between
    the two ways when they alternate."""
    from lexical import make_samples, run_evaluate

    from ragmeter.runner import core

    rows = make_samples(n)
    spent: list[float] = []
    summaries_of_run = core._summaries

    def timed(acc: Any, resamples: Any) -> Any:
        start = time.perf_counter()
        out = summaries_of_run(acc, resamples)
        spent.append(1000 * (time.perf_counter() - start))
        return out

    ways = {"counts": Resamples, "gather": GatherResamples}
    ways = ways if way == "both" else {way: ways[way]}
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    core._summaries = timed  # type: ignore[assignment]
    try:
        run_evaluate(rows[:20])
        for _ in range(repeat):
            for name, kind in ways.items():
                core.Resamples = kind  # type: ignore[misc]
                spent.clear()
                start = time.perf_counter()
                run_evaluate(rows)
                found[name].append((spent[0], 1000 * (time.perf_counter() - start)))
    finally:
        core._summaries, core.Resamples = summaries_of_run, Resamples  # type: ignore[misc]
    print(f"evaluate() on {n} rows, median of {repeat} runs each ({way}):")
    for name, times in found.items():
        summary_ms = statistics_median(t for t, _ in times)
        run_ms = statistics_median(t for _, t in times)
        print(f"{name:>8}: summaries {summary_ms:6.2f} ms of a run of {run_ms:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="rows (2000)")
    parser.add_argument("--repeat", type=int, default=30, help="best of N timings (30)")
    parser.add_argument("--synthetic", action="store_true", help="uniform random scores")
    parser.add_argument(
        "--evaluate",
        choices=("counts", "gather", "both"),
        help="time the summaries inside evaluate() instead, one way or both alternating",
    )
    args = parser.parse_args()
    if args.evaluate:
        in_evaluate(args.n, args.repeat, args.evaluate)
        return
    if args.synthetic:
        rng = np.random.default_rng(0)
        columns = [rng.random(args.n) for _ in range(4)]
    else:
        columns = lexical_scores(args.n)
    print("scores per metric:", [c.size for c in columns])

    counts = summaries(columns, Resamples())
    gather = summaries(columns, GatherResamples())
    diff = max(
        abs(getattr(a, f) - getattr(b, f))
        for a, b in zip(counts, gather, strict=True)
        for f in ("ci_low", "ci_high")
    )
    print(f"largest interval difference, counts vs gather: {diff:.3g}")
    if diff > 1e-9:
        raise SystemExit("The intervals differ by more than 1e-9.")

    n = columns[0].size
    kept = Resamples()
    times = time_ms(
        args.repeat,
        {
            "counts": lambda: summaries(columns, Resamples()),
            "counts, draw kept": lambda: summaries(columns, kept),
            "gather": lambda: summaries(columns, GatherResamples()),
            "draw (counts)": lambda: list(statistics._resample_counts(n, 1000, 42, keep=True)),
            "draw (integers)": lambda: [
                np.random.default_rng(42).integers(0, n, (BOOTSTRAP_BATCH, n))
                for _ in range(0, 1000, BOOTSTRAP_BATCH)
            ],
        },
    )
    print(f"{'':>18}   best of {args.repeat}   median")
    for name, (best, median) in times.items():
        print(f"{name:>18}: {best:7.2f} ms  {median:7.2f} ms")
    for i, what in enumerate(("best", "median")):
        ratio = times["counts"][i] / times["gather"][i]
        print(f"4 summaries, {what}: counts take {ratio:.2f}x the time of gather")


if __name__ == "__main__":
    main()
