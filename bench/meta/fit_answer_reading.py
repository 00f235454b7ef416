"""Choose the answer reading's one constant across sources, leave-one-source-out.

:func:`ragmeter.judges.offline.answer_reading.read_as_answer` decides an answer claim
against a short reference read with its question; its one constant, ``allowed_extra``, is
how many words beyond the question and the reference a claim may add when it gives the
answer. This script scores every value from 0 to 5 on each source and, for each source,
picks the value that is best (mean balanced accuracy) on the *other* sources, then reports
that value's balanced accuracy on the held-out source: the leave-one-source-out estimate
(also leave-one-domain-out inside the realistic set). The shipped value is the one best on
the two sources with equal weight (ties: the smaller).

Sources (read by path, nothing copied):

* each domain of ``bench/data/realistic_rag.jsonl`` (made by ``bench/data/realistic_rag.py``):
  one-fact answers, ``faithful`` and ``faithful_paraphrase`` are correct against the
  reference, ``wrong_value``, ``distractor_value`` and ``wrong_subject`` are not; the whole
  answer is the claim;
* ``claim_probes``: the ``reference_correctness`` items of the team's hand-labelled claim
  probes (``../shared/data/claim_probes/dev.jsonl``; their held-out half is not here).

Run::

    PYTHONPATH=src python bench/meta/fit_answer_reading.py
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REALISTIC = ROOT / "bench" / "data" / "realistic_rag.jsonl"
PROBES = ROOT.parent / "shared" / "data" / "claim_probes" / "dev.jsonl"
VALUES = range(6)
CORRECT = ("faithful", "faithful_paraphrase")
WRONG = ("wrong_value", "distractor_value", "wrong_subject")

#: (claim, question, reference, correct)
Item = tuple[str, str, str, bool]


def load(realistic: Path, probes: Path) -> dict[str, list[Item]]:
    """The items of each source."""
    sources: dict[str, list[Item]] = defaultdict(list)
    for line in realistic.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not row.get("one_fact") or row["kind"] not in CORRECT + WRONG:
            continue
        item = (row["answer"], row["question"], row["reference_answers"][0], row["kind"] in CORRECT)
        sources[row["domain"]].append(item)
    if probes.exists():
        for line in probes.read_text(encoding="utf-8").splitlines():
            probe = json.loads(line)
            if probe["category"] == "reference_correctness":
                entailed = probe["label"] == "entailed"
                item = (probe["claim"], probe["question"], probe["reference"], entailed)
                sources["claim_probes"].append(item)
    return dict(sources)


def balanced_accuracy(items: Sequence[Item], allowed_extra: int) -> float:
    from ragmeter.judges.offline.answer_reading import read_as_answer

    hits: dict[bool, list[bool]] = {True: [], False: []}
    for claim, question, reference, correct in items:
        said = read_as_answer(claim, question, reference, allowed_extra=allowed_extra).entailed
        hits[correct].append(said == correct)
    recalls = [sum(h) / len(h) for h in hits.values() if h]
    return sum(recalls) / len(recalls)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realistic", type=Path, default=REALISTIC)
    parser.add_argument("--probes", type=Path, default=PROBES)
    args = parser.parse_args(argv)
    domains = load(args.realistic, args.probes)
    probes = domains.pop("claim_probes", [])
    sources = {"realistic": [i for items in domains.values() for i in items]}
    if probes:
        sources["claim_probes"] = probes
    folds = {**{f"  {d}": items for d, items in domains.items()}, **sources}
    table = {s: {v: balanced_accuracy(items, v) for v in VALUES} for s, items in folds.items()}
    print("balanced accuracy of the answer reading by allowed_extra")
    print(f"{'source':<16}{'n':>5}" + "".join(f"{v:>7}" for v in VALUES))
    for source, row in table.items():
        cells = "".join(f"{row[v]:>7.3f}" for v in VALUES)
        print(f"{source:<16}{len(folds[source]):>5}{cells}")

    def best(names: Sequence[str]) -> int:
        return max(VALUES, key=lambda v: (sum(table[s][v] for s in names), -v))

    print("\nleave-one-out: the value best on the others, scored on the one left out")
    for group in ([f"  {d}" for d in domains], list(sources)):
        held_out = []
        for source in group:
            value = best([s for s in group if s != source])
            held_out.append(table[source][value])
            print(f"{source:<16} value {value}  balanced accuracy {table[source][value]:.3f}")
        print(f"{'mean':<16}          balanced accuracy {sum(held_out) / len(held_out):.3f}")
    print(f"\nbest on the sources (equal weight): allowed_extra = {best(list(sources))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
