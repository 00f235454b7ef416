"""A summary's 95 % interval in words: numbers only where the rows can carry one.

Two scores give a bootstrap interval that only repeats them, and a handful of equal scores
one of zero width ("0.167-0.167"); neither says how far the mean could move. Those read
"too few rows".
"""

from __future__ import annotations

from ragmeter.scoring.statistics import Summary

__all__ = ["MIN_ROWS", "MIN_ROWS_ALL_EQUAL", "TOO_FEW", "interval_text", "too_few_rows"]

#: Fewer defined scores than this give no interval worth printing.
MIN_ROWS = 3
#: Below this many scores, all equal, a zero-width interval is shown as too few rows: by the
#: rule of three, 30 equal 0/1 scores still leave room for a true share of about 0.1.
MIN_ROWS_ALL_EQUAL = 30
TOO_FEW = "too few rows"


def too_few_rows(summary: Summary) -> bool:
    """Whether ``summary`` has scores but too few for its interval to mean anything."""
    if summary.count == 0:
        return False
    if summary.count < MIN_ROWS or summary.ci_low is None or summary.ci_high is None:
        return True
    return summary.ci_low == summary.ci_high and summary.count < MIN_ROWS_ALL_EQUAL


def interval_text(summary: Summary, *, template: str = "{low:.3f}–{high:.3f}") -> str:
    """``summary``'s interval through ``template``, "too few rows", or "—" without scores."""
    if too_few_rows(summary):
        return TOO_FEW
    if summary.ci_low is None or summary.ci_high is None:
        return "—"
    return template.format(low=summary.ci_low, high=summary.ci_high)
