"""A run's scoring loop: an engine scores batches in input order; the :class:`Runner`
writes each to the results file and counts it in the summaries.

The engine is the one part that differs between a run in this process (:class:`LocalEngine`:
batches pipelined through a :class:`~ragmeter.runner.batch_scorer.BatchScorer`, one
concurrency limit inside the judge) and one on a cluster (the Ray engine). Everything else,
resume, the results file and its run record, the watch, the summaries, is the runner's, for
every engine. :mod:`ragmeter.runner.pipeline` sets a run up and starts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import islice
from pathlib import Path
from typing import IO, Any, ClassVar, Protocol

from ragmeter._version import __version__
from ragmeter.errors import DeadlineError, OutputError
from ragmeter.io.activity import Activity, noting, watching
from ragmeter.io.columns import ColumnMap
from ragmeter.io.fingerprint import input_fingerprint
from ragmeter.io.paths import ReplacingWriter
from ragmeter.io.redact import redact_url, redact_value
from ragmeter.io.rows import Row, RowSource
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.result import RunResult, json_record, spec_record, write_sidecar
from ragmeter.runner.accumulator import Accumulator
from ragmeter.runner.batch_scorer import BatchScorer
from ragmeter.runner.plan import Plan
from ragmeter.runner.progress import Progress, ProgressFunction, make_progress
from ragmeter.runner.repeats import NoiseTally, with_repeat_intervals
from ragmeter.runner.resume import SCORING_SETTINGS, Resumed, load_resumed
from ragmeter.runner.watch import Clock, Watch, deadline_message
from ragmeter.scoring.statistics import Resamples, Summary
from ragmeter.types import RowResult, Usage

log = logging.getLogger("ragmeter")

#: Batches scored at the same time; two keep the judge's concurrency limit busy at the seams.
BATCHES_IN_FLIGHT = 2
#: Rows of the first batch; each next batch doubles, up to ``Settings.batch_size``. Rows reach
#: the results file a batch at a time, so an interrupted run keeps what was scored in its first
#: seconds (with 256 from the start, a slow family kept nothing for minutes).
FIRST_BATCH = 8


@dataclass(frozen=True, slots=True)
class ScoreColumn:
    """One metric's scores of a batch in bulk: its defined scores, and how many rows had
    none (undefined) or failed."""

    values: Sequence[float]
    undefined: int
    failed: int


@dataclass(slots=True)
class ScoredBatch:
    """Rows an engine scored, in input order, as the runner writes and counts them."""

    #: Each row's line of the results file (JSON, without the newline).
    lines: list[str]
    #: The rows: every one, or, with :attr:`columns`, those whose counts need more than a
    #: score (failures, verdict and refusal counts, repeats; every one to keep the rows).
    rows: list[RowResult]
    #: Each metric's scores in bulk (an engine that sends columns), or None: from the rows.
    columns: Mapping[str, ScoreColumn] | None = None
    #: Judge usage spent elsewhere (the Ray engine's actors), added to the run's.
    usage: Usage | None = None


class Engine(Protocol):
    """What scores a run's batches: the runner plans, opens rows and results, checks the
    outputs, writes and counts; the engine only scores.

    ``own_bars``: the engine shows progress of its own (Ray Data's bars); the runner then
    reports only to a progress function."""

    own_bars: ClassVar[bool]

    def check(self, data: Any, settings: Settings, *, streamed: bool) -> None:
        """Refuse, before any work, what this engine cannot run (``streamed``: results go
        to a text stream)."""

    def scored(self, runner: Runner, display: Progress | None) -> AsyncIterator[ScoredBatch]:
        """The run's rows not yet done (``runner.skip``), scored, in input order; rows
        done advance ``display``."""
        ...


class Runner:
    """One run's rows in order: its engine scores batches; the runner writes and counts them
    (resume, the results file and its run record, the accumulators and summaries)."""

    def __init__(
        self,
        plan: Plan,
        cmap: ColumnMap,
        ctx: RunContext,
        source: RowSource,
        *,
        keep_rows: bool,
        data: Any = None,
        engine: Engine | None = None,
    ) -> None:
        self.plan = plan
        self.cmap = cmap
        self.ctx = ctx
        self.engine: Engine = engine or LocalEngine()
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
        #: What the run asked of the progress display (an engine with bars of its own reads it).
        self.progress: bool | ProgressFunction | None = None
        #: Per family, the wall seconds its calls ran (the local engine's scorer fills it).
        self.family_seconds: dict[str, float] = {}
        #: The run record's ``engine`` entry (an engine other than the local one says which).
        self.engine_record: dict[str, Any] | None = None

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
        sink = self._open_sink(out, resume=resume) if out is not None else stream
        total = self.source.total
        if total is not None:
            # Every row usually has a score: the summaries' draw is made while rows score.
            self.resamples.prepare_in_background(total)
        clock = clock or Clock()
        remaining = None if total is None else max(total - len(done), 0)
        self.progress = progress
        own_bars = self.engine.own_bars and not callable(progress)
        bar = make_progress(False if own_bars else progress, remaining, clock=clock.now)
        self.display = bar
        if self.resumed is not None:
            self.note(self.resumed.note(out, total))
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
                scoring = asyncio.ensure_future(self._score_all(sink, counter))
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

    def _open_sink(self, out: Path, *, resume: bool) -> IO[str] | ReplacingWriter:
        """Where rows go in ``out``: appended on resume (its run record written now), else
        to a file that replaces ``out`` with its first row (earlier results, and their
        record, stay until then)."""
        record = self.start_record()
        if resume:
            sink = out.open("a", encoding="utf-8")
            write_sidecar(out, record)
            self.out = out
            return sink

        def replacing() -> None:
            write_sidecar(out, record)
            self.out = out

        return ReplacingWriter(out, before_replace=replacing)

    async def _score_all(self, sink: IO[str] | ReplacingWriter | None, bar: Progress) -> None:
        """Write and count each batch the engine scored, in order."""
        async with contextlib.aclosing(self.engine.scored(self, bar)) as batches:
            async for batch in batches:
                self._emit(batch, sink)

    def rows_to_score(self) -> Iterator[Row]:
        """The input's rows not done yet (all but :attr:`skip`), counted as read."""
        rows = self._counted()
        skip = self.skip
        return (row for row in rows if row.index not in skip) if skip else rows

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
            "column_map": column_map_record(self.cmap),
        }

    def scoring(self) -> dict[str, Any]:
        """What decides this run's scores, as the run record writes it."""
        settings = public_settings(self.ctx.settings)
        return {
            **{name: settings.get(name) for name in SCORING_SETTINGS},
            "column_map": column_map_record(self.cmap),
        }

    def record_info(self) -> dict[str, Any]:
        """The run record's input (with its rows counted), failures by cause, and each
        family's wall seconds (``family_seconds``: its calls' time, overlapping)."""
        info = {**self.cause_info(), "column_map": column_map_record(self.cmap)}
        info["family_seconds"] = {
            family: round(seconds, 3) for family, seconds in self.family_seconds.items()
        }
        if self.fingerprint is not None:
            info["input"] = {**self.fingerprint, "rows": self.input_rows}
        return info

    def _account(self, row: RowResult) -> None:
        """Count a row a resumed results file keeps."""
        self._count([row])

    def _count(
        self,
        rows: Sequence[RowResult],
        columns: Mapping[str, ScoreColumn] | None = None,
        n_rows: int | None = None,
    ) -> None:
        """Count ``n_rows`` rows (``rows``, or with ``columns`` their scores in bulk and
        ``rows`` those that need more) in the summaries; keep them (or their first failures)."""
        self.n_rows += len(rows) if n_rows is None else n_rows
        for name, acc in self.acc.items():
            if columns is None:
                acc.add_rows(rows, name)
            else:
                column = columns[name]
                acc.add_column(column.values, undefined=column.undefined, failed=column.failed)
                acc.count_details(rows, name)
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

    def _emit(self, batch: ScoredBatch, sink: IO[str] | ReplacingWriter | None) -> None:
        if sink is not None:
            try:
                sink.writelines(f"{line}\n" for line in batch.lines)
                sink.flush()
            except OSError as exc:
                if self.results_path is None:  # a stream (a closed pipe): the caller's to tell
                    raise
                raise results_unwritable(self.results_path, exc) from exc
        # Counted once written: a stop's record counts the rows the file holds.
        self._count(batch.rows, batch.columns, len(batch.lines))
        if batch.usage is not None:
            self.ctx.usage.add(batch.usage)

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
                **({"engine": self.engine_record} if self.engine_record is not None else {}),
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


class LocalEngine:
    """Scores a run in this process: batches of :data:`FIRST_BATCH` rows, then twice as
    many each time up to ``Settings.batch_size``, :data:`BATCHES_IN_FLIGHT` at a time, each
    through one :class:`BatchScorer`; the judge's concurrency limit bounds its calls."""

    own_bars: ClassVar[bool] = False

    def check(self, data: Any, settings: Settings, *, streamed: bool) -> None:
        """Every input, output and setting runs here."""

    async def scored(self, runner: Runner, display: Progress | None) -> AsyncIterator[ScoredBatch]:
        scorer = BatchScorer(runner.plan, runner.cmap, runner.ctx)
        runner.family_seconds = scorer.family_seconds
        resumed = runner.resumed
        only = resumed.partial if resumed is not None else None
        pending: list[tuple[int, asyncio.Task[list[RowResult]]]] = []
        try:
            for batch in _batches(runner.rows_to_score(), runner.ctx.settings.batch_size):
                if scorer.stopped is not None:
                    break
                scoring = scorer.score(batch, only=only, progress=display)
                pending.append((len(batch), asyncio.ensure_future(scoring)))
                runner.rows_in_flight += len(batch)
                if len(pending) >= BATCHES_IN_FLIGHT:
                    yield await _next_scored(pending, runner, scorer)
            while pending:
                yield await _next_scored(pending, runner, scorer)
            if scorer.stopped is not None:
                raise scorer.stopped
        finally:
            for _, task in pending:
                task.cancel()


async def _next_scored(
    pending: list[tuple[int, asyncio.Task[list[RowResult]]]], runner: Runner, scorer: BatchScorer
) -> ScoredBatch:
    """The first pending batch, once scored, as the runner writes it."""
    size, task = pending[0]
    rows = await task
    pending.pop(0)
    runner.rows_in_flight -= size
    if scorer.stopped is not None:
        # The rows the stop caught are scored again by a resumed run; the rest are kept.
        rows = [row for row in rows if not row.retried]
    if runner.resumed is not None:
        rows = [runner.resumed.completed(row) for row in rows]
    return ScoredBatch([json_record(row.to_json()) for row in rows], rows)


def _batches(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    """Batches of ``rows``: :data:`FIRST_BATCH` rows, then twice as many each time up to
    ``size``."""
    it = iter(rows)
    n = min(FIRST_BATCH, size)
    while batch := list(islice(it, n)):
        yield batch
        n = min(2 * n, size)


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


def results_unwritable(path: Path | None, exc: OSError) -> OutputError:
    """The error of a run whose results file cannot be written (a full disk, a quota)."""
    problem = exc.strerror or str(exc) or type(exc).__name__
    return OutputError(
        f"Writing the results to {path} failed: {problem}. Free space (or raise the quota) "
        "where it lies."
    )
