"""Compare two runs over the same inputs: paired differences, intervals, a sign test, gates.

``compare_runs(a, b)`` treats ``a`` as the baseline and ``b`` as the candidate; every
difference is ``b - a``. Rows are paired by ``id`` when every row of both runs has a unique
id, otherwise by ``index``. Pairing by index is refused when it would pair unrelated rows:
when the run records name inputs with different sha256s, or when ids, where both rows have
one, disagree; ``pair_by_index=True`` pairs them anyway, with a warning in
``Comparison.warnings``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ragmeter.errors import ConfigError, DataError, param, unknown_metric
from ragmeter.metrics.registry import changed_meanings
from ragmeter.report.load import as_run
from ragmeter.result import RunResult
from ragmeter.scoring.statistics import bootstrap_interval, sign_test_pvalue
from ragmeter.types import MetricSpec, RowResult

__all__ = ["Comparison", "GateResult", "MetricComparison", "SampleChange", "compare_runs"]


@dataclass(frozen=True, slots=True)
class SampleChange:
    """One paired sample whose score moved."""

    index: int
    id: str | None
    a: float
    b: float
    delta: float
    reason_a: str | None = None
    reason_b: str | None = None


@dataclass(frozen=True, slots=True)
class MetricComparison:
    """Paired comparison of one metric between baseline ``a`` and candidate ``b``."""

    metric: str
    higher_is_better: bool
    n_pairs: int
    #: Pairs where only one side has a defined score (not in the statistics).
    only_a: int
    only_b: int
    mean_a: float | None
    mean_b: float | None
    #: Mean of ``b - a`` over pairs with both scores defined.
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    improved: int
    worsened: int
    unchanged: int
    #: Two-sided sign test p-value over the pairs that changed (``None`` when none did).
    p_value: float | None
    #: The pairs that changed most, largest ``|delta|`` first.
    top_changes: tuple[SampleChange, ...]

    @property
    def worsening(self) -> float | None:
        """How much worse ``b`` is on average (negative: it is better), direction-aware."""
        if self.mean_diff is None:
            return None
        return -self.mean_diff if self.higher_is_better else self.mean_diff

    def verdict(self) -> str:
        """One sentence about the change, in words."""
        if self.mean_diff is None:
            return "No sample has a defined score in both runs."
        if self.improved + self.worsened == 0:
            return f"No sample changed ({self.n_pairs} pairs)."
        worse = self.worsening or 0.0
        if worse == 0:
            return (
                f"B is unchanged on average ({self.improved} improved, {self.worsened} "
                f"worsened, {self.unchanged} unchanged)."
            )
        word = "better" if worse < 0 else "worse"
        ci = ""
        if self.ci_low is not None and self.ci_high is not None:
            clear = self.ci_low > 0 or self.ci_high < 0
            ci = (
                f"; the 95% interval of the difference [{self.ci_low:+.3f}, {self.ci_high:+.3f}] "
                f"{'excludes' if clear else 'includes'} 0"
            )
        p = "" if self.p_value is None else f"; sign test p = {self.p_value:.3g}"
        return (
            f"B is {word} by {abs(worse):.3f} on average ({self.improved} improved, "
            f"{self.worsened} worsened, {self.unchanged} unchanged){ci}{p}."
        )


@dataclass(frozen=True, slots=True)
class GateResult:
    """Outcome of one ``worse_than(metric, delta)`` check (the CLI's ``--fail-if-worse``)."""

    metric: str
    allowed: float
    worsening: float | None
    failed: bool
    message: str


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare_runs`."""

    metrics: dict[str, MetricComparison]
    paired: int
    match_by: Literal["id", "index"]
    #: Rows of one run with no partner in the other.
    unmatched_a: int
    unmatched_b: int
    #: What the reader should know before trusting the pairs (inputs that differ, ...).
    warnings: tuple[str, ...] = ()

    def get(self, metric: str) -> MetricComparison:
        try:
            return self.metrics[metric]
        except KeyError:
            raise unknown_metric(metric, self.metrics, where="both runs") from None

    def worse_than(self, metric: str, delta: float) -> GateResult:
        """Check ``b`` is not worse than ``a`` on ``metric`` by more than ``delta``.

        Worse is direction-aware: a drop for higher-is-better metrics, a rise otherwise.
        The gate fails when the mean paired worsening exceeds ``delta``, or when no pair has
        both scores defined (nothing to compare is not a pass).
        """
        if delta < 0:
            raise ConfigError(f"The allowed worsening for {metric!r} must be >= 0. Got {delta!r}.")
        mc = self.get(metric)
        worse = mc.worsening
        if worse is None:
            return GateResult(
                metric,
                delta,
                None,
                True,
                f"{metric}: FAIL, no sample has a defined score in both runs.",
            )
        failed = worse > delta + 1e-12
        direction = "higher" if mc.higher_is_better else "lower"
        if worse > 0:
            how = f"worse by {worse:.3f}"
        elif worse < 0:
            how = f"better by {-worse:.3f}"
        else:
            how = "unchanged"
        return GateResult(
            metric,
            delta,
            worse,
            failed,
            f"{metric}: {'FAIL' if failed else 'ok'}, B is {how} on average over "
            f"{mc.n_pairs} pairs ({direction} is better; allowed worsening {delta:g}).",
        )


def _input_sha(run: RunResult) -> tuple[str, str] | None:
    """(kind, sha256) of the input a run record names (a file, or rows in memory), or None."""
    recorded = run.info.get("input")
    if not isinstance(recorded, dict):
        return None
    source, sha = recorded.get("source"), recorded.get("sha256")
    if not isinstance(source, str) or not isinstance(sha, str):
        return None
    return source, sha


def _input_names(a: RunResult, b: RunResult) -> str:
    names = [
        str(run.info.get("data") or run.results_file or label)
        for run, label in ((a, "A"), (b, "B"))
    ]
    return f"A scored {names[0]!r}, B scored {names[1]!r}"


def _different_inputs(a: RunResult, b: RunResult) -> str | None:
    """Why the run records show that ``a`` and ``b`` scored different inputs, or None (the
    same input, or nothing recorded to tell)."""
    sha_a, sha_b = _input_sha(a), _input_sha(b)
    if sha_a is None or sha_b is None or sha_a[0] != sha_b[0] or sha_a[1] == sha_b[1]:
        return None
    return (
        f"the run records name different inputs ({_input_names(a, b)}; sha256 "
        f"{sha_a[1][:12]}... and {sha_b[1][:12]}...)"
    )


def _pair_hint() -> str:
    """How to pair two runs anyway, naming the option as the caller does."""
    anyway = param("pair_by_index", "compare_runs(a, b, pair_by_index=True)")
    return (
        "Compare two runs of the same input, or give every row a unique question_id so rows "
        f"pair by id. To pair row i of A with row i of B anyway: {anyway}."
    )


def _pair(
    a: RunResult, b: RunResult, *, pair_by_index: bool = False
) -> tuple[list[tuple[RowResult, RowResult]], Literal["id", "index"], int, int, tuple[str, ...]]:
    def unique_ids(run: RunResult) -> bool:
        ids = [r.id for r in run.rows]
        return all(i is not None for i in ids) and len(set(ids)) == len(ids)

    if not pair_by_index and a.rows and b.rows and unique_ids(a) and unique_ids(b):
        by_id = {r.id: r for r in b.rows}
        pairs = [(r, by_id[r.id]) for r in a.rows if r.id in by_id]
        if pairs:
            different = _different_inputs(a, b)
            said = () if different is None else (f"Paired by id although {different}.",)
            return pairs, "id", len(a.rows) - len(pairs), len(b.rows) - len(pairs), said
    warnings: list[str] = []
    different = _different_inputs(a, b)
    if different is not None:
        if not pair_by_index:
            raise DataError(
                f"Refusing to pair rows by index: {different}, and the rows have no ids in "
                f"common to pair them by. {_pair_hint()}"
            )
        warnings.append(f"Paired by index although {different}.")
    by_index = {r.index: r for r in b.rows}
    pairs = []
    conflicts = 0
    for r in a.rows:
        other = by_index.get(r.index)
        if other is None:
            continue
        if r.id is not None and other.id is not None and r.id != other.id:
            if not pair_by_index:
                raise DataError(
                    f"Refusing to pair rows by index: row {r.index} has id {r.id!r} in A but "
                    f"{other.id!r} in B, so the runs are not over the same inputs in the same "
                    f"order. {_pair_hint()}"
                )
            conflicts += 1
        pairs.append((r, other))
    if conflicts:
        warnings.append(
            f"Paired by index although {conflicts} of {len(pairs)} pairs have different ids "
            "in A and B."
        )
    return pairs, "index", len(a.rows) - len(pairs), len(b.rows) - len(pairs), tuple(warnings)


def _compare_metric(
    name: str, info: MetricSpec, pairs: Sequence[tuple[RowResult, RowResult]], *, top: int
) -> MetricComparison:
    xs, ys, changes = [], [], []
    only_a = only_b = 0
    for ra, rb in pairs:
        va, vb = ra.scores.get(name), rb.scores.get(name)
        if va is None and vb is None:
            continue
        if vb is None:
            only_a += 1
            continue
        if va is None:
            only_b += 1
            continue
        xs.append(va)
        ys.append(vb)
        if vb != va:
            changes.append(
                SampleChange(
                    ra.index,
                    ra.id if ra.id is not None else rb.id,
                    va,
                    vb,
                    vb - va,
                    ra.reasons.get(name),
                    rb.reasons.get(name),
                )
            )
    n = len(xs)
    if n == 0:
        return MetricComparison(
            name,
            info.higher_is_better,
            0,
            only_a,
            only_b,
            None,
            None,
            None,
            None,
            None,
            0,
            0,
            0,
            None,
            (),
        )
    diffs = np.asarray(ys) - np.asarray(xs)
    sign = 1.0 if info.higher_is_better else -1.0
    improved = int(np.count_nonzero(sign * diffs > 0))
    worsened = int(np.count_nonzero(sign * diffs < 0))
    ci = bootstrap_interval(diffs) if n >= 2 else None
    changed = improved + worsened
    p = sign_test_pvalue(improved, changed) if changed else None
    changes.sort(key=lambda c: (-abs(c.delta), c.index))
    return MetricComparison(
        metric=name,
        higher_is_better=info.higher_is_better,
        n_pairs=n,
        only_a=only_a,
        only_b=only_b,
        mean_a=float(np.mean(xs)),
        mean_b=float(np.mean(ys)),
        mean_diff=float(diffs.mean()),
        ci_low=None if ci is None else ci[0],
        ci_high=None if ci is None else ci[1],
        improved=improved,
        worsened=worsened,
        unchanged=n - changed,
        p_value=p,
        top_changes=tuple(changes[:top]),
    )


def _check_same_meaning(name: str, a: RunResult, b: RunResult) -> None:
    """``DataError`` when one run holds ``name`` with a formula since renamed (an older
    ragmeter's ``context_precision``, say) and the other with today's: two measures under one
    name. Both runs with the old formula compare as usual."""
    old = {
        label: changed_meanings(run.info.get("metrics"), where=where, names=[name])
        for label, run, where in (
            ("A", a, str(a.results_file) if a.results_file else "run A (the baseline)"),
            ("B", b, str(b.results_file) if b.results_file else "run B"),
        )
    }
    if bool(old["A"]) != bool(old["B"]):
        message = (old["A"] or old["B"])[0]
        other = "B" if old["A"] else "A"
        raise DataError(
            f"{message} Run {other} holds today's {name}, so the two runs measure different "
            f"things under one name and are not compared: score the older run's data again "
            f"with this ragmeter (cached judge replies make it cheap)."
        )


def compare_runs(a: Any, b: Any, *, top: int = 5, pair_by_index: bool = False) -> Comparison:
    """Paired comparison of every metric present in both runs (``a`` baseline, ``b`` new).

    ``a`` and ``b`` may be RunResults or results paths. Rows pair by
    id when every row of both runs has a unique id, else by index; pairing by index raises
    ``DataError`` when the run records name different inputs or paired rows' ids differ,
    unless ``pair_by_index=True`` (which pairs by index always and says what differs in
    ``Comparison.warnings``).
    """
    if top < 0:
        raise ConfigError(f"The 'top' parameter must be >= 0. Got {top!r}.")
    ra, rb = as_run(a), as_run(b)
    pairs, match_by, un_a, un_b, warnings = _pair(ra, rb, pair_by_index=pair_by_index)
    metrics: dict[str, MetricComparison] = {}
    for name, info_a in ra.specs.items():
        if name not in rb.specs:
            continue
        info_b = rb.specs[name]
        guessed_a, guessed_b = name in ra.directions_inferred, name in rb.directions_inferred
        info = info_b if guessed_a and not guessed_b else info_a
        if not guessed_a and not guessed_b and info_a.higher_is_better != info_b.higher_is_better:
            raise DataError(
                f"Metric {name!r} is higher-is-better in one run and lower-is-better in the "
                "other: the runs used different metric versions and cannot be compared."
            )
        _check_same_meaning(name, ra, rb)
        metrics[name] = _compare_metric(name, info, pairs, top=top)
    return Comparison(metrics, len(pairs), match_by, un_a, un_b, warnings)
