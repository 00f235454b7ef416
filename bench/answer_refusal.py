"""How well the offline refusal detector (``ragmeter.scoring.refusal``) tells refusals from answers.

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
from ragmeter.scoring.refusal import read_refusal

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
    ragchecker()
    public = sorted(p.name for p in SHARED.glob("*squad*")) if SHARED.is_dir() else []
    print(
        "\npublic set with unanswerable questions: "
        + (", ".join(public) if public else f"none under {SHARED} (no SQuAD 2.0-style set)")
    )


def ragchecker() -> None:
    """Real systems' answers: RAGChecker's meta-evaluation responses (Apache-2.0, read by path
    from ../shared/data). No labels come with them: the answers the detector flags (and two
    found by a keyword scan) were read by hand, ``bench/data/ragchecker_refusal_review.jsonl``
    (ids and a label only; the rules were then adjusted on them, so this set is not held out).
    """
    path = SHARED / "ragchecker_meta_eval" / "human_labeled_data.json"
    if not path.is_file():
        print(f"\nRAGChecker responses: {path} not found, skipped")
        return
    responses: dict[tuple[int, str], str] = {}
    for pair in json.loads(path.read_text(encoding="utf-8")):
        for side in ("model1", "model2"):
            text = pair[side].get("response")
            if text:
                responses.setdefault((pair["instance_id"], pair[side]["model_name"]), text)
    unique = {text: key for key, text in responses.items()}
    kinds = {key: read_refusal(text).kind for text, key in unique.items()}
    counts = Counter(kinds.values())
    review_path = DATA.with_name("ragchecker_refusal_review.jsonl")
    review = [json.loads(line) for line in review_path.read_text(encoding="utf-8").splitlines()]
    read = [(r["label"], kinds[(r["instance_id"], r["model_name"])]) for r in review]
    flagged = [(label, kind) for label, kind in read if kind != "answer"]
    refusals = [(label, kind) for label, kind in read if kind == "refusal"]
    systems = len({model for _, model in responses})
    print(
        f"\nRAGChecker responses: {len(unique)} distinct answers of {systems} RAG systems; "
        f"read as {counts['refusal']} refusal, {counts['partial']} partial, "
        f"{counts['answer']} answer"
    )
    print(
        f"  hand review of the {len(flagged)} flagged: refusals right "
        f"{sum(label == kind for label, kind in refusals)} of {len(refusals)}; partial right "
        f"{sum(label == kind == 'partial' for label, kind in flagged)} of "
        f"{sum(kind == 'partial' for _, kind in flagged)}; declining answers missed among the "
        f"reviewed: {sum(label != 'answer' and kind == 'answer' for label, kind in read)}"
    )


if __name__ == "__main__":
    main()
