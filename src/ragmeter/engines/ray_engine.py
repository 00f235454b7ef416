"""The Ray engine: a run's batches scored by a Ray Data pipeline (``pip install 'ragmeter[ray]'``).

``ragmeter.evaluate(path, engine="ray")`` (or ``engine=RayEngine(address=..., num_workers=...)``)
sets the run up as on the local engine (outputs checked, rows opened, plan, resume, the
results file and its run record: :mod:`ragmeter.runner`); this engine only scores::

    read  JSONL: read_text (one row per line, parsed as the local reader parses it)
          Parquet: read_parquet;  CSV: read_csv (every cell read as text, as csv.DictReader)
          JSON list: loaded by the driver (as the local reader does) and sent with from_items
      ->  map_batches(_ScoreBatches, compute=ActorPoolStrategy(size=workers))
          each actor builds the plan's families once and scores each batch with the runner's
          BatchScorer; judge calls are async inside the actor, bounded by its share of
          ``max_concurrency``
      ->  the driver takes the results in input order (``preserve_order``), numbers the rows
          and hands them to the runner as lines and columns of scores (a ``ScoredBatch``):
          the runner appends them to ``out`` and counts them in the local engine's
          accumulators (flat memory, same summaries).

The driver numbers rows because no worker knows a row's global position: actors write a
placeholder where a failure message names the row ("line 12") and the driver fills it in.
Rows and summaries are therefore identical to the local engine's on the same file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from ragmeter.errors import ConfigError, RagmeterError, current_param_names, param, param_names
from ragmeter.io.columns import ColumnMap
from ragmeter.io.readers import SUFFIXES, csv_cell, jsonl_row
from ragmeter.io.rows import Row
from ragmeter.metrics import registry
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.result import json_record
from ragmeter.runner import BatchScorer, Plan, Runner, ScoreColumn, ScoredBatch
from ragmeter.runner.progress import Progress
from ragmeter.types import RowResult, Usage

log = logging.getLogger("ragmeter")

__all__ = ["RayEngine", "worker_concurrency"]

T = TypeVar("T")

#: Stands for the row's position in failure messages until the driver knows it.
WHERE = "@@ragmeter-where@@"
#: Every actor serialises rows with index 0; the driver swaps in the real index.
_INDEX_PREFIX = '{"index": 0, '
#: CPUs each read task asks for.
READ_CPUS = 0.5
#: CPUs kept free of scoring actors, for reading: Ray's file listing task takes one whole CPU,
#: and actors holding every CPU would leave the reads unscheduled for ever (a deadlock).
READER_RESERVE = 1.0
#: Environment that model and cache code read; passed to workers of existing clusters too.
_ENV_PASSED = (
    "RAGMETER_CACHE_DIR",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_HOME",
    "RAY_USAGE_STATS_ENABLED",
)
#: What a row's line holds when its counts need more than its scores: it is parsed.
_COUNTED = ('"failure_causes":', '"verdict_count":', '"refused":', '"repeats":')
_USAGE_INTS = (
    "calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "retries",
    "failures",
    "implausible_usage",
)


@dataclass(frozen=True, slots=True)
class _Job:
    """What every actor needs to score a batch: sent once, when the actor starts."""

    metrics: tuple[str, ...]
    column_map: ColumnMap
    settings: Settings
    fmt: str
    name: str
    #: The run's Python metrics (``@ragmeter.metric``), defined again in each actor: Ray
    #: pickles their functions by reference, or by value where no module holds them.
    python_metrics: tuple[Any, ...] = ()
    #: How errors name parameters: the driver's :func:`~ragmeter.errors.param_names` (the
    #: CLI's flags), which an actor's own context does not hold.
    names: dict[str, str] = field(default_factory=dict)


def worker_concurrency(max_concurrency: int, workers: int) -> int:
    """Judge calls each worker may have in flight: an even share, at least one.

    The cluster-wide total stays at or under ``max_concurrency`` whenever
    ``workers <= max_concurrency``; with more workers than that, each still gets one.
    """
    if max_concurrency < 1:
        setting = param("max_concurrency", "The 'max_concurrency' setting")
        raise ConfigError(f"{setting} must be >= 1. Got {max_concurrency}.")
    if workers < 1:
        raise ConfigError(
            f"{param('num_workers', 'The number of Ray workers')} must be >= 1. Got {workers}."
        )
    return max(1, max_concurrency // workers)


class _ScoreBatches:
    """Ray Data callable class: one per actor; builds the families once, scores batches."""

    def __init__(self, job: _Job) -> None:
        self.job = job
        for metric in job.python_metrics:
            registry.define(metric.spec, metric)
        with param_names(job.names):  # errors name parameters as the driver's caller does
            self.plan = Plan(registry.resolve(job.metrics), auto=False)
            self.ctx = RunContext(job.settings)
            self.plan.build_families(self.ctx)
            self.scorer = BatchScorer(self.plan, job.column_map, self.ctx)
        # One event loop per actor, in its own thread: Ray may call the actor from several
        # threads at once, and every batch then shares the judge's concurrency limit.
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="ragmeter-loop", daemon=True).start()
        self._usage_lock = threading.Lock()
        self._reported = Usage()

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        rows, skip = self._rows(batch)
        scored = asyncio.run_coroutine_threadsafe(self._score(rows), self.loop).result()
        if self.scorer.stopped is not None:
            raise self.scorer.stopped  # the driver stops the run (and keeps what it wrote)
        results = iter(scored)
        names = [s.name for s in self.plan.specs]
        n = len(skip)
        lines: list[str] = [""] * n
        placeholder = np.zeros(n, dtype=bool)
        values = {name: np.zeros(n, dtype=np.float64) for name in names}
        kinds = {name: np.zeros(n, dtype=np.int8) for name in names}  # 0 defined, 1 undef, 2 fail
        for pos in range(n):
            if skip[pos]:
                continue
            result: RowResult = next(results)
            result.index = 0
            text = json_record(result.to_json())
            if not text.startswith(_INDEX_PREFIX):
                raise RuntimeError(f"unexpected row serialisation: {text[:40]!r}")
            lines[pos] = text[len(_INDEX_PREFIX) :]
            placeholder[pos] = bool(result.failures)
            for name in names:
                value = result.scores.get(name)
                if name in result.failures:
                    kinds[name][pos] = 2
                elif value is None:
                    kinds[name][pos] = 1
                else:
                    values[name][pos] = value
        usage = [""] * n
        if n:
            usage[0] = self._usage_delta()
        columns: dict[str, Any] = {
            "skip": pa.array(skip, type=pa.bool_()),
            "line": pa.array(lines, type=pa.large_string()),
            "placeholder": pa.array(placeholder),
            "usage": pa.array(usage, type=pa.string()),
        }
        for name in names:
            columns[f"v:{name}"] = pa.array(values[name])
            columns[f"k:{name}"] = pa.array(kinds[name])
        return pa.table(columns)

    async def _score(self, rows: list[Row]) -> list[RowResult]:
        """``rows`` scored in the actor's loop, their errors naming parameters as the
        driver's caller does."""
        with param_names(self.job.names):
            return await self.scorer.score(rows)

    def _rows(self, batch: Any) -> tuple[list[Row], list[bool]]:
        fmt = self.job.fmt
        rows: list[Row] = []
        skip: list[bool] = []
        if fmt == "jsonl":
            for text in batch.column("text").to_pylist():
                blank = not (text or "").strip()
                skip.append(blank)
                if not blank:
                    rows.append(jsonl_row(len(rows), text, where=WHERE, name=self.job.name))
        elif fmt == "json":
            for text, problem in zip(
                batch.column("text").to_pylist(), batch.column("problem").to_pylist(), strict=True
            ):
                skip.append(False)
                if problem:
                    rows.append(Row(len(rows), None, WHERE, problem))
                else:
                    rows.append(Row(len(rows), json.loads(text), WHERE))
        elif fmt == "csv":
            for record in batch.to_pylist():
                skip.append(False)
                rows.append(Row(len(rows), {k: csv_cell(v) for k, v in record.items()}, WHERE))
        else:
            for record in batch.to_pylist():
                skip.append(False)
                rows.append(Row(len(rows), record, WHERE))
        return rows, skip

    def _usage_delta(self) -> str:
        with self._usage_lock:
            return self._usage_delta_locked()

    def _usage_delta_locked(self) -> str:
        now, seen = self.ctx.usage, self._reported
        delta = {key: getattr(now, key) - getattr(seen, key) for key in _USAGE_INTS}
        cost = None
        if now.cost is not None:
            cost = now.cost - (seen.cost or 0.0)
        self._reported = Usage(**{key: getattr(now, key) for key in _USAGE_INTS}, cost=now.cost)
        if not any(delta.values()) and not cost:
            return ""
        return json.dumps({**delta, "cost": cost})


@dataclass(frozen=True, slots=True)
class RayEngine:
    """Score a run on Ray: ``ragmeter.evaluate(path, engine=RayEngine(...))``.

    ``address``: an existing cluster (``"ray://host:10001"`` or ``"auto"``); by default a
    local Ray instance is started (or the one this process already started is used).
    ``num_workers``: scoring actors, by default one per CPU of the cluster; each gets
    ``max_concurrency // num_workers`` judge calls in flight (at least one).

    The input must be a JSONL, JSON, CSV or Parquet file that every worker can read (on a
    real cluster: a shared file system). On resume the rows already in ``out`` are still read
    and scored by the cluster (with a judge, their calls come from the cache) and not written
    again; rows that lack metrics added since are written again in full. Ray Data's progress
    bars show as ``progress`` asks (by default only on a terminal).
    """

    address: str | None = None
    num_workers: int | None = None
    own_bars: ClassVar[bool] = True

    def __post_init__(self) -> None:
        workers = self.num_workers
        if workers is not None and (isinstance(workers, bool) or workers < 1):
            option = param("num_workers", "The 'num_workers' option")
            raise ConfigError(f"{option} must be >= 1. Got {workers!r}.")

    def check(self, data: Any, settings: Settings, *, streamed: bool) -> None:
        """A file, no criteria, results to a file, and Ray Data installed."""
        local = param("local_engine", "ragmeter.evaluate(engine='local')")
        if not isinstance(data, str | os.PathLike):
            raise ConfigError(
                "The Ray engine reads files, so that every worker reads its own share. Got "
                f"{type(data).__name__}. Save the data as JSONL or Parquet and pass the path, "
                f"or run it on the local engine ({local})."
            )
        if settings.criteria:
            raise ConfigError(
                f"Criteria ({param('criteria')}) run on the local engine only ({local}): run "
                "them in a separate local run."
            )
        if streamed:
            raise ConfigError(
                f"The Ray engine writes its results to a file: give {param('out')} a path."
            )
        try:
            import ray.data  # noqa: F401  # fails without the [data] extra
        except ImportError:
            raise ConfigError(
                f"{param('ray_engine', 'The Ray engine')} needs Ray Data, which is not "
                "installed. Install it with: pip install 'ragmeter[ray]'."
            ) from None

    async def scored(self, runner: Runner, display: Progress | None) -> AsyncIterator[ScoredBatch]:
        """The input read and scored by the cluster's actors, numbered here in input order."""
        import ray
        import ray.data

        path = Path(runner.data)
        fmt = SUFFIXES[path.suffix.lower()]
        started_ray = _connect(ray, self.address, self.num_workers)
        data_ctx = ray.data.DataContext.get_current()
        saved = (data_ctx.execution_options.preserve_order, data_ctx.enable_progress_bars)
        try:
            cpus = float(ray.cluster_resources().get("CPU", 1.0))
            workers = self.num_workers or max(1, int(cpus))
            runner.engine_record = {"name": "ray", "workers": workers, "address": self.address}
            data_ctx.execution_options.preserve_order = True  # results come in input order
            data_ctx.enable_progress_bars = _want_progress(runner.progress)
            scored = _read(ray, path, fmt, runner.source).map_batches(
                _ScoreBatches,
                fn_constructor_args=(_job(runner, fmt, path.name, workers),),
                batch_format="pyarrow",
                batch_size=runner.ctx.settings.batch_size,
                compute=ray.data.ActorPoolStrategy(size=workers),
                num_cpus=_actor_cpus(cpus, workers),
                runtime_env=_runtime_env(),
            )
            batches = scored.iter_batches(
                batch_size=None, batch_format="pyarrow", prefetch_batches=2
            )
            numbering = _Numbering(fmt, done=runner.skip, keep_rows=runner.keep_rows)
            # Closed here, before Ray shuts down, also when the runner stops taking batches
            # (a full disk): left to the garbage collector, Ray's iterator was closed after
            # the shutdown and printed a traceback under the run's error.
            async with contextlib.aclosing(_in_a_thread(iter(batches))) as taken:
                async for batch in taken:
                    rows = numbering.scored(batch, [spec.name for spec in runner.plan.specs])
                    if display is not None:
                        display.advance(len(rows.lines))
                    yield rows
            runner.input_rows = numbering.next_index
        except Exception as exc:
            cause = _ragmeter_cause(exc)
            if cause is not None:
                raise cause from exc
            raise
        finally:
            data_ctx.execution_options.preserve_order, data_ctx.enable_progress_bars = saved
            if started_ray:
                ray.shutdown()


def _job(runner: Runner, fmt: str, name: str, workers: int) -> _Job:
    """What each actor needs: the plan's metrics, the settings with its share of the
    concurrency, how errors name parameters."""
    settings = runner.ctx.settings
    if workers > settings.max_concurrency:
        log.warning(
            "%d workers but max_concurrency %d: each worker still gets 1 judge call in "
            "flight, %d in all.",
            workers,
            settings.max_concurrency,
            workers,
        )
    per_worker = worker_concurrency(settings.max_concurrency, workers)
    specs = runner.plan.specs
    return _Job(
        metrics=tuple(s.name for s in specs),
        column_map=runner.cmap,
        settings=_worker_settings(settings, per_worker),
        fmt=fmt,
        name=name,
        python_metrics=tuple(
            registry.defined(s.name) for s in specs if s.family == registry.PYTHON_FAMILY
        ),
        names=current_param_names(),
    )


async def _in_a_thread(items: Iterator[T]) -> AsyncIterator[T]:
    """``items`` taken one by one in a thread of their own (Ray's iterator blocks), so that
    the event loop (the run's watch, the caller's tasks) goes on meanwhile.

    A stop (the deadline, Ctrl-C) waits for the step being taken and closes the iterator in
    its thread: Ray's iterator cannot be closed while it runs, and a step left running when
    Ray shuts down would start Ray again in the background."""
    end = object()
    with ThreadPoolExecutor(1, thread_name_prefix="ragmeter-ray") as pool:
        try:
            while (item := await asyncio.wrap_future(pool.submit(next, items, end))) is not end:
                yield item  # type: ignore[misc]
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                await asyncio.wrap_future(pool.submit(close))


def _connect(ray: Any, address: str | None, num_workers: int | None) -> bool:
    """Connect to ``address`` or start a local instance; True when this call connected."""
    if ray.is_initialized():
        return False
    # Ray's usage statistics are on by default (a report to Anyscale); ragmeter never asks
    # for them. Ray still looks up the cloud metadata address and a public DNS server when
    # it starts (see the README's Scale section): nothing ragmeter can switch off.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address:
        ray.init(address=address, logging_level=logging.WARNING)
    else:
        cpus = max(2, num_workers or 0, os.cpu_count() or 2)
        ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.WARNING)
    return True


def _actor_cpus(cpus: float, workers: int) -> float:
    """CPUs each scoring actor asks for: a share of what the readers leave, at most one."""
    return min(1.0, max(0.05, (cpus - READER_RESERVE) / workers))


def _worker_settings(settings: Settings, per_worker: int) -> Settings:
    cache_path = settings.cache_path
    if settings.use_cache and cache_path is None:
        from ragmeter.cache import default_cache_path

        cache_path = str(default_cache_path())  # every worker shares the driver's cache file
    # Each actor is at most one core: its offline judge works in one thread (no worker
    # processes of its own; ``workers`` counts the actors here).
    return replace(settings, max_concurrency=per_worker, cache_path=cache_path, workers=1)


def _runtime_env() -> dict[str, Any] | None:
    env = {key: os.environ[key] for key in _ENV_PASSED if key in os.environ}
    return {"env_vars": env} if env else None


def _want_progress(progress: Any) -> bool:
    """Whether Ray Data shows its bars: as ``progress`` says, by default on a terminal (a
    progress function gets the rows, not bars)."""
    if progress is None:
        return sys.stderr.isatty()
    return progress is True


def _read(ray: Any, path: Path, fmt: str, source: Any) -> Any:
    name = str(path.resolve())
    if fmt == "jsonl":
        # Lines as text, blank ones kept, so that line numbers and parsing match the local
        # reader exactly (Arrow's JSON reader would coerce types and fail on one bad line).
        return ray.data.read_text(name, drop_empty_lines=False, num_cpus=READ_CPUS)
    if fmt == "parquet":
        return ray.data.read_parquet(name, num_cpus=READ_CPUS)
    if fmt == "csv":
        import pyarrow as pa
        from pyarrow import csv as pacsv

        convert = pacsv.ConvertOptions(
            column_types={column: pa.string() for column in source.columns},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        )
        return ray.data.read_csv(name, convert_options=convert, num_cpus=READ_CPUS)
    # A JSON list is one document: the local reader loads it whole, and so does the driver.
    items = [
        {"text": "" if row.data is None else json.dumps(row.data), "problem": row.problem or ""}
        for row in source
    ]
    return ray.data.from_items(items)


def _where(fmt: str, index: int, line: int) -> str:
    if fmt == "jsonl":
        return f"line {line}"
    if fmt == "json":
        return f"item {index}"
    if fmt == "csv":
        return f"line {index + 2}"  # header is line 1; exact unless a cell spans lines
    return f"row {index}"


@dataclass(slots=True)
class _Numbering:
    """The driver's count of rows and lines as scored batches come back in input order: each
    row gets its index and its line's place in failure messages (:data:`WHERE`)."""

    fmt: str
    #: Rows a resumed results file holds: not written again.
    done: set[int]
    #: Parse every row (the run keeps them), not only those whose counts need more.
    keep_rows: bool
    next_index: int = 0
    next_line: int = 1

    def scored(self, batch: Any, metrics: Sequence[str]) -> ScoredBatch:
        """``batch`` (an actor's table) as the runner writes and counts it."""
        n = batch.num_rows
        keep = ~batch.column("skip").to_numpy(zero_copy_only=False)
        index = self.next_index + np.cumsum(keep) - 1
        line = self.next_line + np.arange(n)
        self.next_index += int(keep.sum())
        self.next_line += n
        fresh = keep & ~np.isin(index, list(self.done)) if self.done else keep
        texts = batch.column("line").to_pylist()
        placeholder = batch.column("placeholder").to_pylist()
        lines, rows = [], []
        for pos in np.flatnonzero(fresh):
            text = texts[pos]
            if placeholder[pos]:
                text = text.replace(WHERE, _where(self.fmt, int(index[pos]), int(line[pos])))
            text = f'{{"index": {int(index[pos])}, {text}'
            lines.append(text)
            if self.keep_rows or placeholder[pos] or any(key in text for key in _COUNTED):
                rows.append(RowResult.from_json(json.loads(text)))
        columns = {}
        for name in metrics:
            kinds = batch.column(f"k:{name}").to_numpy()[fresh]
            values = batch.column(f"v:{name}").to_numpy()[fresh]
            columns[name] = ScoreColumn(
                values[kinds == 0].tolist(),
                undefined=int((kinds == 1).sum()),
                failed=int((kinds == 2).sum()),
            )
        usage = Usage()
        for text in batch.column("usage").to_pylist():
            if text:
                usage.add(Usage(**json.loads(text)))
        return ScoredBatch(lines, rows, columns=columns, usage=usage)


def _ragmeter_cause(exc: BaseException) -> RagmeterError | None:
    """The ragmeter error behind a Ray task failure (a worker could not build a family)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, RagmeterError) and current is not exc:
            return current
        current = getattr(current, "cause", None) or current.__cause__
    return None
