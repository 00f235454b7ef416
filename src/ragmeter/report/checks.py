"""Good scores that rest on verdicts worth a second look: pure functions over a run
(:class:`~ragmeter.result.RunResult`).

A claim metric's score is only as sure as the verdicts it counts. A good score (the good half
of the metric's range, whatever its direction) is listed to check when the row's verdicts for
that metric include an uncertain one (support in the judge's uncertain band), or when the
weakest verdict that counted a claim as entailed has a support under :data:`LOW_SUPPORT`: the
offline judge's support is a calibrated probability of entailment, so under 0.75 about one
such verdict in four or more is wrong (the shipped example's "The Amazon flows through Cairo."
is entailed by a context about the Nile at support 0.69). Judges that give no support (an LLM
judge) are checked on their uncertain verdicts only.

The report lists these rows under "Check these" (the lowest support first) and raises a sign
when they are a large share of a metric's good scores (:func:`ragmeter.report.risk.weak_sign`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ragmeter.report.claim_flags import flags_of
from ragmeter.report.scale import goodness
from ragmeter.result import RunResult

__all__ = ["LOW_SUPPORT", "Doubt", "RowCheck", "check_rows", "doubts", "good_count"]

#: An entailed verdict with a support under this is weak: a good score resting on it is listed.
LOW_SUPPORT = 0.75


@dataclass(frozen=True, slots=True)
class Doubt:
    """A good score of ``metric`` on row ``index`` that rests on doubtful verdicts."""

    index: int
    metric: str
    score: float
    #: Uncertain verdicts among the ``verdicts`` this row's score of ``metric`` counts.
    uncertain: int
    verdicts: int
    #: The weakest entailed verdict, when its support is under :data:`LOW_SUPPORT`:
    #: ``(support, claim, "context 0")``.
    weak: tuple[float, str, str] | None


def _good(run: RunResult, metric: str, value: float) -> bool:
    return goodness(run.metric(metric), value) >= 0.5


def good_count(run: RunResult, metric: str) -> int:
    """How many of ``metric``'s scores are good (the good half of its range)."""
    return sum(_good(run, metric, v) for v in run.column(metric).values)


def doubts(run: RunResult, metric: str, *, low_support: float = LOW_SUPPORT) -> list[Doubt]:
    """The good scores of ``metric`` resting on an uncertain verdict or a weak entailed one,
    in row order."""
    col = run.column(metric)
    flags = flags_of(run)
    out: list[Doubt] = []
    for pos, value in zip(col.positions, col.values, strict=True):
        row = run.rows[pos]
        uncertain, verdicts = flags[pos].verdict_counts.get(metric, (0, 0))
        weak = flags[pos].weakest.get(metric)
        if weak is not None and weak[0] >= low_support:
            weak = None
        if (uncertain or weak) and _good(run, metric, value):
            out.append(Doubt(row.index, metric, value, uncertain, verdicts, weak))
    return out


@dataclass(frozen=True, slots=True)
class RowCheck:
    """A row with good scores to check: its doubts, one per metric."""

    index: int
    id: str | None
    doubts: tuple[Doubt, ...]

    @property
    def weakest(self) -> tuple[float, str, str] | None:
        weak = [d.weak for d in self.doubts if d.weak is not None]
        return min(weak) if weak else None

    @property
    def uncertain(self) -> int:
        """The most uncertain verdicts any one of the row's metrics counts."""
        return max((d.uncertain for d in self.doubts), default=0)


def check_rows(run: RunResult, metrics: list[str] | None = None) -> list[RowCheck]:
    """Rows with a good score to check (:func:`doubts`) over ``metrics`` (default: all), the
    weakest support first, then the rows with uncertain verdicts, then by row index."""
    by_row: dict[int, list[Doubt]] = {}
    for metric in metrics if metrics is not None else list(run.metrics):
        for doubt in doubts(run, metric):
            by_row.setdefault(doubt.index, []).append(doubt)
    ids = {row.index: row.id for row in run.rows}
    found = [RowCheck(i, ids.get(i), tuple(d)) for i, d in by_row.items()]

    def key(check: RowCheck) -> tuple[float, int, int]:
        weak = check.weakest
        return (weak[0] if weak else LOW_SUPPORT, -check.uncertain, check.index)

    return sorted(found, key=key)
