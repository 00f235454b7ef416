"""The offline judge's verdicts on the human-labelled sets the calibration bench draws labels
from, computed once and cached as JSON under ``build/calibration-cache``.

``lfqa``
    LFQA verification (Chen et al. 2023): 600 answers; per answer the human faithfulness (mean
    over its sentences of the mean human label) and the offline judge's claim faithfulness
    (the share of the answer's claims a document entails, as ``ragmeter meta-eval lfqa``
    computes it: :func:`ragmeter.metaeval.lfqa.verifier_scores`).
``wice``
    WiCE claims (the held-out half the shipped verifier never trained on), each a row: the
    human label (1 supported) and the offline judge's verdict and support against the evidence.

Run on its own to fill the cache (slow on 2 cores: the verifier reads every pair)::

    PYTHONPATH=src nice .venv/bin/python bench/calibration_data.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "build" / "calibration-cache"
sys.path.insert(0, str(ROOT / "bench" / "meta"))


def _judge() -> Any:
    from ragmeter.judges.offline.judge import OfflineJudge

    return OfflineJudge()


def _cached(name: str, compute: Any) -> dict[str, Any]:
    judge = _judge()
    key = f"{name}-{judge.name.replace(':', '_').replace('+', '_')}.json"
    path = CACHE / key
    if path.is_file():
        return json.loads(path.read_text())
    t0 = time.perf_counter()
    data = compute(judge)
    data["judge_name"] = judge.name
    data["seconds"] = round(time.perf_counter() - t0, 1)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    print(f"{name}: computed in {data['seconds']} s, cached at {path}", file=sys.stderr)
    return data


def lfqa() -> dict[str, Any]:
    """``{"human": [...600], "judge": [...600], "system": [...]}`` per LFQA answer."""

    def compute(judge: Any) -> dict[str, Any]:
        import numpy as np

        from ragmeter.metaeval.lfqa import load_answers, verifier_scores

        answers = load_answers(DATA / "lfqa_verification")
        scores = verifier_scores(answers, judge)
        return {
            "human": [float(np.mean(a.human)) for a in answers],
            "judge": [float(v) for v in scores["faithfulness"][0]],
            "judge_support": [float(v) for v in scores["faithfulness_support"][0]],
            "system": [a.system for a in answers],
        }

    return _cached("lfqa", compute)


def wice() -> dict[str, Any]:
    """``{"human": [0/1...], "judge": [0/1...], "support": [...]}`` per held-out WiCE claim."""

    def compute(judge: Any) -> dict[str, Any]:
        from verifier_sources import wice_items

        from ragmeter.judges.base import ClaimBlock

        items = wice_items()
        human: list[float] = []
        verdict: list[float] = []
        support: list[float] = []
        threshold = judge.calibration.threshold
        for start in range(0, len(items), 64):
            part = items[start : start + 64]
            blocks = [ClaimBlock((it.text,), tuple(it.premises)) for it in part]
            supports, conflicts = judge.support(blocks)
            for it, s, c in zip(part, supports, conflicts, strict=True):
                human.append(float(it.target))
                verdict.append(float(((s >= threshold) & ~c).any()) if s.size else 0.0)
                support.append(float(s.max()) if s.size else 0.0)
        return {"human": human, "judge": verdict, "support": support}

    return _cached("wice", compute)


if __name__ == "__main__":
    for load in (wice, lfqa):
        d = load()
        print(load.__name__, len(d["human"]), "rows;", d["judge"][:5], file=sys.stderr)
