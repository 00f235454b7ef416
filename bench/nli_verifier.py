"""Throughput of the nli: verifier on CPU: (claim, context) pairs per second, next to the
offline verifier measured in the same run on the same pairs.

The samples are ``offline_judge.py``'s (a ~3-sentence answer and 5 contexts of 100 words cut
from LFQA's documents, read by path from ``../shared/data``; without it the example data's
rows, repeated); the claims are the offline judge's. Each verifier checks every sample as a
run does (one ``verify`` per sample, all in flight at once, so the nli: verifier joins them
into sorted batches), with no cache. The nli: models are tiny random checkpoints of each
family (``ragmeter.testing.tiny_classifiers``, 512-token window), so their rate measures
ragmeter's own work around a model (tokenizing, windows, batching, the joining) and a
forward pass of a 16-wide layer: a real checker (MiniCheck-RoBERTa-Large, 355M parameters)
is far slower per pair. ``--model PATH`` adds a real local checker to the table.

Run::

    PYTHONPATH=src python bench/nli_verifier.py [--samples 200] [--model PATH] [--batch-size 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "bench" / "meta"))


def samples(n: int) -> list[tuple[str, list[str]]]:
    """``offline_judge.py``'s LFQA samples, else the example rows repeated."""
    try:
        from offline_judge import make_samples

        return make_samples(n)
    except (SystemExit, OSError):
        rows = [json.loads(line) for line in (ROOT / "examples" / "rag_sample.jsonl").open()]
        return [(r["answer"], list(r["contexts"])) for r in (rows * (n // len(rows) + 1))[:n]]


async def verify_all(verifier: Any, blocks: list[Any]) -> None:
    await asyncio.gather(*(verifier.verify([block]) for block in blocks))


def rate(verifier: Any, blocks: list[Any], cells: int) -> float:
    asyncio.run(verify_all(verifier, blocks[:2]))  # load the model, warm the caches
    t0 = time.perf_counter()
    asyncio.run(verify_all(verifier, blocks))
    return cells / (time.perf_counter() - t0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--model", action="append", default=[], help="a real local checker")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ragmeter.judges.base import ClaimBlock
    from ragmeter.judges.hf_entailment import NLIVerifier
    from ragmeter.judges.offline.judge import OfflineJudge
    from ragmeter.models.hf_classifier import HFClassifier
    from ragmeter.testing.tiny_classifiers import FAMILIES, tiny_classifier, tiny_hhem

    offline = OfflineJudge()
    data = samples(args.samples)
    claims, _ = offline.claims_of([answer for answer, _ in data])
    blocks = [ClaimBlock(list(c), contexts) for c, (_, contexts) in zip(claims, data, strict=True)]
    cells = sum(len(b.claims) * len(b.premises) for b in blocks)
    print(f"{len(blocks)} samples, {cells} (claim, context) pairs, {os.cpu_count()} CPUs")
    base = rate(offline, blocks, cells)
    print("| verifier | pairs/s | vs offline |\n|---|---|---|")
    print(f"| {offline.name} | {base:.0f} | 1.00 |")
    with tempfile.TemporaryDirectory() as tmp:
        folders = {f: tiny_classifier(Path(tmp) / f, f, max_length=512) for f in FAMILIES}
        folders["hhem"] = tiny_hhem(Path(tmp) / "hhem", max_length=512)
        specs = [(f"tiny {name}", str(path)) for name, path in folders.items()]
        specs += [(Path(m).name, m) for m in args.model]
        for label, spec in specs:
            model = HFClassifier(spec, device="cpu", batch_size=args.batch_size)
            value = rate(NLIVerifier(model), blocks, cells)
            print(f"| {label} (nli) | {value:.0f} | {value / base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
