from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure

from ragmeter.errors import DataError
from ragmeter.report.plots import figure_for, svg_of
from ragmeter.results import read_run, run_from_rows


def test_figure_for_returns_histogram_and_box_plot(results_file):
    fig = figure_for(results_file, "faithfulness")
    assert isinstance(fig, Figure)
    hist, box = fig.axes
    heights = [p.get_height() for p in hist.patches]
    assert len(heights) == 20 and sum(heights) == 12  # every defined score is binned once
    assert hist.get_xlim() == (0.0, 1.0)
    assert "higher is better" in hist.get_xlabel()
    assert box.lines  # whiskers, caps, median, mean marker


def test_count_axis_has_integer_ticks(results_file):
    fig = figure_for(results_file, "faithfulness")
    fig.canvas.draw()
    ticks = [t for t in fig.axes[0].get_yticks() if 0 <= t <= fig.axes[0].get_ylim()[1]]
    assert ticks and all(float(t).is_integer() for t in ticks)


def test_histogram_counts_only_defined_scores(results_file):
    fig = figure_for(read_run(results_file), "context_precision")
    assert sum(p.get_height() for p in fig.axes[0].patches) == 9


def test_grouped_figure_has_one_box_per_group(results_file):
    fig = figure_for(results_file, "noise_sensitivity", group_by="metadata.category")
    labels = [t.get_text() for t in fig.axes[1].get_yticklabels()]
    assert sorted(labels) == ["<i>cat-a</i>", "plain"]
    assert "lower is better" in fig.axes[0].get_xlabel()


def test_figure_for_accepts_result_like_objects():
    result = SimpleNamespace(
        rows=[{"index": i, "id": None, "scores": {"m": i / 4}} for i in range(5)], info={}
    )
    assert isinstance(figure_for(result, "m"), Figure)


def test_unknown_metric_is_a_data_error(results_file):
    with pytest.raises(DataError, match="not in this run"):
        figure_for(results_file, "nope")


def test_svg_is_inline_with_paths_and_no_data_text():
    rows = [
        {"index": i, "scores": {"m": i / 9}, "metadata": {"g": "--><script>x()</script>$a$"}}
        for i in range(10)
    ]
    svg = svg_of(figure_for(run_from_rows(rows, {}), "m", group_by="metadata.g"))
    assert svg.startswith("<svg")
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<!--" not in svg
    assert "script" not in svg and "<text" not in svg  # text drawn as glyph paths
    assert len(re.findall(r"<path ", svg)) > 20


def test_a_metric_without_defined_scores_still_plots():
    run = run_from_rows([{"index": 0, "scores": {"m": None}, "reasons": {"m": "empty"}}], {})
    svg = svg_of(figure_for(run, "m"))
    assert "<path" in svg
