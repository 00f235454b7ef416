"""Rows like a RAG run's, from public data read by path: for the offline speed benches.

Each row: an ELI5 question, 3-5 retrieved documents cut to about 95 words
(LFQA-Verification's own documents of 80 words or more for that answer, topped up to 3, 4 or
5 (in turn) with other questions' documents), the first 1-3 sentences of one system's
answer, and as the reference the first 1-3 sentences of another system's answer to the same
question. Read from
``../shared/data/lfqa_verification`` (see its SOURCE.md); nothing is copied into the repo.
Rows beyond the 600 answers repeat them with the contexts in another order (so they are
different inputs, not cache hits).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragmeter.metaeval.lfqa import load_answers  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "lfqa_verification"
CONTEXT_WORDS = 95


def _cut(text: str, words: int = CONTEXT_WORDS) -> str:
    return " ".join(text.split()[:words])


def realistic_rows(n: int, *, seed: int = 0, data: Path = DATA) -> list[dict[str, Any]]:
    """``n`` rows (question, contexts, answer, reference_answers, id), the same for a seed."""
    answers = load_answers(data)
    rng = random.Random(seed)
    by_question: dict[int, list[Any]] = {}
    for a in answers:
        by_question.setdefault(a.question_id, []).append(a)
    pool = [_cut(d) for a in answers for d in a.documents if len(d.split()) >= CONTEXT_WORDS]
    rows: list[dict[str, Any]] = []
    round_ = 0
    while len(rows) < n:
        for k, a in enumerate(answers):
            if len(rows) >= n:
                break
            docs = [_cut(d) for d in a.documents if len(d.split()) >= 80][:5]
            while len(docs) < 3 + k % 3:
                docs.append(rng.choice(pool))
            if round_:
                rng.shuffle(docs)
            others = [b for b in by_question[a.question_id] if b.system != a.system]
            reference = others[k % len(others)] if others else a
            sentences = [s.replace("</s>", "").strip() for s in a.sentences]
            ref_sentences = [s.replace("</s>", "").strip() for s in reference.sentences]
            rows.append(
                {
                    "id": f"{a.system}-{a.question_id}-{round_}",
                    "question": a.question,
                    "contexts": docs,
                    "answer": " ".join(sentences[: 1 + k % 3]),
                    "reference_answers": [" ".join(ref_sentences[: 1 + (k + 1) % 3])],
                }
            )
        round_ += 1
    return rows


def write_rows(path: Path, n: int, *, seed: int = 0) -> Path:
    """``realistic_rows(n)`` as JSONL at ``path``."""
    with path.open("w", encoding="utf-8") as handle:
        for row in realistic_rows(n, seed=seed):
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


if __name__ == "__main__":
    for row in realistic_rows(3):
        print(json.dumps(row, indent=1)[:1200])
