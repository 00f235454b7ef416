"""A summary's 95 % interval in words: numbers only where the rows can carry one.

Two scores give a bootstrap interval that only repeats them: those read "too few rows".
Scores that are all equal give an interval of zero width ("0.000-0.000"), which says nothing
of how far the mean could move: those read "constant", as the run record's ``ci_method``.
"""

from __future__ import annotations

from ragmeter.scoring.statistics import Summary

__all__ = ["CONSTANT", "MIN_ROWS", "TOO_FEW", "constant", "interval_text", "too_few_rows"]

#: Fewer defined scores than this give no interval worth printing.
MIN_ROWS = 3
TOO_FEW = "too few rows"
CONSTANT = "constant"


def too_few_rows(summary: Summary) -> bool:
    """Whether ``summary`` has scores but too few for its interval to mean anything."""
    if summary.count == 0:
        return False
    return summary.count < MIN_ROWS or summary.ci_low is None or summary.ci_high is None


def constant(summary: Summary) -> bool:
    """Whether ``summary``'s scores (enough of them for an interval) are all equal."""
    if summary.count < MIN_ROWS:
        return False
    return summary.ci_method == "constant" or (
        summary.min is not None and summary.min == summary.max
    )


def interval_text(summary: Summary, *, template: str = "{low:.3f}–{high:.3f}") -> str:
    """``summary``'s interval through ``template``; "too few rows", "constant" (every score
    equal), or "—" without scores."""
    if too_few_rows(summary):
        return TOO_FEW
    if constant(summary):
        return CONSTANT
    if summary.ci_low is None or summary.ci_high is None:
        return "—"
    return template.format(low=summary.ci_low, high=summary.ci_high)
