"""Compact inline SVG plots for the HTML report: a histogram and a box plot of a metric.

Written by hand, not through matplotlib, so that a report of 50 metrics stays small: every
style lives once in the page's stylesheet (:data:`PLOT_CSS`, classes under ``.pl``), the
histogram is one path, coordinates carry one decimal, and outliers at the same pixel are
drawn once. Count axes get integer ticks. Text from the data (group labels) is escaped.
Several groups are drawn as one box each, not as overlapping histograms.
The report needs no plotting library; :mod:`ragmeter.report.plots` draws the same figure
with matplotlib for notebooks.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np

from ragmeter.report.scale import direction
from ragmeter.types import MetricSpec

__all__ = ["PLOT_CSS", "count_ticks", "distribution_svg", "spark_svg"]

PLOT_CSS = (
    ".pl{display:block;max-width:100%;height:auto}"
    ".pl text{font:11px system-ui,sans-serif;fill:#333}.pl .t{font-weight:600}"
    ".pl .e{text-anchor:end}.pl .m{text-anchor:middle}"
    ".pl .a{stroke:#555;fill:none}.pl .gr{stroke:#e3e3e3}"
    ".pl .h{fill:#2b7a78;stroke:#fff;stroke-width:.5}"
    ".pl .b{fill:#d8ecea;stroke:#2b7a78}.pl .w{stroke:#2b7a78;fill:none}"
    ".pl .md{stroke:#c0392b;stroke-width:2}.pl .mn{fill:#fff;stroke:#000}"
    ".pl .f{fill:none;stroke:#555}"
    ".sp{vertical-align:middle}.sp .h{fill:#2b7a78}.sp .a{stroke:#9aa;fill:none}"
    ".sp .mn{stroke:#c0392b;stroke-width:1.5}"
)

_W = 760.0
_HIST = (48.0, 440.0)  # x range of the histogram panel
_BOX = (560.0, 748.0)  # x range of the box-plot panel
_TOP = 24.0
_BINS = 20


def _f(x: float) -> str:
    """A coordinate with at most one decimal, no trailing zeros."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _short(label: str, limit: int) -> str:
    label = " ".join(label.split())
    return label if len(label) <= limit else label[: limit - 1] + "…"


def count_ticks(top: int, *, most: int = 5) -> list[int]:
    """Integer ticks from 0 covering ``top`` (steps of 1, 2, 5 x 10^k), at most ``most`` + 1."""
    top = max(int(top), 1)
    magnitude = 10 ** max(0, int(math.log10(top)) - 1)
    step = magnitude
    while True:
        for factor in (1, 2, 5):
            step = factor * magnitude
            if math.ceil(top / step) <= most:
                return list(range(0, math.ceil(top / step) * step + 1, step))
        magnitude *= 10


def _text(x: float, y: float, text: str, cls: str = "", *, limit: int = 80) -> str:
    attr = f' class="{cls}"' if cls else ""
    return f'<text x="{_f(x)}" y="{_f(y)}"{attr}>{html.escape(_short(text, limit))}</text>'


def _counts(values: Sequence[float], lo: float, hi: float) -> list[int]:
    if not len(values):
        return [0] * _BINS
    counts, _ = np.histogram(np.clip(values, lo, hi), bins=_BINS, range=(lo, hi))
    return [int(c) for c in counts]


def _bars_path(counts: Sequence[int], x: float, bw: float, base: float, unit: float) -> str:
    """Every non-empty bar as one path: ``M x base V top H x+w V base Z`` per bar."""
    parts = []
    for i, c in enumerate(counts):
        if c:
            left = x + i * bw
            parts.append(
                f"M{_f(left)} {_f(base)}V{_f(base - c * unit)}H{_f(left + bw)}V{_f(base)}Z"
            )
    return "".join(parts)


def _box(values: Sequence[float], y: float, half: float, scale: float, x0: float, lo: float) -> str:
    """A box plot row: box (quartiles), whiskers (1.5 IQR, matplotlib's rule), median,
    mean (diamond) and outliers (one circle per distinct pixel)."""
    arr = np.asarray(values, dtype=float)
    q1, med, q3 = (float(v) for v in np.percentile(arr, [25, 50, 75]))
    iqr = q3 - q1
    inside = arr[(arr >= q1 - 1.5 * iqr) & (arr <= q3 + 1.5 * iqr)]
    w_lo, w_hi = (float(inside.min()), float(inside.max())) if inside.size else (q1, q3)

    def px(v: float) -> float:
        return x0 + (v - lo) * scale

    out = [
        f'<path class="w" d="M{_f(px(w_lo))} {_f(y)}H{_f(px(q1))}M{_f(px(q3))} {_f(y)}'
        f"H{_f(px(w_hi))}M{_f(px(w_lo))} {_f(y - half / 2)}v{_f(half)}"
        f'M{_f(px(w_hi))} {_f(y - half / 2)}v{_f(half)}"/>',
        f'<rect class="b" x="{_f(px(q1))}" y="{_f(y - half)}" width="{_f(px(q3) - px(q1))}" '
        f'height="{_f(2 * half)}"/>',
    ]
    mx = px(float(arr.mean()))
    out.append(f'<path class="mn" d="M{_f(mx)} {_f(y - 4)}l4 4-4 4-4-4z"/>')
    # the median last: seen across the mean's diamond when they meet (one score, ties)
    out.append(f'<path class="md" d="M{_f(px(med))} {_f(y - half)}v{_f(2 * half)}"/>')
    outliers = sorted({_f(px(v)) for v in arr[(arr < w_lo) | (arr > w_hi)]}, key=float)
    if outliers:
        dots = "".join(f"M{x} {_f(y)}m-2 0a2 2 0 1 0 4 0a2 2 0 1 0-4 0" for x in outliers)
        out.append(f'<path class="f" d="{dots}"/>')
    return "".join(out)


def _value_axis(x0: float, x1: float, base: float, lo: float, hi: float) -> list[str]:
    """The metric's axis under a panel: a line, five ticks and their values."""
    scale = (x1 - x0) / (hi - lo)
    ticks = [lo + (hi - lo) * i / 4 for i in range(5)]
    marks = "".join(f"M{_f(x0 + (t - lo) * scale)} {_f(base)}v4" for t in ticks)
    return [
        f'<path class="a" d="M{_f(x0)} {_f(base)}H{_f(x1)}{marks}"/>',
        *(_text(x0 + (t - lo) * scale, base + 15, f"{t:g}", "m") for t in ticks),
    ]


def _open(info: MetricSpec, height: float, what: str) -> str:
    return (
        f'<svg class="pl" viewBox="0 0 {_f(_W)} {_f(height)}" width="{_f(_W)}" '
        f'height="{_f(height)}" xmlns="http://www.w3.org/2000/svg" role="img">'
        f"<title>{html.escape(info.name)}: {what}</title>"
    )


def distribution_svg(groups: Mapping[str, Sequence[float]], info: MetricSpec) -> str:
    """An ``<svg>`` of a metric's scores: for one group a histogram (left) and a box plot
    (right); for several, one box per group (labels on the left), easier to compare than
    overlapping histograms. Styles come from :data:`PLOT_CSS`.
    """
    lo, hi = (info.lower, info.upper) if info.upper > info.lower else (0.0, 1.0)
    if len(groups) != 1:
        return _boxes_svg(groups, info, lo, hi)
    (values,) = (list(v) for v in groups.values())
    plot_h = 110.0
    base = _TOP + plot_h
    x0, x1 = _HIST
    bw = (x1 - x0) / _BINS
    counts = _counts(values, lo, hi)
    yticks = count_ticks(max(counts))
    unit = plot_h / yticks[-1]
    grid = "".join(f"M{_f(x0)} {_f(base - t * unit)}H{_f(x1)}" for t in yticks[1:])
    out = [
        _open(info, base + 40, "histogram and box plot"),
        f'<path class="gr" d="{grid}"/>',
        *(_text(x0 - 5, base - t * unit + 4, str(t), "e") for t in yticks),
        _text(x0, _TOP - 8, "Histogram: samples per bin", "t"),
        f'<path class="a" d="M{_f(x0)} {_f(_TOP)}V{_f(base)}"/>',
        *_value_axis(x0, x1, base, lo, hi),
        _text((x0 + x1) / 2, base + 32, f"{info.name} ({direction(info)})", "m"),
    ]
    if values:
        out.append(f'<path class="h" d="{_bars_path(counts, x0, bw, base, unit)}"/>')
    b0, b1 = _BOX
    out.append(_text(b0, _TOP - 8, "Box plot (red: median, ◇: mean)", "t"))
    out.extend(_value_axis(b0, b1, base, lo, hi))
    if values:
        out.append(_box(values, _TOP + plot_h / 2, 10.0, (b1 - b0) / (hi - lo), b0, lo))
    else:
        out.append(_text((x0 + x1) / 2, _TOP + plot_h / 2, "no defined scores", "m"))
        out.append(_text((b0 + b1) / 2, _TOP + plot_h / 2, "no defined scores", "m"))
    out.append("</svg>")
    return "".join(out)


def _boxes_svg(
    groups: Mapping[str, Sequence[float]], info: MetricSpec, lo: float, hi: float
) -> str:
    """One box per group, labelled with the group and its number of scores."""
    row_h = 18.0
    x0, x1 = 200.0, _W - 12.0
    base = _TOP + row_h * max(1, len(groups))
    out = [
        _open(info, base + 40, "box plot by group"),
        _text(x0, _TOP - 8, "Box plot by group (red: median, ◇: mean; n: scores)", "t"),
        *_value_axis(x0, x1, base, lo, hi),
        _text((x0 + x1) / 2, base + 32, f"{info.name} ({direction(info)})", "m"),
    ]
    scale = (x1 - x0) / (hi - lo)
    for i, (label, values) in enumerate(groups.items()):
        y = _TOP + row_h * (i + 0.5)
        out.append(_text(x0 - 8, y + 4, f"{_short(label, 24)} (n={len(values)})", "e", limit=40))
        if values:
            out.append(_box(list(values), y, row_h * 0.3, scale, x0, lo))
    out.append("</svg>")
    return "".join(out)


#: Size and bins of the small histogram beside each metric in the report's overview.
_SPARK_W, _SPARK_H, _SPARK_BINS = 64.0, 16.0, 10


def spark_svg(values: Sequence[float], info: MetricSpec) -> str:
    """A small histogram of a metric's scores (10 bins over its range, the bad end on the
    left whatever the direction, a red tick at the mean), for the overview; ``""`` with no
    score. Its title says what it shows."""
    if not len(values):
        return ""
    lo, hi = (info.lower, info.upper) if info.upper > info.lower else (0.0, 1.0)
    arr = np.clip(np.asarray(values, dtype=float), lo, hi)
    if not info.higher_is_better:
        arr = hi - (arr - lo)  # bad on the left
    counts, _ = np.histogram(arr, bins=_SPARK_BINS, range=(lo, hi))
    top = max(int(counts.max()), 1)
    bw = _SPARK_W / _SPARK_BINS
    unit = (_SPARK_H - 1) / top
    bars = "".join(
        f"M{_f(i * bw)} {_f(_SPARK_H)}v-{_f(max(c * unit, 1.0))}h{_f(bw - 1)}V{_f(_SPARK_H)}Z"
        for i, c in enumerate(int(c) for c in counts)
        if c
    )
    mean = _f((float(arr.mean()) - lo) / (hi - lo) * _SPARK_W)
    side = (
        "worst on the left"
        if info.higher_is_better
        else "lower is better, flipped: worst on the left"
    )
    return (
        f'<svg class="sp" viewBox="0 0 {_f(_SPARK_W)} {_f(_SPARK_H)}" width="{_f(_SPARK_W)}" '
        f'height="{_f(_SPARK_H)}" xmlns="http://www.w3.org/2000/svg" role="img">'
        f"<title>{html.escape(info.name)}: {len(values)} scores in 10 bins from {lo:g} to "
        f"{hi:g} ({side}); red: the mean</title>"
        f'<path class="a" d="M0 {_f(_SPARK_H - 0.5)}H{_f(_SPARK_W)}"/>'
        f'<path class="h" d="{bars}"/><path class="mn" d="M{mean} 0V{_f(_SPARK_H)}"/></svg>'
    )
