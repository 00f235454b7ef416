"""How well the offline refusal detector (``ragmeter.text.refusal``) tells refusals from answers.

Data: ``bench/data/refusals.jsonl``, 362 answers written by hand for this project (CC0), each
labelled ``answer``, ``refusal`` or ``partial`` (declines, then answers anyway), in many styles:
terse, chatty, apologetic, markdown, long; answers that deny facts ("It is not in Paris but in
Lyon", "There is no fee") beside refusals ("The documents do not say"). The answers were
written before the rules; the rules were fitted on the ``dev`` split only and the ``holdout``
split (a third, by a hash of the text) was read once, after.

Prints, per split: refusal precision and recall (a partial answer counts as not a refusal,
as in ``answerability_accuracy``), the three-way accuracy and the confusion counts; and the
same for the offline judge's older noncommittal patterns (``is_noncommittal``), as a
baseline measured in the same run.

    python bench/answer_refusal.py
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ragmeter.judges.offline.claim_split import is_noncommittal
from ragmeter.text.refusal import read_refusal

DATA = Path(__file__).parent / "data" / "refusals.jsonl"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LABELS = ("answer", "refusal", "partial")


def load() -> list[dict[str, str]]:
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line]


def scores(
    rows: list[dict[str, str]], kind_of: Callable[[str], str]
) -> tuple[float, float, float | None, Counter[tuple[str, str]]]:
    """Refusal precision, recall, three-way accuracy (None for a yes/no detector) and the
    confusion counts (label, read)."""
    confusion: Counter[tuple[str, str]] = Counter()
    for row in rows:
        confusion[(row["label"], kind_of(row["answer"]))] += 1
    tp = confusion[("refusal", "refusal")]
    fp = sum(n for (label, read), n in confusion.items() if read == "refusal" and label != read)
    fn = sum(n for (label, read), n in confusion.items() if label == "refusal" and read != label)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    three_way = None
    if any(read == "partial" for _, read in confusion):
        three_way = sum(n for (label, read), n in confusion.items() if label == read) / len(rows)
    return precision, recall, three_way, confusion


def main() -> None:
    rows = load()
    counts = Counter(row["label"] for row in rows)
    print(f"{DATA.name}: {len(rows)} answers ({', '.join(f'{counts[k]} {k}' for k in LABELS)})")
    detectors: dict[str, Callable[[str], str]] = {
        "read_refusal": lambda text: read_refusal(text).kind,
        "is_noncommittal (baseline)": lambda text: "refusal" if is_noncommittal(text) else "answer",
    }
    for split in ("dev", "holdout", "all"):
        part = rows if split == "all" else [row for row in rows if row["split"] == split]
        print(f"\n{split}: {len(part)} answers")
        for name, kind_of in detectors.items():
            precision, recall, three_way, confusion = scores(part, kind_of)
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            extra = "" if three_way is None else f", 3-way accuracy {three_way:.3f}"
            print(
                f"  {name:28s} refusal precision {precision:.3f}, recall {recall:.3f}, "
                f"F1 {f1:.3f}{extra}"
            )
            if name == "read_refusal":
                table = "; ".join(
                    f"{label}->{read} {n}"
                    for (label, read), n in sorted(confusion.items())
                    if label != read
                )
                print(f"  {'':28s} errors: {table or 'none'}")
    public = sorted(p.name for p in SHARED.glob("*squad*")) if SHARED.is_dir() else []
    print(
        "\npublic set with unanswerable questions: "
        + (", ".join(public) if public else f"none under {SHARED} (no SQuAD 2.0-style set)")
    )


if __name__ == "__main__":
    main()
