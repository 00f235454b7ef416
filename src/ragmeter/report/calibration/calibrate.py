"""Calibrate a run's judge with human labels: agreement, bias, and the mean three ways.

For every metric the labels cover: the judge's agreement with people on the labelled rows
(claims), its bias, and the population mean from the judge alone, from the labels alone and
prediction-powered (PPI++, :func:`ragmeter.scoring.calibration.ppi.ppi_mean`), each with a 95%
interval.

Row-level labels (``{"id", "metric", "value"}``) pair a person's score ``Y`` with the judge's
score ``f`` of the same row and metric. Claim-level labels (``{"id", "claim", "label"}``) are
verdicts on single claims; every metric that is a share of claims is calibrated from them by
re-aggregation (:mod:`ragmeter.scoring.calibration.claims`): on a labelled row, ``Y`` is the
metric computed again with the people's verdicts on the labelled claims and the corrected
verdict rates on the others. ``f`` is the judge's recorded score of every row. PPI++ then
runs over rows.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.errors import DataError
from ragmeter.io.labels import ClaimLabel, LabelSet, RowLabel
from ragmeter.report.calibration.label_checks import (
    check_claim_labels,
    check_sample,
    deduplicated,
    labels_design,
)
from ragmeter.report.calibration.table import ScoreTable, details_of, row_lookup, score_table
from ragmeter.result import RunResult
from ragmeter.scoring.calibration.claims import (
    CLAIM_METRICS,
    Kind,
    claims_of,
    judge_support,
    judge_verdict,
    kind_agreement,
    kind_name,
    recomputed_value,
    verdict_rates,
)
from ragmeter.scoring.calibration.estimates import (
    Design,
    estimates,
    label_budget,
    row_agreement,
    too_few,
)
from ragmeter.scoring.calibration.record import Calibration, MetricCalibration

__all__ = ["calibrate_run"]

#: The people's values of each labelled claim: (row position, kind, claim index) -> values.
People = dict[tuple[int, Kind, int], list[float]]


def calibrate_run(
    run: RunResult | ScoreTable | str | os.PathLike[str],
    labels: LabelSet,
    *,
    target_width: float | None = None,
) -> Calibration:
    """Calibrate every metric of ``run`` that ``labels`` cover (see the module docstring).

    ``run`` is a :class:`~ragmeter.result.RunResult`, a :class:`.ScoreTable`
    (:func:`~ragmeter.report.calibration.table.read_run_for_labels`), a report's ``Run`` or a
    results file.

    Raises :class:`~ragmeter.errors.DataError` naming the line for a label whose row, claim
    or metric the run does not have, whose row failed or has other claims than when it was
    labelled, that names a row id several rows share, or that contradicts another label of
    the same thing by the same labeller; and for labels made on another run. A label repeated
    word for word counts once. Labels from a non-random selection (``stratified``) give
    agreement and bias but no labels-only or calibrated mean (``refused`` says why). With
    ``target_width``, each metric's ``budget`` says about how many labelled rows bring its
    calibrated interval to that width.
    """
    table = score_table(run)
    if target_width is not None and not (
        isinstance(target_width, int | float) and target_width > 0.0
    ):
        raise DataError(f"The target width must be a number > 0. Got {target_width!r}.")
    find = row_lookup(table, labels.key)
    check_sample(table, labels)
    kept, repeats = deduplicated([*labels.rows, *labels.claims], find, labels.path)
    design, notes = labels_design(table, labels, kept, find, target_width)
    out: dict[str, MetricCalibration] = {}
    for metric, group in _row_labels_by_metric(table, labels, kept).items():
        out[metric] = _row_level(table, metric, group, find, design, labels.path)
    claim_labels = [label for label in kept if isinstance(label, ClaimLabel)]
    if claim_labels:
        out.update(_claim_metrics(table, labels, claim_labels, find, design, skip=set(out)))
    notes.extend(_notes(labels, out, claim_labels, repeats, design))
    return Calibration(out, labels.selection, labels.path, tuple(notes))


def _row_labels_by_metric(
    run: ScoreTable, labels: LabelSet, kept: Sequence[RowLabel | ClaimLabel]
) -> dict[str, list[RowLabel]]:
    by_metric: dict[str, list[RowLabel]] = defaultdict(list)
    for label in kept:
        if not isinstance(label, RowLabel):
            continue
        if label.metric not in run.metrics:
            known = list(run.metrics)
            close = difflib.get_close_matches(label.metric, known, n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise DataError(
                f"{labels.path}, line {label.line}: metric {label.metric!r} is not in the "
                f"results.{hint} Metrics there: {', '.join(known) or 'none'}."
            )
        by_metric[label.metric].append(label)
    return by_metric


def _notes(
    labels: LabelSet,
    out: Mapping[str, MetricCalibration],
    claim_labels: Sequence[ClaimLabel],
    repeats: int,
    design: Design,
) -> list[str]:
    notes = []
    if repeats:
        notes.append(
            f"{repeats} label line(s) repeat an earlier one word for word (the same row or "
            "claim, labeller and label) and are counted once."
        )
    read = {kind for m in out for kind in CLAIM_METRICS.get(m, ("", ()))[1]}
    unused = Counter(
        kind_name((c.source, c.against)) for c in claim_labels if (c.source, c.against) not in read
    )
    for kind, count in unused.items():
        notes.append(
            f"{count} claim label(s) on {kind} match no metric of this run and were not used."
        )
    if labels.selection is None:
        notes.append(
            f"{labels.path} does not say how its rows were chosen; they are taken as a uniform "
            "random sample of the run's rows (estimates are valid only if they are)."
        )
    if design.refused:
        notes.append(f"No labels-only or calibrated mean: {design.refused}")
    return notes


# ----------------------------------------------------------------------------- rows


def _row_level(
    run: ScoreTable,
    metric: str,
    labels: Sequence[RowLabel],
    find: Callable,
    design: Design,
    path: str,
) -> MetricCalibration:
    info = run.metric(metric)
    column = run.column(metric)
    scored = dict(zip(column.positions, column.values, strict=True))
    by_row: dict[int, list[float]] = defaultdict(list)
    for label in labels:
        pos = find(label.id, f"{path}, line {label.line}")
        if not info.lower <= label.value <= info.upper:
            raise DataError(
                f"{path}, line {label.line}: {metric} lies in [{info.lower:g}, "
                f"{info.upper:g}]; the label's value is {label.value!r}."
            )
        if pos not in scored:
            raise DataError(
                f"{path}, line {label.line}: row {label.id!r} has no {metric} score in the "
                "results (it failed or is undefined there), so its label has no judge score to "
                "pair with. Remove the label, or resume the run so that the row is scored."
            )
        by_row[pos].append(label.value)
    kept = list(by_row)
    y = np.array([np.mean(by_row[pos]) for pos in kept], dtype=float)
    f_lab = np.array([scored[pos] for pos in kept], dtype=float)
    f_all = np.asarray(column.values, dtype=float)
    bounds = (info.lower, info.upper)
    prob = design.of(kept)
    judge, alone, calibrated, bias = estimates(
        y, f_lab, f_all, design.refused, bounds=bounds, probability=prob
    )
    return MetricCalibration(
        metric=metric,
        level="rows",
        n_labels=sum(len(by_row[pos]) for pos in kept),
        n_rows=int(f_all.size),
        n_labelled_rows=len(kept),
        agreement=row_agreement(y, f_lab),
        bias=bias,
        judge=judge,
        labels=alone,
        calibrated=calibrated,
        how=(
            "row-level labels: each labelled row's score (the mean of its labels) against the "
            f"judge's score of that row; {design.how_weighted()}, over the rows with a score."
        ),
        higher_is_better=info.higher_is_better,
        bounds=bounds,
        refused=design.refused or too_few(len(kept)),
        labelled={run.key(pos): float(v) for pos, v in zip(kept, y, strict=True)},
        budget=label_budget(y, f_lab, f_all, design.target_width, bounds=bounds, probability=prob),
    )


# ----------------------------------------------------------------------------- claims


def _claim_metrics(
    run: ScoreTable,
    labels: LabelSet,
    claim_labels: Sequence[ClaimLabel],
    find: Callable,
    design: Design,
    *,
    skip: set[str],
) -> dict[str, MetricCalibration]:
    """Every claim metric of the run that the claim labels reach (those in ``skip`` have
    row-level labels); at least one must."""
    positions = {find(label.id, f"{labels.path}, line {label.line}") for label in claim_labels}
    details = details_of(run, positions)
    check_claim_labels(run, labels, claim_labels, details, find)
    out = {}
    for metric in CLAIM_METRICS:
        if metric in run.metrics and metric not in skip:
            found = _claim_level(run, metric, claim_labels, details, find, design, labels.path)
            if found is not None:
                out[metric] = found
    if not out:
        raise DataError(
            f"{labels.path}: the claim labels match no claim metric of the results (with "
            "its claim details). Claim labels calibrate "
            f"{', '.join(CLAIM_METRICS)}; run one of them with the labelled rows."
        )
    return out


def _people_by_claim(
    metric: str,
    labels: Sequence[ClaimLabel],
    details: Mapping[int, Mapping[str, Any]],
    find: Callable,
    path: str,
) -> tuple[People, int]:
    """The people's values of each labelled claim of a kind ``metric`` reads, and how many
    labels name such a claim (``unsure`` ones included)."""
    source, kinds = CLAIM_METRICS[metric]
    people: People = defaultdict(list)
    n_labels = 0
    for label in labels:
        kind = (label.source, label.against)
        if kind not in kinds:
            continue
        pos = find(label.id, f"{path}, line {label.line}")
        row_details = details.get(pos, {}).get(metric)
        claims = claims_of(row_details, source) if isinstance(row_details, Mapping) else None
        if claims is None:
            continue  # the row has no score or no claim details for this metric
        if label.claim >= len(claims):
            raise DataError(
                f"{path}, line {label.line}: row {label.id!r} has {len(claims)} {source} claim(s) "
                f"(0 to {len(claims) - 1}); the label names claim {label.claim}."
            )
        n_labels += 1
        if label.value is not None:
            people[(pos, kind, label.claim)].append(label.value)
    return people, n_labels


def _rates_and_agreement(
    metric: str, people: People, details: Mapping[int, Mapping[str, Any]]
) -> tuple[dict[Kind, dict[bool, float]], dict[str, Any]]:
    """Per verdict kind with labels: the corrected verdict rates and the judge's agreement
    with the people on the labelled claims."""
    source, kinds = CLAIM_METRICS[metric]
    rates: dict[Kind, dict[bool, float]] = {}
    agreement: dict[str, Any] = {"level": "claims"}
    for kind in kinds:
        ys, verdicts, supports = [], [], []
        for (pos, k, i), values in people.items():
            if k != kind:
                continue
            claim = claims_of(details[pos][metric], source)[i]  # type: ignore[index]
            verdict = judge_verdict(claim, kind)
            if verdict is None:
                continue
            ys.append(float(np.mean(values)))
            verdicts.append(float(verdict))
            supports.append(judge_support(claim.get("evidence"), kind[1], verdict))
        if not ys:
            continue
        y, v = np.array(ys), np.array(verdicts)
        rates[kind] = verdict_rates(y, v)
        agreement[kind_name(kind)] = kind_agreement(y, v, np.array(supports))
    return rates, agreement


def _claim_level(
    run: ScoreTable,
    metric: str,
    labels: Sequence[ClaimLabel],
    details: Mapping[int, Mapping[str, Any]],
    find: Callable,
    design: Design,
    path: str,
) -> MetricCalibration | None:
    people, n_labels = _people_by_claim(metric, labels, details, find, path)
    if not people:
        return None
    rates, agreement = _rates_and_agreement(metric, people, details)
    if not rates:
        return None
    info = run.metric(metric)
    column = run.column(metric)
    scored = dict(zip(column.positions, column.values, strict=True))
    f_all = np.asarray(column.values, dtype=float)
    y_rows, f_rows, keys, positions = [], [], [], []
    dropped = 0
    by_row: dict[int, dict[tuple[Kind, int], list[float]]] = defaultdict(dict)
    for (pos, kind, i), values in people.items():
        by_row[pos][(kind, i)] = values
    for pos in sorted(by_row):
        value = (
            recomputed_value(metric, details[pos][metric], by_row[pos], rates)
            if pos in scored
            else None
        )
        if value is None:
            dropped += 1
            continue
        y_rows.append(value)
        f_rows.append(scored[pos])
        keys.append(run.key(pos))
        positions.append(pos)
    y, f_lab = np.array(y_rows), np.array(f_rows)
    bounds = (info.lower, info.upper)
    prob = design.of(positions)
    judge, alone, calibrated, bias = estimates(
        y, f_lab, f_all, design.refused, bounds=bounds, probability=prob
    )
    agreement["rows"] = row_agreement(y, f_lab)
    return MetricCalibration(
        metric=metric,
        level="claims",
        n_labels=n_labels,
        n_rows=int(f_all.size),
        n_labelled_rows=int(y.size),
        agreement=agreement,
        bias=bias,
        judge=judge,
        labels=alone,
        calibrated=calibrated,
        how=_claim_how(metric, rates, design),
        higher_is_better=info.higher_is_better,
        bounds=bounds,
        refused=design.refused or too_few(int(y.size)),
        notes=(f"{dropped} labelled row(s) without a {metric} score are left out.",)
        if dropped
        else (),
        labelled=dict(zip(keys, y_rows, strict=True)),
        budget=label_budget(y, f_lab, f_all, design.target_width, bounds=bounds, probability=prob),
    )


def _claim_how(metric: str, rates: Mapping[Kind, Any], design: Design) -> str:
    kinds = CLAIM_METRICS[metric][1]
    labelled = [k for k in kinds if k in rates]
    kept = [k for k in kinds if k not in rates]
    return (
        f"claim-level labels ({'; '.join(map(kind_name, labelled))}): each labelled row's "
        f"{metric} recomputed with the people's verdicts on the labelled claims and the "
        "corrected verdict rate (the share people called supported, given the judge's verdict) "
        "on the others"
        + (f", the judge's verdicts kept for {'; '.join(map(kind_name, kept))}" if kept else "")
        + f"; {design.how_weighted()}, against the judge's recorded scores."
    )
