"""The offline claim verifier on the hand-written probe set, against K-Precision as the peer.

``tests/judges/verifier_probes.jsonl`` holds (premise, claim, entailed, kind) probes written
for this project: negations, numbers in words and digits, swapped entities and roles,
antonyms, an unsupported extra clause, off-topic claims, changed dates (not entailed) and
paraphrases, subsets, simple inferences and copies from the middle of a long premise
(entailed). Each probe is one claim against one premise; all go to the verifier in one call.

Prints the balanced accuracy (mean of the recall on entailed and on not-entailed probes)
overall and the accuracy per kind, for ``OfflineJudge().verify_sync`` and for K-Precision at
the threshold that is best on these very probes (an optimistic peer: its threshold is fitted
on the test set). ``tests/judges/test_verifier_probes.py`` imports :func:`load_probes`,
:func:`balanced_accuracy` and :func:`offline_verdicts` from here.

Run::

    PYTHONPATH=src .venv/bin/python bench/verifier_probes.py [--show-errors]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROBES = Path(__file__).resolve().parents[1] / "tests" / "judges" / "verifier_probes.jsonl"
KINDS = (
    "negation",
    "number_words",
    "number_digits",
    "swapped_entity",
    "swapped_roles",
    "antonym",
    "extra_clause",
    "off_topic",
    "paraphrase",
    "subset",
    "inference",
    "date_swap",
    "copy_in_long_context",
)


@dataclass(frozen=True, slots=True)
class Probe:
    premise: str
    claim: str
    entailed: bool
    kind: str


def load_probes(path: Path = PROBES) -> list[Probe]:
    """The probes of a JSON Lines file, checked field by field (line numbers in errors)."""
    probes = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if set(row) != {"premise", "claim", "entailed", "kind"}:
                raise ValueError(
                    f"{path}:{number}: a probe has exactly the fields premise, claim, entailed "
                    f"and kind. Got {sorted(row)}."
                )
            if row["kind"] not in KINDS:
                raise ValueError(f"{path}:{number}: unknown kind {row['kind']!r}; known: {KINDS}.")
            if not isinstance(row["entailed"], bool):
                raise ValueError(f"{path}:{number}: entailed must be true or false.")
            if not (row["premise"].strip() and row["claim"].strip()):
                raise ValueError(f"{path}:{number}: premise and claim must not be empty.")
            probes.append(Probe(**row))
    return probes


def balanced_accuracy(labels: Sequence[bool], predicted: Sequence[bool]) -> float:
    """Mean of the recall on each label; both labels must be present.

    >>> balanced_accuracy([True, True, False, False], [True, True, True, False])
    0.75
    """
    pairs = list(zip(labels, predicted, strict=True))
    recalls = []
    for label in (True, False):
        hits = [p == label for y, p in pairs if y == label]
        if not hits:
            raise ValueError(f"Balanced accuracy needs both labels; no probe is {label}.")
        recalls.append(sum(hits) / len(hits))
    return sum(recalls) / 2


def offline_verdicts(probes: Sequence[Probe]) -> list[bool]:
    """The offline judge's verdict on each probe, all probes in one ``verify_sync`` call."""
    from ragmeter.judges.base import ClaimBlock
    from ragmeter.judges.offline.judge import OfflineJudge

    blocks = [ClaimBlock((p.claim,), (p.premise,)) for p in probes]
    verification = OfflineJudge().verify_sync(blocks)
    return [bool(matrix[0][0]) for matrix in verification.matrices]


def k_precision_values(probes: Sequence[Probe]) -> list[float]:
    """Unitxt K-Precision of each claim against its premise."""
    from ragmeter.scoring.lexical import k_precision

    return [k_precision(p.claim, [p.premise]).value for p in probes]


def best_threshold(labels: Sequence[bool], values: Sequence[float]) -> tuple[float, float]:
    """``(threshold, balanced accuracy)`` of ``value >= threshold``, best over the values."""
    return max(
        ((t, balanced_accuracy(labels, [v >= t for v in values])) for t in sorted(set(values))),
        key=lambda pair: pair[1],
    )


def per_kind(probes: Sequence[Probe], predicted: Sequence[bool]) -> dict[str, float]:
    """Accuracy per kind, in the order of :data:`KINDS`."""
    out = {}
    for kind in KINDS:
        hits = [p.entailed == y for p, y in zip(probes, predicted, strict=True) if p.kind == kind]
        if hits:
            out[kind] = sum(hits) / len(hits)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--probes", type=Path, default=PROBES)
    parser.add_argument("--show-errors", action="store_true", help="print every missed probe")
    args = parser.parse_args()

    probes = load_probes(args.probes)
    labels = [p.entailed for p in probes]
    judge = offline_verdicts(probes)
    values = k_precision_values(probes)
    threshold, kp_bacc = best_threshold(labels, values)
    kp = [v >= threshold for v in values]

    n_true = sum(labels)
    print(
        f"{len(probes)} probes ({n_true} entailed, {len(probes) - n_true} not) from {args.probes}"
    )
    print(f"{'':24}{'offline judge':>15}{'K-Precision':>13}")
    print(f"{'balanced accuracy':24}{balanced_accuracy(labels, judge):>15.3f}{kp_bacc:>13.3f}")
    print(f"{'(K-Precision threshold':24}{'':>15}{threshold:>13.3f})")
    judge_kinds, kp_kinds = per_kind(probes, judge), per_kind(probes, kp)
    for kind, accuracy in judge_kinds.items():
        n = sum(p.kind == kind for p in probes)
        entailed = sum(p.entailed for p in probes if p.kind == kind)
        name = f"{kind} ({n}, {entailed} ent.)"
        print(f"{name:32}{accuracy:>7.3f}{kp_kinds[kind]:>13.3f}")
    if args.show_errors:
        for probe, verdict in zip(probes, judge, strict=True):
            if verdict != probe.entailed:
                print(f"\n[{probe.kind}] expected {probe.entailed}, got {verdict}")
                print(f"  claim:   {probe.claim}")
                print(f"  premise: {probe.premise[:160]}")


if __name__ == "__main__":
    main()
