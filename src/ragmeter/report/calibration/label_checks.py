"""A labels file checked against the run it calibrates: repeated labels
(:func:`deduplicated`), claim labels against the claims the run recorded
(:func:`check_claim_labels`), the sample against the run it was drawn from
(:func:`check_sample`), and how the labelled rows were drawn (:func:`labels_design`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragmeter.errors import DataError
from ragmeter.io.labels import ClaimLabel, LabelSet, RowLabel, row_fingerprint
from ragmeter.report.calibration.table import ScoreTable
from ragmeter.scoring.calibration.claims import CLAIM_METRICS, claims_of
from ragmeter.scoring.calibration.estimates import Design

__all__ = ["check_claim_labels", "check_sample", "deduplicated", "labels_design"]


def deduplicated(
    labels: Sequence[RowLabel | ClaimLabel], find: Callable, path: str
) -> tuple[list[Any], int]:
    """``labels`` with repeats dropped (the same row and metric, or claim, labeller and
    label as an earlier line), and how many were; two different labels of one thing by one
    labeller (or both unnamed) raise :class:`DataError` naming both lines."""
    seen: dict[tuple, RowLabel | ClaimLabel] = {}
    out: list[Any] = []
    repeats = 0
    for label in labels:
        pos = find(label.id, f"{path}, line {label.line}")
        if isinstance(label, RowLabel):
            what: tuple = ("row", label.metric)
            value: Any = label.value
        else:
            what = ("claim", label.source, label.against, label.claim)
            value = label.label
        key = (pos, what, label.labeller)
        first = seen.get(key)
        if first is None:
            seen[key] = label
            out.append(label)
            continue
        said = first.value if isinstance(first, RowLabel) else first.label
        if said == value:
            repeats += 1
            continue
        thing = (
            f"row {label.id!r}'s {label.metric}"
            if isinstance(label, RowLabel)
            else f"{label.source} claim {label.claim} of row {label.id!r} (against the "
            f"{label.against})"
        )
        who = f"labeller {label.labeller!r}" if label.labeller else "no labeller named"
        raise DataError(
            f"{path}, lines {first.line} and {label.line}: two different labels of {thing}, "
            f"both with {who}: {said!r} and {value!r}. Keep the one you mean (labels of one "
            "thing by different people are averaged: give each line its 'labeller')."
        )
    return out, repeats


def _claim_texts(details: Any) -> tuple[list[str], list[str]] | None:
    """The answer and reference claims' texts of one metric's details (what a label's claim
    index counts in), or ``None`` when it records no claims."""
    if not isinstance(details, Mapping):
        return None
    answer, reference = claims_of(details, "answer"), claims_of(details, "reference")
    if answer is None and reference is None:
        return None

    def texts(items: Any) -> list[str]:
        return [str(c.get("claim", "")) if isinstance(c, Mapping) else "" for c in items or ()]

    return texts(answer), texts(reference)


def check_claim_labels(
    run: ScoreTable,
    labels: LabelSet,
    claims: Sequence[ClaimLabel],
    details: Mapping[int, Mapping[str, Any]],
    find: Callable,
) -> None:
    """Every claim label names a row that has the claims of a metric reading its kind, a
    claim within them, and (with a fingerprint) the same claims as when it was labelled."""
    page_metric = labels.meta.get("metric")
    for label in claims:
        kind = (label.source, label.against)
        metrics = [
            m for m, (_, kinds) in CLAIM_METRICS.items() if m in run.metrics and kind in kinds
        ]
        if not metrics:
            continue  # a kind no metric of the run reads: a note says so
        where = f"{labels.path}, line {label.line}"
        pos = find(label.id, where)
        row = details.get(pos, {})
        order = [page_metric, *metrics] if page_metric in row else metrics
        found = next((t for m in order if (t := _claim_texts(row.get(m))) is not None), None)
        if found is None:
            raise DataError(
                f"{where}: row {label.id!r} has no claims for {', '.join(metrics)} in the "
                "results (those metrics failed or are undefined on it), so the label has no "
                "verdict to stand beside. Remove the label, or resume the run so that the row "
                "is scored."
            )
        texts = found[0] if label.source == "answer" else found[1]
        if label.claim >= len(texts):
            raise DataError(
                f"{where}: row {label.id!r} has {len(texts)} {label.source} claim(s)"
                + (f" (0 to {len(texts) - 1})" if texts else "")
                + f"; the label names claim {label.claim}."
            )
        if label.fingerprint is not None and label.fingerprint != row_fingerprint(label.id, *found):
            raise DataError(
                f"{where}: row {label.id!r} is not the row that was labelled: its claims in the "
                "results differ from the ones on the labelling page (the row's fingerprint was "
                f"{label.fingerprint}). The results were written again (a rerun?) after the page "
                "was made; make a new page with ragmeter label and label it."
            )


def check_sample(run: ScoreTable, labels: LabelSet) -> None:
    """The labels file's first line against the run: the input it was made on and how many
    rows its sample was drawn from."""
    meta = labels.meta
    recorded = run.info.get("input") if isinstance(run.info, Mapping) else None
    sha = recorded.get("sha256") if isinstance(recorded, Mapping) else None
    said = meta.get("input")
    if isinstance(said, str) and isinstance(sha, str) and not sha.startswith(said):
        raise DataError(
            f"{labels.path}: the labels were made on a run of another input (its fingerprint "
            f"{said}, this run's {sha[:16]}). Calibrate the run the labels were made on, or "
            "label this one."
        )
    metric, of_rows = meta.get("metric"), meta.get("of_rows")
    if not isinstance(metric, str) or isinstance(of_rows, bool) or not isinstance(of_rows, int):
        return
    if metric not in run.metrics:
        raise DataError(
            f"{labels.path}: the labels were drawn from the rows with a {metric} score, and "
            f"this run has no {metric}. Calibrate the run the labels were made on."
        )
    here = len(run.column(metric).positions)
    if here != of_rows:
        raise DataError(
            f"{labels.path}: the labels' sample was drawn from {of_rows} rows with a {metric} "
            f"score (its first line's 'of_rows'), and this run has {here}: they were made on "
            "another run (or this one was written again since), so they are no random sample "
            "of its rows. Calibrate the run they were made on, or label this one."
        )


def labels_design(
    run: ScoreTable,
    labels: LabelSet,
    kept: Sequence[RowLabel | ClaimLabel],
    find: Callable,
    target_width: float | None,
) -> tuple[Design, list[str]]:
    """The labelled rows' inclusion probabilities (one per row), scaled by the share of the
    drawn rows that were labelled when the file says how many were drawn."""
    refused = labels.refusal()
    if not labels.weighted or refused:
        return Design(refused=refused, target_width=target_width), []
    probability: dict[int, float] = {}
    line_of: dict[int, int] = {}
    for label in kept:
        pos = find(label.id, f"{labels.path}, line {label.line}")
        p = label.probability
        if p is None:
            raise DataError(
                f"{labels.path}, line {label.line}: the rows were drawn by "
                f"{labels.selection!r}, and this label gives no 'probability'."
            )
        if pos in probability and probability[pos] != p:
            raise DataError(
                f"{labels.path}, lines {line_of[pos]} and {label.line}: row {label.id!r} has two "
                f"inclusion probabilities, {probability[pos]!r} and {p!r}; a row is drawn once."
            )
        probability[pos], line_of[pos] = p, label.line
    notes = []
    drawn = labels.meta.get("drawn")
    if isinstance(drawn, int) and not isinstance(drawn, bool) and 0 < len(probability) < drawn:
        share = len(probability) / drawn
        probability = {pos: p * share for pos, p in probability.items()}
        notes.append(
            f"{len(probability)} of the {drawn} rows drawn were labelled: each row's probability "
            f"is taken times {share:.3f}, which holds when the rows left unlabelled were left "
            "at random (not, say, the hard ones)."
        )
    return Design(refused, probability, target_width), notes
