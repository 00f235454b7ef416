"""The async core of a run: read rows in batches, score them family by family, write results.

One concurrency limit (inside the judge) bounds judge calls for the whole run; batches are
pipelined so the limit stays busy; a failing family or row becomes failure records and the
run goes on. ``evaluate`` is the sync facade; ``aevaluate`` is for code inside an event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import sys
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace
from itertools import islice
from pathlib import Path
from typing import IO, Any, TypeVar

from ragmeter._version import __version__
from ragmeter.errors import (
    ConfigError,
    DeadlineError,
    OutputError,
    UnavailableError,
    param,
)
from ragmeter.io.activity import Activity, noting, watching
from ragmeter.io.columns import ColumnMap
from ragmeter.io.fingerprint import input_fingerprint
from ragmeter.io.paths import ReplacingWriter, check_outputs, is_stdout, results_lock
from ragmeter.io.readers import Row, RowSource, open_rows
from ragmeter.io.redact import redact_url, redact_value
from ragmeter.io.stdout import results_on_stdout
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.metrics.registry import MetricRef
from ragmeter.models._runtime import use_threads
from ragmeter.result import RunResult, json_record, sidecar_path, spec_record, write_sidecar
from ragmeter.runner.accumulator import Accumulator
from ragmeter.runner.batch_scorer import BatchScorer
from ragmeter.runner.pace import clock_text
from ragmeter.runner.plan import Plan
from ragmeter.runner.progress import (
    Progress,
    ProgressFunction,
    in_notebook,
    library_bars_off,
    make_progress,
)
from ragmeter.runner.repeats import NoiseTally, with_repeat_intervals
from ragmeter.runner.resume import SCORING_SETTINGS, Resumed, load_resumed
from ragmeter.runner.watch import Clock, Watch
from ragmeter.scoring.statistics import Resamples, Summary
from ragmeter.types import RowResult

log = logging.getLogger("ragmeter")

T = TypeVar("T")

#: Batches scored at the same time; two keep the judge's concurrency limit busy at the seams.
BATCHES_IN_FLIGHT = 2
#: Rows of the first batch; each next batch doubles, up to ``Settings.batch_size``. Rows reach
#: the results file a batch at a time, so an interrupted run keeps what was scored in its first
#: seconds (with 256 from the start, a slow family kept nothing for minutes).
FIRST_BATCH = 8


async def aevaluate(
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
    clock: Clock | None = None,
    inputs: Mapping[str, Any] | None = None,
) -> RunResult:
    """Score ``data`` with ``metrics``: :func:`ragmeter.aevaluate` without the report.

    ``outputs`` names other files the caller writes after the run (``{"report": path}``):
    they are checked with ``out`` and the cache before the first row is read, against
    ``data`` and ``inputs``, other files the caller reads (``{"labels": path}``). ``clock``: the
    time the run's watch reads (:mod:`ragmeter.runner.watch`; tests give a fake one).

    A run that stops (a judge gone, the deadline, Ctrl-C, a signal the CLI turns into one)
    keeps every row scored in ``out``, and its run record with the summaries so far and
    ``"stopped"``: why, and how many rows were kept (a resumed run scores the rest).
    """
    settings = settings or Settings()
    if judge is not None:
        settings = replace(settings, judge=judge)
    stream = stream_of(out)
    if stream is not None:
        out = None
    if resume and out is None:
        raise ConfigError(
            f"{param('resume', 'resume=True')} needs {param('out', 'out=PATH')}: the results "
            "file to resume."
        )
    check_run_outputs("data", data, out, settings, outputs, inputs)
    cmap = ColumnMap.from_any(column_map)
    source = open_rows(data)
    plan = Plan.make(metrics, cmap, source, criteria=settings.criteria)
    ctx = RunContext(settings)
    # The models loaded in this run get one thread per worker (put back when it ends).
    threads_before = use_threads(settings.workers)
    lock = results_lock(out, record=sidecar_path(out)) if out is not None else None
    quiet = library_bars_off(tqdm=not plan.exact_only())
    # With results on standard output, whatever else prints there goes to stderr.
    with lock or contextlib.nullcontext(), quiet, results_on_stdout(stream) as stream:
        try:
            plan.build_families(ctx)
            if any(spec.needs_judge for spec in plan.specs):
                judge_obj = ctx.judge()
                preflight = getattr(judge_obj, "preflight", None)
                if preflight is not None:
                    await preflight()
            runner = Runner(plan, cmap, ctx, source, keep_rows=keep_rows, data=data)
            started = dt.datetime.now(dt.UTC)
            try:
                await runner.run(
                    out=Path(out) if out else None,
                    stream=stream,
                    resume=resume,
                    progress=progress,
                    clock=clock,
                )
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
            result = runner.result(started, data_name=source.name)
            result.source = (data, cmap)
        finally:
            await ctx.aclose()
            use_threads(threads_before)
        if out is not None:
            write_sidecar(out, result.info)
    return result


def evaluate(*args: Any, **kwargs: Any) -> RunResult:
    """:func:`aevaluate` from synchronous code: :func:`ragmeter.evaluate` without the report."""
    return run_sync(aevaluate(*args, **kwargs))


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


class Runner:
    """One run's rows in order: stream batches through a BatchScorer, write and accumulate.

    The local run calls :meth:`run`; the Ray engine scores on its cluster and uses the rest
    (resume, the run record, the accumulators and summaries)."""

    def __init__(
        self,
        plan: Plan,
        cmap: ColumnMap,
        ctx: RunContext,
        source: RowSource,
        *,
        keep_rows: bool,
        data: Any = None,
    ) -> None:
        self.plan = plan
        self.ctx = ctx
        self.scorer = BatchScorer(plan, cmap, ctx)
        self.source = source
        self.keep_rows = keep_rows
        #: The input as given (a path, rows in memory), for its fingerprint.
        self.data = data
        self.fingerprint: dict[str, Any] | None = None
        #: Rows of the input read so far (all of them at the end of a run).
        self.input_rows = 0
        self.resumed: Resumed | None = None
        #: Rows of the input not scored again (those a resumed file holds).
        self.skip: set[int] = set()
        self.rows: list[RowResult] = []
        self.acc = {spec.name: Accumulator() for spec in plan.specs}
        #: The judge's noise over its repeats (``Settings.repeats`` above 1), else None.
        self.noise = NoiseTally(ctx.settings.repeats) if ctx.settings.repeats > 1 else None
        #: The bootstrap draws of the summaries, shared by metrics with as many scores.
        self.resamples = Resamples()
        self.n_rows = 0
        # With rows streamed to a file and not kept, the first failures still reach the summary.
        self.first_failures: list[tuple[int, str, str]] = []
        #: Failures by cause other than the row's own ("judge", "infrastructure").
        self.causes: Counter[str] = Counter()
        #: (row, metric, message) of the first failure on the infrastructure.
        self.first_infrastructure: tuple[int, str, str] | None = None
        #: (row, metric, message) of the first failure on the judge's reply.
        self.first_judge: tuple[int, str, str] | None = None
        #: The results file, once this run has written to it (a stop then updates its record).
        self.out: Path | None = None
        #: Rows of batches being scored (a stop leaves them to a resumed run).
        self.rows_in_flight = 0
        #: The results file rows are written to (None: a stream, or no output).
        self.results_path: Path | None = None
        self.display: Progress | None = None

    def count_causes(self, row: RowResult) -> None:
        """Count the causes of a row's failures; keep the first one on the infrastructure."""
        for metric, cause in row.failure_causes.items():
            self.causes[cause] += 1
            if cause == "infrastructure" and self.first_infrastructure is None:
                self.first_infrastructure = (row.index, metric, row.failures.get(metric, ""))
            elif cause == "judge" and self.first_judge is None:
                self.first_judge = (row.index, metric, row.failures.get(metric, ""))

    async def run(
        self,
        *,
        out: Path | None,
        resume: bool,
        progress: bool | ProgressFunction | None,
        stream: IO[str] | None = None,
        clock: Clock | None = None,
    ) -> None:
        """Score every row; results go to ``out`` (a file, with its run record) or to
        ``stream`` (left open). The run's watch looks on beside it (:mod:`.watch`): progress
        lines, stalled endpoints, the deadline (:class:`DeadlineError`)."""
        done = self.open_results(out, resume=resume)
        only = self.resumed.partial if self.resumed is not None else None
        sink: IO[str] | ReplacingWriter | None = stream
        if out is not None and resume:
            sink = out.open("a", encoding="utf-8")
            write_sidecar(out, self.start_record())
            self.out = out
        elif out is not None:
            # Earlier results (and their record) stay until this run has a row to write.
            record = self.start_record()

            def replacing() -> None:
                write_sidecar(out, record)
                self.out = out

            sink = ReplacingWriter(out, before_replace=replacing)
        total = self.source.total
        if total is not None:
            # Every row usually has a score: the summaries' draw is made while rows score.
            self.resamples.prepare_in_background(total)
        clock = clock or Clock()
        remaining = None if total is None else max(total - len(done), 0)
        bar = make_progress(progress, remaining, clock=clock.now)
        self.display = bar
        if self.resumed is not None:
            self.note(resumed_note(out, self.resumed, total))
        counter = _Counter(bar)
        settings = self.ctx.settings
        watch = Watch(
            Activity(),
            rows=lambda: (counter.done, remaining),
            clock=clock,
            display=bar,
            stall_warning=settings.stall_warning,
            deadline=settings.deadline or None,
        )
        finished = False
        self.results_path = out
        try:
            with watching(watch.activity), noting(self.note):
                scoring = asyncio.ensure_future(self._score_all(sink, only, counter))
                looking = asyncio.ensure_future(watch.run())
                try:
                    await asyncio.wait({scoring, looking}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    looking.cancel()
                    if not scoring.done():
                        scoring.cancel()
                        await asyncio.wait({scoring})
                if looking.done() and not looking.cancelled() and looking.exception():
                    raise looking.exception()  # type: ignore[misc]
                if scoring.cancelled():  # the watch ended it: the deadline passed
                    raise DeadlineError(deadline_message(settings.deadline, remaining))
                scoring.result()
            finished = True
        finally:
            try:
                if isinstance(sink, ReplacingWriter):
                    sink.close(commit=finished)
                elif sink is not None and sink is not stream:
                    sink.close()
            except OSError as exc:
                if finished:  # else the error that stopped the run is the one to tell
                    raise results_unwritable(out, exc) from exc
            finally:
                if bar is not None:
                    bar.stop()

    async def _score_all(
        self, sink: IO[str] | ReplacingWriter | None, only: Any, bar: Progress
    ) -> None:
        """Score the batches in order, :data:`BATCHES_IN_FLIGHT` at a time; write each."""
        pending: list[tuple[int, asyncio.Task[list[RowResult]]]] = []
        try:
            for batch in _batches(self._counted(), self.ctx.settings.batch_size, skip=self.skip):
                if self.scorer.stopped is not None:
                    break
                scoring = self.scorer.score(batch, only=only, progress=bar)
                pending.append((len(batch), asyncio.ensure_future(scoring)))
                self.rows_in_flight += len(batch)
                if len(pending) >= BATCHES_IN_FLIGHT:
                    await self._emit_next(pending, sink)
            while pending:
                await self._emit_next(pending, sink)
            if self.scorer.stopped is not None:
                raise self.scorer.stopped
        except BaseException:
            for _, task in pending:
                task.cancel()
            raise

    async def _emit_next(
        self,
        pending: list[tuple[int, asyncio.Task[list[RowResult]]]],
        sink: IO[str] | ReplacingWriter | None,
    ) -> None:
        size, task = pending[0]
        rows = await task
        pending.pop(0)
        self.rows_in_flight -= size
        self._emit(rows, sink)

    def note(self, text: str) -> None:
        """A line for the reader: on the progress display when it takes notes, else logged."""
        note = getattr(self.display, "note", None)
        if note is not None:
            note(text)
        else:
            log.info(text)

    def keep_stopped(self, started: dt.datetime, reason: str, message: str) -> None:
        """After a stop: the results file's run record with the summaries of the rows kept,
        marked ``"stopped"`` (nothing when this run wrote no row there: earlier results stay
        as they were)."""
        if self.out is None:
            return
        info = self.result(started, data_name=self.source.name).info
        if self.fingerprint is not None:
            info["input"] = dict(self.fingerprint)  # not every row was read: no row count
        info["stopped"] = {
            "reason": reason,
            "rows_kept": self.n_rows,
            "rows_in_flight": self.rows_in_flight,
            "message": message,
        }
        write_sidecar(self.out, info)

    def open_results(self, out: Path | None, *, resume: bool, dry_run: bool = False) -> set[int]:
        """Fingerprint the input for ``out``'s run record; on resume, check ``out`` and take
        what stays of it (:mod:`ragmeter.runner.resume`). Returns the rows done. A
        ``dry_run`` checks alike and changes nothing (no folder made, no line cut)."""
        if out is None:
            return self.skip
        self.fingerprint = input_fingerprint(self.data) if self.data is not None else None
        if not dry_run:
            out.parent.mkdir(parents=True, exist_ok=True)
        if not (resume and out.exists() and out.stat().st_size > 0):
            return self.skip
        self.resumed = load_resumed(
            out,
            fingerprint=self.fingerprint,
            data=self.data,
            data_name=self.source.name,
            metrics=[spec.name for spec in self.plan.specs],
            account=self._account,
            scoring=self.scoring(),
            specs=self.plan.specs,
            dry_run=dry_run,
        )
        self.skip = self.resumed.done
        return self.resumed.done

    def _counted(self) -> Iterator[Row]:
        for row in self.source:
            self.input_rows += 1
            yield row
        self._hashed_as_read()

    def _hashed_as_read(self) -> None:
        """Once the input is read to its end, its fingerprint is the hash of the bytes read
        (a file that grew after it was hashed: the record pairs the hash with the rows)."""
        read = self.source.read_hash.hexdigest() if self.source.read_hash else None
        fingerprint = self.fingerprint
        if read is not None and fingerprint is not None and fingerprint.get("source") == "file":
            self.fingerprint = {**fingerprint, "sha256": read}

    def start_record(self) -> dict[str, Any]:
        """The run record written with the first row: which input, which metrics, the
        settings and the column map (a resumed run refuses a change of what decides scores)."""
        return {
            "ragmeter_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(),
            "data": self.source.name,
            "input": self.fingerprint,
            "metrics": {spec.name: spec_record(spec) for spec in self.plan.specs},
            "settings": public_settings(self.ctx.settings),
            "column_map": column_map_record(self.scorer.cmap),
        }

    def scoring(self) -> dict[str, Any]:
        """What decides this run's scores, as the run record writes it."""
        settings = public_settings(self.ctx.settings)
        return {
            **{name: settings.get(name) for name in SCORING_SETTINGS},
            "column_map": column_map_record(self.scorer.cmap),
        }

    def record_info(self) -> dict[str, Any]:
        """The run record's input (with its rows counted), failures by cause, and each
        family's wall seconds (``family_seconds``: its calls' time, overlapping)."""
        info = {**self.cause_info(), "column_map": column_map_record(self.scorer.cmap)}
        info["family_seconds"] = {
            family: round(seconds, 3) for family, seconds in self.scorer.family_seconds.items()
        }
        if self.fingerprint is not None:
            info["input"] = {**self.fingerprint, "rows": self.input_rows}
        return info

    def _account(self, row: RowResult) -> None:
        self._account_rows([row])

    def _account_rows(self, rows: Sequence[RowResult]) -> None:
        """Count ``rows`` in the summaries and keep them (or their first failures)."""
        self.n_rows += len(rows)
        for name, acc in self.acc.items():
            acc.add_rows(rows, name)
        if self.noise is not None:
            judged = {spec.name: spec for spec in self.plan.specs if spec.needs_judge}
            for row in rows:
                self.noise.add(row, judged)
        for row in rows:
            if row.failure_causes:
                self.count_causes(row)
        if self.keep_rows:
            self.rows.extend(rows)
            return
        for row in rows:
            if row.failures and len(self.first_failures) < 5:
                self.first_failures.extend((row.index, m, msg) for m, msg in row.failures.items())

    def _emit(self, rows: list[RowResult], sink: IO[str] | ReplacingWriter | None) -> None:
        if self.scorer.stopped is not None:
            # The rows the stop caught are scored again by a resumed run; the rest are kept.
            rows = [row for row in rows if not row.retried]
        if self.resumed is not None:
            rows = [self.resumed.completed(row) for row in rows]
        if sink is not None:
            try:
                for row in rows:
                    sink.write(json_record(row.to_json()) + "\n")
                sink.flush()
            except OSError as exc:
                if self.results_path is None:  # a stream (a closed pipe): the caller's to tell
                    raise
                raise results_unwritable(self.results_path, exc) from exc
        # Counted once written: a stop's record counts the rows the file holds.
        self._account_rows(rows)

    def result(self, started: dt.datetime, *, data_name: str) -> RunResult:
        return make_result(
            self.plan,
            self.ctx,
            self.acc,
            rows=self.rows,
            n_rows=self.n_rows,
            started=started,
            data_name=data_name,
            resamples=self.resamples,
            noise=self.noise,
            extra_info={
                **self.record_info(),
                **({} if self.keep_rows else {"first_failures": self.first_failures[:5]}),
            },
        )

    def cause_info(self) -> dict[str, Any]:
        """The run record's count of failures by cause (rows retried by a resumed run)."""
        return {
            "failure_causes": {cause: self.causes[cause] for cause in ("judge", "infrastructure")},
            "first_infrastructure_failure": self.first_infrastructure,
            "first_judge_failure": self.first_judge,
        }


def make_result(
    plan: Plan,
    ctx: RunContext,
    acc: Mapping[str, Accumulator],
    *,
    rows: list[RowResult],
    n_rows: int,
    started: dt.datetime,
    data_name: str,
    extra_info: Mapping[str, Any] | None = None,
    resamples: Resamples | None = None,
    noise: NoiseTally | None = None,
) -> RunResult:
    """Summaries (one metric at a time, releasing its spill file; ``resamples``: the
    bootstrap draws, perhaps made ahead) and the run's record. With ``noise`` (the judge's
    repeats), the judged metrics' intervals resample rows and repeats, and the record holds
    ``judge_noise``."""
    summary = _summaries(acc, resamples or Resamples())
    if noise is not None:
        summary = with_repeat_intervals(summary, noise)
    specs = {s.name: s for s in plan.specs}
    usage = ctx.usage
    info: dict[str, Any] = {
        "ragmeter_version": __version__,
        "created": started.isoformat(),
        "finished": dt.datetime.now(dt.UTC).isoformat(),
        "data": data_name,
        "n_rows": n_rows,
        "metrics": {name: spec_record(spec) for name, spec in specs.items()},
        "skipped": dict(plan.skipped),
        "settings": public_settings(ctx.settings),
        **ctx.describe(),
        **(extra_info or {}),
        **({"judge_noise": noise.record()} if noise is not None else {}),
        "usage": usage.as_dict(),
        "summary": {name: s.as_dict() for name, s in summary.items()},
    }
    info = redact_value(info)
    return RunResult(rows=rows, summary=summary, usage=usage, info=info, specs=specs)


def _summaries(acc: Mapping[str, Accumulator], resamples: Resamples) -> dict[str, Summary]:
    """Each metric's summary, one metric at a time (only one metric's scores are in memory
    at once); metrics with as many defined scores share their bootstrap draws."""
    return {name: a.summary(resamples) for name, a in acc.items()}


def public_settings(settings: Settings) -> dict[str, Any]:
    """Settings as recorded in results and reports: no secrets, objects by name."""
    out: dict[str, Any] = {}
    # Field by field, not dataclasses.asdict: that deep-copies, and a judge object (locks, a
    # cache connection) cannot be copied.
    for item in fields(settings):
        key, value = item.name, getattr(settings, item.name)
        if key == "api_key":
            continue
        if key == "repeats" and value == 1:
            continue  # recorded above 1 only: a record without it had one repeat
        if not isinstance(value, str | int | float | bool | tuple | list | type(None)):
            value = getattr(value, "name", type(value).__name__)
        if key == "base_url" and isinstance(value, str):
            value = redact_url(value)
        if key == "criteria":  # recorded when given (a record without it had none)
            if not value:
                continue
            value = tuple(criterion.as_dict() for criterion in value)
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def column_map_record(cmap: ColumnMap) -> dict[str, str]:
    """A column map as the run record holds it: each field's column or path (a callable by
    its name)."""
    return {
        name: source
        if isinstance(source, str)
        else f"callable {getattr(source, '__qualname__', type(source).__name__)}"
        for name, source in sorted(cmap.sources.items())
    }


def _batches(rows: Iterable[Row], size: int, *, skip: set[int]) -> Iterator[list[Row]]:
    """Batches of ``rows`` (less those in ``skip``): :data:`FIRST_BATCH` rows, then twice as
    many each time up to ``size``."""
    it = (r for r in rows if r.index not in skip) if skip else iter(rows)
    n = min(FIRST_BATCH, size)
    while batch := list(islice(it, n)):
        yield batch
        n = min(2 * n, size)


Callback = Callable[[RowResult], None]


class _Counter:
    """Rows done, counted on their way to the progress display (the watch reads them)."""

    def __init__(self, display: Progress | None) -> None:
        self.display = display
        self.done = 0

    def advance(self, rows: int) -> None:
        self.done += rows
        if self.display is not None:
            self.display.advance(rows)

    def stop(self) -> None:
        pass


def resumed_note(out: Path | None, resumed: Resumed, total: int | None) -> str:
    """What a resumed run reuses of ``out``, and what it scores."""
    reused = len(resumed.done)
    partial = len(resumed.partial)
    extra = f", {partial} rows get the metrics they lack" if partial else ""
    rest = "" if total is None else f"; {max(total - reused, 0)} of {total} rows to score"
    return f"{param('resume', 'resume=True')}: {reused} scored rows of {out} reused{extra}{rest}."


def results_unwritable(path: Path | None, exc: OSError) -> OutputError:
    """The error of a run whose results file cannot be written (a full disk, a quota)."""
    problem = exc.strerror or str(exc) or type(exc).__name__
    return OutputError(
        f"Writing the results to {path} failed: {problem}. Free space (or raise the quota) "
        "where it lies."
    )


def deadline_message(deadline: float | None, remaining: int | None) -> str:
    """Why a run stopped at its deadline, and what becomes of the rows not scored."""
    rows = "" if remaining is None else f" of the {remaining} rows this run was to score"
    return (
        f"The run's deadline of {clock_text(deadline or 0)} ({deadline:g} s; "
        f"{param('deadline', 'Settings(deadline=...)')}) passed. The rows not scored{rows} are "
        f"not written: {param('resume', 'resume=True')} scores them. Raise "
        f"{param('deadline', 'the deadline')}, or give 0 for none."
    )
