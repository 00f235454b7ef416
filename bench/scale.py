"""Scale: memory and throughput of a streaming CLI run, and the Ray engine with 1 and 2 workers.

1. Writes synthetic JSONL rows (3 contexts of ~40 words, a ~20-word answer, one reference
   answer, 5 retrieved context ids, 2 reference ids; texts drawn from a pool so that writing
   1M rows takes seconds) and runs, for 100k rows and for ``--rows`` (1M by default)::

       python -m ragmeter evaluate DATA -m k_precision,token_recall,mrr,map --out OUT -q

   in a subprocess, sampling the child's resident memory every 0.2 s. It prints rows/s and
   peak RSS of both runs and their ratio (flat memory: the ratio stays near 1).
2. Runs the Ray engine in-process (``evaluate(engine=RayEngine(...))``) on ``--ray-rows``
   rows (100k by default) with 1 and 2 workers on one local Ray instance started once,
   prints rows/s and the ratio, and
   checks that both write the same rows as the local CLI run on the same file.

Run::

    PYTHONPATH=src python bench/scale.py                    # 1M rows; several minutes
    PYTHONPATH=src python bench/scale.py --rows 200000 --ray-rows 20000
    PYTHONPATH=src python bench/scale.py --skip-ray
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

METRICS = "k_precision,token_recall,mrr,map"
SRC = Path(__file__).resolve().parents[1] / "src"


def _words(rng: random.Random, vocab: Sequence[str], n: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(n)).capitalize() + "."


def write_rows(path: Path, n: int, *, seed: int = 0) -> None:
    """``n`` synthetic RAG rows as JSONL; the answer borrows words from a context."""
    rng = random.Random(seed)
    vocab = ["the", "a", "of", "in", "and", "is", "was", "to"] + [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
        for _ in range(3000)
    ]
    contexts = [_words(rng, vocab, rng.randint(30, 50)) for _ in range(4000)]
    answers = [_words(rng, vocab, rng.randint(15, 25)) for _ in range(4000)]
    ids = [f"d{i}" for i in range(50)]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            ctx = rng.sample(contexts, 3)
            answer = ctx[0][: rng.randint(60, 200)] + " " + rng.choice(answers)
            retrieved = rng.sample(ids, 5)
            relevant = rng.sample(ids, 2)
            row = {
                "question_id": f"q{i}",
                "question": rng.choice(answers),
                "contexts": ctx,
                "contexts_ids": retrieved,
                "answer": answer,
                "reference_answers": [rng.choice(answers) if i % 7 else answer],
                "reference_context_ids": relevant,
            }
            fh.write(json.dumps(row) + "\n")


@dataclass(frozen=True, slots=True)
class Measured:
    rows: int
    seconds: float
    peak_rss_mb: float

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds


def _rss_tree(proc: psutil.Process) -> int:
    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total


def run_cli(data: Path, out: Path, rows: int) -> Measured:
    """The CLI on ``data`` in a subprocess; peak RSS of the child sampled every 0.2 s."""
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "ragmeter", "evaluate", str(data), "-m", METRICS]
    cmd += ["--out", str(out), "--no-progress", "-q"]
    start = time.perf_counter()
    child = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    proc = psutil.Process(child.pid)
    peak = 0
    while child.poll() is None:
        with contextlib.suppress(psutil.Error):
            peak = max(peak, _rss_tree(proc))
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    stderr = child.stderr.read() if child.stderr else ""
    if child.returncode != 0:
        raise SystemExit(f"CLI failed ({child.returncode}): {' '.join(cmd)}\n{stderr}")
    return Measured(rows, seconds, peak / 2**20)


def _head(src: Path, dst: Path, n: int) -> None:
    with src.open("rb") as fin, dst.open("wb") as fout:
        for i, line in enumerate(fin):
            if i >= n:
                break
            fout.write(line)


def _same_rows(a: Path, b: Path) -> bool:
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            la, lb = fa.readline(), fb.readline()
            if la != lb:
                return False
            if not la:
                return True


def run_ray_engine(data: Path, out: Path, rows: int, workers: int) -> Measured:
    import ragmeter
    from ragmeter.engines import RayEngine

    start = time.perf_counter()
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        me = psutil.Process()
        while not stop.is_set():
            peak[0] = max(peak[0], me.memory_info().rss)
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        engine = RayEngine(num_workers=workers)
        ragmeter.evaluate(data, METRICS, out=out, engine=engine, progress=False, keep_rows=False)
    finally:
        stop.set()
        sampler.join()
    return Measured(rows, time.perf_counter() - start, peak[0] / 2**20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the large run")
    parser.add_argument("--small", type=int, default=100_000, help="rows of the small run")
    parser.add_argument("--ray-rows", type=int, default=100_000, help="rows for the Ray runs")
    parser.add_argument("--skip-ray", action="store_true", help="only the CLI runs")
    parser.add_argument("--workdir", type=Path, default=None, help="keep files here")
    args = parser.parse_args()
    if args.small > args.rows:
        parser.error(f"--small ({args.small}) must not exceed --rows ({args.rows}).")

    with tempfile.TemporaryDirectory(prefix="ragmeter-scale-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        big = work / f"rows_{args.rows}.jsonl"
        t0 = time.perf_counter()
        write_rows(big, args.rows)
        size_mb = big.stat().st_size / 2**20
        print(f"wrote {args.rows:,} rows ({size_mb:,.0f} MB) in {time.perf_counter() - t0:.1f} s")
        small = work / f"rows_{args.small}.jsonl"
        _head(big, small, args.small)

        print(f"\nCLI, local engine, metrics {METRICS}, --out JSONL:")
        results = {}
        for n, path in ((args.small, small), (args.rows, big)):
            m = run_cli(path, work / f"out_{n}.jsonl", n)
            results[n] = m
            print(
                f"  {n:>9,} rows: {m.seconds:8.1f} s  {m.rows_per_s:9,.0f} rows/s  "
                f"peak RSS {m.peak_rss_mb:6.0f} MB"
            )
        s, b = results[args.small], results[args.rows]
        print(
            f"  {args.rows:,} vs {args.small:,} rows: peak RSS ratio "
            f"{b.peak_rss_mb / s.peak_rss_mb:.2f}, throughput ratio "
            f"{b.rows_per_s / s.rows_per_s:.2f} (goal: RSS < 500 MB, ratio ~1)"
        )

        if args.skip_ray:
            return
        try:
            import ray
        except ImportError:
            print("\nRay is not installed (pip install 'ragmeter[ray]'); Ray runs skipped.")
            return
        ray_data = work / f"rows_{args.ray_rows}_ray.jsonl"
        _head(big, ray_data, args.ray_rows)
        local_out = work / "ray_local_out.jsonl"
        peer = run_cli(ray_data, local_out, args.ray_rows)
        cpus = 2
        print(f"\nRay engine, local instance with {cpus} CPUs, {args.ray_rows:,} rows:")
        print(f"  local CLI (peer): {peer.seconds:6.1f} s  {peer.rows_per_s:9,.0f} rows/s")
        ray.init(num_cpus=cpus, include_dashboard=False, logging_level="WARNING")
        try:
            timed = {}
            for workers in (1, 2):
                out = work / f"ray_out_{workers}.jsonl"
                m = run_ray_engine(ray_data, out, args.ray_rows, workers)
                timed[workers] = m
                same = _same_rows(out, local_out)
                print(
                    f"  {workers} worker{'s' if workers > 1 else ' '}: {m.seconds:6.1f} s  "
                    f"{m.rows_per_s:9,.0f} rows/s  driver peak RSS {m.peak_rss_mb:5.0f} MB  "
                    f"rows identical to local: {same}"
                )
        finally:
            ray.shutdown()
        print(
            f"  throughput 2 workers / 1 worker: {timed[2].rows_per_s / timed[1].rows_per_s:.2f}; "
            f"1 worker / local CLI: {timed[1].rows_per_s / peer.rows_per_s:.2f}"
        )


if __name__ == "__main__":
    main()
