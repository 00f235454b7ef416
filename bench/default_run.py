"""The README main command's metric set (the offline default) on realistic rows: time and memory.

Writes ``--rows`` rows like a RAG run's (``bench/rag_rows.py``: a question, 3-5 contexts of
about 95 words, a 1-3 sentence answer and a reference; no ids, so the retrieval metrics are
skipped as on such data), then runs ``ragmeter evaluate ROWS --out R --no-cache`` (every metric
whose fields the rows have, the judge cache off so nothing is read back) in a child process,
first on ``--baseline-rows`` rows as the baseline of the same run. Prints wall time, rows/s,
the peak memory of each run's whole process tree (the offline judge's worker processes
included; sampled every 0.5 s: PSS summed, which counts pages the processes share once, and
RSS summed and of the largest process), the time per metric family from each run record
(``family_seconds``: its calls' wall time; families run side by side, so these overlap), and
the ratio of seconds per row. A run past
``--timeout`` is stopped and reported as longer than it. Issue 27's targets: 1,000 rows in
<= 5 minutes and <= 1 GB on 2 cores
(here: PSS of all the run's processes).

    python bench/default_run.py [--rows 1000] [--baseline-rows 100] [--timeout 1200]

``--families``: instead, a child that only imports ragmeter, then each metric family of that
set alone (``-m`` its metrics) on ``--baseline-rows`` rows, each in its own child: where the
default run's memory goes (peak resident memory per family) and its time.
``--relevance-dtype D`` passes ``--relevance-dtype D`` to every run.

    python bench/default_run.py --families [--baseline-rows 100] [--relevance-dtype int8]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psutil
from rag_rows import write_rows

#: Fields of ``rag_rows``' rows: the default run scores every metric needing only these.
ROW_FIELDS = frozenset({"question", "contexts", "answer", "reference_answers"})


def tree_memory(root: psutil.Process) -> tuple[float, float, float, int]:
    """MB of ``root`` and its descendants now: summed PSS (shared pages, such as a model file
    mapped by several processes, counted once in all), summed RSS, the largest RSS, and how
    many processes."""
    pss = rss = largest = 0.0
    count = 0
    for process in [root, *root.children(recursive=True)]:
        try:
            info = process.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        pss += info.pss / 2**20
        rss += info.rss / 2**20
        largest = max(largest, info.rss / 2**20)
        count += 1
    return pss, rss, largest, count


def run(
    rows: int, folder: Path, timeout: float, extra: list[str] | None = None, tag: str = ""
) -> dict[str, object]:
    """One child run; its memory is sampled every half second over the whole process tree
    (the offline judge's worker processes included)."""
    data = folder / f"rows{rows}.jsonl"
    if not data.is_file():
        write_rows(data, rows)
    out = folder / f"r{rows}{tag}.jsonl"
    command = [sys.executable, "-m", "ragmeter", "evaluate", str(data), "--out", str(out)]
    command += ["--no-cache", "-q", *(extra or [])]
    peaks = {"pss_mb": 0.0, "rss_mb": 0.0, "largest_mb": 0.0, "processes": 0}
    errors = folder / f"err{rows}{tag}.txt"
    started = time.perf_counter()
    with errors.open("w") as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        root = psutil.Process(child.pid)
        stopped = False
        while child.poll() is None:
            if time.perf_counter() - started > timeout:
                for process in [*root.children(recursive=True), root]:
                    with contextlib.suppress(psutil.NoSuchProcess):
                        process.kill()
                child.wait()
                stopped = True
                break
            now = tree_memory(root)
            for key, value in zip(peaks, now, strict=True):
                peaks[key] = max(peaks[key], value)
            time.sleep(0.5)
    result: dict[str, object] = {"rc": None if stopped else child.returncode, **peaks}
    result["seconds"] = time.perf_counter() - started
    result["err"] = f"stopped after {timeout:g} s" if stopped else errors.read_text()[-400:]
    record = out.with_name(out.name + ".run.json")
    if record.is_file():
        info = json.loads(record.read_text(encoding="utf-8"))
        result["metrics"] = len(info.get("summary", {}))
        result["family_seconds"] = info.get("family_seconds", {})
    result["rows"] = rows
    return result


def memory(result: dict[str, object]) -> str:
    """A run's sampled peak memory: PSS of the whole process tree, and its RSS."""
    if not result.get("processes"):
        return "?"
    return (
        f"{result['pss_mb']:.0f} MB PSS (RSS: {result['rss_mb']:.0f} MB summed over "
        f"{result['processes']} processes, largest {result['largest_mb']:.0f} MB)"
    )


def print_family_seconds(result: dict[str, object]) -> None:
    """The run record's wall seconds per metric family (families overlap: they run side by
    side, so the sum may exceed the run's time)."""
    seconds = result.get("family_seconds")
    if not isinstance(seconds, dict) or not seconds:
        return
    shown = ", ".join(
        f"{family} {value:.1f} s" for family, value in sorted(seconds.items(), key=lambda x: -x[1])
    )
    print(f"  time per metric family (overlapping): {shown}")


def families(args: argparse.Namespace) -> None:
    """Each family of the default metric set alone on ``--baseline-rows`` rows."""
    from ragmeter.metrics.registry import builtin_specs, get_spec

    by_family: dict[str, list[str]] = {}
    for name in builtin_specs():
        spec = get_spec(name)
        if set(spec.requires) <= ROW_FIELDS:
            by_family.setdefault(spec.family, []).append(spec.name)
    rows = args.baseline_rows
    extra = ["--relevance-dtype", args.relevance_dtype] if args.relevance_dtype else []
    print(f"cores: {os.cpu_count()}, {rows} rows, load before: {os.getloadavg()[0]:.1f}")
    code = (
        "import resource, json, ragmeter, ragmeter.cli;"
        "print(json.dumps({'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    imported = json.loads(done.stdout)["rss_mb"]
    print(f"  {'import ragmeter, ragmeter.cli':32s} peak {imported:5.0f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        for family, names in by_family.items():
            r = run(rows, Path(tmp), args.timeout, ["-m", ",".join(names), *extra], family)
            state = "" if r["rc"] in (0, 1) else f" rc {r['rc']}: {str(r.get('err'))[-200:]}"
            print(
                f"  {family:32s} peak {memory(r)}, {r['seconds']:6.1f} s, "
                f"{r.get('metrics', '?')} metrics{state}"
            )
    print(f"load after: {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--baseline-rows", type=int, default=100)
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--families", action="store_true", help="each family alone: memory")
    parser.add_argument("--relevance-dtype", help="--relevance-dtype of the runs")
    args = parser.parse_args()
    if args.families:
        families(args)
        return
    print(f"cores: {os.cpu_count()}, load before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        extra = ["--relevance-dtype", args.relevance_dtype] if args.relevance_dtype else []
        results = [run(n, Path(tmp), args.timeout, extra) for n in (args.baseline_rows, args.rows)]
    for r in results:
        rate = r["rows"] / r["seconds"] if r["rc"] == 0 else None
        shown = f"{rate:.2f} rows/s" if rate else f"did not finish ({r.get('err')})"
        print(
            f"{r['rows']} rows: {r['seconds']:.1f} s, {shown}, peak {memory(r)}, "
            f"{r.get('metrics', '?')} metrics"
        )
        print_family_seconds(r)
    base, big = results
    if base["rc"] == 0 and big["rc"] == 0:
        ratio = (big["seconds"] / big["rows"]) / (base["seconds"] / base["rows"])
        print(f"seconds per row, {big['rows']} vs {base['rows']} rows: {ratio:.2f}x")
        print(
            f"target: {big['rows']} rows <= 300 s and <= 1024 MB (PSS of all its processes): "
            f"{big['seconds'] <= 300 and big['pss_mb'] <= 1024}"
        )
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
