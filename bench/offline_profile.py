"""Where the offline judge's time goes on the claim metrics: cProfile of one in-process run.

Scores ``--rows`` realistic rows (``bench/rag_rows.py``) with the claim metrics, no cache,
``Settings(workers=1)``, the judge's chunks run inline (not in a thread, so that cProfile
sees them), after a 3-row run that loads the models. Prints the run's wall seconds and the
share of the profiled time in: onnxruntime (the claim verifier), spaCy's parses (claim
splitting and the role rule), the lexical features and evidence, and the rest (the metrics,
the runner). ``--chunk-rows 1`` profiles each row's calls alone (as before chunks).

Run from the project root::

    .venv/bin/python bench/offline_profile.py [--rows 100] [--chunk-rows N]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from typing import Any

from rag_rows import realistic_rows

import ragmeter
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.settings import Settings

METRICS = "faithfulness,noise_sensitivity_relevant,noise_sensitivity_irrelevant,claim_recall"

#: (label, suffix of pstats' "file:function") whose cumulative time is reported.
PARTS = (
    ("onnxruntime (the claim verifier)", "onnxruntime_pybind11_state.run>"),
    ("spaCy parses (claim splitting, role rule)", "models/syntax.py:parse"),
    ("tokenizer (the verifier's inputs)", "tokenizers.Tokenizer' objects>"),
)
CHUNKS = "judges/offline/judge.py:_run_chunk"


async def _inline(self: OfflineJudge, work: Any, arg: Any) -> Any:
    return work(arg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--chunk-rows", type=int, default=None)
    args = parser.parse_args()
    OfflineJudge._in_pool = _inline  # type: ignore[method-assign]
    rows = realistic_rows(args.rows)
    settings = Settings(workers=1, use_cache=False)
    ragmeter.evaluate(rows[:3], METRICS, settings=settings, progress=False)
    judge = OfflineJudge(settings, chunk_rows=args.chunk_rows)
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    ragmeter.evaluate(rows, METRICS, judge=judge, settings=settings, progress=False)
    profile.disable()
    wall = time.perf_counter() - started
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    print(f"{args.rows} rows, chunk_rows {judge.chunk_rows}: {wall:.1f} s wall (profiled)")
    found: dict[str, float] = {}
    for (file, _, name), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        key = f"{file}:{name}"
        for label, suffix in (*PARTS, ("chunks", CHUNKS)):
            if key.endswith(suffix):
                found[label] = found.get(label, 0.0) + cumulative
    chunks = found.get("chunks", 0.0)
    rows = [(label, found.get(label, 0.0)) for label, _ in PARTS]
    rows.append(("the judge's Python (features, claims, ...)", chunks - sum(s for _, s in rows)))
    rows.append(("outside the judge (metrics, runner)", total - chunks))
    for label, seconds in rows:
        print(f"  {label:44s} {seconds:6.2f} s  {100 * seconds / total:5.1f}%")
    print(f"  {'profiled total':44s} {total:6.2f} s, {1000 * total / args.rows:.0f} ms per row")


if __name__ == "__main__":
    main()
