"""ragmeter: evaluate retrieval-augmented generation.

>>> import ragmeter
>>> result = ragmeter.evaluate(
...     [{"answer": "Paris is the capital", "contexts": ["Paris is the capital of France"]}],
...     metrics=["k_precision"],
...     progress=False,
... )
>>> result.summary["k_precision"].mean
1.0

One model of a run:

- :class:`RunResult` is what :func:`evaluate` returns (rows, summaries, usage, the run
  record) and what a results file reads back into (:func:`ragmeter.results.read_run`: the
  summaries and metric specs from its run record); the report, ``compare``, ``label`` and
  :func:`calibrate` take it. :class:`ragmeter.metrics.base.RunContext` is what the metric
  families share while a run scores (settings, the judge, models, usage).
- :class:`RowResult` is one row's scores, reasons and failures;
  :class:`ragmeter.io.rows.Row` is one input row as read (its index, data and where).
- :class:`MetricSpec` is a metric's fields, family, direction and range.
- :func:`evaluate` (``engine="local"`` or ``"ray"``) is the one way to start a run: the
  runner sets it up once (:mod:`ragmeter.runner.pipeline`) and writes what an engine scores
  (:class:`ragmeter.runner.LocalEngine`, :class:`ragmeter.engines.RayEngine`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ragmeter import result as _result
from ragmeter._version import __version__
from ragmeter.config.criteria import Criterion
from ragmeter.engines import Engine, engine_named
from ragmeter.errors import (
    CacheError,
    ConfigError,
    DataError,
    JudgeError,
    JudgeReplyError,
    MissingColumnError,
    ModelUnavailableError,
    RagmeterError,
    UnknownMetricError,
)
from ragmeter.metrics.custom.definition import metric
from ragmeter.result import RunResult
from ragmeter.runner import pipeline as _pipeline
from ragmeter.runner.progress import ProgressFunction
from ragmeter.scoring.statistics import Summary
from ragmeter.settings import Settings
from ragmeter.types import Failure, Judge, MetricSpec, RowResult, Sample, Score, Usage

if TYPE_CHECKING:
    from ragmeter.io.labels import LabelSet
    from ragmeter.scoring.calibration.record import Calibration


def evaluate(
    data: Any,
    metrics: Sequence[str | Callable[..., Any]] | str | None = None,
    *,
    column_map: Mapping[str, Any] | Iterable[str] | None = None,
    judge: str | Judge | None = None,
    settings: Settings | None = None,
    out: str | Path | IO[str] | None = None,
    report: str | Path | None = None,
    group_by: str | None = None,
    labels: str | os.PathLike[str] | None = None,
    progress: bool | ProgressFunction | None = None,
    resume: bool = False,
    keep_rows: bool = True,
    engine: str | Engine = "local",
) -> RunResult:
    """Score ``data`` with ``metrics`` and return a :class:`RunResult`.

    Parameters
    ----------
    data : path, DataFrame, datasets.Dataset, or list of dicts
        Samples in Unitxt's RAG fields or Ragas' column names.
    metrics : list of str or comma-separated str, optional
        Registry names (see ``ragmeter metrics``) or functions decorated with
        :func:`metric`. By default every metric whose fields exist.
    column_map : mapping or list of "field=path" or format name, optional
        Where a field comes from: a column name, a dotted path (``ctx[*].text`` maps over a
        list), or a callable over the row; or another tool's format, ``"ragchecker"`` or
        ``"ragas"`` (detected from the columns when they identify one).
    judge : str or Judge, optional
        ``"offline"`` (default), ``"openai:MODEL"``, or a Judge object (e.g. ``FakeJudge``).
    settings : Settings, optional
        Everything else (concurrency, cache, models, k values, prices).
    out : path or text stream, optional
        Write results as JSONL while scoring (and ``<out>.run.json``); rows are then also kept.
        ``"-"`` (or an open text stream) writes the JSONL lines there as rows are scored, with
        no run record beside them.
    report : path, optional
        Write the HTML report there at the end.
    group_by : str, optional
        A dotted path into each row (``metadata.category``) the report groups by.
    labels : path, optional
        Human labels of a uniform random sample of this run (``docs/calibration.md``): the
        run is calibrated with them (:func:`calibrate`) and the calibration kept in its record
        (``info["calibration"]``), where the report and ``compare`` read it. The file is
        read before the first row is scored: a broken one stops the run before any work.
    progress : bool or callable, optional
        Show a progress bar (rows done, total, elapsed time, ETA); by default on a terminal
        or in a notebook only. A function is called instead with ``(rows done, total rows or
        None)`` as rows are scored.
    resume : bool
        Skip rows already present in ``out``.
    keep_rows : bool
        Keep every row's result in ``RunResult.rows``. With ``False`` (the CLI with ``--out``)
        rows are only streamed to ``out`` and memory stays flat; summaries are the same.
    engine : "local", "ray" or an engine, optional
        What scores the rows: ``"local"`` (this process) or ``"ray"`` (a Ray Data pipeline
        on a local Ray instance, ``pip install 'ragmeter[ray]'``; ``data`` must be a file);
        ``ragmeter.engines.RayEngine(address=..., num_workers=...)`` for a cluster. Rows,
        summaries and the results file are the same on every engine.
    """
    return _pipeline.run_sync(
        aevaluate(
            data,
            metrics,
            column_map=column_map,
            judge=judge,
            settings=settings,
            out=out,
            report=report,
            group_by=group_by,
            labels=labels,
            progress=progress,
            resume=resume,
            keep_rows=keep_rows,
            engine=engine,
        )
    )


async def aevaluate(
    data: Any,
    metrics: Sequence[str | Callable[..., Any]] | str | None = None,
    *,
    column_map: Mapping[str, Any] | Iterable[str] | None = None,
    judge: str | Judge | None = None,
    settings: Settings | None = None,
    out: str | Path | IO[str] | None = None,
    report: str | Path | None = None,
    group_by: str | None = None,
    labels: str | os.PathLike[str] | None = None,
    progress: bool | ProgressFunction | None = None,
    resume: bool = False,
    keep_rows: bool = True,
    engine: str | Engine = "local",
) -> RunResult:
    """Async twin of :func:`evaluate`; ``keep_rows=False`` streams without keeping rows."""
    scoring = engine_named(engine)
    label_set = _read_labels_early(labels)
    streamed = _pipeline.stream_of(out) is not None
    if streamed and report is not None:
        keep_rows = True  # the report is drawn from the rows
    result = await _pipeline.score_data(
        data,
        metrics,
        column_map=column_map,
        judge=judge,
        settings=settings,
        out=out,
        progress=progress,
        resume=resume,
        keep_rows=keep_rows,
        outputs={"report": report},
        inputs={"labels": labels},
        engine=scoring,
    )
    results_file = Path(out) if isinstance(out, str | Path) and not streamed else None
    _finish_run(result, results_file, report=report, group_by=group_by, labels=label_set)
    return result


def _read_labels_early(labels: str | os.PathLike[str] | LabelSet | None) -> LabelSet | None:
    """``labels`` read before a run scores its first row: a file that cannot be read stops
    the run before any work, not after it."""
    if labels is None:
        return None
    from ragmeter.io.labels import LabelSet, read_labels

    return labels if isinstance(labels, LabelSet) else read_labels(labels)


def _finish_run(
    result: RunResult,
    results_file: str | os.PathLike[str] | None,
    *,
    report: str | os.PathLike[str] | None = None,
    group_by: str | None = None,
    labels: str | os.PathLike[str] | LabelSet | None = None,
) -> None:
    """What follows a run, whichever engine scored it: the calibration with ``labels`` (kept
    in the run record, in memory and beside ``results_file``), then the HTML ``report`` (its
    rows read back from ``results_file`` when the run did not keep them)."""
    if labels is not None:
        from ragmeter.result import read_sidecar, write_sidecar

        calibration = calibrate(results_file if results_file is not None else result, labels)
        record = calibration.as_record()
        result.info["calibration"] = record
        if results_file is not None and (info := read_sidecar(results_file)) is not None:
            info["calibration"] = record
            write_sidecar(results_file, info)
    if report is not None:
        from ragmeter.report.html import write_run_report

        from_file = results_file is not None and not result.rows
        write_run_report(
            result, report, results=results_file if from_file else None, group_by=group_by
        )


def _figure(result: RunResult, metric: str) -> Any:
    from ragmeter.report.plots import figure_for

    return figure_for(result, metric)


_result.install_plotter(_figure)


def calibrate(
    results: Any,
    labels: str | os.PathLike[str] | LabelSet,
    *,
    target_width: float | None = None,
) -> Calibration:
    """Calibrate a run's judge with human labels: per labelled metric, the judge's agreement
    and bias, and the mean from the judge, from the labels and prediction-powered (PPI++),
    each with a 95% interval (``docs/calibration.md``).

    ``results`` is a results ``.jsonl`` path or a :class:`RunResult`; ``labels`` a labels file
    (JSONL or CSV) or a :class:`ragmeter.io.labels.LabelSet`. Returns a
    :class:`ragmeter.scoring.calibration.record.Calibration`: ``.as_dict()`` is the JSON
    object of ``ragmeter calibrate --json``, ``cal["faithfulness"].calibrated.ci`` an interval.
    With ``target_width``, each metric's ``budget`` says about how many labelled rows bring
    its calibrated interval to that width.
    """
    from ragmeter.io.labels import LabelSet, read_labels
    from ragmeter.report.calibration.calibrate import calibrate_run
    from ragmeter.report.calibration.table import read_run_for_labels

    label_set = labels if isinstance(labels, LabelSet) else read_labels(labels)
    if isinstance(results, str | os.PathLike):
        results = read_run_for_labels(results, label_set)  # one pass; labelled rows' details
    return calibrate_run(results, label_set, target_width=target_width)


def __getattr__(name: str) -> Any:
    # ``ragmeter.testing`` after a bare ``import ragmeter`` (the one-line gate in pytest,
    # ``ragmeter.testing.assert_scores(result, ...)``): imported on first use, so that a plain
    # import does not load the test doubles.
    if name == "testing":
        import importlib

        return importlib.import_module("ragmeter.testing")
    raise AttributeError(f"module 'ragmeter' has no attribute {name!r}")


def list_metrics() -> list[MetricSpec]:
    """Every registered metric with what it needs."""
    from ragmeter.metrics.registry import all_specs

    return list(all_specs().values())


__all__ = [
    "CacheError",
    "ConfigError",
    "Criterion",
    "DataError",
    "Failure",
    "JudgeError",
    "JudgeReplyError",
    "MetricSpec",
    "MissingColumnError",
    "ModelUnavailableError",
    "RagmeterError",
    "RowResult",
    "RunResult",
    "Sample",
    "Score",
    "Settings",
    "Summary",
    "UnknownMetricError",
    "Usage",
    "__version__",
    "aevaluate",
    "calibrate",
    "evaluate",
    "list_metrics",
    "metric",
]
