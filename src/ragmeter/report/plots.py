"""Histogram and box plot of a metric, with matplotlib (optional extra ``report``), for
notebooks and scripts (the HTML report draws its own compact SVG: :mod:`ragmeter.report.svg`).

Figures are built with :class:`matplotlib.figure.Figure` directly, never through pyplot,
so the caller's backend and global figure list are left alone; SVG is written with text
as paths (no fonts, no data text in the markup) and maths parsing off (``$`` in a group
name stays a dollar sign).
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter.report.groups import groups as groups_of
from ragmeter.report.load import as_run
from ragmeter.report.scale import direction
from ragmeter.result import RunResult
from ragmeter.types import MetricSpec

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["figure_for", "plot_distribution", "svg_of"]

_GOOD = "#2b7a78"
_BAD = "#c0392b"
_RC = {
    "svg.fonttype": "path",
    "svg.hashsalt": "ragmeter",
    "text.parse_math": False,
    "font.size": 9,
}
_XML_HEAD = re.compile(r"^\s*<\?xml[^>]*>\s*(<!DOCTYPE[^>]*>\s*)?", re.DOTALL)
#: matplotlib labels each glyph group with an (escaped) comment holding the text; drop them.
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "Plots need matplotlib. Install it with: pip install 'ragmeter[report]'"
        ) from None
    return matplotlib


def _short(label: str, limit: int = 28) -> str:
    label = " ".join(label.split())
    return label if len(label) <= limit else label[: limit - 1] + "…"


def plot_distribution(
    groups: Mapping[str, Sequence[float]],
    info: MetricSpec,
    *,
    title: str | None = None,
) -> Figure:
    """A figure with a histogram (left) and a box plot (right) of each group's scores.

    ``groups`` maps a label to defined scores; one group gives a plain histogram.
    """
    matplotlib = _matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    with matplotlib.rc_context(_RC):
        # Constrained layout is only needed for group labels of varying width on the box
        # plot's axis; fixed margins draw a single-group figure about twice as fast.
        fig = Figure(
            figsize=(8.0, 2.6 + 0.18 * max(0, len(groups) - 3)),
            layout=None if len(groups) == 1 else "constrained",
        )
        ax_hist, ax_box = fig.subplots(1, 2, width_ratios=[3, 2])
        if len(groups) == 1:
            fig.subplots_adjust(
                left=0.08, right=0.98, bottom=0.19, top=0.78 if title else 0.88, wspace=0.18
            )
        lo, hi = info.lower, info.upper
        if not hi > lo:
            lo, hi = 0.0, 1.0
        bins = [lo + (hi - lo) * i / 20 for i in range(21)]
        labels = list(groups)
        data = [list(groups[k]) for k in labels]
        single = len(labels) == 1
        if single:
            ax_hist.hist(data[0], bins=bins, color=_GOOD, edgecolor="white", linewidth=0.5)
        else:
            for label, values in zip(labels, data, strict=True):
                if values:
                    ax_hist.hist(
                        values, bins=bins, histtype="step", linewidth=1.4, label=_short(label)
                    )
            if any(data):
                ax_hist.legend(fontsize=7, frameon=False, loc="best")
        ax_hist.set_xlim(lo, hi)
        ax_hist.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: whole samples
        ax_hist.set_xlabel(f"{info.name} ({direction(info)})")
        ax_hist.set_ylabel("samples")
        ax_hist.set_title("Histogram", fontsize=9)

        present = [(lab, vals) for lab, vals in zip(labels, data, strict=True) if vals]
        if present:
            ax_box.boxplot(
                [v for _, v in present],
                orientation="horizontal",
                widths=0.6,
                patch_artist=True,
                boxprops={"facecolor": "#d8ecea", "edgecolor": _GOOD},
                medianprops={"color": _BAD, "linewidth": 1.6},
                showmeans=True,
                meanprops={
                    "marker": "D",
                    "markerfacecolor": "white",
                    "markeredgecolor": "black",
                    "markersize": 4,
                },
            )
            ax_box.set_yticks(
                range(1, len(present) + 1),
                ["" if single else _short(lab, 20) for lab, _ in present],
            )
            ax_box.invert_yaxis()
            if single:
                ax_box.tick_params(axis="y", left=False)
        else:
            ax_box.text(0.5, 0.5, "no defined scores", ha="center", va="center")
            ax_box.set_yticks([])
            ax_hist.text(
                0.5, 0.5, "no defined scores", ha="center", va="center", transform=ax_hist.transAxes
            )
        ax_box.set_xlim(lo, hi)
        ax_box.set_xlabel(info.name)
        ax_box.set_title("Box plot (red: median, ◇: mean)", fontsize=9)
        if title:
            fig.suptitle(_short(title, 80), fontsize=10)
    return fig


def figure_for(run: Any, metric: str, *, group_by: str | None = None) -> Figure:
    """Histogram and box plot of ``metric`` for a run (a RunResult or a results path).

    With ``group_by`` (e.g. ``"metadata.category"``) each group gets its own histogram
    outline and box. Returns a matplotlib Figure (displayed by notebooks).
    """
    r: RunResult = as_run(run)
    info = r.metric(metric)
    if group_by:
        groups = {label: sub.values(metric) for label, sub in groups_of(r, group_by).items()}
    else:
        groups = {metric: r.values(metric)}
    return plot_distribution(groups, info)


def svg_of(fig: Figure) -> str:
    """The figure as an inline ``<svg>`` element (no XML declaration, doctype or comments)."""
    matplotlib = _matplotlib()
    buf = io.StringIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return _COMMENT.sub("", _XML_HEAD.sub("", buf.getvalue(), count=1))
