"""Runs the offline judge live on the two human-labelled sets the active-labelling bench draws
from, through ``ragmeter.evaluate`` (faithfulness, with its claim details), and caches the
results under ``build/active-labels-cache/<set>-<key>/``.

``lfqa``
    LFQA verification (Chen et al. 2023): 600 answers; each answer's sentences are its
    answer, its documents its contexts; the human value is the mean over its sentences of the
    mean human label (supported 1, partially 0.5, not supported 0).
``wice``
    WiCE claims (the held-out half the shipped verifier never trained on): the claim is the
    answer, its evidence the one context; the human value is 1 when supported, else 0.

The cache key hashes the offline judge's source (``src/ragmeter/judges/offline/``,
``models/claim_verifier.py``, the claims family) and the package's model data, so a changed
judge is rerun, never read back stale. Run on its own to fill the cache (slow on 2 cores)::

    PYTHONPATH=src nice .venv/bin/python bench/active_labels_data.py
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CACHE = ROOT / "build" / "active-labels-cache"
sys.path.insert(0, str(ROOT / "training"))

#: What the judge's verdicts depend on: its code and its model files.
JUDGE_SOURCES = (
    "src/ragmeter/judges/offline",
    "src/ragmeter/models/claim_verifier.py",
    "src/ragmeter/models/data",
    "src/ragmeter/metrics/claims.py",
    "src/ragmeter/text",
)


def judge_key() -> str:
    digest = hashlib.sha256()
    for part in JUDGE_SOURCES:
        path = ROOT / part
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            if "__pycache__" in f.parts:
                continue
            digest.update(str(f.relative_to(ROOT)).encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


def _lfqa_rows() -> list[dict[str, Any]]:
    import numpy as np

    from ragmeter.metaeval.lfqa import load_answers

    rows = []
    for k, a in enumerate(load_answers(DATA / "lfqa_verification")):
        rows.append(
            {
                "question_id": f"lfqa-{k}",
                "question": a.question,
                "answer": " ".join(a.sentences),
                "contexts": list(a.documents),
                "human": float(np.mean(a.human)),
            }
        )
    return rows


def _wice_rows() -> list[dict[str, Any]]:
    from verifier_data import read_set, wice_half

    rows = []
    for k, p in enumerate(read_set(DATA / "nli", "wice")):
        if wice_half(p.hypothesis) != "heldout":
            continue
        rows.append(
            {
                "question_id": f"wice-{k}",
                "question": "Is the claim supported by the evidence?",
                "answer": p.hypothesis,
                "contexts": [p.premise],
                "human": float(p.label == 0),
            }
        )
    return rows


SETS = {"lfqa": _lfqa_rows, "wice": _wice_rows}


def results(name: str) -> Path:
    """The results file of the offline judge's faithfulness on set ``name`` (run when the
    cache has none for the judge as it is now); the human values in ``human.json`` beside."""
    import ragmeter

    folder = CACHE / f"{name}-{judge_key()}"
    out = folder / "results.jsonl"
    if (folder / "done").is_file():
        return out
    folder.mkdir(parents=True, exist_ok=True)
    rows = SETS[name]()
    data = folder / "input.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "human.json").write_text(json.dumps({r["question_id"]: r["human"] for r in rows}))
    t0 = time.perf_counter()
    ragmeter.evaluate(str(data), ["faithfulness"], judge="offline", out=str(out), progress=False)
    seconds = time.perf_counter() - t0
    (folder / "done").write_text(json.dumps({"seconds": round(seconds, 1), "rows": len(rows)}))
    print(
        f"{name}: {len(rows)} rows judged in {seconds:.0f} s, cached at {folder}", file=sys.stderr
    )
    return out


if __name__ == "__main__":
    for set_name in sys.argv[1:] or list(SETS):
        print(results(set_name))
