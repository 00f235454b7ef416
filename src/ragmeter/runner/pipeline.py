"""The one way a run starts: check the outputs, map the columns, open the rows, plan, then
score with an engine and write the run record once.

:func:`score_data` is :func:`ragmeter.aevaluate` without the report; the engine (the local
one, :class:`~ragmeter.runner.core.LocalEngine`, or the Ray engine) only scores batches:
the :class:`~ragmeter.runner.core.Runner` writes and counts them, whichever engine it is.
:func:`run_sync` runs a coroutine from synchronous code (the sync ``evaluate``).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import sys
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, TypeVar

from ragmeter.errors import ConfigError, DeadlineError, OutputError, UnavailableError, param
from ragmeter.io.columns import ColumnMap
from ragmeter.io.paths import check_outputs, is_stdout, results_lock
from ragmeter.io.readers import open_rows
from ragmeter.io.rows import RowSource
from ragmeter.io.stdout import results_on_stdout
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.metrics.registry import MetricRef
from ragmeter.models._runtime import use_threads
from ragmeter.result import RunResult, sidecar_path, write_sidecar
from ragmeter.runner.core import Engine, LocalEngine, Runner
from ragmeter.runner.plan import Plan
from ragmeter.runner.progress import ProgressFunction, in_notebook, library_bars_off
from ragmeter.runner.watch import Clock

__all__ = [
    "PreparedRun",
    "check_run_outputs",
    "prepare_run",
    "run_sync",
    "score_data",
    "stopped_message",
    "stream_of",
]

T = TypeVar("T")


async def score_data(
    data: Any,
    metrics: Sequence[MetricRef] | str | None = None,
    *,
    column_map: Mapping[str, Any] | Iterable[str] | None = None,
    judge: Any = None,
    settings: Settings | None = None,
    out: str | Path | IO[str] | None = None,
    progress: bool | ProgressFunction | None = None,
    resume: bool = False,
    keep_rows: bool = True,
    outputs: Mapping[str, str | Path | None] | None = None,
    inputs: Mapping[str, Any] | None = None,
    clock: Clock | None = None,
    engine: Engine | None = None,
) -> RunResult:
    """Score ``data`` with ``metrics`` on ``engine`` (the local one by default):
    :func:`ragmeter.aevaluate` without the report.

    ``outputs`` names other files the caller writes after the run (``{"report": path}``):
    they are checked with ``out`` and the cache before the first row is read, against
    ``data`` and ``inputs``, other files the caller reads (``{"labels": path}``). ``clock``: the
    time the run's watch reads (:mod:`ragmeter.runner.watch`; tests give a fake one).

    A run that stops (a judge gone, the deadline, Ctrl-C, a signal the CLI turns into one)
    keeps every row scored in ``out``, and its run record with the summaries so far and
    ``"stopped"``: why, and how many rows were kept (a resumed run scores the rest).
    """
    run = prepare_run(
        data,
        metrics,
        column_map=column_map,
        judge=judge,
        settings=settings,
        out=out,
        resume=resume,
        keep_rows=keep_rows,
        outputs=outputs,
        inputs=inputs,
        engine=engine,
    )
    lock = results_lock(run.out, record=sidecar_path(run.out)) if run.out is not None else None
    with lock or contextlib.nullcontext():
        return await run.score(progress=progress, clock=clock)


@dataclass(slots=True)
class PreparedRun:
    """A run checked and planned, before its first judge call: what :func:`prepare_run`
    decided."""

    data: Any
    source: RowSource
    cmap: ColumnMap
    plan: Plan
    settings: Settings
    engine: Engine
    #: The results file (None: a stream, or no output).
    out: Path | None
    #: The text stream results go to (``out="-"`` or an open stream), or None.
    stream: IO[str] | None
    resume: bool
    keep_rows: bool

    async def score(
        self, *, progress: bool | ProgressFunction | None, clock: Clock | None = None
    ) -> RunResult:
        """Score every row on the engine; a stop keeps what was written (see
        :func:`score_data`). The caller holds the results file's lock."""
        plan, settings = self.plan, self.settings
        ctx = RunContext(settings)
        # The models loaded in this run get one thread per worker (put back when it ends).
        threads_before = use_threads(settings.workers)
        quiet = library_bars_off(tqdm=not plan.exact_only())
        # With results on standard output, whatever else prints there goes to stderr.
        on_stdout = results_on_stdout(self.stream) if self.stream else contextlib.nullcontext()
        with quiet, on_stdout as stream:
            try:
                plan.build_families(ctx)
                await _preflight(ctx, plan)
                runner = Runner(
                    plan,
                    self.cmap,
                    ctx,
                    self.source,
                    keep_rows=self.keep_rows,
                    data=self.data,
                    engine=self.engine,
                )
                started = dt.datetime.now(dt.UTC)
                await _run_keeping_stops(
                    runner, started, self.out, self.resume, stream, progress, clock
                )
                result = runner.result(started, data_name=self.source.name)
                result.source = (self.data, self.cmap)
            finally:
                await ctx.aclose()
                use_threads(threads_before)
            if self.out is not None:
                write_sidecar(self.out, result.info)
        return result


def prepare_run(
    data: Any,
    metrics: Sequence[MetricRef] | str | None = None,
    *,
    column_map: Mapping[str, Any] | Iterable[str] | None = None,
    judge: Any = None,
    settings: Settings | None = None,
    out: str | Path | IO[str] | None = None,
    resume: bool = False,
    keep_rows: bool = True,
    outputs: Mapping[str, str | Path | None] | None = None,
    inputs: Mapping[str, Any] | None = None,
    engine: Engine | None = None,
) -> PreparedRun:
    """Everything a run checks before any work: the options, what the engine can run, that
    no output is an input or another output; then the column map, the rows and the plan."""
    settings = settings or Settings()
    if judge is not None:
        settings = replace(settings, judge=judge)
    engine = engine or LocalEngine()
    stream = stream_of(out)
    if stream is not None:
        out = None
    if resume and out is None:
        raise ConfigError(
            f"{param('resume', 'resume=True')} needs {param('out', 'out=PATH')}: the results "
            "file to resume."
        )
    engine.check(data, settings, streamed=stream is not None)
    check_run_outputs("data", data, out, settings, outputs, inputs)
    cmap = ColumnMap.from_any(column_map)
    source = open_rows(data)
    plan = Plan.make(metrics, cmap, source, criteria=settings.criteria)
    return PreparedRun(
        data=data,
        source=source,
        cmap=cmap,
        plan=plan,
        settings=settings,
        engine=engine,
        out=Path(out) if out else None,
        stream=stream,
        resume=resume,
        keep_rows=keep_rows,
    )


async def _preflight(ctx: RunContext, plan: Plan) -> None:
    """Check the judge once (a bad key, an unknown model) before any row is scored."""
    if any(spec.needs_judge for spec in plan.specs):
        preflight = getattr(ctx.judge(), "preflight", None)
        if preflight is not None:
            await preflight()


async def _run_keeping_stops(
    runner: Runner,
    started: dt.datetime,
    out: Path | None,
    resume: bool,
    stream: IO[str] | None,
    progress: bool | ProgressFunction | None,
    clock: Clock | None,
) -> None:
    """:meth:`Runner.run`; after a stop, the run record of what was kept, and the error
    saying what to do next."""
    try:
        await runner.run(out=out, stream=stream, resume=resume, progress=progress, clock=clock)
    except UnavailableError as exc:
        message = stopped_message(exc, runner.n_rows, out)
        reason = "deadline" if isinstance(exc, DeadlineError) else "unavailable"
        try:
            runner.keep_stopped(started, reason, message)
        except OutputError as also:  # a full disk may refuse the record too
            message = f"{message} {also}"
        raise type(exc)(message) from None
    except (asyncio.CancelledError, KeyboardInterrupt):
        runner.keep_stopped(started, "interrupted", "interrupted (Ctrl-C or a signal)")
        raise


def run_sync(run: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from synchronous code: ``asyncio.run``, or in a notebook
    (whose kernel already runs a loop in this thread) in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run)
    if not in_notebook():
        run.close()
        raise RuntimeError(
            "evaluate() was called inside a running event loop (a server, or another "
            "asyncio program): it would block that loop. Use 'await ragmeter.aevaluate(...)' "
            "there instead."
        )
    # A notebook's kernel runs a loop in this thread, and a cell blocks anyway: run this
    # one in a worker thread and wait for it, as users of other tools call evaluate() there.
    with ThreadPoolExecutor(1, thread_name_prefix="ragmeter-evaluate") as pool:
        return pool.submit(asyncio.run, run).result()


def stream_of(out: Any) -> IO[str] | None:
    """The text stream ``out`` names (``"-"`` is standard output), or None for a path."""
    if is_stdout(out):
        return sys.stdout
    if out is None or isinstance(out, str | Path):
        return None
    if not callable(getattr(out, "write", None)):
        raise ConfigError(
            f"out must be a file path, '-' (standard output) or an open text stream. "
            f"Got {type(out).__name__}."
        )
    return out


def check_run_outputs(
    data_name: str,
    data: Any,
    out: str | Path | None,
    settings: Settings,
    outputs: Mapping[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> None:
    """Before any work: no output of a run (``out``, its run record, ``outputs`` such as the
    report, the cache) is an input (``data``, ``inputs`` such as the labels, what their run
    records name) or another output; each named by its parameter
    (:func:`ragmeter.errors.param`; ``data_name`` is the input's)."""
    check_outputs(
        {
            param(data_name): data,
            **{param(name): path for name, path in (inputs or {}).items()},
        },
        {
            param("out"): out,
            f"the run record of {param('out')}": sidecar_path(out) if out is not None else None,
            **{param(name): path for name, path in (outputs or {}).items()},
            param("cache_path"): settings.cache_path if settings.use_cache else None,
        },
    )


def stopped_message(exc: UnavailableError, n_rows: int, out: str | Path | None) -> str:
    """Why a run stopped, and what of it was kept."""
    if out is None:
        return (
            f"{exc} The run stopped. Pass {param('out', 'out=PATH')} to keep the rows scored "
            "before a stop."
        )
    return (
        f"{exc} The run stopped; {n_rows} scored rows are in {out}. Fix the cause, then rerun "
        f"with {param('resume', 'resume=True')} to score the rest."
    )
