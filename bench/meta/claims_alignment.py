"""How close the offline claims come to an LLM's: counts and alignment on RAGChecker's examples.

The texts are the responses and ground-truth answers of RAGChecker's example outputs (read by
path from ``../shared/data/ragchecker_examples_llm_labels/checking_outputs.json``), each
with the claims its LLM extractor wrote as (subject, relation, object) triplets, read here as
one sentence each. For the old splitter (sentences and clauses by regular expressions,
``offline_features.split_claims``) and the new atomic claims (``claim_split``, spaCy's
parse), it prints the mean number of claims per text, the mean absolute difference from the
LLM's count, and the alignment both ways: the share of LLM claims whose best-matching offline
claim has token F1 >= 0.5 (recall-like), and the share of offline claims whose best-matching
LLM claim does (precision-like).

Run::

    PYTHONPATH=src python bench/meta/claims_alignment.py
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from ragmeter.text import tokens

DATA = (
    Path(__file__).resolve().parents[3]
    / "shared/data/ragchecker_examples_llm_labels/checking_outputs.json"
)
#: Token F1 at or above which two claims are taken to say the same thing.
MATCH = 0.5


def load_texts(path: Path = DATA) -> list[tuple[str, list[str]]]:
    """(text, LLM claims) for every response and ground-truth answer of the file."""
    results = json.loads(path.read_text(encoding="utf-8"))["results"]
    out = []
    for row in results:
        for text_key, claims_key in (
            ("response", "response_claims"),
            ("gt_answer", "gt_answer_claims"),
        ):
            claims = [" ".join(part for part in triplet if part) for triplet in row[claims_key]]
            out.append((row[text_key], claims))
    return out


def token_f1(a: str, b: str) -> float:
    """SQuAD token F1 of two texts (0 when either has no tokens)."""
    ta, tb = Counter(tokens(a)), Counter(tokens(b))
    common = sum((ta & tb).values())
    if not common:
        return 0.0
    precision, recall = common / sum(ta.values()), common / sum(tb.values())
    return 2 * precision * recall / (precision + recall)


def aligned_share(claims: Sequence[str], others: Sequence[str]) -> tuple[int, int]:
    """(how many of ``claims`` have a claim in ``others`` at token F1 >= MATCH, how many)."""
    hits = sum(1 for c in claims if max((token_f1(c, o) for o in others), default=0.0) >= MATCH)
    return hits, len(claims)


def summarise(name: str, texts: list[tuple[str, list[str]]], split: Callable) -> dict:
    offline = split([t for t, _ in texts])
    counts = [len(c) for c in offline]
    llm_counts = [len(c) for _, c in texts]
    llm_hits = [aligned_share(llm, off) for (_, llm), off in zip(texts, offline, strict=True)]
    off_hits = [aligned_share(off, llm) for (_, llm), off in zip(texts, offline, strict=True)]
    return {
        "splitter": name,
        "claims/text": sum(counts) / len(counts),
        "|diff|": sum(abs(a - b) for a, b in zip(counts, llm_counts, strict=True)) / len(counts),
        "LLM->offline": sum(h for h, _ in llm_hits) / max(1, sum(n for _, n in llm_hits)),
        "offline->LLM": sum(h for h, _ in off_hits) / max(1, sum(n for _, n in off_hits)),
        "claims": offline,
    }


def main() -> int:
    from ragmeter.judges.offline.claim_split import atomic_claims, load_parser
    from ragmeter.judges.offline.regex_claims import split_claims

    texts = load_texts()
    llm_mean = sum(len(c) for _, c in texts) / len(texts)
    print(f"texts: {len(texts)}  (RAGChecker example responses and gt answers)")
    print(f"LLM claims/text: {llm_mean:.2f}")
    rows = [
        summarise("old (regex split_claims)", texts, lambda ts: [split_claims(t) for t in ts]),
        summarise("new (atomic, spaCy)", texts, lambda ts: atomic_claims(ts, load_parser())),
    ]
    print(f"{'splitter':28} {'claims/text':>11} {'|diff|':>7} {'LLM->off':>9} {'off->LLM':>9}")
    for r in rows:
        print(
            f"{r['splitter']:28} {r['claims/text']:11.2f} {r['|diff|']:7.2f} "
            f"{r['LLM->offline']:9.2f} {r['offline->LLM']:9.2f}"
        )
    print(
        f"(alignment: share of claims whose best match on the other side has token F1 >= {MATCH})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
