"""The async core of a run: one concurrency limit, progress, failures as data.

:mod:`~ragmeter.runner.pipeline` sets every run up, for :func:`ragmeter.evaluate` (check the
outputs, open the rows, plan, score on an engine, write the run record);
:mod:`~ragmeter.runner.plan` decides what a run computes (:class:`Plan`);
:mod:`~ragmeter.runner.core` runs one run's rows in order (:class:`Runner`: resume, the
results file, run records, summaries) with an :class:`Engine` that scores the batches
(:class:`LocalEngine` in this process; ``ragmeter.engines.RayEngine`` on a cluster);
:mod:`~ragmeter.runner.batch_scorer` scores a batch through the families
(:class:`BatchScorer`); :mod:`~ragmeter.runner.accumulator` keeps each metric's scores in
flat memory (:class:`Accumulator`); :mod:`~ragmeter.runner.resume` what of a results file
stays on ``resume=True``; :mod:`~ragmeter.runner.progress` the bar. The public
:func:`ragmeter.evaluate` adds the report on top.
"""

from ragmeter.runner.accumulator import Accumulator
from ragmeter.runner.batch_scorer import BatchScorer
from ragmeter.runner.core import (
    Engine,
    LocalEngine,
    Runner,
    ScoreColumn,
    ScoredBatch,
)
from ragmeter.runner.plan import Plan

__all__ = [
    "Accumulator",
    "BatchScorer",
    "Engine",
    "LocalEngine",
    "Plan",
    "Runner",
    "ScoreColumn",
    "ScoredBatch",
]
