"""Signs of risk in a metric's scores: pure functions, no I/O.

After ValidMind's reading of a score distribution, each sign is stated in words with the
numbers that raised it and the number of rows it rests on:

- ``missing``: many rows have no score (failed or undefined);
- ``poor_share``: many samples score poorly (on the bad side of the metric's poor cut,
  direction-aware);
- ``skew``: the mean lies far from the median (a few samples pull the mean);
- ``spread``: a high standard deviation (the system is inconsistent across samples).

A sign needs at least ``min_samples`` rows (10 by default): no "1 of 1 (100%)" sign on a
small group. A shape sign (skew, else spread; one per metric) needs twice as many scores, and
none is raised for a metric that already has a poor-share sign (the poor samples are what its
shape shows) or whose scores all sit at its bounds (0 or 1: exact match, hit rate), where
the shape follows from the mean.

Two signs read the claim metrics' details rather than their scores:

- ``uncertain``: many of a claim metric's verdicts were uncertain (the judge's support lay
  in its uncertain band; :func:`uncertain_sign`, over :data:`UNCERTAIN_SHARE`);
- ``weak``: many of a claim metric's good scores rest on an uncertain verdict or a weakly
  supported entailed one (:func:`weak_sign`, over :data:`WEAK_SHARE`;
  :mod:`ragmeter.report.checks` has the rule);
- ``short_reference``: many rows' references are much shorter than their answers, so
  RAGChecker's reference-based metrics count correct details as incorrect
  (:func:`short_reference_sign`, over :data:`SHORT_REFERENCE_SHARE`;
  :mod:`ragmeter.scoring.reference_length` has the rule).

Thresholds live in :class:`RiskThresholds`, with per-metric defaults
(:data:`DEFAULT_PER_METRIC`) that fit each metric's usual values; a per-metric entry wins over
the global value. :func:`rank_signs` merges the signs of several metrics that point at the
same rows with the same numbers, and orders signs by importance: rows that failed, then poor
shares, then undefined rows, then skew and spread, each by how far past its threshold.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ragmeter.errors import ConfigError

__all__ = [
    "DEFAULT_PER_METRIC",
    "SHORT_REFERENCE_SHARE",
    "UNCERTAIN_SHARE",
    "WEAK_SHARE",
    "RiskSign",
    "RiskThresholds",
    "rank_signs",
    "risk_signs",
    "short_reference_sign",
    "uncertain_sign",
    "weak_sign",
]

SignKind = Literal[
    "missing", "poor_share", "skew", "spread", "uncertain", "weak", "short_reference"
]

#: A claim metric's uncertain verdicts raise a sign past this share of its verdicts.
UNCERTAIN_SHARE = 0.2
#: Good scores resting on doubtful verdicts raise a sign past this share of the good scores.
WEAK_SHARE = 0.2
#: Rows whose references are much shorter than their answers raise a sign past this share.
SHORT_REFERENCE_SHARE = 0.2

#: The fields a threshold (global or per metric) can set.
_FRACTIONS = ("poor_score", "poor_share", "skew", "spread", "missing_share")
_FIELDS = (*_FRACTIONS, "min_samples")

#: Per-metric defaults, keyed by a metric name or a name prefix (``context_relevance`` also
#: covers ``context_relevance_at_3``). Each entry says why in its comment; README lists them.
DEFAULT_PER_METRIC: Mapping[str, Mapping[str, float]] = {
    # exp(-mean token cross-entropy) of the question given a context: good contexts score
    # 0.1-0.6, so a flat 0.5 would call most samples poor.
    "context_relevance": {"poor_score": 0.1},
    # Generated answers rarely equal a reference word for word: a share of misses is normal.
    "exact_match": {"poor_share": 1.0},
    # Precision against a short reference falls with a longer, correct answer.
    "token_precision": {"poor_score": 0.2},
    "new_token_precision": {"poor_score": 0.2},
    "token_f1": {"poor_score": 0.2},
    "new_token_f1": {"poor_score": 0.2},
    # An answer need not repeat the question's words ("Paris." answers "capital of France?").
    "answer_token_recall": {"poor_score": 0.2},
    # At most (reference ids) / k: with one relevant id, precision_at_5 is 0.2 at best.
    "precision_at": {"poor_score": 0.1},
    # Share of contexts entailing a reference claim: with k contexts, one relevant, 1/k is normal.
    "context_claim_precision": {"poor_score": 0.2},
    # context_precision (Ragas' average precision over the ranked contexts) needs no entry:
    # one useful context ranked first scores 1.0 however many others follow, so the flat 0.5
    # calls a sample poor when no useful context is in the top two, a ranking problem.
}


def _number(label: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"Risk threshold {label!r} must be a number. Got {value!r}.")
    if not 0.0 <= value <= 1.0:
        raise ConfigError(
            f"Risk threshold {label!r} is a fraction and must be in [0, 1]. Got {value!r}."
        )
    return float(value)


def _count(label: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"Risk threshold {label!r} must be an integer. Got {value!r}.")
    if value < 1:
        raise ConfigError(f"Risk threshold {label!r} must be >= 1. Got {value!r}.")
    return value


def _check(label: str, name: str, value: object) -> float | int:
    return _count(label, value) if name == "min_samples" else _number(label, value)


def _field_name(key: str, label: str) -> str:
    if key in _FIELDS:
        return key
    close = difflib.get_close_matches(key, _FIELDS, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"Unknown risk threshold {label!r}.{hint} Known: {', '.join(_FIELDS)}.")


@dataclass(frozen=True, slots=True)
class RiskThresholds:
    """When a sign is raised. Distances are fractions of the metric's range (upper - lower).

    - ``poor_score``: a sample scores poorly when its goodness (0 worst .. 1 best, whatever
      the direction) is below this: below 0.5 when higher is better, above 0.5 when lower
      is better, on a [0, 1] metric. Default 0.5.
    - ``poor_share``: raise when more than this share of scored samples score poorly.
    - ``skew``: raise when ``|mean - median|`` exceeds this fraction of the range.
    - ``spread``: raise when the standard deviation exceeds this fraction of the range.
    - ``missing_share``: raise when more than this share of rows has no score.
    - ``min_samples``: no sign rests on fewer rows than this (scored rows, or all rows for
      ``missing``); a shape sign (skew, spread) needs twice as many. Default 10.
    - ``per_metric``: ``{metric or prefix: {field: value}}``, layered over the global
      values; starts from :data:`DEFAULT_PER_METRIC` (pass ``per_metric={}`` for flat
      thresholds).

    Change them with ``dataclasses.replace`` or :meth:`with_overrides`
    (``{"poor_share": 0.1, "context_relevance.poor_score": 0.05}``).
    """

    poor_score: float = 0.5
    poor_share: float = 0.25
    skew: float = 0.1
    spread: float = 0.3
    missing_share: float = 0.2
    min_samples: int = 10
    per_metric: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_PER_METRIC.items()}
    )

    def __post_init__(self) -> None:
        for name in _FIELDS:
            _check(name, name, getattr(self, name))
        if not isinstance(self.per_metric, Mapping):
            raise ConfigError(
                "Risk thresholds 'per_metric' must map a metric name to {field: value}. "
                f"Got {type(self.per_metric).__name__}."
            )
        for metric, entry in self.per_metric.items():
            if not isinstance(entry, Mapping):
                raise ConfigError(
                    f"Risk thresholds for {metric!r} must be a mapping of field -> value "
                    f"(e.g. {{'poor_score': 0.1}}). Got {entry!r}."
                )
            for key, value in entry.items():
                label = f"{metric}.{key}"
                _check(label, _field_name(str(key), label), value)

    def for_metric(self, metric: str) -> RiskThresholds:
        """Flat thresholds for ``metric``: its entry (exact name, else longest prefix) applied."""
        key = self.entry_for(metric)
        changes = dict(self.per_metric[key]) if key is not None else {}
        return dataclasses.replace(self, per_metric={}, **changes)

    def entry_for(self, metric: str) -> str | None:
        """The ``per_metric`` key that applies to ``metric``, or ``None``."""
        if metric in self.per_metric:
            return metric
        prefixes = [k for k in self.per_metric if metric.startswith(f"{k}_")]
        return max(prefixes, key=len) if prefixes else None

    def with_overrides(self, overrides: Mapping[str, float | int | str]) -> RiskThresholds:
        """A copy with ``overrides``: ``name`` or ``metric.name`` -> value (strings allowed,
        as from a command line)."""
        changes: dict[str, float | int] = {}
        per_metric = {k: dict(v) for k, v in self.per_metric.items()}
        for raw_key, raw in overrides.items():
            metric, _, key = str(raw_key).rpartition(".")
            name = _field_name(key, str(raw_key))
            try:
                value: float | int = int(raw) if name == "min_samples" else float(raw)
            except (TypeError, ValueError):
                raise ConfigError(
                    f"Risk threshold {raw_key!r} must be a number. Got {raw!r}."
                ) from None
            if metric:
                per_metric.setdefault(metric, {})[name] = value
            else:
                changes[name] = value
        return dataclasses.replace(self, per_metric=per_metric, **changes)


@dataclass(frozen=True, slots=True)
class RiskSign:
    """One sign of risk: what was seen, the number that raised it and the threshold.

    ``n`` is how many rows the sign rests on; ``rows`` the indices of the rows it points at
    (poor or unscored rows; empty for skew and spread). ``template`` is the sentence with
    ``{metric}`` where the metric goes, followed by its ``detail`` (``below 0.50``);
    ``others`` holds the ``(metric, detail)`` of metrics merged in by :func:`rank_signs`.
    """

    metric: str
    kind: SignKind
    template: str
    value: float
    threshold: float
    n: int
    rows: tuple[int, ...] = ()
    importance: float = 0.0
    detail: str = ""
    others: tuple[tuple[str, str], ...] = ()

    @property
    def metrics(self) -> tuple[str, ...]:
        """Every metric the sign was seen on."""
        return (self.metric, *(name for name, _ in self.others))

    @property
    def message(self) -> str:
        """The sentence, naming the metrics (grouped by their detail)."""
        by_detail: dict[str, list[str]] = {}
        for name, detail in ((self.metric, self.detail), *self.others):
            by_detail.setdefault(detail, []).append(name)
        who = ", ".join(
            f"{_join(names)} {detail}" if detail else _join(names)
            for detail, names in by_detail.items()
        )
        return self.template.replace("{metric}", who)


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


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
    failed: int = 0,
    thresholds: RiskThresholds | None = None,
    indices: Sequence[int] | None = None,
    missing_indices: Sequence[int] = (),
) -> list[RiskSign]:
    """Signs of risk in the defined scores ``values`` of one metric.

    ``missing`` counts rows without a score (undefined or failed), ``failed`` those of them
    that failed. ``indices`` (aligned with ``values``) and ``missing_indices`` name the rows,
    so that signs can say which rows they point at. Returns the raised signs, each with a
    sentence quoting the numbers and the rows it rests on; an empty list when nothing looks
    risky or there are too few rows to tell.

    Examples
    --------
    >>> signs = risk_signs([0.1, 0.2, 0.9, 0.95] * 3, metric="faithfulness")
    >>> [s.kind for s in signs]
    ['poor_share']
    >>> signs[0].message.split(",")[0]
    '6 of 12 samples (50%) have faithfulness below 0.50'
    """
    t = (thresholds or RiskThresholds()).for_metric(metric)
    arr = np.asarray(values, dtype=float)
    if indices is not None and len(indices) != arr.size:
        raise ValueError(f"'indices' has {len(indices)} items for {arr.size} values.")
    idx = np.arange(arr.size) if indices is None else np.asarray(indices, dtype=int)
    span = upper - lower if upper > lower else 1.0
    n = int(arr.size)
    total = n + missing
    signs: list[RiskSign] = []
    if total >= t.min_samples and missing / total > t.missing_share:
        signs.append(_missing_sign(metric, t, missing, failed, total, missing_indices))
    if n < t.min_samples:
        return signs
    poor = _poor_sign(metric, t, arr, idx, higher_is_better, lower, upper, span)
    if poor is not None:
        return [*signs, poor]  # the poor samples are what a skew or spread would show
    if n < 2 * t.min_samples or np.isin(arr, (lower, upper)).all():
        return signs  # too few for a shape; 0/1 scores: the shape follows from the mean
    shape = _shape_sign(metric, t, arr, higher_is_better, span)
    return signs if shape is None else [*signs, shape]


def _missing_sign(
    metric: str,
    t: RiskThresholds,
    missing: int,
    failed: int,
    total: int,
    missing_indices: Sequence[int],
) -> RiskSign:
    share = missing / total
    what = f"{failed} failed, {missing - failed} undefined"
    return RiskSign(
        metric,
        "missing",
        f"{{metric}}: {missing} of {total} rows ({share:.0%}) have no score ({what}), "
        f"more than the {t.missing_share:.0%} threshold: the statistics describe "
        "only part of the data.",
        share,
        t.missing_share,
        total,
        tuple(sorted(missing_indices)),
        (4.0 if failed else 2.0) + share,
    )


def _poor_sign(
    metric: str,
    t: RiskThresholds,
    arr: np.ndarray,
    idx: np.ndarray,
    higher_is_better: bool,
    lower: float,
    upper: float,
    span: float,
) -> RiskSign | None:
    """The sign of many poor samples, or None."""
    n = int(arr.size)
    if higher_is_better:
        cut = lower + t.poor_score * span
        is_poor = arr < cut
        detail = f"below {_fmt(cut)}"
    else:
        cut = upper - t.poor_score * span
        is_poor = arr > cut
        detail = f"above {_fmt(cut)} (lower is better)"
    poor = int(np.count_nonzero(is_poor))
    share = poor / n
    if share <= t.poor_share:
        return None
    return RiskSign(
        metric,
        "poor_share",
        f"{poor} of {n} samples ({share:.0%}) have {{metric}}, more than the "
        f"{t.poor_share:.0%} threshold.",
        share,
        t.poor_share,
        n,
        tuple(sorted(int(i) for i in idx[is_poor])),
        3.0 + share,
        detail,
    )


def _shape_sign(
    metric: str, t: RiskThresholds, arr: np.ndarray, higher_is_better: bool, span: float
) -> RiskSign | None:
    """One shape sign: a skew (which says which way), else a spread; or None."""
    n = int(arr.size)
    mean, median = float(arr.mean()), float(np.median(arr))
    gap = abs(mean - median) / span
    if gap > t.skew:
        pulled_down = mean < median
        worse = pulled_down if higher_is_better else not pulled_down
        return RiskSign(
            metric,
            "skew",
            f"{{metric}}: the mean {_fmt(mean)} of {n} samples is "
            f"{_fmt(abs(mean - median))} {'below' if pulled_down else 'above'} the median "
            f"{_fmt(median)} ({gap:.0%} of the range, threshold {t.skew:.0%}): a few "
            f"{'poor' if worse else 'unusually good'} samples pull the mean; "
            "read the median and the worst samples.",
            gap,
            t.skew,
            n,
            importance=1.0 + gap,
        )
    std = float(arr.std(ddof=1))
    rel = std / span
    if rel <= t.spread:
        return None
    return RiskSign(
        metric,
        "spread",
        f"{{metric}}: the standard deviation {_fmt(std)} of {n} samples is {rel:.0%} "
        f"of the range (threshold {t.spread:.0%}): the scores are inconsistent from "
        "sample to sample.",
        rel,
        t.spread,
        n,
        importance=rel,
    )


def rank_signs(signs: Iterable[RiskSign]) -> list[RiskSign]:
    """Merge signs that say the same of several metrics, most important first.

    Two signs merge when they are of the same kind, rest on the same rows, point at the same
    rows and quote the same numbers (``mrr``, ``map`` and ``hit_rate_at_1`` failing on the
    same rows are one sign, each metric keeping its own cut); the claim metrics' good scores
    to check (``weak``) are one sign, each metric with its own share, pointing at every row.
    Order: rows that failed, good scores to check, poor shares, undefined rows, skew, spread;
    within a kind, the farthest past its threshold first; ties keep input order.
    """
    merged: dict[tuple[object, ...], RiskSign] = {}
    for sign in signs:
        key = (sign.kind, sign.n, sign.rows, sign.template, sign.importance)
        if sign.kind == "weak":  # one sign, each metric with its own share
            key = (sign.kind, sign.template)
        if key in merged:
            old = merged[key]
            added = ((sign.metric, sign.detail), *sign.others)
            merged[key] = dataclasses.replace(
                old,
                others=(*old.others, *added),
                rows=tuple(sorted({*old.rows, *sign.rows})),
                importance=max(old.importance, sign.importance),
            )
        else:
            merged[key] = sign
    return sorted(merged.values(), key=lambda s: -s.importance)


def uncertain_sign(
    metric: str,
    *,
    uncertain: int,
    verdicts: int,
    rows: Sequence[int] = (),
    scored: int,
    thresholds: RiskThresholds | None = None,
    share: float = UNCERTAIN_SHARE,
) -> RiskSign | None:
    """A sign when over ``share`` of the ``verdicts`` behind a claim metric's ``scored``
    rows were uncertain (``rows``: those with an uncertain verdict); ``None`` below it, with
    no verdict of known certainty, or on fewer scored rows than ``min_samples``.

    >>> uncertain_sign("faithfulness", uncertain=9, verdicts=30, scored=12).message[:48]
    'faithfulness: 9 of 30 verdicts (30%) were uncert'
    """
    t = (thresholds or RiskThresholds()).for_metric(metric)
    if verdicts <= 0 or scored < t.min_samples:
        return None
    found = uncertain / verdicts
    if found <= share:
        return None
    return RiskSign(
        metric,
        "uncertain",
        f"{{metric}}: {uncertain} of {verdicts} verdicts ({found:.0%}) were uncertain (support "
        f"in the judge's uncertain band), more than the {share:.0%} threshold: they count as "
        "the judge decided, but may go either way.",
        found,
        share,
        scored,
        tuple(sorted(rows)),
        1.5 + found,
    )


def short_reference_sign(
    metric: str,
    *,
    rows: Sequence[int],
    scored: int,
    thresholds: RiskThresholds | None = None,
    share: float = SHORT_REFERENCE_SHARE,
) -> RiskSign | None:
    """A sign when over ``share`` of a reference-based claim metric's ``scored`` rows have
    references much shorter than their answers (``rows``); ``None`` otherwise, or on fewer
    scored rows than ``min_samples``. Metrics with the same rows merge into one sign
    (:func:`rank_signs`).

    >>> short_reference_sign("claim_precision", rows=[0, 3, 5], scored=10).kind
    'short_reference'
    """
    t = (thresholds or RiskThresholds()).for_metric(metric)
    if scored < t.min_samples or not rows:
        return None
    found = len(rows) / scored
    if found <= share:
        return None
    return RiskSign(
        metric,
        "short_reference",
        f"{{metric}}: in {len(rows)} of {scored} rows ({found:.0%}) the reference is much "
        "shorter than the answer (fewer than half its content words), more than the "
        f"{share:.0%} threshold: RAGChecker's reference-based metrics count every answer "
        "detail beyond the reference as incorrect, so correct, detailed answers score low.",
        found,
        share,
        scored,
        tuple(sorted(rows)),
        2.5 + found,
    )


def weak_sign(
    metric: str,
    *,
    rows: Sequence[int],
    good: int,
    scored: int,
    low_support: float,
    thresholds: RiskThresholds | None = None,
    share: float = WEAK_SHARE,
) -> RiskSign | None:
    """A sign when over ``share`` of a claim metric's ``good`` scores rest on an uncertain
    verdict or an entailed one with support under ``low_support`` (``rows``); ``None``
    otherwise, or when the metric has fewer ``scored`` rows than ``min_samples``.

    >>> sign = weak_sign("faithfulness", rows=[2, 3, 4], good=10, scored=12, low_support=0.75)
    >>> sign.message.split(": ")[1]
    'faithfulness 3 of 10 (30%). The judge may be wrong there'
    """
    t = (thresholds or RiskThresholds()).for_metric(metric)
    if scored < t.min_samples or not rows or good <= 0:
        return None
    found = len(rows) / good
    if found <= share:
        return None
    return RiskSign(
        metric,
        "weak",
        "Good scores that rest on uncertain verdicts or on claims entailed with support under "
        f"{low_support:.2f}, more than {share:.0%} of a metric's good scores: {{metric}}. The "
        "judge may be wrong there: read them under Check these.",
        found,
        share,
        good,
        tuple(sorted(rows)),
        3.9 + found / 10,  # after failed rows, before poor shares: what a mean hides
        f"{len(rows)} of {good} ({found:.0%})",
    )
