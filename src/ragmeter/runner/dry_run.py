"""A dry run: what a run would do and cost, with no judge call, no model call, no connection.

:func:`plan_run` reads the data and makes the run's plan as :func:`ragmeter.evaluate`
does (the metrics that would run, those skipped and why). When the judge is an
OpenAI-compatible one it then scores the rows with the judge-backed families as a run would,
the judge planning each request instead of sending it
(:class:`~ragmeter.judges.llm.planning.CallPlanner`): a request the cache answers counts as
cached (its reply is read and used, so the next request is planned exactly), any other as a
call to make, answered by a simulated reply; embeddings come from a stand-in that computes
nothing. The other families (local models, Python metrics) are not run: they make no judge
call.

Tokens are counted with the judge's tokenizer when ``tiktoken`` is installed, knows the model
and has its encoding on disk (it is loaded with the network shut); otherwise they are
estimated as words and punctuation marks plus 4 per message, and the result says so.
Completion tokens are those of the simulated (or cached) replies: an estimate. The cost is
that of the calls to make, at ``Settings.price_in`` / ``price_out`` (per 1M tokens; None when
neither is set). The wall time is estimated from the calls to make at
``Settings.max_concurrency``: each call takes :data:`CALL_SECONDS` plus its completion tokens
at :data:`COMPLETION_TOKENS_PER_SECOND`, the calls share the concurrency limit, and the
longest call ends the run.
"""

from __future__ import annotations

import contextlib
import re
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.cache import default_cache_path
from ragmeter.errors import ConfigError, ModelUnavailableError, param
from ragmeter.io.columns import ColumnMap
from ragmeter.io.readers import open_rows
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.judges.llm.planning import CallPlanner, PlannedCall
from ragmeter.metrics.base import RunContext
from ragmeter.runner.batch_scorer import BatchScorer
from ragmeter.runner.core import Runner
from ragmeter.runner.pipeline import run_sync, stream_of
from ragmeter.runner.plan import Plan
from ragmeter.runner.resume import Resumed
from ragmeter.settings import Settings
from ragmeter.types import Verification

__all__ = ["CALL_SECONDS", "COMPLETION_TOKENS_PER_SECOND", "DryRun", "plan_run"]

#: Assumed time of one judge call before its first completion token (network, queue, prompt).
CALL_SECONDS = 0.6
#: Assumed completion speed of the judge.
COMPLETION_TOKENS_PER_SECOND = 60.0
#: How tokens are estimated without the judge's tokenizer.
ESTIMATE = "estimate: words and punctuation marks, plus 4 per message"
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(slots=True)
class DryRun:
    """What a run would do: rows, each metric "run" or why it is skipped, the judge calls."""

    rows: int
    metrics: dict[str, str]
    calls: list[PlannedCall] = field(default_factory=list)
    #: How tokens were counted: "tiktoken:ENCODING", or :data:`ESTIMATE`.
    tokenizer: str = ESTIMATE
    price_in: float | None = None
    price_out: float | None = None
    max_concurrency: int = 16
    #: Why no call was planned, when none could be (a judge that is not OpenAI-compatible).
    note: str | None = None
    #: Rows of the results file a resumed run keeps (not in ``rows``, which it scores).
    reused: int = 0

    def _split(self, value: Callable[[PlannedCall], int]) -> dict[str, int]:
        return {
            "cached": sum(value(c) for c in self.calls if c.cached),
            "to_make": sum(value(c) for c in self.calls if not c.cached),
        }

    @property
    def judge_calls(self) -> dict[str, int]:
        return self._split(lambda c: 1)

    @property
    def prompt_tokens(self) -> dict[str, int]:
        return self._split(lambda c: c.prompt_tokens)

    @property
    def completion_tokens(self) -> dict[str, int]:
        """Of the cached replies, and (estimated) of the calls to make."""
        return self._split(lambda c: c.completion_tokens)

    @property
    def estimated_tokens(self) -> bool:
        return self.tokenizer == ESTIMATE

    @property
    def cost(self) -> float | None:
        """The calls to make at the configured prices (per 1M tokens), or None with none."""
        if self.price_in is None and self.price_out is None:
            return None
        return (
            self.prompt_tokens["to_make"] * (self.price_in or 0.0)
            + self.completion_tokens["to_make"] * (self.price_out or 0.0)
        ) / 1e6

    @property
    def seconds(self) -> float:
        """Estimated wall time of the calls to make at the concurrency limit."""
        times = [
            CALL_SECONDS + c.completion_tokens / COMPLETION_TOKENS_PER_SECOND
            for c in self.calls
            if not c.cached
        ]
        if not times:
            return 0.0
        return sum(times) / self.max_concurrency + max(times)

    def calls_by_prompt(self) -> dict[str, dict[str, int]]:
        """Calls per prompt id (analyze, verify, criteria), cached and to make."""
        out: dict[str, dict[str, int]] = {}
        for c in self.calls:
            entry = out.setdefault(c.prompt, {"cached": 0, "to_make": 0})
            entry["cached" if c.cached else "to_make"] += 1
        return out

    def as_json(self) -> dict[str, Any]:
        """The object ``ragmeter evaluate --dry-run --json`` prints."""
        return {
            "rows": self.rows,
            "rows_reused": self.reused,
            "metrics": dict(self.metrics),
            "judge_calls": self.judge_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": None if self.cost is None else round(self.cost, 6),
            "seconds": round(self.seconds, 3),
            "tokenizer": self.tokenizer,
            "estimated_tokens": self.estimated_tokens,
            "calls_by_prompt": self.calls_by_prompt(),
            "max_concurrency": self.max_concurrency,
            "note": self.note,
        }


class _NoEmbedder:
    """Stands in for the embedder: unit vectors, nothing computed, nothing sent."""

    name = "dry-run"

    def embed(self, texts: list[str]) -> Any:
        vectors = np.zeros((len(texts), 2), dtype=np.float32)
        vectors[:, 0] = 1.0
        return vectors


class _NoVerifier:
    """Stands in for a local verifier: no verdict computed (it makes no judge call)."""

    name = "dry-run"

    async def verify(self, blocks: Any) -> Verification:
        blocks = tuple(blocks)
        return Verification(
            matrices=tuple(tuple((False,) * len(b.premises) for _ in b.claims) for b in blocks)
        )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


def _parts(judge: Any) -> Iterator[tuple[Any, str]]:
    """The objects a run's judge is made of, with the attribute holding each."""
    for attr in ("inner", "judge", "verifier"):
        part = getattr(judge, attr, None)
        if part is not None:
            yield judge, attr
            yield from _parts(part)


def _plan_calls(judge: Any, planner: CallPlanner) -> bool:
    """Set ``planner`` on every OpenAI-compatible judge in ``judge``, and stand in for any
    other verifier; whether any judge plans calls."""
    found = isinstance(judge, OpenAIJudge)
    if found:
        judge.planner = planner
    for owner, attr in list(_parts(judge)):
        part = getattr(owner, attr)
        if isinstance(part, OpenAIJudge):
            part.planner = planner
            found = True
        elif attr == "verifier":
            setattr(owner, attr, _NoVerifier())
    return found


def _missing_key(judge: Any) -> str | None:
    """What the run would stop on at once: an endpoint that needs a key, and none given."""
    parts = [judge, *(getattr(owner, attr) for owner, attr in _parts(judge))]
    for part in parts:
        if isinstance(part, OpenAIJudge) and part.key_required and part._api_key is None:
            return (
                f"no API key for {part.name} at {part.public_endpoint}: the run would stop "
                "before its first row. Set OPENAI_API_KEY (or api_key= in Python)."
            )
    return None


@contextlib.contextmanager
def _network_shut() -> Iterator[None]:
    """No socket may connect inside (a tokenizer that would fetch its files fails)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("a dry run (plan_run) opens no connection")

    saved = socket.socket.connect, socket.create_connection
    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        socket.socket.connect, socket.create_connection = saved  # type: ignore[method-assign]


def estimate_tokens(text: str) -> int:
    """Words and punctuation marks: the estimate used without the judge's tokenizer."""
    return len(_TOKEN.findall(text))


def token_counter(model: str | None) -> tuple[Callable[[str], int], str]:
    """``(count, how)``: the judge's tokenizer (``tiktoken``) where it is installed, knows
    ``model`` and has its encoding on disk; else :func:`estimate_tokens`."""
    if model:
        try:
            import tiktoken

            with _network_shut():
                encoding = tiktoken.encoding_for_model(model)
                encoding.encode("ready")
        except Exception:  # not installed, model unknown, encoding not on disk
            pass
        else:
            return (lambda text: len(encoding.encode(text, disallowed_special=()))), (
                f"tiktoken:{encoding.name}"
            )
    return estimate_tokens, ESTIMATE


def _message_counter(count: Callable[[str], int]) -> Callable[[list[dict[str, str]]], int]:
    def count_messages(messages: list[dict[str, str]]) -> int:
        return sum(count(str(m.get("content", ""))) + 4 for m in messages)

    return count_messages


def _judge_model(judge: Any) -> str | None:
    if isinstance(judge, str) and judge.startswith("openai:"):
        return judge.partition(":")[2]
    return None


def _batches(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(rows)
    while batch := list(islice(it, size)):
        yield batch


async def aplan_run(
    data: Any,
    metrics: Any = None,
    *,
    column_map: Mapping[str, Any] | Iterable[str] | None = None,
    settings: Settings | None = None,
    out: str | Path | None = None,
    resume: bool = False,
) -> DryRun:
    """:func:`plan_run` inside an event loop."""
    settings = settings or Settings()
    cache_file = Path(settings.cache_path) if settings.cache_path else default_cache_path()
    # An absent cache answers nothing: it is not created for a dry run.
    settings = replace(settings, use_cache=settings.use_cache and cache_file.exists())
    cmap = ColumnMap.from_any(column_map)
    source = open_rows(data)
    plan = Plan.make(metrics, cmap, source, criteria=settings.criteria)
    count, how = token_counter(_judge_model(settings.judge))
    planner = CallPlanner(count_messages=_message_counter(count), count_text=count)
    ctx = RunContext(settings)
    ctx._embedder = _NoEmbedder()
    judged = Plan([s for s in plan.specs if s.needs_judge], auto=plan.auto)
    # A resumed run's file is checked as the run checks it (and refused alike), never changed.
    resumed = _resumed(plan, cmap, ctx, source, data, out) if resume else None
    skip = resumed.done if resumed is not None else set()
    result = DryRun(
        rows=0,
        metrics={},
        tokenizer=how,
        price_in=settings.price_in,
        price_out=settings.price_out,
        max_concurrency=settings.max_concurrency,
    )
    # The local-model families are built as a run builds them (their models load on first
    # use, so nothing is loaded): a model or package that is missing skips their metrics
    # here with the run's reason (answer_reward without torch), or stops the plan as it
    # would stop the run when the metric was asked for by name.
    local = Plan([s for s in plan.specs if not s.needs_judge], auto=plan.auto)
    plans_calls = False
    try:
        if local.specs:
            try:
                local.build_families(ctx)
            except ModelUnavailableError:
                if not plan.auto or not local.skipped:
                    raise
        if judged.specs:
            judged.build_families(ctx)
            plans_calls = _plan_calls(ctx.judge(), planner)
        if not plans_calls and judged.specs:
            result.note = (
                f"the judge {getattr(ctx.judge(), 'name', settings.judge)} is not "
                "OpenAI-compatible: it makes no planned HTTP call (the offline judge runs "
                "locally; a Python judge's calls are its own)"
            )
        if plans_calls:
            result.note = _missing_key(ctx.judge())
        scorer = BatchScorer(judged, cmap, ctx) if plans_calls else None
        only = resumed.partial if resumed is not None else None
        to_score = (row for row in source if row.index not in skip) if skip else source
        for batch in _batches(to_score, settings.batch_size):
            result.rows += len(batch)
            if scorer is not None:
                await scorer.score(batch, only=only)
    finally:
        await ctx.aclose()
    skipped = {**plan.skipped, **local.skipped, **judged.skipped}
    result.metrics = {spec.name: skipped.get(spec.name, "run") for spec in plan.specs}
    result.metrics.update({name: why for name, why in skipped.items()})
    result.calls = planner.calls
    result.reused = len(skip)
    return result


def _resumed(
    plan: Plan, cmap: ColumnMap, ctx: RunContext, source: Any, data: Any, out: Any
) -> Resumed | None:
    """What a resumed run would keep of ``out``, checked by the run's own code (a file it
    would refuse is refused here, with its words); ``out`` is left as it is."""
    if out is None or stream_of(out) is not None:
        raise ConfigError(
            f"{param('resume', 'resume=True')} needs {param('out', 'out=PATH')}: the results "
            "file to resume."
        )
    runner = Runner(plan, cmap, ctx, source, keep_rows=False, data=data)
    runner.open_results(Path(out), resume=True, dry_run=True)
    return runner.resumed


def plan_run(
    data: Any,
    metrics: Any = None,
    *,
    column_map: Mapping[str, Any] | Iterable[str] | None = None,
    settings: Settings | None = None,
    out: str | Path | None = None,
    resume: bool = False,
) -> DryRun:
    """What ``evaluate(data, metrics, column_map=..., settings=..., out=..., resume=...)``
    would do, without a judge call, a model call or a connection (see the module's
    docstring). With ``resume``, the rows ``out`` holds are left out of the plan (counted
    in :attr:`DryRun.reused`), and a file the run would refuse is refused."""
    return run_sync(
        aplan_run(data, metrics, column_map=column_map, settings=settings, out=out, resume=resume)
    )
