"""The async core of a run: one concurrency limit, progress, failures as data; a sync facade.

:mod:`~ragmeter.runner.core` plans and scores a run (:class:`Plan` what to compute,
:class:`BatchScorer` a batch through the families, :class:`Runner` one run's rows in order,
with resume, run records and summaries: the local run's, and the Ray engine's
bookkeeping); :mod:`~ragmeter.runner.resume` what of a results file stays on ``--resume``;
:mod:`~ragmeter.runner.progress` the bar. The public :func:`ragmeter.evaluate` adds the
report on top.
"""

from ragmeter.runner.core import (
    Accumulator,
    BatchScorer,
    Plan,
    Runner,
    aevaluate,
    evaluate,
    make_result,
    public_settings,
    run_sync,
    stopped_message,
    stream_of,
)

__all__ = [
    "Accumulator",
    "BatchScorer",
    "Plan",
    "Runner",
    "aevaluate",
    "evaluate",
    "make_result",
    "public_settings",
    "run_sync",
    "stopped_message",
    "stream_of",
]
