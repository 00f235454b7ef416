"""Human- (and LLM-) labelled (claim text, premises, label) items from several sources, in
one shape, for fitting and checking the offline claim verifier across sources.

Every item is a text to check (a sentence or a claim), the premises it is checked against
(support = the best premise), a target in [0, 1] and a group (an answer, for LFQA's
answer-level correlations). Sources, read by path from ``../shared/data``:

``lfqa``
    LFQA verification (Chen et al. 2023): 3,993 answer sentences against their answer's
    documents; target = mean human label (supported 1, partially 0.5, not 0).
``wice``
    WiCE claims against their evidence, only the half the shipped model never trained on
    (``training/verifier_data.wice_half``); target 1 = supported.
``ragchecker``
    RAGChecker's two worked examples: claims (triplets joined) against each retrieved context
    and against the other side's answer, labelled by RAGChecker's LLM checker (not people).
``snli``
    SNLI pairs the shipped model did not train on (it drew ``SNLI_LIMIT`` of 19,666 with seed 13).
The check-only NLI sets (``rte``, ``sick``, ``scifact``, ``healthver``, ``covidfact``,
``climate_fever``) are never fitted on: the README of ``data/nli`` allows them to choose and
check only.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT / "training"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Sources the combination is fitted on (leave-one-source-out).
FIT_SOURCES: tuple[str, ...] = ("lfqa", "wice", "ragchecker", "snli")
#: Sources used only to check.
CHECK_SOURCES: tuple[str, ...] = (
    "rte",
    "sick",
    "scifact",
    "healthver",
    "covidfact",
    "climate_fever",
)


@dataclass(frozen=True, slots=True)
class Item:
    source: str
    text: str
    premises: tuple[str, ...]
    target: float
    group: str = ""


def lfqa_items() -> list[Item]:
    from lfqa_data import load_lfqa

    out = []
    for a in load_lfqa(DATA / "lfqa_verification"):
        for k, (sentence, human) in enumerate(zip(a.sentences, a.human, strict=True)):
            out.append(
                Item("lfqa", sentence, a.documents, human, f"{a.system}/{a.question_id}/{k}")
            )
    return out


def wice_items() -> list[Item]:
    from verifier_data import read_set, wice_half

    return [
        Item("wice", p.hypothesis, (p.premise,), float(p.label == 0))
        for p in read_set(DATA / "nli", "wice")
        if wice_half(p.hypothesis) == "heldout"
    ]


def snli_items(limit: int = 2000) -> list[Item]:
    from train_verifier import SEED, SNLI_LIMIT
    from verifier_data import balanced, read_set

    pairs = read_set(DATA / "nli", "snli_esnli")
    trained = set(map(id, balanced(pairs, limit=SNLI_LIMIT, seed=SEED)))
    unused = [p for p in pairs if id(p) not in trained]
    return [
        Item("snli", p.hypothesis, (p.premise,), float(p.label == 0))
        for p in balanced(unused, limit=limit, seed=1)
    ]


def check_items(name: str, limit: int = 600) -> list[Item]:
    from verifier_data import balanced, read_set

    return [
        Item(name, p.hypothesis, (p.premise,), float(p.label == 0))
        for p in balanced(read_set(DATA / "nli", name), limit=limit, seed=1)
    ]


def _triplet(t: Sequence[str]) -> str:
    return " ".join(str(x).strip() for x in t if str(x).strip()) + "."


def ragchecker_items() -> list[Item]:
    path = DATA / "ragchecker_examples_llm_labels" / "checking_outputs.json"
    with path.open(encoding="utf-8") as f:
        results = json.load(f)["results"]

    def parse(value: object) -> object:
        return ast.literal_eval(value) if isinstance(value, str) else value

    out = []
    for r in results:
        contexts = [c["text"] for c in parse(r["retrieved_context"])]
        response, gt = r["response"], r["gt_answer"]
        for claims_key, answer_key, ctx_key, other in (
            ("response_claims", "answer2response", "retrieved2response", gt),
            ("gt_answer_claims", "response2answer", "retrieved2answer", response),
        ):
            claims = [_triplet(t) for t in parse(r[claims_key])]
            vs_other = parse(r[answer_key])
            vs_contexts = parse(r[ctx_key])
            for i, claim in enumerate(claims):
                out.append(Item("ragchecker", claim, (other,), float(vs_other[i] == "Entailment")))
                for j, ctx in enumerate(contexts):
                    label = float(vs_contexts[i][j] == "Entailment")
                    out.append(Item("ragchecker", claim, (ctx,), label))
    return out


def load(source: str) -> list[Item]:
    loaders = {
        "lfqa": lfqa_items,
        "wice": wice_items,
        "ragchecker": ragchecker_items,
        "snli": snli_items,
    }
    if source in loaders:
        return loaders[source]()
    if source in CHECK_SOURCES:
        return check_items(source)
    raise SystemExit(f"Unknown source {source!r}; known: {[*loaders, *CHECK_SOURCES]}.")
