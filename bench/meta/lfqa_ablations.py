"""What else was tried on LFQA, and what it gave: the offline verifier's near alternatives.

Each line is Spearman (answer level averaged over the 6 systems / pooled / sentence level)
against the human support labels, as ``lfqa.py`` computes them:

* ``split``: other clause boundaries for the regular-expression claim splitter, the fallback
  when spaCy is not installed (:mod:`ragmeter.judges.offline.regex_claims`; also before which /
  because / although, or before a bare because / since / while, or before a bare but / and
  then), with the shipped calibration; the first row is the shipped claims (spaCy's atomic
  claims when it is installed) for reference;
* ``question``: K-Precision with the question's words left out of the answer (as
  ``new_token_precision`` does against a reference), best document and documents joined;
* ``--pmi N``: conditional PMI of each answer sentence under the offline language model
  (SmolLM2-135M-Instruct): mean over its tokens of log P(token | document, answer so far) -
  log P(token | answer so far), best document and all documents joined, on the first N
  answers of each system, alone and rank-averaged with ``faithfulness_support`` (slow: about
  6 minutes for N = 20 on 2 idle cores).

Run::

    PYTHONPATH=src python bench/meta/lfqa_ablations.py [--limit N] [--pmi N]

``--limit N`` keeps the first N answers of each system for every row (a quick check).
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lfqa import Answer, correlations, load_lfqa, verifier_scores

import ragmeter.judges.offline.regex_claims as regex_claims
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.text import tokens

SPLITS = {
    "shipped": regex_claims._CLAUSE_RE,
    "also which/because/although": re.compile(
        r";\s+|,\s+(?=(?:and|but|while|whereas|yet|so|which|because|although|though)\s)",
        re.IGNORECASE,
    ),
    "also bare because/since/while": re.compile(
        r";\s+|,\s+(?=(?:and|but|while|whereas|yet|so)\s)"
        r"|\s+(?=(?:because|since|so that|whereas|while)\s)",
        re.IGNORECASE,
    ),
    "also bare but/and then": re.compile(
        r";\s+|,\s+(?=(?:and|but|while|whereas|yet|so)\s)|\s+(?=(?:but|because|and then)\s)",
        re.IGNORECASE,
    ),
}


def _line(name: str, corr: dict) -> str:
    def f(key: str) -> str:
        value = corr[key]["spearman"]
        return "—" if value is None else f"{value:.3f}"

    return f"| {name} | {f('answer_average')} | {f('answer_pooled')} | {f('sentence')} |"


def _precision(answer: str, documents: Sequence[str], asked: set[str], joined: bool) -> float:
    kept = [t for t in tokens(answer) if t not in asked]
    if not kept:
        return 0.0
    counts = Counter(kept)

    def share(doc: str) -> float:
        found = Counter(tokens(doc))
        return sum(min(n, found[t]) for t, n in counts.items()) / len(kept)

    return share(" ".join(documents)) if joined else max(share(d) for d in documents)


def question_rows(answers: Sequence[Answer]) -> list[str]:
    rows = []
    for joined in (False, True):
        for drop in (False, True):
            per_answer, per_sentence = [], []
            for a in answers:
                asked = set(tokens(a.question)) if drop else set()
                per_sentence.append(
                    [_precision(s, a.documents, asked, joined) for s in a.sentences]
                )
                per_answer.append(_precision(" ".join(a.sentences), a.documents, asked, joined))
            name = (
                f"k_precision{' joined' if joined else ''}{', question left out' if drop else ''}"
            )
            rows.append(_line(name, correlations(answers, per_answer, per_sentence)))
    return rows


class _RegexSplitJudge(OfflineJudge):
    """The offline judge with the regular-expression claim splitter, spaCy or not."""

    def _parser_or_none(self) -> None:
        return None


def split_rows(answers: Sequence[Answer]) -> list[str]:
    rows = []
    scores = verifier_scores(answers, OfflineJudge())
    for metric in ("faithfulness", "faithfulness_support"):
        rows.append(_line(f"{metric}, shipped claims", correlations(answers, *scores[metric])))
    shipped = regex_claims._CLAUSE_RE
    try:
        for name, pattern in SPLITS.items():
            regex_claims._CLAUSE_RE = pattern
            scores = verifier_scores(answers, _RegexSplitJudge())
            for metric in ("faithfulness", "faithfulness_support"):
                rows.append(
                    _line(f"{metric}, regex split: {name}", correlations(answers, *scores[metric]))
                )
    finally:
        regex_claims._CLAUSE_RE = shipped
    return rows


def first_of_each_system(answers: Sequence[Answer], n: int) -> list[Answer]:
    seen: Counter[str] = Counter()
    subset = []
    for a in answers:
        seen[a.system] += 1
        if seen[a.system] <= n:
            subset.append(a)
    return subset


def pmi_rows(answers: Sequence[Answer]) -> list[str]:
    """Conditional PMI of each sentence given the documents, under the offline LM."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging

    from ragmeter.models.relevance.source import convert_for_transformers, resolve_relevance_model

    logging.disable_progress_bar()
    source = resolve_relevance_model("offline")
    path = source.location or convert_for_transformers(source)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16).eval()

    def ids(text: str) -> list[int]:
        return tok(text, add_special_tokens=False)["input_ids"]

    def logprobs(prefix: list[int], target: list[int]) -> np.ndarray:
        seq = torch.tensor([prefix + target])
        with torch.inference_mode():
            logp = torch.log_softmax(model(input_ids=seq).logits.float()[0], -1)
        at = torch.arange(len(prefix) - 1, len(prefix) + len(target) - 1)
        return logp[at, torch.tensor(target)].numpy()

    pmi_best, pmi_joined = [], []
    for a in answers:
        pieces = [ids((" " if k else "") + s) for k, s in enumerate(a.sentences)]
        bounds = np.cumsum([0, *map(len, pieces)])
        target = [t for p in pieces for t in p]
        bare = logprobs(ids("Answer:"), target)
        docs = [
            logprobs(ids("Document: " + d)[:400] + ids("\n\nAnswer:"), target) for d in a.documents
        ]
        joined = logprobs(
            ids("Documents: " + " ".join(a.documents))[:700] + ids("\n\nAnswer:"), target
        )
        best, whole = [], []
        for b, e in itertools.pairwise(bounds):
            if e == b:
                best.append(0.0)
                whole.append(0.0)
                continue
            best.append(max(float((d[b:e] - bare[b:e]).mean()) for d in docs))
            whole.append(float((joined[b:e] - bare[b:e]).mean()))
        pmi_best.append(best)
        pmi_joined.append(whole)

    support = verifier_scores(answers, OfflineJudge())["faithfulness_support"][1]
    rows = []
    for name, sentences in (
        ("PMI, best document", pmi_best),
        ("PMI, documents joined", pmi_joined),
    ):
        rows.append(
            _line(name, correlations(answers, [float(np.mean(s)) for s in sentences], sentences))
        )
    rows.append(
        _line(
            "faithfulness_support",
            correlations(answers, [float(np.mean(s)) for s in support], support),
        )
    )
    flat_support = np.concatenate([np.asarray(s, float) for s in support])
    flat_pmi = np.concatenate([np.asarray(s, float) for s in pmi_joined])
    for weight in (0.25, 0.5):
        mixed = (1 - weight) * rankdata(flat_support) + weight * rankdata(flat_pmi)
        mixed = mixed / len(mixed)
        sentences, at = [], 0
        for s in support:
            sentences.append(mixed[at : at + len(s)].tolist())
            at += len(s)
        rows.append(
            _line(
                f"rank average, faithfulness_support {1 - weight:g} + PMI joined {weight:g}",
                correlations(answers, [float(np.mean(s)) for s in sentences], sentences),
            )
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pmi", type=int, default=None, metavar="N", help="answers per system")
    parser.add_argument(
        "--limit", type=int, default=None, metavar="N", help="answers per system for every row"
    )
    args = parser.parse_args(argv)
    answers = load_lfqa()
    if args.limit:
        answers = first_of_each_system(answers, args.limit)
    print("| variant | answer ρ avg (6 systems) | answer ρ pooled | sentence ρ |")
    print("|---|---|---|---|")
    for row in [*split_rows(answers), *question_rows(answers)]:
        print(row, flush=True)
    if args.pmi:
        subset = first_of_each_system(answers, args.pmi)
        print(f"\nOn the first {args.pmi} answers of each system ({len(subset)} answers):\n")
        print("| variant | answer ρ avg (6 systems) | answer ρ pooled | sentence ρ |")
        print("|---|---|---|---|")
        for row in pmi_rows(subset):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
