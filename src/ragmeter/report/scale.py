"""Where a score lies on its metric's scale, whatever the metric's direction: for the
report's colours, plots and "good score" tests."""

from __future__ import annotations

from ragmeter.types import MetricSpec

__all__ = ["direction", "goodness", "span"]


def span(spec: MetricSpec) -> float:
    """The width of the metric's range (1 for a range without width)."""
    width = spec.upper - spec.lower
    return width if width > 0 else 1.0


def goodness(spec: MetricSpec, value: float) -> float:
    """``value`` on a 0 (worst) .. 1 (best) scale, whatever the direction."""
    g = (value - spec.lower) / span(spec)
    return g if spec.higher_is_better else 1.0 - g


def direction(spec: MetricSpec) -> str:
    """The direction in words: "higher is better" or "lower is better"."""
    return "higher is better" if spec.higher_is_better else "lower is better"
