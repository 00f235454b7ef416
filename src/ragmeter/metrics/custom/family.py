"""The ``python`` family: scores the metrics defined with ``@ragmeter.metric``.

Each function sees one sample at a time. Synchronous functions run in a daemon thread,
:data:`~ragmeter.metrics.progress.CHUNK_ROWS` rows at a time, so judge calls of other
families keep flowing meanwhile (two batches may be scored at once, so a function may run in
two threads at once), and a function that never returns cannot hold a run past its deadline,
Ctrl-C or SIGTERM (:func:`~ragmeter.metrics.aio.in_daemon_thread`); ``async`` functions are
awaited together, at most ``max_concurrency`` at once. Whatever a function returns or raises
becomes one outcome of its row (:func:`~ragmeter.metrics.custom.definition.outcome_of`): an
exception (``SystemExit``, ``KeyboardInterrupt`` and a ``CancelledError`` of its own
included), a bad value or details that cannot be written fail that row's score for that
metric only. A stop of the run (its task cancelled) still stops it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ragmeter.metrics import registry
from ragmeter.metrics.aio import in_daemon_thread
from ragmeter.metrics.base import Outcome, RunContext
from ragmeter.metrics.custom.definition import PythonMetric, failure_of, outcome_of
from ragmeter.metrics.progress import CHUNK_ROWS, scored
from ragmeter.types import MetricSpec, Sample

__all__ = ["SPECS", "PythonMetricsFamily", "build"]

#: Python metrics are registered at run time (:func:`ragmeter.metrics.registry.define`).
SPECS: tuple[MetricSpec, ...] = ()


class PythonMetricsFamily:
    """Scores the requested Python metrics, sample by sample."""

    def __init__(self, max_concurrency: int) -> None:
        self.limit = asyncio.Semaphore(max_concurrency)

    async def score_batch(
        self, samples: Sequence[Sample], metrics: Sequence[str]
    ) -> list[dict[str, Outcome]]:
        chosen = [registry.defined(name) for name in metrics]
        plain = [m for m in chosen if not m.is_async]
        awaited = [m for m in chosen if m.is_async]
        out: list[dict[str, Outcome]] = []
        for start in range(0, len(samples), CHUNK_ROWS):
            chunk = samples[start : start + CHUNK_ROWS]
            rows: list[dict[str, Outcome]] = [{} for _ in chunk]
            jobs = [
                self._awaited(m, sample, row)
                for m in awaited
                for sample, row in zip(chunk, rows, strict=True)
            ]
            if plain:
                jobs.append(in_daemon_thread(_score_plain, plain, chunk, rows))
            await asyncio.gather(*jobs)
            out.extend({name: row[name] for name in metrics} for row in rows)
            scored(len(chunk))
        return out

    async def _awaited(self, metric: PythonMetric, sample: Sample, row: dict[str, Outcome]) -> None:
        async with self.limit:
            try:
                row[metric.spec.name] = outcome_of(metric, await metric.function(sample))
            except BaseException as exc:
                if _stopping(exc):
                    raise
                row[metric.spec.name] = failure_of(metric, exc)


def _stopping(exc: BaseException) -> bool:
    """Whether ``exc``, raised through an ``async`` metric, stops the run rather than fails
    the row: a cancellation of this task (the run's deadline, Ctrl-C, SIGTERM). A
    ``CancelledError`` the function raised of its own is its row's failure."""
    task = asyncio.current_task()
    return isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling() > 0


def _score_plain(
    metrics: Sequence[PythonMetric], samples: Sequence[Sample], rows: list[dict[str, Outcome]]
) -> None:
    for sample, row in zip(samples, rows, strict=True):
        for metric in metrics:
            try:
                row[metric.spec.name] = outcome_of(metric, metric.function(sample))
            except BaseException as exc:  # in a thread of its own: no signal lands here
                row[metric.spec.name] = failure_of(metric, exc)


def build(ctx: RunContext) -> PythonMetricsFamily:
    return PythonMetricsFamily(ctx.settings.max_concurrency)
