"""Signs of high risk in a metric's distribution: pure functions, no I/O.

After ValidMind's reading of a score distribution, each sign is stated in words with the
numbers that raised it:

- many samples score poorly (the share on the bad side of a threshold, direction-aware);
- the mean lies far from the median (a skewed distribution: a few samples pull the mean);
- high spread (standard deviation): the system is inconsistent across samples;
- and, beyond ValidMind, many samples without a score (undefined or failed).

Thresholds live in :class:`RiskThresholds`, a frozen dataclass; change them with
``dataclasses.replace`` or :meth:`RiskThresholds.with_overrides`.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ragmeter.errors import ConfigError

__all__ = ["RiskSign", "RiskThresholds", "risk_signs"]

SignKind = Literal["poor_share", "skew", "spread", "missing"]


@dataclass(frozen=True, slots=True)
class RiskThresholds:
    """When a sign is raised. Distances are fractions of the metric's range (upper - lower).

    - ``poor_score``: a sample scores poorly when it is on the bad side of this point
      (below it when higher is better; above ``1 - poor_score`` of the range when lower
      is better). Default 0.5.
    - ``poor_share``: raise when more than this share of scored samples score poorly.
    - ``skew``: raise when ``|mean - median|`` exceeds this fraction of the range.
    - ``spread``: raise when the standard deviation exceeds this fraction of the range.
    - ``missing_share``: raise when more than this share of rows has no score.
    - ``min_samples``: no distribution sign (skew, spread) below this many scores.
    """

    poor_score: float = 0.5
    poor_share: float = 0.25
    skew: float = 0.1
    spread: float = 0.3
    missing_share: float = 0.2
    min_samples: int = 3

    def __post_init__(self) -> None:
        for name in ("poor_score", "poor_share", "skew", "spread", "missing_share"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"Risk threshold {name!r} must be a number. Got {value!r}.")
            if not 0.0 <= value <= 1.0:
                raise ConfigError(
                    f"Risk threshold {name!r} is a fraction and must be in [0, 1]. Got {value!r}."
                )
        if isinstance(self.min_samples, bool) or not isinstance(self.min_samples, int):
            raise ConfigError(
                f"Risk threshold 'min_samples' must be an integer. Got {self.min_samples!r}."
            )
        if self.min_samples < 2:
            raise ConfigError(
                f"Risk threshold 'min_samples' must be >= 2. Got {self.min_samples!r}."
            )

    def with_overrides(self, overrides: Mapping[str, float | int | str]) -> RiskThresholds:
        """A copy with ``overrides`` (values may be strings, as from a command line)."""
        names = [f.name for f in dataclasses.fields(self)]
        changes: dict[str, float | int] = {}
        for key, raw in overrides.items():
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1, cutoff=0.5)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ConfigError(
                    f"Unknown risk threshold {key!r}.{hint} Known: {', '.join(names)}."
                )
            try:
                value = int(raw) if key == "min_samples" else float(raw)
            except (TypeError, ValueError):
                raise ConfigError(
                    f"Risk threshold {key!r} must be a number. Got {raw!r}."
                ) from None
            changes[key] = value
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True)
class RiskSign:
    """One sign of risk: what was seen, the number that raised it and the threshold."""

    metric: str
    kind: SignKind
    message: str
    value: float
    threshold: float


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1e-3 and x != 0 else f"{x:.2f}"


def risk_signs(
    values: Sequence[float],
    *,
    metric: str = "score",
    higher_is_better: bool = True,
    lower: float = 0.0,
    upper: float = 1.0,
    missing: int = 0,
    thresholds: RiskThresholds | None = None,
) -> list[RiskSign]:
    """Signs of high risk in the defined scores ``values`` of one metric.

    ``missing`` counts rows without a score (undefined or failed). Returns the raised signs,
    each with a sentence quoting the numbers; an empty list when nothing looks risky.

    Examples
    --------
    >>> signs = risk_signs([0.1, 0.2, 0.9, 0.95], metric="faithfulness")
    >>> [s.kind for s in signs]
    ['poor_share', 'spread']
    """
    t = thresholds or RiskThresholds()
    arr = np.asarray(values, dtype=float)
    span = upper - lower if upper > lower else 1.0
    signs: list[RiskSign] = []
    n = int(arr.size)
    total = n + missing

    if total and missing / total > t.missing_share:
        share = missing / total
        signs.append(
            RiskSign(
                metric,
                "missing",
                f"{missing} of {total} rows ({share:.0%}) have no {metric} score (undefined or "
                f"failed), more than the {t.missing_share:.0%} threshold: the statistics describe "
                "only part of the data.",
                share,
                t.missing_share,
            )
        )
    if n == 0:
        return signs

    if higher_is_better:
        cut = lower + t.poor_score * span
        poor = int(np.count_nonzero(arr < cut))
        side = "below"
    else:
        cut = upper - t.poor_score * span
        poor = int(np.count_nonzero(arr > cut))
        side = "above"
    share = poor / n
    if share > t.poor_share:
        signs.append(
            RiskSign(
                metric,
                "poor_share",
                f"{poor} of {n} samples ({share:.0%}) have {metric} {side} {_fmt(cut)} "
                f"({'higher' if higher_is_better else 'lower'} is better), more than the "
                f"{t.poor_share:.0%} threshold.",
                share,
                t.poor_share,
            )
        )

    if n < t.min_samples:
        return signs
    mean, median = float(arr.mean()), float(np.median(arr))
    gap = abs(mean - median) / span
    if gap > t.skew:
        pulled_down = mean < median
        worse = pulled_down if higher_is_better else not pulled_down
        signs.append(
            RiskSign(
                metric,
                "skew",
                f"The mean {_fmt(mean)} is {_fmt(abs(mean - median))} "
                f"{'below' if pulled_down else 'above'} the median {_fmt(median)} "
                f"({gap:.0%} of the range, threshold {t.skew:.0%}): a few "
                f"{'poor' if worse else 'unusually good'} samples pull the mean; "
                "read the median and the worst samples.",
                gap,
                t.skew,
            )
        )
    std = float(arr.std(ddof=1))
    rel = std / span
    if rel > t.spread:
        signs.append(
            RiskSign(
                metric,
                "spread",
                f"The standard deviation {_fmt(std)} is {rel:.0%} of the range (threshold "
                f"{t.spread:.0%}): {metric} is inconsistent from sample to sample.",
                rel,
                t.spread,
            )
        )
    return signs
