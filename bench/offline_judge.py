"""Throughput of the offline claim judge: samples per second, against K-Precision as the peer.

A sample is a ~3-sentence answer and 5 contexts of 100 words, built from LFQA texts (read by
path from ``../shared/data``; every sample's texts differ, so no cache helps). One sample's
work is ``analyze`` (answer claims) plus ``verify`` (claims × 5 contexts). The issue's bar is
≥ 200 samples/s on 2 cores for the lexical verifier; ``--semantic`` also times the MiniLM one.

Run::

    PYTHONPATH=src python bench/offline_judge.py [--samples 1000] [--semantic]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "meta"))

from lfqa import load_lfqa


def make_samples(n: int) -> list[tuple[str, list[str]]]:
    answers = load_lfqa()
    words = [w for a in answers for d in a.documents for w in d.split()]
    samples = []
    for i in range(n):
        a = answers[i % len(answers)]
        start = (i * 523) % max(1, len(a.sentences) - 3)
        answer = " ".join(a.sentences[start : start + 3])
        offset = (i * 977) % (len(words) - 600)
        contexts = [" ".join(words[offset + 100 * k : offset + 100 * (k + 1)]) for k in range(5)]
        samples.append((answer, contexts))
    return samples


async def judge_all(judge: object, samples: list[tuple[str, list[str]]]) -> None:
    from ragmeter.judges.base import AnalyzeRequest, ClaimBlock

    wants = frozenset({"answer_claims"})
    analyses = await asyncio.gather(
        *(judge.analyze(AnalyzeRequest(None, a, wants=wants)) for a, _ in samples)
    )
    await asyncio.gather(
        *(
            judge.verify([ClaimBlock(an.answer_claims, ctx)])
            for an, (_, ctx) in zip(analyses, samples, strict=True)
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--semantic", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ragmeter.judges.offline import OfflineJudge
    from ragmeter.scoring.lexical import k_precision

    samples = make_samples(args.samples)
    t0 = time.perf_counter()
    for answer, contexts in samples:
        k_precision(answer, contexts)
    peer = len(samples) / (time.perf_counter() - t0)
    print(f"k_precision (peer): {peer:,.0f} samples/s")
    judges = [OfflineJudge()]
    if args.semantic:
        judges.append(OfflineJudge(semantic=True))
    for judge in judges:
        asyncio.run(judge_all(judge, samples[:20]))  # warm-up (loads a model if any)
        t0 = time.perf_counter()
        asyncio.run(judge_all(judge, samples))
        rate = len(samples) / (time.perf_counter() - t0)
        print(f"{judge.name}: {rate:,.0f} samples/s ({rate / peer:.3f}× k_precision)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
