"""The offline claim verdict on the hand-labelled claim probes, by kind: the model alone, the
words alone and the verifier as a whole, side by side, and the verifier through the CLI.

``../shared/data/claim_probes/dev.jsonl`` (202 pairs in 15 kinds, CC0; a held-out half of the
same size is kept by the team) is read by path. Nothing here fits anything: the verifier's
constants are fitted on other sources (``bench/meta/fit_model_decision.py``).

* **model alone**: the shipped entailment model on (premise, claim), the premise in windows
  when long (a reference read with its question for ``reference_correctness``), entailed when
  p(entailment) >= 0.5;
* **words alone**: the lexical verifier (``OfflineJudge(model=None)``, the fallback without
  onnxruntime);
* **verifier**: ``OfflineJudge()``, the default (the calibrated combination of lexical
  features and the model's probabilities, with hard conflict rules);
* **model decides**: ``OfflineJudge(decision=MODEL_DECISION)`` (the model decides every cell
  the words cannot settle; its constants fitted across sources);
* **v5** (with ``--old-model DIR``): the earlier verifier, a calibrated logistic over lexical
  features and the model's probabilities with hard conflict rules
  (``OfflineJudge(calibration=MODEL_CALIBRATION)``), on the model of ``offline:verifier-v5``
  (``git show 49a9a59:src/ragmeter/models/data/claim-verifier/model.onnx``, and
  ``tokenizer.json`` beside it);
* **CLI**: as the team scores it: each item a row ``{question: "What does the text say?",
  contexts: [premise], answer: claim}`` judged entailed when ``faithfulness`` is 1;
  ``reference_correctness`` items ``{question, contexts: [reference], reference_answers:
  [reference], answer: claim}``, entailed when ``claim_precision`` is 1; scored by
  ``ragmeter evaluate`` in a subprocess.

Prints balanced accuracy overall and per kind (mean recall of the two labels).

Run::

    PYTHONPATH=src .venv/bin/python bench/claim_probes.py [--probes PATH] [--model DIR]
        [--old-model DIR] [--no-cli] [--show-errors]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from verifier_probes import balanced_accuracy  # noqa: E402  (mean recall of both labels)

PROBES = ROOT.parent / "shared" / "data" / "claim_probes" / "dev.jsonl"
NEUTRAL_QUESTION = "What does the text say?"
#: verifier-v5's MODEL_CALIBRATION weights (bias -2.6224, threshold 0.47), for the v5 column.
V5_WEIGHTS = (
    1.7198, -0.2586, 0.2694, -0.6108, -0.2461, -1.5304, -0.5266, -0.2417, 0.4874, 0.5181,
    1.2669, -0.8698, 1.3533, -0.0106, -0.1289, 0.2289, 0.5386, 2.1529, -0.2594, -0.3925,
    -0.2551,
)  # fmt: skip
REFERENCE_KIND = "reference_correctness"


def v5_calibration():
    """verifier-v5's calibration (its weights, bias and threshold on today's features)."""
    from ragmeter.judges.offline.calibration import MODEL_CALIBRATION

    return dataclasses.replace(MODEL_CALIBRATION, weights=V5_WEIGHTS, bias=-2.6224, threshold=0.47)


def load(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def row_of(item: dict) -> dict:
    """The evaluation row of a probe item (see the module docstring)."""
    if item["category"] == REFERENCE_KIND:
        return {
            "question_id": item["id"],
            "question": item["question"],
            "contexts": [item["reference"]],
            "reference_answers": [item["reference"]],
            "answer": item["claim"],
        }
    return {
        "question_id": item["id"],
        "question": NEUTRAL_QUESTION,
        "contexts": [item["premise"]],
        "answer": item["claim"],
    }


def model_alone(items: Sequence[dict], model_dir: str | None) -> list[bool]:
    from ragmeter.models.claim_verifier import ClaimVerifierModel
    from ragmeter.types import answer_premise

    model = ClaimVerifierModel(model_dir)
    pairs = [
        (
            answer_premise(it["question"], it["reference"])
            if it["category"] == REFERENCE_KIND
            else it["premise"],
            it["claim"],
        )
        for it in items
    ]
    return [bool(p >= 0.5) for p in model.probabilities(pairs).entailment]


def judge_verdicts(items: Sequence[dict], judge) -> list[bool]:
    """Each item's claim (as one claim) against its premise, through ``judge.verify_sync``."""
    from ragmeter.judges.base import ClaimBlock, Premise

    blocks = [
        ClaimBlock(
            (it["claim"],),
            (
                Premise(it["reference"], it["question"])
                if it["category"] == REFERENCE_KIND
                else it["premise"],
            ),
        )
        for it in items
    ]
    return [bool(m[0][0]) for m in judge.verify_sync(blocks).matrices]


def through_cli(items: Sequence[dict]) -> list[bool]:
    """Verdicts of ``ragmeter evaluate`` on the rows (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.jsonl"
        out = Path(tmp) / "out.jsonl"
        rows.write_text("".join(json.dumps(row_of(it)) + "\n" for it in items))
        cli = [sys.executable, "-m", "ragmeter", "evaluate", str(rows), "--out", str(out)]
        cli += ["--metrics", "faithfulness,claim_precision", "--quiet"]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
        subprocess.run(cli, check=False, env=env, stdout=subprocess.DEVNULL)
        results = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    verdicts = []
    for it in items:
        metric = "claim_precision" if it["category"] == REFERENCE_KIND else "faithfulness"
        verdicts.append(results[it["id"]]["scores"].get(metric) == 1.0)
    return verdicts


def table(items: Sequence[dict], columns: dict[str, list[bool]]) -> str:
    kinds = sorted({it["category"] for it in items})
    head = f"{'kind':24s} {'n':>4s} " + " ".join(f"{name:>12s}" for name in columns)
    lines = [head, "-" * len(head)]
    gold = [it["label"] == "entailed" for it in items]
    for kind in [*kinds, "ALL"]:
        idx = [k for k, it in enumerate(items) if kind in ("ALL", it["category"])]
        cells = []
        for verdicts in columns.values():
            ba = balanced_accuracy([gold[k] for k in idx], [verdicts[k] for k in idx])
            cells.append(f"{ba:12.3f}")
        lines.append(f"{kind:24s} {len(idx):4d} " + " ".join(cells))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=Path, default=PROBES)
    parser.add_argument("--model", help="a model folder to try instead of the shipped one")
    parser.add_argument("--old-model", help="verifier-v5's model folder, for a v5 column")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI column")
    parser.add_argument("--show-errors", action="store_true")
    args = parser.parse_args(argv)

    from ragmeter.judges.offline.judge import MODEL_DECISION, OfflineJudge
    from ragmeter.models.claim_verifier import ClaimVerifierModel

    items = load(args.probes)
    model = ClaimVerifierModel(args.model) if args.model else "shipped"
    judge = OfflineJudge(model=model)
    columns: dict[str, list[bool]] = {}
    if args.old_model:
        old = OfflineJudge(calibration=v5_calibration(), model=ClaimVerifierModel(args.old_model))
        columns["v5"] = judge_verdicts(items, old)
    columns |= {
        "model alone": model_alone(items, args.model),
        "words alone": judge_verdicts(items, OfflineJudge(model=None)),
        "verifier": judge_verdicts(items, judge),
        "model decides": judge_verdicts(items, OfflineJudge(model=model, decision=MODEL_DECISION)),
    }
    if not args.no_cli and not args.model:
        columns["CLI"] = through_cli(items)
    print(f"{args.probes} ({len(items)} items); verifier {judge.name}")
    print("balanced accuracy (mean recall of entailed and not entailed)")
    print(table(items, columns))
    if args.show_errors:
        for it, v in zip(items, columns["verifier"], strict=True):
            if v != (it["label"] == "entailed"):
                print(f"\n[{it['id']}] gold {it['label']}, verifier {v}\n  C: {it['claim']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
