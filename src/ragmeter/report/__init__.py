"""Reports of a run: statistics, risk signs, plots, HTML, comparison of two runs.

Reads a run's results (a :class:`~ragmeter.result.RunResult`: what ``evaluate`` returned, or
a results ``.jsonl`` and its ``.run.json`` record read back by
:func:`ragmeter.results.read_run`); never sees a judge. The HTML report needs no plotting
library (its plots are hand-written SVG); :func:`figure_for` (matplotlib figures for
notebooks) needs the ``report`` extra.
"""

from ragmeter.report.compare import Comparison, MetricComparison, compare_runs
from ragmeter.report.html import render_report, write_report, write_run_report
from ragmeter.report.plots import figure_for
from ragmeter.report.risk import RiskSign, RiskThresholds, rank_signs, risk_signs

__all__ = [
    "Comparison",
    "MetricComparison",
    "RiskSign",
    "RiskThresholds",
    "compare_runs",
    "figure_for",
    "rank_signs",
    "render_report",
    "risk_signs",
    "write_report",
    "write_run_report",
]
