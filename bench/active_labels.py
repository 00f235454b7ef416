"""Active labelling against uniform labelling, on simulated data sets built from human labels
and the offline judge's live verdicts (issue 38's targets, every one printed in one run).

Data: LFQA (600 answers with human sentence labels; a row's human value is the mean over its
sentences) and WiCE (1,063 held-out claims, supported or not), each run through
``ragmeter.evaluate`` with the offline judge (faithfulness with its claim details; cached by
``bench/active_labels_data.py`` under a key of the judge's source, so a changed judge is run
again). Each row gives ``(Y, f, u)``: the people's value, the judge's score, and the row's
uncertainty as ``ragmeter label --strategy uncertainty`` computes it
(:func:`ragmeter.report.labels.sample.row_uncertainty`).

A simulated data set draws ``--rows`` rows with replacement from one set's rows; its truth is
the people's mean over those rows. On each:

- *uniform*: rows labelled with probability ``n / N`` each; *active*: with the probabilities
  ``ragmeter label --strategy uncertainty`` gives
  (:func:`ragmeter.scoring.calibration.ppi.inclusion_probabilities`, 20% spread evenly); both
  estimated by :func:`ragmeter.scoring.calibration.ppi.active_mean` (the estimator
  ``calibrate`` uses for an uncertainty sample), so the width ratio compares the sampling
  alone. Also printed: uniform samples of exactly ``n`` rows through PPI++
  (:func:`ragmeter.scoring.calibration.ppi.ppi_mean`, what ``calibrate`` uses for a uniform
  sample).
- *budget*: from a pilot of ``--pilot`` labels,
  :func:`ragmeter.scoring.calibration.ppi.labels_needed` (uniform, PPI++) or
  :func:`ragmeter.scoring.calibration.ppi.active_labels_needed` (active) predicts the
  labels needed for an interval of the target width; labelling goes on (more rows of the same
  random order, or a larger budget with the same random draws) until the interval is that
  narrow, and the prediction counts as right within 25% of the labels that took.

Run::

    PYTHONPATH=src .venv/bin/python bench/active_labels.py            # about 10 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from active_labels_data import judge_key, results

from ragmeter.report.labels.sample import UNIFORM_SHARE, row_uncertainty
from ragmeter.results import read_run
from ragmeter.scoring.calibration import ppi

#: Target widths of the budget test, per set (about 200-300 labels needed with this judge).
WIDTHS = {"lfqa": 0.05, "wice": 0.1}


def rows_of(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    path = results(name)
    human = json.loads((path.parent / "human.json").read_text())
    run = read_run(path)
    y, f, u = [], [], []
    for row in run.rows:
        score = row.scores.get("faithfulness")
        if score is None:
            continue
        y.append(human[row.id])
        f.append(score)
        u.append(row_uncertainty(row.details.get("faithfulness"), score))
    return np.array(y), np.array(f), np.array(u)


def floor(y: np.ndarray) -> float:
    """The spread floor ``calibrate`` applies (``ppi.spread_floor``) to these labels."""
    return ppi.spread_floor(int(y.size), 1.0, verdicts=bool(np.isin(y, (0.0, 1.0)).all()))


def compare(name, y, f, u, *, rows, budgets, datasets, seed) -> dict:
    rng = np.random.default_rng(seed)
    out = {"covered": [], "uniform_covered": [], "ratio": [], "srs_covered": [], "srs_ratio": []}
    labels = {"active": [], "uniform": []}
    for k in range(datasets):
        n = budgets[k % len(budgets)]
        pick = rng.integers(0, y.size, rows)
        yy, ff, uu = y[pick], f[pick], u[pick]
        truth = float(yy.mean())
        p = ppi.inclusion_probabilities(uu, n, uniform_share=UNIFORM_SHARE)
        drawn = rng.random(rows) < p
        act = ppi.active_mean(yy[drawn], ff[drawn], p[drawn], ff, floor=floor(yy[drawn]))
        pu = np.full(rows, n / rows)
        drawn_u = rng.random(rows) < pu
        uni = ppi.active_mean(yy[drawn_u], ff[drawn_u], pu[drawn_u], ff, floor=floor(yy[drawn_u]))
        srs = rng.choice(rows, n, replace=False)
        ppp = ppi.ppi_mean(yy[srs], ff[srs], ff, floor=floor(yy[srs]))
        out["covered"].append(act.ci[0] <= truth <= act.ci[1])
        out["uniform_covered"].append(uni.ci[0] <= truth <= uni.ci[1])
        out["srs_covered"].append(ppp.ci[0] <= truth <= ppp.ci[1])
        out["ratio"].append(act.width / uni.width)
        out["srs_ratio"].append(act.width / ppp.width)
        labels["active"].append(int(drawn.sum()))
        labels["uniform"].append(int(drawn_u.sum()))
    ratio = np.array(out["ratio"])
    by_budget = {
        n: float(np.mean(ratio[[k % len(budgets) == j for k in range(datasets)]]))
        for j, n in enumerate(budgets)
    }
    print(f"## {name}: {datasets} simulated data sets of {rows} rows, budgets {budgets}")
    print(
        f"- judge-people correlation {np.corrcoef(y, f)[0, 1]:.3f}; correlation of the row "
        f"uncertainty with the judge's absolute error {np.corrcoef(u, np.abs(y - f))[0, 1]:.3f}"
    )
    print(
        f"- coverage at nominal 0.95: active {np.mean(out['covered']):.3f} (target [0.93, 0.97]); "
        f"uniform, same estimator {np.mean(out['uniform_covered']):.3f}; uniform n rows, PPI++ "
        f"{np.mean(out['srs_covered']):.3f}"
    )
    print(
        f"- mean labels drawn: active {np.mean(labels['active']):.1f}, uniform "
        f"{np.mean(labels['uniform']):.1f}"
    )
    print(
        f"- width active / uniform (same estimator): mean {ratio.mean():.3f} "
        f"({1 - ratio.mean():+.1%} narrower; target >= 25% narrower), by budget "
        + ", ".join(f"{n}: {r:.3f}" for n, r in by_budget.items())
        + f"; share of data sets where active is wider by > 5%: {np.mean(ratio > 1.05):.3f}"
        f" (target: never on average: worst budget {max(by_budget.values()):.3f})"
    )
    print(
        f"- width active / uniform n rows through PPI++ (calibrate's uniform path): mean "
        f"{np.mean(out['srs_ratio']):.3f}"
    )
    return {"coverage": float(np.mean(out["covered"])), "ratio": float(ratio.mean())}


def oracle(name, y, f, *, rows, n, datasets, seed) -> None:
    """The same comparison with the true error as the uncertainty: the most any uncertainty
    signal could give on this data."""
    rng = np.random.default_rng(seed)
    ratios = []
    for _ in range(datasets):
        pick = rng.integers(0, y.size, rows)
        yy, ff = y[pick], f[pick]
        p = ppi.inclusion_probabilities(np.abs(yy - ff) + 0.02, n, uniform_share=UNIFORM_SHARE)
        drawn = rng.random(rows) < p
        pu = np.full(rows, n / rows)
        drawn_u = rng.random(rows) < pu
        act = ppi.active_mean(yy[drawn], ff[drawn], p[drawn], ff)
        uni = ppi.active_mean(yy[drawn_u], ff[drawn_u], pu[drawn_u], ff)
        ratios.append(act.width / uni.width)
    print(
        f"- with the true error as the uncertainty (an oracle, {datasets} data sets, n={n}): "
        f"width ratio {np.mean(ratios):.3f}"
    )


def budget(name, y, f, u, *, rows, pilot, width, runs, seed, active: bool) -> float:
    rng = np.random.default_rng(seed)
    right = []
    errors = []
    for _ in range(runs):
        pick = rng.integers(0, y.size, rows)
        yy, ff, uu = y[pick], f[pick], u[pick]
        if not active:
            order = rng.permutation(rows)
            a = order[:pilot]
            predicted = ppi.labels_needed(yy[a], ff[a], ff, width, floor=floor(yy[a]))
            actual = None
            for n in range(pilot, rows + 1, 5):
                s = order[:n]
                if ppi.ppi_mean(yy[s], ff[s], ff, floor=floor(yy[s])).width <= width:
                    actual = n
                    break
        else:
            draws = rng.random(rows)
            shape = ppi.inclusion_probabilities(uu, pilot, uniform_share=UNIFORM_SHARE)
            drawn = draws < shape
            predicted = ppi.active_labels_needed(
                yy[drawn], ff[drawn], shape[drawn], ff, width, floor=floor(yy[drawn])
            )
            actual = None
            for m in range(pilot, rows + 1, 10):
                p = ppi.inclusion_probabilities(uu, m, uniform_share=UNIFORM_SHARE)
                d = draws < p
                est = ppi.active_mean(yy[d], ff[d], p[d], ff, floor=floor(yy[d]))
                if est.width <= width:
                    actual = m
                    break
        if predicted is None or actual is None:
            right.append(False)
            continue
        errors.append(predicted / actual - 1)
        right.append(abs(predicted - actual) <= 0.25 * actual)
    share = float(np.mean(right))
    print(
        f"- budget ({'active' if active else 'uniform, PPI++'}), target width {width}, pilot "
        f"{pilot} labels, {runs} runs: prediction within 25% of the labels needed in "
        f"{share:.1%} (target >= 80%); median prediction / needed - 1 "
        f"{np.median(errors):+.1%}, 10th-90th percentile {np.percentile(errors, 10):+.1%} to "
        f"{np.percentile(errors, 90):+.1%}"
    )
    return share


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=int, default=1000, help="per set (>= 1,000)")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--budget-runs", type=int, default=300)
    parser.add_argument("--pilot", type=int, default=100)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    print(f"offline judge source key {judge_key()} (bench/active_labels_data.py)")
    for k, name in enumerate(("lfqa", "wice")):
        y, f, u = rows_of(name)
        print(f"\n{name}: {y.size} rows; people's mean {y.mean():.4f}, judge's {f.mean():.4f}")
        compare(name, y, f, u, rows=args.rows, budgets=(100, 200), datasets=args.datasets, seed=k)
        oracle(name, y, f, rows=args.rows, n=100, datasets=200, seed=10 + k)
        for active in (False, True):
            budget(
                name,
                y,
                f,
                u,
                rows=args.rows,
                pilot=args.pilot,
                width=WIDTHS[name],
                runs=args.budget_runs,
                seed=20 + k,
                active=active,
            )
    print(
        f"\n({time.perf_counter() - t0:.0f} s; browser test of the page with reference "
        "verdicts: tests/report/labels/test_page_browser.py)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
