"""A 95 % interval from too few rows reads "too few rows" (issue 28, item 8); one of scores
that are all equal reads "constant", as the run record's ci_method (issue 37, item 6)."""

from __future__ import annotations

from ragmeter.report.interval import CONSTANT, TOO_FEW, interval_text
from ragmeter.scoring.statistics import summarize


def test_two_rows_read_too_few_rows():
    assert interval_text(summarize([0.167, 0.167])) == TOO_FEW
    assert interval_text(summarize([0.2, 0.9])) == TOO_FEW


def test_equal_scores_read_constant_as_the_run_record_says():
    for values in ([1.0] * 10, [0.0] * 12, [0.0] * 40, [0.25] * 3):
        s = summarize(values)
        assert s.ci_method == "constant"
        assert interval_text(s) == CONSTANT


def test_enough_rows_give_numbers_and_no_rows_a_dash():
    values = [0.1, 0.4, 0.5, 0.7, 0.9, 0.3]
    s = summarize(values)
    assert interval_text(s) == f"{s.ci_low:.3f}–{s.ci_high:.3f}"
    assert interval_text(summarize([])) == "—"
