"""The claim metrics on the offline judge: rows/s with 1 worker against every core, same run.

Writes ``--rows`` realistic RAG rows (``bench/rag_rows.py``: a question, 3-5 contexts of about
95 words, a 1-3 sentence answer, a reference answer; from LFQA-Verification by path) and runs
the CLI on them in a subprocess, no cache (every run computes every verdict)::

    python -m ragmeter evaluate ROWS.jsonl -m METRICS --no-cache --workers N --out OUT -q

for N in ``--workers`` (default ``1,2``), interleaved ``--rounds`` times so that the machine's
load (shared with other work) falls on both alike. Each line: wall seconds, CPU seconds (user +
system), rows/s, CPU use (CPU / wall), the load average before; then the best rows/s of each N
and the ratio to the first. The wall time includes the process's start and model loads; the
rows/s of the scoring alone is higher.

Run from the project root::

    .venv/bin/python bench/offline_speed.py [--rows 200] [--workers 1,2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rag_rows import ROOT, write_rows

METRICS = "faithfulness,noise_sensitivity_relevant,noise_sensitivity_irrelevant,claim_recall"


def run_cli(data: Path, out: Path, metrics: str, workers: int) -> tuple[float, float]:
    """Wall and CPU seconds of one CLI run with ``--workers``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-m", "ragmeter", "evaluate", str(data), "-m", metrics]
    command += ["--no-cache", "--workers", str(workers), "--out", str(out), "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"ragmeter failed ({done.returncode}):\n{done.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--metrics", default=METRICS)
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    best: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = write_rows(Path(tmp) / "rows.jsonl", args.rows)
        print(f"{args.rows} rows, metrics {args.metrics}; cpu count {os.cpu_count()}")
        for round_ in range(args.rounds):
            for n in counts:
                load = os.getloadavg()[0]
                wall, cpu = run_cli(data, Path(tmp) / f"out-{n}.jsonl", args.metrics, n)
                rate = args.rows / wall
                best[n] = max(best.get(n, 0.0), rate)
                print(
                    f"  round {round_ + 1} --workers {n}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                    f"{rate:5.2f} rows/s, CPU use {cpu / wall:.2f}, load {load:.1f}"
                )
    first = counts[0]
    for n in counts:
        print(f"  best --workers {n}: {best[n]:5.2f} rows/s ({best[n] / best[first]:.2f}x)")


if __name__ == "__main__":
    main()
