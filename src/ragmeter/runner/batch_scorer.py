"""A batch of rows through a plan's families: samples from rows, each family called once per
group of metrics, outcomes checked against the metrics' ranges, failures as records, secrets
redacted: the unit of work of every engine."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from ragmeter.errors import (
    UnavailableError,
    cap_text,
    failure_cause,
)
from ragmeter.io.columns import ColumnMap, to_samples
from ragmeter.io.redact import known_secrets, redact_value
from ragmeter.io.rows import Row
from ragmeter.metrics import registry
from ragmeter.metrics._judged import note_stop, noting_stops
from ragmeter.metrics.aio import gather_or_cancel
from ragmeter.metrics.base import Outcome, RunContext
from ragmeter.metrics.progress import reporting_to
from ragmeter.runner.plan import Plan
from ragmeter.runner.progress import Progress
from ragmeter.runner.repeats import combine, score_repeats
from ragmeter.types import Failure, MetricSpec, RowResult, Sample, Score

log = logging.getLogger("ragmeter")

#: Seconds of a batch's own work (redacting its rows) between two yields to the event loop.
YIELD_AFTER = 0.002


class BatchScorer:
    """Scores a batch of rows with a plan's families: the unit of work of every engine.

    A judge, an endpoint or a model cache that stops (:class:`UnavailableError`) does not end
    a batch: the rows it caught fail with the cause ``infrastructure``, the others keep their
    scores, and :attr:`stopped` holds the first stop; the engine writes what was scored and
    stops."""

    def __init__(self, plan: Plan, cmap: ColumnMap, ctx: RunContext) -> None:
        self.plan = plan
        self.cmap = cmap
        self.ctx = ctx
        #: The first stop of the judge (or a model's endpoint) met in any batch, or None.
        self.stopped: UnavailableError | None = None
        #: Per family, the wall seconds during which at least one of its calls ran (a model's
        #: first load included); families run side by side, so these overlap and may add up
        #: to more than the run.
        self.family_seconds: dict[str, float] = {}
        self._running: dict[str, tuple[int, float]] = {}  # family -> (calls running, since)

    async def score(
        self,
        batch: list[Row],
        *,
        only: Mapping[int, Collection[str]] | None = None,
        progress: Progress | None = None,
    ) -> list[RowResult]:
        """One result per row; ``only`` limits some rows (by index) to some metrics.

        ``progress`` advances as rows are scored, a row once every family call it is in has
        scored it (families report per sample or per chunk, :mod:`ragmeter.metrics.progress`).
        """
        results: list[RowResult] = []
        # family -> metric-name tuple -> [(position, sample)]
        work: dict[str, dict[tuple[str, ...], list[tuple[int, Sample]]]] = {}
        by_family = self.plan.by_family()
        # Per family: its metric names, and every field they need (the common row has them).
        whole = [
            (family, tuple(s.name for s in specs), {f for s in specs for f in s.requires})
            for family, specs in by_family.items()
        ]
        # A row with every field of every family goes to each family whole: one check.
        needed = _values_of({f for _, _, needs in whole for f in needs})
        readable = [row.data for row in batch if row.problem is None and row.data is not None]
        coerced = iter(to_samples(readable, self.cmap))
        # The lists of ``work`` that rows with every field go to, found at the first such row.
        whole_lists: list[list[tuple[int, Sample]]] | None = None
        for pos, row in enumerate(batch):
            wanted = only.get(row.index) if only else None
            if row.problem is not None or row.data is None:
                result = RowResult(index=row.index, id=None)
                results.append(result)
                for spec in self.plan.specs:
                    if wanted is None or spec.name in wanted:
                        message = row.problem or "unreadable row"
                        result.record(spec.name, Failure(spec.name, message))
                continue
            sample, problems = next(coerced)
            result = RowResult(row.index, sample.question_id, metadata=sample.metadata)
            results.append(result)
            if wanted is None and not problems and None not in needed(sample):
                if whole_lists is None:
                    whole_lists = [
                        work.setdefault(family, {}).setdefault(names, [])
                        for family, names, _ in whole
                    ]
                item = (pos, sample)
                for items in whole_lists:
                    items.append(item)
                continue
            for family, names, needs in whole:
                if wanted is None and not problems and all(sample.has(f) for f in needs):
                    work.setdefault(family, {}).setdefault(names, []).append((pos, sample))
                    continue
                ready: list[str] = []
                specs = by_family[family]
                for spec in specs:
                    if wanted is not None and spec.name not in wanted:
                        continue
                    failure = _field_failure(spec, sample, problems, row.where)
                    if failure is not None:
                        result.record(spec.name, failure)
                    else:
                        ready.append(spec.name)
                if ready:
                    work.setdefault(family, {}).setdefault(tuple(ready), []).append((pos, sample))
        calls = [
            (family, names, items)
            for family, groups in work.items()
            for names, items in groups.items()
        ]
        tracker = None
        if progress is not None:
            scoring = {pos for _, _, items in calls for pos, _ in items}
            if len(scoring) < len(batch):
                progress.advance(len(batch) - len(scoring))  # rows with nothing to score
            tracker = _BatchProgress(progress, len(scoring), [len(items) for _, _, items in calls])
        jobs = [
            self._score_group(family, names, items, tracker and tracker.call(i))
            for i, (family, names, items) in enumerate(calls)
        ]
        with noting_stops() as stops:
            scored = await gather_or_cancel(jobs)
        if stops and self.stopped is None:
            self.stopped = stops[0]
        for items, _, outcomes in scored:
            for (pos, _), outcome_map in zip(items, outcomes, strict=True):
                results[pos].record_all(outcome_map.items())
        secrets = known_secrets()
        if secrets or _may_hold_url(results):
            # A judge's rows are large (claims, verdicts): redacting a batch of them takes
            # tens of ms, during which the other batch's replies would wait and the judge's
            # free slots stay idle. Hand the loop back every few ms.
            resumed = time.perf_counter()
            for result in results:
                _redact_row(result, secrets)
                if time.perf_counter() - resumed > YIELD_AFTER:
                    await asyncio.sleep(0)
                    resumed = time.perf_counter()
        return results

    async def _score_group(
        self,
        family: str,
        names: tuple[str, ...],
        items: list[tuple[int, Sample]],
        call: _CallProgress | None = None,
    ) -> tuple[list[tuple[int, Sample]], tuple[str, ...], list[dict[str, Outcome]]]:
        running, since = self._running.get(family, (0, time.perf_counter()))
        self._running[family] = (running + 1, since)
        try:
            with reporting_to(None if call is None else call.report):
                found = await self._score_samples(family, names, items)
        finally:
            running, since = self._running[family]
            self._running[family] = (running - 1, since)
            if running == 1:  # the family's last running call: its busy span ends
                spent = time.perf_counter() - since
                self.family_seconds[family] = self.family_seconds.get(family, 0.0) + spent
                del self._running[family]
        if call is not None:
            call.finish()
        return found

    async def _score_samples(
        self, family: str, names: tuple[str, ...], items: list[tuple[int, Sample]]
    ) -> tuple[list[tuple[int, Sample]], tuple[str, ...], list[dict[str, Outcome]]]:
        fam = self.plan.families[family]
        samples = [s for _, s in items]
        try:
            outcomes = await self._family_scores(fam, samples, names)
            outcomes = self._checked(names, _aligned(outcomes, len(samples)))
        except UnavailableError as exc:
            note_stop(exc)  # every row would fail the same way: the run stops
            return items, names, [_all_failed(names, exc) for _ in items]
        except Exception as exc:
            if len(samples) == 1:
                return items, names, [_all_failed(names, exc)]
            log.warning("Family %s failed on a batch (%s); scoring row by row.", family, exc)
            outcomes = []
            for sample in samples:
                try:
                    one = await self._family_scores(fam, [sample], names)
                    outcomes.append(self._checked(names, _aligned(one, 1))[0])
                except UnavailableError as stop:
                    note_stop(stop)
                    outcomes.append(_all_failed(names, stop))
                except Exception as exc_one:
                    outcomes.append(_all_failed(names, exc_one))
        return items, names, outcomes

    async def _family_scores(
        self, fam: Any, samples: list[Sample], names: tuple[str, ...]
    ) -> Sequence[Mapping[str, Any]]:
        """The family's outcomes for ``samples``; with ``Settings.repeats`` N (a judge's metrics),
        the mean of N repeats of its work, each its own (:mod:`ragmeter.runner.repeats`)."""
        repeats = self.ctx.settings.repeats
        specs = {spec.name: spec for spec in self.plan.specs if spec.name in names}
        if repeats == 1 or not any(spec.needs_judge for spec in specs.values()):
            return await fam.score_batch(samples, names)

        async def once() -> Sequence[Mapping[str, Any]]:
            return _aligned(await fam.score_batch(samples, names), len(samples))

        return combine(names, await score_repeats(once, repeats), specs)

    def _checked(
        self, names: tuple[str, ...], outcomes: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Outcome]]:
        """Guard the contract: an outcome per name, scores inside the metric's range."""
        # The plan's specs: a criterion's metric is the run's, not in the registry.
        planned = {spec.name: spec for spec in self.plan.specs}
        specs = [planned.get(name) or registry.get_spec(name) for name in names]
        checked: list[dict[str, Outcome]] = []
        for outcome in outcomes:
            out: dict[str, Outcome] = {}
            for spec in specs:
                name = spec.name
                value = outcome.get(name)
                if type(value) is Score and (
                    value.value is None or spec.lower <= value.value <= spec.upper
                ):
                    out[name] = value  # the common case, as the checks below give it
                elif isinstance(value, Failure):
                    out[name] = value
                elif not isinstance(value, Score):
                    out[name] = Failure(name, f"internal error: {spec.family} returned no score")
                elif value.value is not None and not spec.lower <= value.value <= spec.upper:
                    out[name] = Failure(
                        name,
                        f"internal error: {name} gave {value.value!r}, outside "
                        f"[{spec.lower}, {spec.upper}]",
                    )
                else:
                    out[name] = value
            checked.append(out)
        return checked


class _BatchProgress:
    """A batch's rows done: a row counts once every family call it is in has scored it.

    Families report how many samples they scored, not which, so the rows done are the rows
    being scored times the least advanced call's share (exact when every call holds every
    row, the common case; never ahead otherwise) and all of them once every call returned.
    """

    def __init__(self, progress: Progress, rows: int, sizes: Sequence[int]) -> None:
        self.progress = progress
        self.rows = rows
        self.sizes = sizes
        self.done = [0] * len(sizes)
        self.shown = 0

    def call(self, index: int) -> _CallProgress:
        return _CallProgress(self, index)

    def report(self, index: int, n: int) -> None:
        self.done[index] = min(self.done[index] + n, self.sizes[index])
        share = min(done / size for done, size in zip(self.done, self.sizes, strict=True))
        rows = int(self.rows * share + 1e-9)
        if rows > self.shown:
            self.progress.advance(rows - self.shown)
            self.shown = rows


@dataclass(frozen=True, slots=True)
class _CallProgress:
    """One family call's reports to its batch's progress."""

    batch: _BatchProgress
    index: int

    def report(self, n: int) -> None:
        self.batch.report(self.index, n)

    def finish(self) -> None:
        self.batch.report(self.index, self.batch.sizes[self.index])


def _field_failure(
    spec: MetricSpec, sample: Sample, problems: Mapping[str, str], where: str
) -> Failure | None:
    if "*" in problems:
        return Failure(spec.name, f"{where}: {problems['*']}")
    for fld in spec.requires:
        if fld in problems:
            return Failure(spec.name, f"{where}, field '{fld}': {problems[fld]}", field=fld)
        if not sample.has(fld):
            return Failure(
                spec.name,
                f"{where}: field '{fld}' is missing; {spec.name} needs {', '.join(spec.requires)}",
                field=fld,
            )
    return None


def _values_of(names: Collection[str]) -> Callable[[Sample], tuple[Any, ...]]:
    """A function giving a sample's values of the fields ``names`` as a tuple, in one call."""
    if len(names) > 1:
        return attrgetter(*names)  # type: ignore[return-value]
    return lambda sample: tuple(getattr(sample, name) for name in names)


def _may_hold_url(rows: Sequence[RowResult]) -> bool:
    """Whether a failure or reason of ``rows`` may hold a URL (or is not text). With no known
    secret only URL credentials are redacted, so without one the rows are left as they are
    (:func:`_redact_row` checks row by row; this checks a batch at once, the common case)."""
    texts = [
        text
        for row in rows
        for messages in (row.failures, row.reasons)
        for text in messages.values()
    ]
    try:
        return "://" in "".join(texts)
    except TypeError:  # a message that is not text
        return True


def _redact_row(row: RowResult, secrets: frozenset[str]) -> None:
    """Credentials out of what a judge or a failure put in a row: a server may echo a key.

    With no known secret only URL credentials are redacted, so a row whose messages hold no
    URL is left as it is (the common case, checked first)."""
    if not secrets and all(
        type(text) is str and "://" not in text
        for texts in (row.failures, row.reasons)
        for text in texts.values()
    ):
        return
    row.failures = redact_value(row.failures, secrets=secrets)
    row.reasons = redact_value(row.reasons, secrets=secrets)
    if secrets:
        row.details = redact_value(row.details, secrets=secrets)


def _aligned(outcomes: Sequence[Mapping[str, Any]], n: int) -> Sequence[Mapping[str, Any]]:
    if len(outcomes) != n:
        raise RuntimeError(f"family returned {len(outcomes)} outcomes for {n} samples")
    return outcomes


def _all_failed(names: Sequence[str], exc: BaseException) -> dict[str, Outcome]:
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, ValueError | RuntimeError) or type(exc).__module__ != "builtins":
        message = f"{type(exc).__name__}: {message}"
    cause = failure_cause(exc)
    return {name: Failure(name, cap_text(message), cause=cause) for name in names}
