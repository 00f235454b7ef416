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
import tempfile
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Coroutine, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields, replace
from itertools import islice
from operator import attrgetter
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from ragmeter._version import __version__
from ragmeter.errors import (
    ConfigError,
    DataError,
    JudgeUnavailableError,
    ModelUnavailableError,
    failure_cause,
)
from ragmeter.io.columns import ColumnMap, to_samples
from ragmeter.io.fingerprint import input_fingerprint
from ragmeter.io.paths import check_outputs, is_stdout, results_lock
from ragmeter.io.readers import Row, RowSource, open_rows
from ragmeter.io.redact import known_secrets, redact_url, redact_value
from ragmeter.metrics import registry
from ragmeter.metrics.aio import gather_or_cancel
from ragmeter.metrics.base import MetricFamily, Outcome, RunContext, Settings
from ragmeter.metrics.progress import reporting_to
from ragmeter.result import RunResult, json_record, sidecar_path, spec_record, write_sidecar
from ragmeter.runner.progress import (
    Progress,
    ProgressFunction,
    in_notebook,
    library_bars_off,
    make_progress,
)
from ragmeter.runner.resume import Resumed, load_resumed
from ragmeter.scoring.statistics import BOOTSTRAP_MAX_N, Resamples, Summary, summarize
from ragmeter.types import Failure, MetricSpec, RowResult, Sample, Score

log = logging.getLogger("ragmeter")

T = TypeVar("T")

#: Batches scored at the same time; two keep the judge's concurrency limit busy at the seams.
BATCHES_IN_FLIGHT = 2
#: Rows a mapped path is looked up in before scoring: a path none of them has is a typo.
PATH_CHECK_ROWS = 20
#: Families that need neither a judge nor a model.
EXACT_FAMILIES = frozenset({"lexical", "retrieval"})


async def aevaluate(
    data: Any,
    metrics: Sequence[str] | str | None = None,
    *,
    column_map: Mapping[str, Any] | Iterable[str] | None = None,
    judge: Any = None,
    settings: Settings | None = None,
    out: str | Path | IO[str] | None = None,
    progress: bool | ProgressFunction | None = None,
    resume: bool = False,
    keep_rows: bool = True,
    outputs: Mapping[str, str | Path | None] | None = None,
) -> RunResult:
    """Score ``data`` with ``metrics``: :func:`ragmeter.aevaluate` without the report.

    ``outputs`` names other files the caller writes after the run (``{"report": path}``):
    they are checked with ``out`` and the cache before the first row is read.
    """
    settings = settings or Settings()
    if judge is not None:
        settings = replace(settings, judge=judge)
    stream = stream_of(out)
    if stream is not None:
        out = None
    if resume and out is None:
        raise ConfigError("resume=True needs out=PATH: the results file to resume.")
    check_outputs(
        {"data": data},
        {
            "out": out,
            "the run record of out": sidecar_path(out) if out is not None else None,
            **(outputs or {}),
            "cache_path": settings.cache_path if settings.use_cache else None,
        },
    )
    cmap = ColumnMap.from_any(column_map)
    source = open_rows(data)
    plan = Plan.make(metrics, cmap, source)
    ctx = RunContext(settings)
    lock = results_lock(out, record=sidecar_path(out)) if out is not None else None
    quiet = library_bars_off(tqdm=not plan.exact_only())
    with lock or contextlib.nullcontext(), quiet:
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
                )
            except JudgeUnavailableError as exc:
                raise JudgeUnavailableError(stopped_message(exc, runner.n_rows, out)) from None
            result = runner.result(started, data_name=source.name)
            result.source = (data, cmap)
        finally:
            await ctx.aclose()
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


def stopped_message(exc: JudgeUnavailableError, n_rows: int, out: str | Path | None) -> str:
    """Why a run stopped, and what of it was kept."""
    if out is None:
        return f"{exc} The run stopped. Pass out=PATH to keep the rows scored before a stop."
    return (
        f"{exc} The run stopped; {n_rows} scored rows are in {out}. Fix the judge, then rerun "
        "with --resume to score the rest."
    )


@dataclass(slots=True)
class Plan:
    """Which metrics run, grouped by family, and which were skipped (auto mode)."""

    specs: list[MetricSpec]
    auto: bool
    skipped: dict[str, str] = field(default_factory=dict)
    families: dict[str, MetricFamily] = field(default_factory=dict)

    @classmethod
    def make(cls, metrics: Sequence[str] | str | None, cmap: ColumnMap, source: RowSource) -> Plan:
        if isinstance(metrics, str):
            metrics = [m.strip() for m in metrics.split(",") if m.strip()]
        if metrics is not None and not metrics:
            raise ConfigError(
                "The metrics list is empty. Name metrics (e.g. 'k_precision,mrr'; "
                "`ragmeter metrics` lists them) or leave it out to run every metric whose "
                "fields are present."
            )
        if metrics:
            specs = registry.resolve(metrics)
            needed: dict[str, list[str]] = {}
            for spec in specs:
                for fld in spec.requires:
                    needed.setdefault(fld, []).append(spec.name)
            cmap.check_columns(needed, source.columns)
            cmap.check_paths(row.data for row in source.peek(PATH_CHECK_ROWS))
            return cls(specs, auto=False)
        cmap.check_paths(row.data for row in source.peek(PATH_CHECK_ROWS))
        present = {f for f in _all_fields() if cmap.source_for(f, source.columns) is not None}
        specs, skipped = [], {}
        for spec in registry.all_specs().values():
            lacking = [f for f in spec.requires if f not in present]
            if lacking:
                skipped[spec.name] = f"no column for {', '.join(lacking)}"
            else:
                specs.append(spec)
        if not specs:
            raise DataError(
                "No metric can run on this data: none of the fields the metrics need were found. "
                f"Columns found: {', '.join(source.columns) or '(none)'}. Map columns with "
                "--column FIELD=COLUMN; see 'ragmeter metrics' for what each metric needs."
            )
        return cls(specs, auto=True, skipped=skipped)

    def exact_only(self) -> bool:
        """Whether every metric is arithmetic on the data (no judge, no model)."""
        return all(spec.family in EXACT_FAMILIES for spec in self.specs)

    def by_family(self) -> dict[str, list[MetricSpec]]:
        out: dict[str, list[MetricSpec]] = {}
        for spec in self.specs:
            out.setdefault(spec.family, []).append(spec)
        return out

    def build_families(self, ctx: RunContext) -> None:
        for family, specs in self.by_family().items():
            try:
                self.families[family] = registry.family_module(family).build(ctx)
            except (ModelUnavailableError, ImportError) as exc:
                if not self.auto:
                    if isinstance(exc, ImportError):
                        raise ModelUnavailableError(
                            f"Metrics {', '.join(s.name for s in specs)} need a package that is "
                            f"not installed ({exc}). Install the extra: pip install "
                            "'ragmeter[local]'."
                        ) from exc
                    raise
                for spec in specs:
                    self.skipped[spec.name] = str(exc)
                log.info("Skipping %s: %s", ", ".join(s.name for s in specs), exc)
        self.specs = [s for s in self.specs if s.family in self.families]
        if not self.specs:
            raise ModelUnavailableError(
                "No metric can run: " + "; ".join(f"{k}: {v}" for k, v in self.skipped.items())
            )


def _all_fields() -> tuple[str, ...]:
    from ragmeter.types import FIELDS

    return FIELDS


#: Defined scores one metric keeps in memory before they spill to a temporary file.
SPILL_AFTER = 65_536


@dataclass(slots=True)
class Accumulator:
    """Counts and defined scores of one metric, with flat memory however long the run.

    Fewer than ``spill_after`` scores stay in memory between calls (a call adds one row, a
    batch of rows or a chunk of scores); past that they are appended to an anonymous
    temporary file (float64) that disappears when closed. ``summary()`` reads the scores of
    this one metric back (exact median and bootstrap need them all) and closes the file.
    """

    spill_after: int = field(default_factory=lambda: SPILL_AFTER)
    values: array = field(default_factory=lambda: array("d"))
    undefined: int = 0
    failed: int = 0
    spilled: int = 0
    _spill: IO[bytes] | None = None

    def add(self, row: RowResult, metric: str) -> None:
        self.add_rows((row,), metric)

    def add_rows(self, rows: Iterable[RowResult], metric: str) -> None:
        """:meth:`add` of each row, in order; fewer than ``spill_after`` scores stay in memory
        after either."""
        values = self.values
        failed = undefined = 0
        for row in rows:
            if metric in row.failures:
                failed += 1
            elif (value := row.scores.get(metric)) is None:
                undefined += 1
            else:
                values.append(value)
        self.failed += failed
        self.undefined += undefined
        if len(values) >= self.spill_after:
            self._flush()

    def extend(self, scores: Iterable[float]) -> None:
        """Add defined scores in bulk (engines that receive columns of scores)."""
        self.values.extend(scores)
        if len(self.values) >= self.spill_after:
            self._flush()

    @property
    def count(self) -> int:
        return self.spilled + len(self.values)

    def _flush(self) -> None:
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="ragmeter-scores-")  # noqa: SIM115
        self.values.tofile(self._spill)
        self.spilled += len(self.values)
        self.values = array("d")

    def scores(self) -> np.ndarray:
        """Every defined score added so far, in the order added."""
        memory = np.frombuffer(self.values, dtype=np.float64) if self.values else np.empty(0)
        if self._spill is None:
            return memory.copy()
        self._spill.flush()
        self._spill.seek(0)
        disk = np.fromfile(self._spill, dtype=np.float64, count=self.spilled)
        if disk.size != self.spilled:
            raise RuntimeError(
                f"The spill file of scores holds {disk.size} values; {self.spilled} were written."
            )
        return np.concatenate([disk, memory]) if memory.size else disk

    def summary(self, resamples: Resamples | None = None) -> Summary:
        """Summary of this metric; releases the spill file. ``resamples`` shares bootstrap
        draws between metrics (:class:`~ragmeter.scoring.statistics.Resamples`)."""
        try:
            return summarize(
                self.scores(), undefined=self.undefined, failed=self.failed, resamples=resamples
            )
        finally:
            self.close()

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None


class BatchScorer:
    """Scores a batch of rows with a plan's families: the unit of work of every engine."""

    def __init__(self, plan: Plan, cmap: ColumnMap, ctx: RunContext) -> None:
        self.plan = plan
        self.cmap = cmap
        self.ctx = ctx

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
        for items, _, outcomes in await gather_or_cancel(jobs):
            for (pos, _), outcome_map in zip(items, outcomes, strict=True):
                results[pos].record_all(outcome_map.items())
        secrets = known_secrets()
        if secrets or _may_hold_url(results):
            for result in results:
                _redact_row(result, secrets)
        return results

    async def _score_group(
        self,
        family: str,
        names: tuple[str, ...],
        items: list[tuple[int, Sample]],
        call: _CallProgress | None = None,
    ) -> tuple[list[tuple[int, Sample]], tuple[str, ...], list[dict[str, Outcome]]]:
        with reporting_to(None if call is None else call.report):
            found = await self._score_samples(family, names, items)
        if call is not None:
            call.finish()
        return found

    async def _score_samples(
        self, family: str, names: tuple[str, ...], items: list[tuple[int, Sample]]
    ) -> tuple[list[tuple[int, Sample]], tuple[str, ...], list[dict[str, Outcome]]]:
        fam = self.plan.families[family]
        samples = [s for _, s in items]
        try:
            outcomes = await fam.score_batch(samples, names)
            outcomes = self._checked(names, _aligned(outcomes, len(samples)))
        except JudgeUnavailableError:
            raise  # every row would fail the same way: the run stops
        except Exception as exc:
            if len(samples) == 1:
                return items, names, [_all_failed(names, exc)]
            log.warning("Family %s failed on a batch (%s); scoring row by row.", family, exc)
            outcomes = []
            for sample in samples:
                try:
                    one = await fam.score_batch([sample], names)
                    outcomes.append(self._checked(names, _aligned(one, 1))[0])
                except JudgeUnavailableError:
                    raise
                except Exception as exc_one:
                    outcomes.append(_all_failed(names, exc_one))
        return items, names, outcomes

    def _checked(
        self, names: tuple[str, ...], outcomes: Sequence[Mapping[str, Any]]
    ) -> list[dict[str, Outcome]]:
        """Guard the contract: an outcome per name, scores inside the metric's range."""
        registered = registry.all_specs()
        specs = [registered[name] for name in names]
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
        self.rows: list[RowResult] = []
        self.acc = {spec.name: Accumulator() for spec in plan.specs}
        #: The bootstrap draws of the summaries, shared by metrics with as many scores.
        self.resamples = Resamples()
        self.n_rows = 0
        # With rows streamed to a file and not kept, the first failures still reach the summary.
        self.first_failures: list[tuple[int, str, str]] = []
        #: Failures by cause other than the row's own ("judge", "infrastructure").
        self.causes: Counter[str] = Counter()
        #: (row, metric, message) of the first failure on the infrastructure.
        self.first_infrastructure: tuple[int, str, str] | None = None

    def count_causes(self, row: RowResult) -> None:
        """Count the causes of a row's failures; keep the first one on the infrastructure."""
        for metric, cause in row.failure_causes.items():
            self.causes[cause] += 1
            if cause == "infrastructure" and self.first_infrastructure is None:
                self.first_infrastructure = (row.index, metric, row.failures.get(metric, ""))

    async def run(
        self,
        *,
        out: Path | None,
        resume: bool,
        progress: bool | ProgressFunction | None,
        stream: IO[str] | None = None,
    ) -> None:
        """Score every row; results go to ``out`` (a file, with its run record) or to
        ``stream`` (left open)."""
        done = self.open_results(out, resume=resume)
        only = self.resumed.partial if self.resumed is not None else None
        sink: IO[str] | None = stream
        if out is not None:
            sink = out.open("a" if resume else "w", encoding="utf-8")
            write_sidecar(out, self.start_record())
        total = self.source.total
        if total is not None and 2 <= total <= BOOTSTRAP_MAX_N:
            # Every row usually has a score: the summaries' draw is made while rows score.
            self.resamples.prepare_in_background(total)
        bar = make_progress(progress, None if total is None else max(total - len(done), 0))
        try:
            pending: list[asyncio.Task[list[RowResult]]] = []
            for batch in _batches(self._counted(), self.ctx.settings.batch_size, skip=done):
                scoring = self.scorer.score(batch, only=only, progress=bar)
                pending.append(asyncio.ensure_future(scoring))
                if len(pending) >= BATCHES_IN_FLIGHT:
                    self._emit(await pending.pop(0), sink)
            while pending:
                self._emit(await pending.pop(0), sink)
        except BaseException:
            for task in pending:
                task.cancel()
            raise
        finally:
            if sink is not None and sink is not stream:
                sink.close()
            if bar is not None:
                bar.stop()

    def open_results(self, out: Path | None, *, resume: bool) -> set[int]:
        """Fingerprint the input for ``out``'s run record; on resume, check ``out`` and take
        what stays of it (:mod:`ragmeter.runner.resume`). Returns the rows done."""
        if out is None:
            return set()
        self.fingerprint = input_fingerprint(self.data) if self.data is not None else None
        out.parent.mkdir(parents=True, exist_ok=True)
        if not (resume and out.exists() and out.stat().st_size > 0):
            return set()
        self.resumed = load_resumed(
            out,
            fingerprint=self.fingerprint,
            data=self.data,
            data_name=self.source.name,
            metrics=[spec.name for spec in self.plan.specs],
            account=self._account,
        )
        return self.resumed.done

    def _counted(self) -> Iterator[Row]:
        for row in self.source:
            self.input_rows += 1
            yield row

    def start_record(self) -> dict[str, Any]:
        """The run record written with the first row: which input, which metrics."""
        return {
            "ragmeter_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(),
            "data": self.source.name,
            "input": self.fingerprint,
            "metrics": {spec.name: spec_record(spec) for spec in self.plan.specs},
            "settings": public_settings(self.ctx.settings),
        }

    def record_info(self) -> dict[str, Any]:
        """The run record's input (with its rows counted) and failures by cause."""
        info = self.cause_info()
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
        for row in rows:
            if row.failure_causes:
                self.count_causes(row)
        if self.keep_rows:
            self.rows.extend(rows)
            return
        for row in rows:
            if row.failures and len(self.first_failures) < 5:
                self.first_failures.extend((row.index, m, msg) for m, msg in row.failures.items())

    def _emit(self, rows: list[RowResult], sink: IO[str] | None) -> None:
        if self.resumed is not None:
            rows = [self.resumed.completed(row) for row in rows]
        self._account_rows(rows)
        if sink is not None:
            for row in rows:
                sink.write(json_record(row.to_json()) + "\n")
            sink.flush()

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
            extra_info={
                **self.record_info(),
                **({} if self.keep_rows else {"first_failures": self.first_failures[:5]}),
            },
        )

    def cause_info(self) -> dict[str, Any]:
        """The run record's count of failures by cause (rows retried by ``--resume``)."""
        return {
            "failure_causes": {cause: self.causes[cause] for cause in ("judge", "infrastructure")},
            "first_infrastructure_failure": self.first_infrastructure,
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
) -> RunResult:
    """Summaries (one metric at a time, releasing its spill file; ``resamples``: the
    bootstrap draws, perhaps made ahead) and the run's record."""
    summary = _summaries(acc, resamples or Resamples())
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
        if not isinstance(value, str | int | float | bool | tuple | list | type(None)):
            value = getattr(value, "name", type(value).__name__)
        if key == "base_url" and isinstance(value, str):
            value = redact_url(value)
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


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
    return {name: Failure(name, message, cause=cause) for name in names}


def _batches(rows: Iterable[Row], size: int, *, skip: set[int]) -> Iterator[list[Row]]:
    it = (r for r in rows if r.index not in skip) if skip else iter(rows)
    while batch := list(islice(it, size)):
        yield batch


Callback = Callable[[RowResult], None]
