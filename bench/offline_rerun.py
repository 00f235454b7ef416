"""A rerun of an offline run reads the judge's analyses and verdicts from the cache.

Writes ``--rows`` realistic RAG rows (``bench/rag_rows.py``: a question, 3-5 contexts of about
95 words, a 1-3 sentence answer, a reference answer; from LFQA-Verification by path), then runs
the CLI on them twice in a subprocess with a fresh cache file::

    python -m ragmeter evaluate ROWS.jsonl -m METRICS --cache CACHE --out OUT -q

The first run is the baseline (it fills the cache); the rerun reads it. Prints both wall times,
CPU seconds, the ratio rerun / first (target <= 0.10), the machine's load average, and
whether both runs wrote the same scores. Each run is a new process, so both pay the imports
and the model loads they need. With ``--repeat N`` the pair is measured N times (a fresh cache
each time) and the median ratio printed.

Run from the project root::

    .venv/bin/python bench/offline_rerun.py [--rows 300] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rag_rows import ROOT, write_rows

METRICS = "faithfulness,noise_sensitivity_relevant,noise_sensitivity_irrelevant,claim_recall"


def run_cli(data: Path, cache: Path, out: Path, metrics: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one CLI run in a subprocess."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-m", "ragmeter", "evaluate", str(data), "-m", metrics]
    command += ["--cache", str(cache), "--out", str(out), "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"ragmeter failed ({done.returncode}):\n{done.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def scores(path: Path) -> list[dict]:
    return [json.loads(line)["scores"] for line in path.read_text("utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--metrics", default=METRICS)
    args = parser.parse_args()
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = write_rows(folder / "rows.jsonl", args.rows)
        print(f"{args.rows} rows, metrics {args.metrics}; cpu count {os.cpu_count()}")
        for n in range(args.repeat):
            cache = folder / f"cache-{n}.sqlite3"
            load = os.getloadavg()[0]
            first, first_cpu = run_cli(data, cache, folder / "first.jsonl", args.metrics)
            rerun, rerun_cpu = run_cli(data, cache, folder / "rerun.jsonl", args.metrics)
            same = scores(folder / "first.jsonl") == scores(folder / "rerun.jsonl")
            ratios.append(rerun / first)
            print(
                f"first run {first:6.1f} s ({first_cpu:5.1f} s CPU, "
                f"{args.rows / first:5.1f} rows/s)"
                f" | rerun {rerun:5.1f} s ({rerun_cpu:4.1f} s CPU) | rerun/first "
                f"{rerun / first:.3f} (target <= 0.10) | same scores: {same} | load "
                f"{load:.1f} -> {os.getloadavg()[0]:.1f}"
            )
    if args.repeat > 1:
        print(f"median rerun/first over {args.repeat}: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
