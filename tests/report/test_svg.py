from __future__ import annotations

import re

from ragmeter.report.svg import distribution_svg
from ragmeter.types import MetricSpec

INFO = MetricSpec("faithfulness", "claims", (), "")


def test_one_group_draws_every_bar_in_one_path_with_integer_count_ticks():
    svg = distribution_svg({"faithfulness": [0.1, 0.1, 0.3, 0.5, 0.9, 0.95, 1.0]}, INFO)
    (bars,) = re.findall(r'<path class="h" d="([^"]*)"', svg)
    assert bars.count("M") == 5  # five non-empty bins of 20: 0.1 twice, 0.95 with 1.0
    ticks = re.findall(r'<text x="43" y="[\d.]+" class="e">([^<]*)</text>', svg)
    assert ticks == ["0", "1", "2"]
    coords = " ".join(re.findall(r' (?:d|x|y|width|height)="([^"]*)"', svg))
    assert coords and not re.search(r"\d\.\d\d", coords)  # one decimal at most


def test_groups_draw_one_box_each_with_escaped_labels_and_their_counts():
    label = "--><script>x()</script>"
    svg = distribution_svg({label: [0.2, 0.4, 0.6], "b": [0.9], "empty": []}, INFO)
    assert "<script>" not in svg and "&lt;script&gt;x()&lt;/script&gt; (n=3)" in svg
    assert "b (n=1)" in svg and "empty (n=0)" in svg
    assert svg.count('<rect class="b"') == 2  # no box for a group without scores


def test_outliers_at_the_same_pixel_are_drawn_once():
    values = [0.5] * 800 + [0.0] * 100 + [1.0] * 100
    svg = distribution_svg({"a": values, "b": [0.5, 0.6]}, INFO)
    (dots,) = re.findall(r'<path class="f" d="([^"]*)"', svg)
    assert dots.count("M") == 2  # 0.0 and 1.0, not 500 circles


def test_a_metric_without_scores_says_so():
    svg = distribution_svg({"faithfulness": []}, INFO)
    assert svg.count("no defined scores") == 2 and 'class="h"' not in svg
