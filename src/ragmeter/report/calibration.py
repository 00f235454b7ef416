"""Calibrate a run's judge with human labels: agreement, bias, and the mean three ways.

For every metric the labels cover: the judge's agreement with people on the labelled rows
(claims), its bias, and the population mean from the judge alone, from the labels alone and
prediction-powered (PPI++, :func:`ragmeter.scoring.ppi.ppi_mean`), each with a 95% interval.

Row-level labels (``{"id", "metric", "value"}``) pair a person's score ``Y`` with the judge's
score ``f`` of the same row and metric. Claim-level labels (``{"id", "claim", "label"}``) are
verdicts on single claims; every metric that is a share of claims is calibrated from them by
re-aggregation (:data:`CLAIM_METRICS`): on a labelled row, ``Y`` is the metric computed again
with each labelled claim's verdict replaced by the people's (the share of them who said
supported; ``unsure`` left out), each unlabelled claim's by the corrected verdict rate (the
share of labelled claims people called supported among those the judge called supported, or
among those it did not, as the judge called this claim, smoothed toward the judge's verdict by
one pseudo-claim), and the verdicts of kinds nobody
labelled kept as the judge gave them. ``f`` is the judge's recorded score of every row. PPI++
then runs over rows.
"""

from __future__ import annotations

import difflib
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.errors import DataError
from ragmeter.io.labels import ClaimLabel, LabelSet, RowLabel, row_fingerprint
from ragmeter.io.score_lines import read_score_lines
from ragmeter.report.load import Column, MetricInfo, Run, infer_higher_is_better, read_details
from ragmeter.result import read_sidecar, results_expect
from ragmeter.scoring import ppi

__all__ = [
    "CLAIM_METRICS",
    "Calibration",
    "MetricCalibration",
    "ScoreTable",
    "calibrate_run",
    "compare_calibrations",
    "read_run_for_labels",
]

#: A verdict kind: (whose claims, checked against what).
Kind = tuple[str, str]
A_CTX: Kind = ("answer", "contexts")
A_REF: Kind = ("answer", "reference")
R_ANS: Kind = ("reference", "answer")
R_CTX: Kind = ("reference", "contexts")

#: Claim-share metrics: whose claims they average over and the verdict kinds they read.
CLAIM_METRICS: dict[str, tuple[str, tuple[Kind, ...]]] = {
    "faithfulness": ("answer", (A_CTX,)),
    "faithfulness_support": ("answer", (A_CTX,)),
    "claim_precision": ("answer", (A_REF,)),
    "claim_precision_support": ("answer", (A_REF,)),
    "hallucination": ("answer", (A_REF, A_CTX)),
    "self_knowledge": ("answer", (A_REF, A_CTX)),
    "noise_sensitivity_relevant": ("answer", (A_REF, A_CTX)),
    "noise_sensitivity_irrelevant": ("answer", (A_REF, A_CTX)),
    "claim_recall": ("reference", (R_ANS,)),
    "context_claim_recall": ("reference", (R_CTX,)),
}


def _kind_name(kind: Kind) -> str:
    return f"{kind[0]} claims against the {kind[1]}"


def _interval(
    est: ppi.MeanEstimate | None, bounds: tuple[float, float] | None = None
) -> dict[str, Any]:
    """``{"mean", "ci"}``; with ``bounds``, the interval cut to the metric's range (a mean
    outside it is impossible, so cutting keeps the coverage)."""
    if est is None:
        return {"mean": None, "ci": None}
    if est.ci is None:
        return {"mean": est.mean, "ci": None}
    low, high = est.ci
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return {"mean": est.mean, "ci": [low, high]}


@dataclass(frozen=True, slots=True)
class MetricCalibration:
    """One metric's calibration (see :meth:`as_dict` for the JSON shape)."""

    metric: str
    level: str  # "rows" or "claims"
    n_labels: int
    n_rows: int
    n_labelled_rows: int
    agreement: dict[str, Any]
    bias: ppi.MeanEstimate | None
    judge: ppi.MeanEstimate | None
    labels: ppi.MeanEstimate | None
    calibrated: ppi.MeanEstimate | None
    how: str
    higher_is_better: bool = True
    refused: str | None = None
    notes: tuple[str, ...] = ()
    #: The metric's range; intervals are cut to it.
    bounds: tuple[float, float] = (0.0, 1.0)
    #: The people's value of each labelled row, by the row's id (its index without one):
    #: kept in the run record so that ``compare`` can pair two runs' labels.
    labelled: dict[str, float] = field(default_factory=dict)
    #: About how many labels reach a target width (``target_width=``), else ``None``.
    budget: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        calibrated = _interval(self.calibrated, self.bounds)
        if self.calibrated is not None:
            calibrated["tuning"] = self.calibrated.tuning
        labels = _interval(self.labels, self.bounds)
        if self.refused:
            calibrated["refused"] = labels["refused"] = self.refused
        return {
            "n_labels": self.n_labels,
            "n_rows": self.n_rows,
            "n_labelled_rows": self.n_labelled_rows,
            "level": self.level,
            "agreement": self.agreement,
            "bias": _interval(self.bias),
            "judge": _interval(self.judge, self.bounds),
            "labels": labels,
            "calibrated": calibrated,
            "higher_is_better": self.higher_is_better,
            "how": self.how,
            "notes": list(self.notes),
            **({"budget": self.budget} if self.budget is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class Calibration:
    """Every labelled metric's calibration, and how the labels were chosen."""

    metrics: dict[str, MetricCalibration]
    selection: str | None
    labels_path: str
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """One JSON object keyed by metric (``ragmeter calibrate --json``)."""
        return {name: m.as_dict() for name, m in self.metrics.items()}

    def as_record(self) -> dict[str, Any]:
        """What the run record keeps (``calibration``): the labels file, the selection, the
        notes, :meth:`as_dict` per metric with the people's value of each labelled row."""
        metrics = {}
        for name, m in self.metrics.items():
            metrics[name] = {**m.as_dict(), "labelled_rows": m.labelled}
        return {
            "labels": self.labels_path,
            "selection": self.selection,
            "notes": list(self.notes),
            "metrics": metrics,
        }

    def __getitem__(self, metric: str) -> MetricCalibration:
        return self.metrics[metric]


# ----------------------------------------------------------------------------- rows


@dataclass(slots=True)
class ScoreTable:
    """What calibration reads of a run: per row (by position) its index, id and scores, and
    the details of the rows labels name; with the run record's metric information."""

    indexes: list[int]
    ids: list[str | None]
    scores: list[Mapping[str, Any]]
    #: Position -> the row's details (only rows whose details were kept).
    details: dict[int, Mapping[str, Any]]
    info: Mapping[str, Any]
    source: Path | None = None
    _metrics: dict[str, MetricInfo] | None = None

    @classmethod
    def from_run(cls, run: Run) -> ScoreTable:
        rows = run.rows
        return cls(
            indexes=[r.index for r in rows],
            ids=[None if r.id is None else str(r.id) for r in rows],
            scores=[r.scores for r in rows],
            details={pos: r.details for pos, r in enumerate(rows) if r.details},
            info=run.info,
            source=run.source,
            _metrics=run.metrics,
        )

    @property
    def metrics(self) -> dict[str, MetricInfo]:
        """The run record's metrics, then any other a row scores (direction inferred)."""
        if self._metrics is None:
            found = dict(Run(rows=(), info=self.info).metrics)
            for scores in self.scores:
                for name in scores:
                    if name not in found:
                        found[name] = MetricInfo(
                            name, higher_is_better=infer_higher_is_better(name), inferred=True
                        )
            self._metrics = found
        return self._metrics

    def metric(self, name: str) -> MetricInfo:
        return self.metrics[name]

    def key(self, pos: int) -> str:
        """The row's id, or its index (as text) when it has none."""
        row_id = self.ids[pos]
        return str(self.indexes[pos]) if row_id is None else row_id

    def column(self, metric: str) -> Column:
        """The rows with a score of ``metric``: their positions and values."""
        out = Column()
        for pos, scores in enumerate(self.scores):
            value = scores.get(metric)
            if value is not None and type(value) is not bool and isinstance(value, int | float):
                out.positions.append(pos)
                out.values.append(float(value))
        return out


def _row_lookup(run: ScoreTable, key: str | None = None) -> Callable[[str, str], int]:
    """A function from a label's id (and line) to the row's position in the run: by the rows'
    ids for ``key="id"``, by their indexes for ``key="index"``, else by id first and by index
    for an id no row has."""
    n = len(run.indexes)
    by_id: dict[str | None, int] = {}
    shared: dict[str, list[int]] = {}
    if key != "index":
        # The first row with an id wins: filled from the last row back.
        by_id = dict(zip(reversed(run.ids), range(n - 1, -1, -1), strict=True))
        by_id.pop(None, None)
        if len(by_id) < sum(i is not None for i in run.ids):
            counts = Counter(i for i in run.ids if i is not None)
            for pos, row_id in enumerate(run.ids):
                if row_id is not None and counts[row_id] > 1:
                    shared.setdefault(row_id, []).append(run.indexes[pos])
    by_index = dict(zip(map(str, run.indexes), range(n), strict=True)) if key != "id" else {}

    def find(row_id: str, where: str) -> int:
        pos = by_id.get(row_id)
        if row_id in shared:
            rows = shared[row_id]
            raise DataError(
                f"{where}: {len(rows)} rows of the results have the id {row_id!r} (indexes "
                f"{', '.join(map(str, rows[:5]))}{', ...' if len(rows) > 5 else ''}), so the "
                "label cannot say which it is. Name rows by index: a first line "
                '{"selection": ..., "key": "index"} and each row\'s index as its id (what '
                "ragmeter label writes for such a run)."
            )
        if pos is None:
            pos = by_index.get(row_id)
        if pos is None:
            shown = by_index if key == "index" else by_id
            close = difflib.get_close_matches(row_id, list(shown)[:100_000], n=3)
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            said = {
                "id": " The labels file says its ids are the rows' ids ('key': 'id').",
                "index": " The labels file says its ids are the rows' indexes ('key': 'index').",
            }.get(key or "", " Give the row's id as the results have it (its id, or its index).")
            raise DataError(
                f"{where}: row {row_id!r} is not in the results ({n} rows).{hint}{said}"
            )
        return pos

    return find


def too_few(n: int) -> str | None:
    """Why ``n`` labelled rows give no interval, or ``None`` when they are enough."""
    if n >= ppi.MIN_LABELLED_ROWS:
        return None
    return (
        f"only {n} labelled row(s): an interval needs at least {ppi.MIN_LABELLED_ROWS}, since "
        "the spread of the people's values and of the judge's errors cannot be told from fewer "
        "(and a gate would pass on luck); label more rows"
    )


def _floor(y: np.ndarray, bounds: tuple[float, float]) -> float:
    """:func:`ppi.spread_floor` for these labels: verdict-like when every one is at a bound."""
    verdicts = bool(np.isin(y, bounds).all())
    return ppi.spread_floor(int(y.size), bounds[1] - bounds[0], verdicts=verdicts)


def _estimates(
    y: np.ndarray,
    f_lab: np.ndarray,
    f_all: np.ndarray,
    refused: str | None,
    *,
    bounds: tuple[float, float],
    probability: np.ndarray | None = None,
) -> tuple[ppi.MeanEstimate | None, ...]:
    """The judge's, the labels' and the calibrated mean and the bias. Under
    :data:`ppi.MIN_LABELLED_ROWS` labelled rows the labels' and calibrated means carry no
    interval; every interval's spread is at least :func:`ppi.spread_floor`'s. With
    ``probability`` (rows drawn with unequal probabilities): :func:`ppi.active_mean`."""
    judge = ppi.judge_mean(f_all) if f_all.size else None
    if refused or y.size == 0:
        return judge, None, None, (ppi.judge_bias(y, f_lab) if y.size else None)
    floor = _floor(y, bounds)
    if probability is not None:
        alone = ppi.active_mean(y, f_lab, probability, f_all, tuning=0.0, floor=floor)
        calibrated = ppi.active_mean(y, f_lab, probability, f_all, floor=floor)
    else:
        alone = ppi.labels_mean(y, floor=floor)
        calibrated = ppi.ppi_mean(y, f_lab, f_all, floor=floor)
    if too_few(int(y.size)):
        alone = ppi.MeanEstimate(alone.mean, None, alone.n, alone.confidence, alone.tuning)
        calibrated = ppi.MeanEstimate(
            calibrated.mean, None, calibrated.n, calibrated.confidence, calibrated.tuning
        )
    return judge, alone, calibrated, ppi.judge_bias(y, f_lab)


def _budget(
    y: np.ndarray,
    f_lab: np.ndarray,
    f_all: np.ndarray,
    width: float | None,
    *,
    bounds: tuple[float, float],
    probability: np.ndarray | None = None,
) -> dict[str, Any] | None:
    """About how many labelled rows bring the calibrated interval to ``width``."""
    if width is None:
        return None
    n = int(y.size)
    out: dict[str, Any] = {"target_width": width, "labelled_rows": n}
    if n < 3:
        return {**out, "needed": None, "why": "fewer than three labelled rows to go by"}
    floor = _floor(y, bounds)
    if probability is not None:
        needed = ppi.active_labels_needed(y, f_lab, probability, f_all, width, floor=floor)
    else:
        needed = ppi.labels_needed(y, f_lab, f_all, width, floor=floor)
    if needed is None:
        why = (
            "no number of labels reaches it: the judge's own spread over the run's rows is "
            "already wider"
        )
        return {**out, "needed": None, "why": why}
    needed = max(needed, ppi.MIN_LABELLED_ROWS)
    if needed > f_all.size:
        return {
            **out,
            "needed": int(f_all.size),
            "more": max(0, int(f_all.size) - n),
            "why": "even every row of the run labelled may not reach it",
        }
    out.update(needed=int(needed), more=max(0, int(needed) - n))
    if n < ppi.MIN_LABELLED_ROWS:
        out["why"] = f"a rough figure from {n} labelled rows"
    return out


def _is_binary(values: np.ndarray) -> bool:
    return bool(values.size) and bool(np.isin(values, (0.0, 1.0)).all())


def _row_agreement(y: np.ndarray, f: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {
        "n": int(y.size),
        "spearman": ppi.spearman(y, f) if y.size else None,
        "mae": ppi.mean_absolute_error(y, f),
    }
    if _is_binary(y) and _is_binary(f):
        out["balanced_accuracy"] = ppi.balanced_accuracy(y, f)
        out["cohen_kappa"] = ppi.cohen_kappa(y, f)
    if _is_binary(y):
        out["auroc"] = ppi.auroc(y, f)
    return out


@dataclass(frozen=True, slots=True)
class _Design:
    """How the labelled rows were drawn, as the estimates need it: each labelled row's
    inclusion probability (by position) for a weighted selection, else ``None``; a reason
    estimates are refused; the target width of a label budget."""

    refused: str | None = None
    probability: Mapping[int, float] | None = None
    target_width: float | None = None

    def of(self, positions: Sequence[int]) -> np.ndarray | None:
        if self.probability is None:
            return None
        return np.array([self.probability[pos] for pos in positions], dtype=float)


def _how_weighted(design: _Design) -> str:
    if design.probability is None:
        return "PPI++ over the rows"
    return (
        "rows drawn with unequal probabilities: active inference (Zrnic and Candes 2024), each "
        "labelled row's error weighted by its inverse inclusion probability"
    )


def _row_level(
    run: ScoreTable,
    metric: str,
    labels: Sequence[RowLabel],
    find: Callable,
    design: _Design,
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
    judge, alone, calibrated, bias = _estimates(
        y, f_lab, f_all, design.refused, bounds=bounds, probability=prob
    )
    return MetricCalibration(
        metric=metric,
        level="rows",
        n_labels=sum(len(by_row[pos]) for pos in kept),
        n_rows=int(f_all.size),
        n_labelled_rows=len(kept),
        agreement=_row_agreement(y, f_lab),
        bias=bias,
        judge=judge,
        labels=alone,
        calibrated=calibrated,
        how=(
            "row-level labels: each labelled row's score (the mean of its labels) against the "
            f"judge's score of that row; {_how_weighted(design)}, over the rows with a score."
        ),
        higher_is_better=info.higher_is_better,
        bounds=bounds,
        refused=design.refused or too_few(len(kept)),
        labelled={run.key(pos): float(v) for pos, v in zip(kept, y, strict=True)},
        budget=_budget(y, f_lab, f_all, design.target_width, bounds=bounds, probability=prob),
    )


# ----------------------------------------------------------------------------- claims


def _support(evidence: Any, against: str, verdict: bool) -> float:
    """The judge's support for a verdict: the best premise's, else the verdict (0/1)."""
    key = {"contexts": "contexts", "reference": "references", "answer": "answer"}[against]
    part = evidence.get(key) if isinstance(evidence, Mapping) else None
    rests = part.get("rests_on") if isinstance(part, Mapping) else None
    supports = [r.get("support") for r in rests or () if isinstance(r, Mapping)]
    supports = [float(s) for s in supports if isinstance(s, int | float)]
    return max(supports) if supports else float(verdict)


def _claims_of(details: Mapping[str, Any], source: str) -> list[Mapping[str, Any]] | None:
    if source == "answer":
        items = details.get("answer_claims")
        return list(items) if isinstance(items, list) else None
    refs = details.get("reference_claims")
    if not isinstance(refs, list):
        return None
    return [c for ref in refs if isinstance(ref, list) for c in ref]


def _judge_verdict(claim: Mapping[str, Any], kind: Kind) -> bool | None:
    if kind[1] == "contexts":
        ctx = claim.get("contexts")
        return None if not isinstance(ctx, list) else bool(ctx)
    key = "correct" if kind == A_REF else "in_answer"
    value = claim.get(key)
    return None if not isinstance(value, bool) else value


def _row_value(
    metric: str,
    claims: Sequence[Mapping[str, Any]],
    verdicts: Callable[[int, Kind], float],
    relevant: set[int] | None,
) -> float | None:
    """``metric`` of one row, with each claim's probability of each verdict kind."""
    values = []
    for i, claim in enumerate(claims):
        if metric in ("hallucination", "self_knowledge") or metric.startswith("noise"):
            correct, in_ctx = verdicts(i, A_REF), verdicts(i, A_CTX)
            if metric == "hallucination":
                values.append((1 - correct) * (1 - in_ctx))
            elif metric == "self_knowledge":
                values.append(correct * (1 - in_ctx))
            else:
                entailing = set(claim.get("contexts") or ())
                # The judge's entailing contexts say whether a relevant one is among them;
                # where the judge found none, any relevant context of the row is assumed.
                rel = bool(entailing & relevant) if entailing else bool(relevant)
                rel_share = float(rel) if metric.endswith("_relevant") else float(not rel)
                values.append((1 - correct) * in_ctx * rel_share)
        else:
            values.append(verdicts(i, CLAIM_METRICS[metric][1][0]))
    return float(np.mean(values)) if values else None


def _claim_level(
    run: ScoreTable,
    metric: str,
    labels: Sequence[ClaimLabel],
    details: Mapping[int, Mapping[str, Any]],
    find: Callable,
    design: _Design,
    path: str,
) -> MetricCalibration | None:
    source, kinds = CLAIM_METRICS[metric]
    info = run.metric(metric)
    column = run.column(metric)
    scored = dict(zip(column.positions, column.values, strict=True))
    f_all = np.asarray(column.values, dtype=float)
    # Human values per (row, kind, claim), and the judge's verdicts and supports.
    human: dict[tuple[int, Kind, int], list[float]] = defaultdict(list)
    n_labels = 0
    for label in labels:
        kind = (label.source, label.against)
        if kind not in kinds:
            continue
        pos = find(label.id, f"{path}, line {label.line}")
        row_details = details.get(pos, {}).get(metric)
        claims = _claims_of(row_details, source) if isinstance(row_details, Mapping) else None
        if claims is None:
            continue  # the row has no score or no claim details for this metric
        if label.claim >= len(claims):
            raise DataError(
                f"{path}, line {label.line}: row {label.id!r} has {len(claims)} {source} claim(s) "
                f"(0 to {len(claims) - 1}); the label names claim {label.claim}."
            )
        n_labels += 1
        if label.value is not None:
            human[(pos, kind, label.claim)].append(label.value)
    if not human:
        return None
    # Claim-level agreement and the corrected verdict rates per kind.
    rates: dict[Kind, dict[bool, float]] = {}
    agreement: dict[str, Any] = {"level": "claims"}
    for kind in kinds:
        ys, verdicts, supports = [], [], []
        for (pos, k, i), values in human.items():
            if k != kind:
                continue
            claim = _claims_of(details[pos][metric], source)[i]  # type: ignore[index]
            verdict = _judge_verdict(claim, kind)
            if verdict is None:
                continue
            ys.append(float(np.mean(values)))
            verdicts.append(float(verdict))
            supports.append(_support(claim.get("evidence"), kind[1], verdict))
        if not ys:
            continue
        y, v = np.array(ys), np.array(verdicts)
        observed = {
            c: float(y[v == float(c)].mean()) if (v == float(c)).any() else None
            for c in (True, False)
        }
        # Smoothed toward the judge's verdict by one pseudo-claim, so that a class with few
        # labels moves little (and one with none keeps the judge's verdict).
        rates[kind] = {
            c: float((y[v == float(c)].sum() + float(c)) / ((v == float(c)).sum() + 1))
            for c in (True, False)
        }
        decided = (y != 0.5).nonzero()[0]
        yb = (y[decided] > 0.5).astype(float)
        agreement[_kind_name(kind)] = {
            "n": int(y.size),
            "balanced_accuracy": ppi.balanced_accuracy(yb, v[decided]),
            "cohen_kappa": ppi.cohen_kappa(yb, v[decided]),
            "auroc": ppi.auroc(yb, np.array(supports)[decided]),
            "people_supported_when_judge_supported": observed[True],
            "people_supported_when_judge_did_not": observed[False],
        }
    if not rates:
        return None
    rows = sorted({pos for pos, _, _ in human})
    y_rows, f_rows, keys, positions = [], [], [], []
    dropped = 0
    for pos in rows:
        if pos not in scored:
            dropped += 1
            continue
        row_details = details[pos][metric]
        claims = _claims_of(row_details, source) or []
        relevant = set(row_details.get("relevant_contexts") or ())

        def verdict_of(i: int, kind: Kind, pos: int = pos, claims: Sequence = claims) -> float:
            values = human.get((pos, kind, i))
            if values:
                return float(np.mean(values))
            judged = _judge_verdict(claims[i], kind)
            if judged is None:
                return 0.0
            return rates[kind][judged] if kind in rates else float(judged)

        value = _row_value(metric, claims, verdict_of, relevant)
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
    judge, alone, calibrated, bias = _estimates(
        y, f_lab, f_all, design.refused, bounds=bounds, probability=prob
    )
    agreement["rows"] = _row_agreement(y, f_lab)
    labelled = [k for k in kinds if k in rates]
    kept = [k for k in kinds if k not in rates]
    how = (
        f"claim-level labels ({'; '.join(map(_kind_name, labelled))}): each labelled row's "
        f"{metric} recomputed with the people's verdicts on the labelled claims and the "
        "corrected verdict rate (the share people called supported, given the judge's verdict) "
        "on the others"
        + (f", the judge's verdicts kept for {'; '.join(map(_kind_name, kept))}" if kept else "")
        + f"; {_how_weighted(design)}, against the judge's recorded scores."
    )
    notes = []
    if dropped:
        notes.append(f"{dropped} labelled row(s) without a {metric} score are left out.")
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
        how=how,
        higher_is_better=info.higher_is_better,
        bounds=bounds,
        refused=design.refused or too_few(int(y.size)),
        notes=tuple(notes),
        labelled=dict(zip(keys, y_rows, strict=True)),
        budget=_budget(y, f_lab, f_all, design.target_width, bounds=bounds, probability=prob),
    )


def _details_of(run: ScoreTable, positions: set[int]) -> dict[int, Mapping[str, Any]]:
    """Claim details of the rows at ``positions``: kept in memory, else read from the file."""
    out = {pos: run.details[pos] for pos in positions if run.details.get(pos)}
    missing = {run.indexes[pos]: pos for pos in positions if pos not in out}
    if missing and run.source is not None:
        for index, found in read_details(run.source, missing).items():
            out[missing[index]] = found
    return out


def read_run_for_labels(path: str | os.PathLike[str], labels: LabelSet) -> ScoreTable:
    """A results file read in one pass for calibration: every row's index, id and scores, and
    the claim details of the rows that claim labels name (by id or index, as the labels'
    ``key`` says) only.

    Lines are read by :func:`ragmeter.io.score_lines.read_score_lines`: the start of each
    line (index, id, scores) is checked as :func:`ragmeter.report.load.load_run` checks it
    (scores in their metrics' ranges, indexes in the input's); a row written again by
    a resumed run counts in its last version, any other repeated index is an error; a cut-off
    last line is not a row. Only the lines of labelled rows are parsed whole.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"Results file {str(path)!r} not found (or not a file).")
    info = read_sidecar(path) or {}
    wanted = {label.id for label in labels.claims}
    indexes = set()
    if labels.key != "id":
        indexes = {int(w) for w in wanted if w.isascii() and w.isdigit()}
    lines = read_score_lines(
        path,
        results_expect(info, registry=False),
        keep_ids=wanted if labels.key != "index" else (),
        keep_indexes=indexes,
        more_bounds=lambda: results_expect(None).bounds,
    )
    details = {}
    for pos, obj in lines.kept.items():
        found = obj.get("details")
        if isinstance(found, Mapping):
            details[pos] = found
    return ScoreTable(
        indexes=lines.indexes,
        ids=lines.ids,
        scores=lines.scores,
        details=details,
        info=info,
        source=path,
    )


def _deduplicated(
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
    answer, reference = _claims_of(details, "answer"), _claims_of(details, "reference")
    if answer is None and reference is None:
        return None

    def texts(items: Any) -> list[str]:
        return [str(c.get("claim", "")) if isinstance(c, Mapping) else "" for c in items or ()]

    return texts(answer), texts(reference)


def _check_claim_labels(
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


def _check_sample(run: ScoreTable, labels: LabelSet) -> None:
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


def _design(
    run: ScoreTable,
    labels: LabelSet,
    kept: Sequence[RowLabel | ClaimLabel],
    find: Callable,
    target_width: float | None,
) -> tuple[_Design, list[str]]:
    """The labelled rows' inclusion probabilities (one per row), scaled by the share of the
    drawn rows that were labelled when the file says how many were drawn."""
    refused = labels.refusal()
    if not labels.weighted or refused:
        return _Design(refused=refused, target_width=target_width), []
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
    return _Design(refused, probability, target_width), notes


def calibrate_run(
    run: Run | ScoreTable, labels: LabelSet, *, target_width: float | None = None
) -> Calibration:
    """Calibrate every metric of ``run`` that ``labels`` cover (see the module docstring).

    Raises :class:`~ragmeter.errors.DataError` naming the line for a label whose row, claim
    or metric the run does not have, whose row failed or has other claims than when it was
    labelled, that names a row id several rows share, or that contradicts another label of
    the same thing by the same labeller; and for labels made on another run. A label repeated
    word for word counts once. Labels from a non-random selection (``stratified``) give
    agreement and bias but no labels-only or calibrated mean (``refused`` says why). With
    ``target_width``, each metric's ``budget`` says about how many labelled rows bring its
    calibrated interval to that width.
    """
    if isinstance(run, Run):
        run = ScoreTable.from_run(run)
    if target_width is not None and not (
        isinstance(target_width, int | float) and target_width > 0.0
    ):
        raise DataError(f"The target width must be a number > 0. Got {target_width!r}.")
    find = _row_lookup(run, labels.key)
    _check_sample(run, labels)
    kept, repeats = _deduplicated([*labels.rows, *labels.claims], find, labels.path)
    design, notes = _design(run, labels, kept, find, target_width)
    by_metric: dict[str, list[RowLabel]] = defaultdict(list)
    claim_labels = [label for label in kept if isinstance(label, ClaimLabel)]
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
    out: dict[str, MetricCalibration] = {}
    for metric, group in by_metric.items():
        out[metric] = _row_level(run, metric, group, find, design, labels.path)
    if claim_labels:
        positions = {find(label.id, f"{labels.path}, line {label.line}") for label in claim_labels}
        details = _details_of(run, positions)
        _check_claim_labels(run, labels, claim_labels, details, find)
        for metric in CLAIM_METRICS:
            if metric in run.metrics and metric not in out:
                found = _claim_level(run, metric, claim_labels, details, find, design, labels.path)
                if found is not None:
                    out[metric] = found
        if not any(m.level == "claims" for m in out.values()):
            raise DataError(
                f"{labels.path}: the claim labels match no claim metric of the results (with "
                "its claim details). Claim labels calibrate "
                f"{', '.join(CLAIM_METRICS)}; run one of them with the labelled rows."
            )
    if repeats:
        notes.append(
            f"{repeats} label line(s) repeat an earlier one word for word (the same row or "
            "claim, labeller and label) and are counted once."
        )
    read = {kind for m in out for kind in CLAIM_METRICS.get(m, ("", ()))[1]}
    unused = Counter(
        _kind_name((c.source, c.against)) for c in claim_labels if (c.source, c.against) not in read
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
    return Calibration(out, labels.selection, labels.path, tuple(notes))


# ----------------------------------------------------------------------------- compare


def compare_calibrations(a: Any, b: Any) -> dict[str, dict[str, Any]]:
    """The calibrated difference B - A of every metric both run records calibrated
    (``evaluate(labels=...)``), keyed by metric; ``{}`` when either has no calibration.

    Paired when both runs labelled the same rows (by id, else index) for the metric, at least
    :data:`ppi.MIN_LABELLED_ROWS` of them: PPI++ on the per-row differences,
    ``Y = Y_B - Y_A`` on the rows labelled in both and ``f = f_B - f_A`` on every row both
    runs scored. Otherwise unpaired: the difference of the two calibrated means, its variance
    the sum of theirs (from each interval's half-width). A run whose labels were refused
    gives no difference.
    """
    run_a = a if isinstance(a, Run) else _as_table_run(a)
    run_b = b if isinstance(b, Run) else _as_table_run(b)
    rec_a, rec_b = run_a.info.get("calibration"), run_b.info.get("calibration")
    if not isinstance(rec_a, Mapping) or not isinstance(rec_b, Mapping):
        return {}
    ta, tb = ScoreTable.from_run(run_a), ScoreTable.from_run(run_b)
    z = ppi.z_value(0.95)
    out: dict[str, dict[str, Any]] = {}
    for metric, ea in (rec_a.get("metrics") or {}).items():
        eb = (rec_b.get("metrics") or {}).get(metric)
        if not isinstance(eb, Mapping) or not isinstance(ea, Mapping):
            continue
        ca, cb = ea.get("calibrated") or {}, eb.get("calibrated") or {}
        if ca.get("refused") or cb.get("refused") or ca.get("ci") is None or cb.get("ci") is None:
            why = ca.get("refused") or cb.get("refused") or "too few labelled rows"
            out[metric] = {"paired": False, "calibrated": {"mean": None, "ci": None}, "why": why}
            continue
        col_a, col_b = ta.column(metric), tb.column(metric)
        fa = {ta.key(p): v for p, v in zip(col_a.positions, col_a.values, strict=True)}
        fb = {tb.key(p): v for p, v in zip(col_b.positions, col_b.values, strict=True)}
        both = [k for k in fa if k in fb]
        ya, yb = ea.get("labelled_rows") or {}, eb.get("labelled_rows") or {}
        shared = [k for k in ya if k in yb and k in fa and k in fb]
        f_all = np.array([fb[k] - fa[k] for k in both])
        entry: dict[str, Any] = {
            "n_paired_rows": len(both),
            "n_shared_labels": len(shared),
            "judge": _interval(ppi.judge_mean(f_all) if f_all.size else None),
        }
        if len(shared) >= ppi.MIN_LABELLED_ROWS and f_all.size:
            y = np.array([yb[k] - ya[k] for k in shared])
            f_lab = np.array([fb[k] - fa[k] for k in shared])
            entry["paired"] = True
            # Differences of two metrics in [lo, hi] lie in a range twice as wide.
            floor = ppi.spread_floor(
                len(shared), 2.0, verdicts=bool(np.isin(y, (-1.0, 0.0, 1.0)).all())
            )
            entry["calibrated"] = _interval(ppi.ppi_mean(y, f_lab, f_all, floor=floor))
        else:
            half_a = (ca["ci"][1] - ca["ci"][0]) / 2
            half_b = (cb["ci"][1] - cb["ci"][0]) / 2
            mean = cb["mean"] - ca["mean"]
            half = float(np.hypot(half_a / z, half_b / z)) * z
            entry["paired"] = False
            entry["calibrated"] = {"mean": mean, "ci": [mean - half, mean + half]}
        entry["higher_is_better"] = bool(ea.get("higher_is_better", True))
        out[metric] = entry
    return out


def _as_table_run(obj: Any) -> Run:
    from ragmeter.report.load import as_run, load_run

    if isinstance(obj, str | os.PathLike):
        return load_run(obj, keep_details=False)
    return as_run(obj)
