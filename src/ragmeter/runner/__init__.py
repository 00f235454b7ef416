"""The async core of a run: one concurrency limit, progress, failures as data; a sync facade.

:mod:`~ragmeter.runner.plan` decides what a run computes (:class:`Plan`);
:mod:`~ragmeter.runner.batch_scorer` scores a batch through the families
(:class:`BatchScorer`); :mod:`~ragmeter.runner.accumulator` keeps each metric's scores in
flat memory (:class:`Accumulator`); :mod:`~ragmeter.runner.core` runs one run's rows in
order (:class:`Runner`: resume, run records, summaries; the local run's and the Ray
engine's bookkeeping); :mod:`~ragmeter.runner.resume` what of a results file stays on
``resume=True``; :mod:`~ragmeter.runner.progress` the bar. The public
:func:`ragmeter.evaluate` adds the report on top.
"""

from ragmeter.runner.accumulator import Accumulator
from ragmeter.runner.batch_scorer import BatchScorer
from ragmeter.runner.core import (
    Runner,
    aevaluate,
    check_run_outputs,
    evaluate,
    make_result,
    public_settings,
    run_sync,
    stopped_message,
    stream_of,
)
from ragmeter.runner.plan import Plan

__all__ = [
    "Accumulator",
    "BatchScorer",
    "Plan",
    "Runner",
    "aevaluate",
    "check_run_outputs",
    "evaluate",
    "make_result",
    "public_settings",
    "run_sync",
    "stopped_message",
    "stream_of",
]
