"""The README main command's metric set (the offline default) on realistic rows: time and memory.

Writes ``--rows`` rows like a RAG run's (``bench/rag_rows.py``: a question, 3-5 contexts of
about 95 words, a 1-3 sentence answer and a reference; no ids, so the retrieval metrics are
skipped as on such data), then runs ``ragmeter evaluate ROWS --out R --no-cache`` (every metric
whose fields the rows have, the judge cache off so nothing is read back) in a child process,
first on ``--baseline-rows`` rows as the baseline of the same run. Prints wall time, rows/s,
peak resident memory of each child, the time per metric family from each run record
(``family_seconds``: its calls' wall time; families run side by side, so these overlap), and
the ratio of seconds per row. A run past
``--timeout`` is stopped and reported as longer than it. Issue 27's targets: 1,000 rows in
<= 5 minutes and <= 1 GB on 2 cores.

    python bench/default_run.py [--rows 1000] [--baseline-rows 100] [--timeout 1200]

``--families``: instead, a child that only imports ragmeter, then each metric family of that
set alone (``-m`` its metrics) on ``--baseline-rows`` rows, each in its own child: where the
default run's memory goes (peak resident memory per family) and its time.
``--relevance-dtype D`` passes ``--relevance-dtype D`` to every run.

    python bench/default_run.py --families [--baseline-rows 100] [--relevance-dtype int8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rag_rows import write_rows

#: Fields of ``rag_rows``' rows: the default run scores every metric needing only these.
ROW_FIELDS = frozenset({"question", "contexts", "answer", "reference_answers"})


def run(
    rows: int, folder: Path, timeout: float, extra: list[str] | None = None, tag: str = ""
) -> dict[str, object]:
    data = folder / f"rows{rows}.jsonl"
    if not data.is_file():
        write_rows(data, rows)
    out = folder / f"r{rows}{tag}.jsonl"
    command = [sys.executable, "-m", "ragmeter", "evaluate", str(data), "--out", str(out)]
    command += ["--no-cache", "-q", *(extra or [])]
    code = (
        "import resource, subprocess, sys, json, time; t = time.perf_counter();"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=float("
        f"{timeout!r}));"
        "print(json.dumps({'rc': p.returncode, 'seconds': time.perf_counter() - t,"
        " 'rss_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,"
        " 'err': p.stderr[-400:]}))"
    )
    started = time.perf_counter()
    try:
        probe = subprocess.run(
            [sys.executable, "-c", code, *command], capture_output=True, text=True, check=False
        )
        result = json.loads(probe.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError):
        result = {"rc": None, "seconds": time.perf_counter() - started, "rss_mb": None}
        result["err"] = f"stopped after {timeout:g} s"
    record = out.with_name(out.name + ".run.json")
    if record.is_file():
        info = json.loads(record.read_text(encoding="utf-8"))
        result["metrics"] = len(info.get("summary", {}))
        result["family_seconds"] = info.get("family_seconds", {})
    result["rows"] = rows
    return result


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
            rss = f"{r['rss_mb']:5.0f} MB" if r["rss_mb"] else "    ?"
            print(
                f"  {family:32s} peak {rss}, {r['seconds']:6.1f} s, "
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
        rss = f"{r['rss_mb']:.0f} MB" if r["rss_mb"] else "?"
        print(
            f"{r['rows']} rows: {r['seconds']:.1f} s, {shown}, peak {rss}, "
            f"{r.get('metrics', '?')} metrics"
        )
        print_family_seconds(r)
    base, big = results
    if base["rc"] == 0 and big["rc"] == 0:
        ratio = (big["seconds"] / big["rows"]) / (base["seconds"] / base["rows"])
        print(f"seconds per row, {big['rows']} vs {base['rows']} rows: {ratio:.2f}x")
        print(
            f"target: {big['rows']} rows <= 300 s and <= 1024 MB: "
            f"{big['seconds'] <= 300 and big['rss_mb'] <= 1024}"
        )
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
