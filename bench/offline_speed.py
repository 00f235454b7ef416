"""The claim metrics on the offline judge: rows/s with 1 worker against every core, same run.

Writes ``--rows`` realistic RAG rows (``bench/rag_rows.py``: a question, 3-5 contexts of about
95 words, a 1-3 sentence answer, a reference answer; from LFQA-Verification by path) and runs
the CLI on them in a subprocess, no cache (every run computes every verdict)::

    python -m ragmeter evaluate ROWS.jsonl -m METRICS --no-cache --workers N --out OUT -q

for N in ``--workers`` (default ``1,2``), interleaved ``--rounds`` times so that the machine's
load (shared with other work) falls on both alike. With ``--baseline REV`` the same runs are
made, interleaved, with the source tree of git revision REV (``git archive REV src``, on
``PYTHONPATH``): the before of a change, measured in the same invocation.

Each line: wall seconds, CPU seconds (user + system, worker processes included), rows/s, CPU
use (CPU / wall), the load average before; then the best rows/s of each setup, its ratio to
the first, the CPU milliseconds per row, and whether every row's scores, reasons and
details equal the first setup's. The wall time includes the process's start and model loads
(about 2 s of the total); the rows/s of the scoring alone is higher.

Run from the project root::

    .venv/bin/python bench/offline_speed.py [--rows 200] [--workers 1,2] [--rounds 2] \\
        [--baseline REV]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from rag_rows import ROOT, write_rows

from ragmeter.io.results import read_results

METRICS = "faithfulness,noise_sensitivity_relevant,noise_sensitivity_irrelevant,claim_recall"


def run_cli(data: Path, out: Path, metrics: str, workers: int, src: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one CLI run with ``--workers``, ragmeter imported from ``src``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-m", "ragmeter", "evaluate", str(data), "-m", metrics]
    command += ["--no-cache", "--workers", str(workers), "--out", str(out), "-q"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"ragmeter failed ({done.returncode}):\n{done.stderr[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def export_source(revision: str, folder: Path) -> Path:
    """``src/`` of git ``revision`` written under ``folder``; returns that ``src``."""
    archive = subprocess.run(
        ["git", "archive", revision, "src"], cwd=ROOT, capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise SystemExit(f"git archive {revision} failed: {archive.stderr.decode()[-500:]}")
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder / "src"


def scored(path: Path) -> dict[str, object]:
    """Each row's scores, reasons, failures and details, by id."""
    rows = (row for _, row in read_results(path))
    return {r["id"]: (r["scores"], r["reasons"], r["failures"], r["details"]) for r in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--metrics", default=METRICS)
    parser.add_argument("--baseline", default=None, help="git revision measured as the before")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    best: dict[str, float] = {}
    cpu_of: dict[str, float] = {}
    outputs: dict[str, Path] = {}
    with tempfile.TemporaryDirectory() as tmp:
        data = write_rows(Path(tmp) / "rows.jsonl", args.rows)
        sources = {"": ROOT / "src"}
        if args.baseline:
            revision = subprocess.run(
                ["git", "rev-parse", "--short", args.baseline],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            sources = {f"before {revision}": export_source(args.baseline, Path(tmp) / "before")}
            sources["after (working tree)"] = ROOT / "src"
        print(f"{args.rows} rows, metrics {args.metrics}; cpu count {os.cpu_count()}")
        for round_ in range(args.rounds):
            for label, src in sources.items():
                for n in counts:
                    setup = f"{label} --workers {n}".strip()
                    out = Path(tmp) / f"out-{len(outputs)}.jsonl"
                    load = os.getloadavg()[0]
                    wall, cpu = run_cli(data, out, args.metrics, n, src)
                    outputs.setdefault(setup, out)
                    rate = args.rows / wall
                    if rate > best.get(setup, 0.0):
                        best[setup], cpu_of[setup] = rate, cpu
                    print(
                        f"  round {round_ + 1} {setup}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, "
                        f"{rate:5.2f} rows/s, CPU use {cpu / wall:.2f}, load {load:.1f}"
                    )
        first = next(iter(best))
        reference = scored(outputs[first])
        for setup, rate in best.items():
            same = "same scores" if scored(outputs[setup]) == reference else "SCORES DIFFER"
            print(
                f"  best {setup}: {rate:5.2f} rows/s ({rate / best[first]:.2f}x), "
                f"{1000 * cpu_of[setup] / args.rows:.0f} ms CPU/row, {same} as {first}"
            )


if __name__ == "__main__":
    main()
