"""``Settings.repeats``: score the judge's metrics N times per row and keep how much they moved.

Each repeat is the family's whole work for a batch (the judge's analysis and verdicts) under
its own repeat index (:func:`ragmeter.judges.repeat.in_repeat`), so each repeat's judge
replies are cached apart: a rerun with the same ``repeats`` costs no call, and a larger
``repeats`` asks only for the new repeats. The repeats run concurrently, under the run's
one concurrency limit.

A row's score is the mean of its repeats' defined values (:func:`combine`); its details keep
every repeat's value and how far they spread, and, for claim metrics, how many claims two or
more repeats found and which of them flipped verdict::

    "repeats": {"values": [1.0, 0.5, 1.0], "spread": 0.5, "claims": 3,
                "flipped": ["The Seine runs there."]}

A row is *flaky* when its repeats spread by at least :data:`FLAKY_SPREAD` of the metric's
range or a claim flipped. :class:`NoiseTally` gathers a run's rows into the run record's
``judge_noise`` (per metric: the share of claims that flipped, the rows' mean spread, the
flaky rows) and the interval of the mean over rows and repeats
(:func:`ragmeter.scoring.repeats.repeat_interval`), which replaces the summary's interval.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ragmeter.judges.repeat import in_repeat
from ragmeter.metrics.aio import gather_or_cancel
from ragmeter.metrics.base import Outcome
from ragmeter.metrics.progress import reporting_to, scored
from ragmeter.scoring.repeats import flipped_claims, repeat_interval, repeat_mean, spread
from ragmeter.scoring.statistics import Summary
from ragmeter.types import Failure, MetricSpec, RowResult, Score

__all__ = [
    "FLAKY_SPREAD",
    "MAX_FLAKY_LISTED",
    "REPEAT_CI_METHOD",
    "NoiseTally",
    "combine",
    "score_repeats",
    "with_repeat_intervals",
]

#: A row whose repeats spread by this share of the metric's range (or more) is flaky.
FLAKY_SPREAD = 0.1
#: Flaky rows listed per metric in the run record (the most spread first).
MAX_FLAKY_LISTED = 50
#: A summary's ``ci_method`` when its interval resamples rows and repeats.
REPEAT_CI_METHOD = "rows+repeats"
#: Flipped claims kept in one row's details.
_MAX_FLIPPED = 10

Scores = Sequence[Mapping[str, Outcome]]


async def score_repeats(work: Callable[[], Awaitable[Scores]], repeats: int) -> list[Scores]:
    """``work()`` once per repeat, each as its own repeat, concurrently; in repeat order.

    The samples the repeats report scored (:func:`~ragmeter.metrics.progress.scored`) reach
    the run's progress divided by ``repeats``: a row counts once, when all its repeats are.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1. Got {repeats!r}.")
    outer = contextvars.copy_context()  # where the run's progress hook is
    reported = shown = 0

    def hook(n: int) -> None:
        nonlocal reported, shown
        reported += n
        if reported // repeats > shown:
            outer.run(scored, reported // repeats - shown)
            shown = reported // repeats

    with reporting_to(hook):
        return await gather_or_cancel(in_repeat(k, work()) for k in range(repeats))


def _verdicts(details: Any) -> dict[str, Hashable]:
    """Each claim's verdicts in one repeat's details: what it was found in, by claim text
    (``a:`` answer claims, ``r:`` reference claims)."""
    out: dict[str, Hashable] = {}
    if not isinstance(details, Mapping):
        return out
    answer = details.get("answer_claims")
    items = [("a:", c) for c in answer] if isinstance(answer, list) else []
    references = details.get("reference_claims")
    for claims in references if isinstance(references, list) else ():
        items += [("r:", c) for c in claims] if isinstance(claims, list) else []
    for prefix, item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("claim"), str):
            continue
        verdict = tuple(
            (key, bool(item[key])) for key in ("contexts", "correct", "in_answer") if key in item
        )
        out[prefix + item["claim"]] = verdict
    return out


def _combine_one(name: str, outcomes: Sequence[Outcome], spec: MetricSpec | None) -> Outcome:
    scores = [o for o in outcomes if isinstance(o, Score)]
    n = len(outcomes)
    if not scores:
        first = outcomes[0]
        assert isinstance(first, Failure)
        return Failure(
            name,
            f"Every one of the {n} repeats failed; the first: {first.message}",
            field=first.field,
            cause=first.cause,
        )
    values = [o.value if isinstance(o, Score) else None for o in outcomes]
    mean = repeat_mean(values)
    if mean is None:
        return scores[0]
    if spec is not None:
        mean = min(max(mean, spec.lower), spec.upper)
    base = next(o for o in scores if o.value is not None)
    wide = spread(values)
    matched, flipped = flipped_claims(
        [_verdicts(o.details) for o in outcomes if isinstance(o, Score)]
    )
    record: dict[str, Any] = {
        "values": [None if v is None else round(v, 6) for v in values],
        "spread": None if wide is None else round(wide, 6),
    }
    failed = sum(isinstance(o, Failure) for o in outcomes)
    if failed:
        record["failed"] = failed
    if matched:
        record["claims"] = matched
        record["flipped"] = [text.split(":", 1)[1] for text in flipped[:_MAX_FLIPPED]]
        if len(flipped) > _MAX_FLIPPED:
            record["flipped_more"] = len(flipped) - _MAX_FLIPPED
    shown = ", ".join("-" if v is None else f"{v:.3g}" for v in values)
    reason = f"{base.reason or ''} Mean of {n} repeats of the judge ({shown})".strip()
    if wide is not None:
        reason += f", spread {wide:.3g}"
    if matched:
        reason += f"; {len(flipped)} of {matched} claims flipped verdict between repeats"
    details = {**(base.details or {}), "repeats": record}
    return Score(mean, reason=reason + ".", details=details)


def combine(
    names: Sequence[str],
    repeats: Sequence[Scores],
    specs: Mapping[str, MetricSpec] | None = None,
) -> list[dict[str, Outcome]]:
    """One outcome per row and metric from each repeat's (see the module's docstring):
    the mean of the defined values; undefined when no repeat defined it; a failure when
    every repeat failed."""
    if not repeats:
        raise ValueError("combine needs at least one repeat.")
    rows = len(repeats[0])
    if any(len(r) != rows for r in repeats):
        raise ValueError(f"Repeats scored different numbers of rows: {[len(r) for r in repeats]}.")
    specs = specs or {}
    return [
        {name: _combine_one(name, [r[i][name] for r in repeats], specs.get(name)) for name in names}
        for i in range(rows)
    ]


@dataclass(slots=True)
class _MetricNoise:
    rows: list[list[float]] = field(default_factory=list)
    spreads: list[tuple[float, int]] = field(default_factory=list)
    claims: int = 0
    flipped: int = 0
    flaky: list[tuple[float, int, int]] = field(default_factory=list)


@dataclass(slots=True)
class NoiseTally:
    """A run's judge noise, gathered row by row from the combined rows' details."""

    repeats: int
    metrics: dict[str, _MetricNoise] = field(default_factory=dict)

    def add(self, row: RowResult, specs: Mapping[str, MetricSpec]) -> None:
        """Add ``row``'s repeats of each of ``specs``' metrics that it scored."""
        for name, spec in specs.items():
            details = (row.details or {}).get(name)
            record = details.get("repeats") if isinstance(details, Mapping) else None
            if not isinstance(record, Mapping) or row.scores.get(name) is None:
                continue
            tally = self.metrics.setdefault(name, _MetricNoise())
            values = [float(v) for v in record.get("values") or () if v is not None]
            if values:
                tally.rows.append(values)
            wide = record.get("spread")
            flips = len(record.get("flipped") or ()) + int(record.get("flipped_more") or 0)
            tally.claims += int(record.get("claims") or 0)
            tally.flipped += flips
            if isinstance(wide, int | float):
                tally.spreads.append((float(wide), row.index))
                span = (spec.upper - spec.lower) or 1.0
                if wide >= FLAKY_SPREAD * span or flips:
                    tally.flaky.append((float(wide), flips, row.index))

    def interval(self, metric: str) -> tuple[float, float] | None:
        """The 95 % interval of ``metric``'s mean over rows and repeats (None: no row)."""
        tally = self.metrics.get(metric)
        return repeat_interval(tally.rows) if tally is not None and tally.rows else None

    def record(self) -> dict[str, Any]:
        """The run record's ``judge_noise``: per metric, what the repeats show."""
        out: dict[str, Any] = {}
        for name, tally in self.metrics.items():
            interval = self.interval(name)
            spreads = [s for s, _ in tally.spreads]
            flaky = sorted(tally.flaky, key=lambda f: (-f[0], -f[1], f[2]))
            out[name] = {
                "repeats": self.repeats,
                "rows": len(tally.rows),
                "mean_spread": round(sum(spreads) / len(spreads), 6) if spreads else None,
                "max_spread": round(max(spreads), 6) if spreads else None,
                "claims": tally.claims,
                "flipped_claims": tally.flipped,
                "flip_share": round(tally.flipped / tally.claims, 6) if tally.claims else None,
                "flaky_rows": len(flaky),
                "flaky": [
                    {"index": index, "spread": round(wide, 6), "flipped": flips}
                    for wide, flips, index in flaky[:MAX_FLAKY_LISTED]
                ],
                "ci": None if interval is None else [round(x, 6) for x in interval],
            }
        return out


def with_repeat_intervals(
    summaries: Mapping[str, Summary], noise: NoiseTally
) -> dict[str, Summary]:
    """``summaries`` with each repeated metric's interval over rows and repeats
    (``ci_method`` ``"rows+repeats"``) instead of the rows' bootstrap of their means."""
    out = dict(summaries)
    for name, summary in summaries.items():
        interval = noise.interval(name)
        if interval is not None and summary.mean is not None:
            low, high = interval
            out[name] = replace(summary, ci_low=low, ci_high=high, ci_method=REPEAT_CI_METHOD)
    return out
