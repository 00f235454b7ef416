"""The ``python`` family: scores the metrics defined with ``@ragmeter.metric``.

Each function sees one sample at a time. Synchronous functions run in a worker thread,
:data:`~ragmeter.metrics.progress.CHUNK_ROWS` rows at a time, so judge calls of other
families keep flowing meanwhile (two batches may be scored at once, so a function may run in
two threads at once); ``async`` functions are awaited together, at most ``max_concurrency``
at once. Whatever a function returns or raises becomes one outcome of its row
(:func:`~ragmeter.metrics.custom.definition.outcome_of`): an exception or a bad value fails
that row's score for that metric only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ragmeter.metrics import registry
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
                jobs.append(asyncio.to_thread(_score_plain, plain, chunk, rows))
            await asyncio.gather(*jobs)
            out.extend({name: row[name] for name in metrics} for row in rows)
            scored(len(chunk))
        return out

    async def _awaited(self, metric: PythonMetric, sample: Sample, row: dict[str, Outcome]) -> None:
        async with self.limit:
            try:
                value = await metric.function(sample)
            except Exception as exc:
                row[metric.spec.name] = failure_of(metric, exc)
                return
        row[metric.spec.name] = outcome_of(metric, value)


def _score_plain(
    metrics: Sequence[PythonMetric], samples: Sequence[Sample], rows: list[dict[str, Outcome]]
) -> None:
    for sample, row in zip(samples, rows, strict=True):
        for metric in metrics:
            try:
                value = metric.function(sample)
            except Exception as exc:
                row[metric.spec.name] = failure_of(metric, exc)
                continue
            row[metric.spec.name] = outcome_of(metric, value)


def build(ctx: RunContext) -> PythonMetricsFamily:
    return PythonMetricsFamily(ctx.settings.max_concurrency)
