"""The calibrated difference of two runs that were calibrated with labels
(``evaluate(labels=...)``, ``ragmeter compare``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ragmeter.report.calibration.table import ScoreTable, score_table
from ragmeter.result import RunResult
from ragmeter.scoring.calibration import ppi
from ragmeter.scoring.calibration.estimates import (
    interval_record,
    paired_difference,
    unpaired_difference,
)

__all__ = ["compare_calibrations"]

#: A run as :func:`compare_calibrations` takes it.
AnyRun = RunResult | ScoreTable | str | os.PathLike[str]


def compare_calibrations(a: AnyRun, b: AnyRun) -> dict[str, dict[str, Any]]:
    """The calibrated difference B - A of every metric both run records calibrated
    (``evaluate(labels=...)``), keyed by metric; ``{}`` when either has no calibration.

    ``a`` and ``b`` are :class:`~ragmeter.result.RunResult` objects or results files (a
    report's ``Run`` too). Paired when both runs labelled the same rows (by id, else index)
    for the metric, at least :data:`ppi.MIN_LABELLED_ROWS` of them: PPI++ on the per-row
    differences, ``Y = Y_B - Y_A`` on the rows labelled in both and ``f = f_B - f_A`` on every
    row both runs scored. Otherwise unpaired: the difference of the two calibrated means, its
    variance the sum of theirs (from each interval's half-width). A run whose labels were
    refused gives no difference.
    """
    ta, tb = score_table(a), score_table(b)
    rec_a, rec_b = ta.info.get("calibration"), tb.info.get("calibration")
    if not isinstance(rec_a, Mapping) or not isinstance(rec_b, Mapping):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for metric, ea in (rec_a.get("metrics") or {}).items():
        eb = (rec_b.get("metrics") or {}).get(metric)
        if not isinstance(eb, Mapping) or not isinstance(ea, Mapping):
            continue
        out[metric] = _difference(ta, tb, metric, ea, eb)
    return out


def _difference(
    ta: ScoreTable, tb: ScoreTable, metric: str, ea: Mapping[str, Any], eb: Mapping[str, Any]
) -> dict[str, Any]:
    ca, cb = ea.get("calibrated") or {}, eb.get("calibrated") or {}
    if ca.get("refused") or cb.get("refused") or ca.get("ci") is None or cb.get("ci") is None:
        why = ca.get("refused") or cb.get("refused") or "too few labelled rows"
        return {"paired": False, "calibrated": {"mean": None, "ci": None}, "why": why}
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
        "judge": interval_record(ppi.judge_mean(f_all) if f_all.size else None),
    }
    if len(shared) >= ppi.MIN_LABELLED_ROWS and f_all.size:
        y = np.array([yb[k] - ya[k] for k in shared])
        f_lab = np.array([fb[k] - fa[k] for k in shared])
        entry["paired"] = True
        entry["calibrated"] = paired_difference(y, f_lab, f_all)
    else:
        entry["paired"] = False
        entry["calibrated"] = unpaired_difference(ca, cb)
    entry["higher_is_better"] = bool(ea.get("higher_is_better", True))
    return entry
