"""Throughput of the offline claim judge: samples per second, against K-Precision as the peer.

A sample is a ~3-sentence answer and 5 contexts of 100 words, built from LFQA texts (read by
path from ``../shared/data``; every sample's texts differ, so no cache helps). One sample's
work is ``analyze`` (answer claims) plus ``verify`` (claims × 5 contexts). Timed: the
default offline judge (atomic claims, lexical support + the trained model, gated), the same
judge lexical-only (``model=None``), and with ``--semantic`` the MiniLM-feature variant. The
bar is >= 20 samples/s on 2 cores for the default; the line also gives the model's pairs/s.
With ``--old-model DIR`` (verifier-v5's model: ``git show
49a9a59:src/ragmeter/models/data/claim-verifier/model.onnx`` and ``tokenizer.json`` into DIR)
the earlier verifier (v5's calibration: lexical features, model gated and run only where it
can change a verdict) is timed first in the same run, and the default's
speed is printed as a ratio of it.

Run::

    PYTHONPATH=src python bench/offline_judge.py [--samples 1000] [--semantic] [--old-model DIR]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from claim_probes import v5_calibration


def make_samples(n: int, *, related: bool = True) -> list[tuple[str, list[str]]]:
    """``n`` samples: a 3-sentence answer and 5 contexts of 100 words, cut from that
    answer's own retrieved documents (``related``, as in a RAG run: the verifier's model
    then has work to do) or from documents of other answers."""
    answers = load_lfqa()
    words = [w for a in answers for d in a.documents for w in d.split()]
    samples = []
    for i in range(n):
        a = answers[i % len(answers)]
        start = (i * 523) % max(1, len(a.sentences) - 3)
        answer = " ".join(a.sentences[start : start + 3])
        pool = [w for d in a.documents for w in d.split()] if related else words
        if len(pool) < 600:
            pool = pool * (600 // max(1, len(pool)) + 1)
        offset = (i * 977) % (len(pool) - 500) if related else (i * 977) % (len(words) - 600)
        contexts = [" ".join(pool[offset + 100 * k : offset + 100 * (k + 1)]) for k in range(5)]
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
    parser.add_argument("--old-model", help="verifier-v5's model folder, timed as the baseline")
    parser.add_argument(
        "--unrelated", action="store_true", help="contexts from other answers' documents"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ragmeter.judges.offline.judge import OfflineJudge
    from ragmeter.models.claim_verifier import ClaimVerifierModel
    from ragmeter.scoring.lexical import k_precision

    samples = make_samples(args.samples, related=not args.unrelated)
    t0 = time.perf_counter()
    for answer, contexts in samples:
        k_precision(answer, contexts)
    peer = len(samples) / (time.perf_counter() - t0)
    print(f"k_precision (peer): {peer:,.0f} samples/s")
    judges = [OfflineJudge(), OfflineJudge(model=None)]
    if args.old_model:
        old = ClaimVerifierModel(args.old_model)
        judges.insert(0, OfflineJudge(calibration=v5_calibration(), model=old))
    rates: list[float] = []
    if args.semantic:
        judges.append(OfflineJudge(semantic=True, model=None))
    for judge in judges:
        asyncio.run(judge_all(judge, samples[:20]))  # warm-up (loads a model if any)
        model = getattr(judge, "_model", None)
        sent = _record_pairs(model) if model is not None else None
        pairs_before = judge.model_pairs
        t0 = time.perf_counter()
        asyncio.run(judge_all(judge, samples))
        rate = len(samples) / (time.perf_counter() - t0)
        rates.append(rate)
        line = f"{judge.name}: {rate:,.1f} samples/s ({rate / peer:.4f}x k_precision)"
        if args.old_model and len(rates) == 2:
            line += f"; {rate / rates[0]:.2f}x verifier-v5 (first line)"
        if sent is not None:
            pairs = judge.model_pairs - pairs_before
            t0 = time.perf_counter()
            model.probabilities.__wrapped__(sent)  # the same pairs again, in one call
            alone = len(sent) / (time.perf_counter() - t0)
            line += (
                f"; the model checked {pairs:,} pairs ({pairs / len(samples):.1f} a sample, "
                f"the gate skipped the rest); the model alone on them: {alone:,.0f} pairs/s"
            )
        print(line)
    return 0


def _record_pairs(model: object) -> list[tuple[str, str]]:
    """Wrap ``model.probabilities`` to keep every pair it is given (the original stays
    reachable as ``model.probabilities.__wrapped__``)."""
    sent: list[tuple[str, str]] = []
    inner = model.probabilities

    def probabilities(pairs):  # type: ignore[no-untyped-def]
        sent.extend(pairs)
        return inner(pairs)

    probabilities.__wrapped__ = inner  # type: ignore[attr-defined]
    model.probabilities = probabilities  # type: ignore[method-assign]
    return sent


if __name__ == "__main__":
    raise SystemExit(main())
