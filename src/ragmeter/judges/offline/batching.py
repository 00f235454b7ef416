"""Concurrent per-row calls gathered into chunks: one spaCy batch and one model batch per chunk.

A run asks the offline judge once per row (``analyze``, then ``verify``), and the runner
starts a whole batch of rows at once. :class:`CallBatcher` collects the calls that arrive
in the same turn of the event loop, cuts them into chunks of at most ``chunk`` calls, and
hands each chunk to ``run_chunk`` with the number of calls of that turn (which computes every
call of the chunk together and returns one outcome per call, an exception standing for a
call that failed). Each caller
gets its own outcome: a row that fails fails alone.

Chunks are smaller when there are few calls, so that every worker gets one
(``ceil(calls / workers)``): 10 rows on 2 workers are 2 chunks of 5, not one of 10.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

__all__ = ["CallBatcher", "chunk_sizes", "outcomes_of"]

In = TypeVar("In")
Out = TypeVar("Out")


def chunk_sizes(calls: int, *, chunk: int, workers: int) -> list[int]:
    """How ``calls`` calls are cut: chunks of at most ``chunk``, at least one per worker
    while there are calls enough, sizes differing by at most one.

    Examples
    --------
    >>> chunk_sizes(10, chunk=16, workers=2)
    [5, 5]
    >>> chunk_sizes(40, chunk=16, workers=2)
    [14, 13, 13]
    >>> chunk_sizes(1, chunk=16, workers=4)
    [1]
    """
    if calls <= 0:
        return []
    parts = max(math.ceil(calls / chunk), min(workers, calls))
    base, extra = divmod(calls, parts)
    return [base + 1 if k < extra else base for k in range(parts)]


class CallBatcher(Generic[In, Out]):
    """Gathers concurrent ``submit`` calls into chunks for ``run_chunk``.

    Parameters
    ----------
    run_chunk : async callable
        Given a list of inputs and the number of calls of their turn, returns one outcome
        per input, in order: a value, or an exception instance (raised to that input's
        caller alone).
    chunk : int
        Most inputs in one chunk.
    workers : int
        Chunks that can run at once (the chunks of a turn are cut so that each gets one).
    """

    def __init__(
        self,
        run_chunk: Callable[[list[In], int], Awaitable[Sequence[Out | BaseException]]],
        *,
        chunk: int,
        workers: int,
    ) -> None:
        self._run_chunk = run_chunk
        self.chunk = max(1, chunk)
        self.workers = max(1, workers)
        self._pending: list[tuple[In, asyncio.Future[Out]]] = []
        self._scheduled = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, item: In) -> Out:
        """The outcome of ``item``, computed in a chunk with the calls of the same turn."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Out] = loop.create_future()
        self._pending.append((item, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        self._scheduled = False
        pending, self._pending = self._pending, []
        pending = [(item, f) for item, f in pending if not f.cancelled()]
        start = 0
        for size in chunk_sizes(len(pending), chunk=self.chunk, workers=self.workers):
            task = asyncio.ensure_future(self._run(pending[start : start + size], len(pending)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            start += size

    async def _run(self, calls: list[tuple[In, asyncio.Future[Out]]], turn: int) -> None:
        try:
            outcomes = await self._run_chunk([item for item, _ in calls], turn)
        except asyncio.CancelledError:
            for _, future in calls:
                future.cancel()
            raise
        except Exception as exc:  # the chunk failed as a whole: each caller sees why
            for _, future in calls:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), outcome in zip(calls, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    async def aclose(self) -> None:
        """Cancel the chunks still running (their callers see the cancellation)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def outcomes_of(work: Callable[[In], Out], items: Sequence[In]) -> list[Out | BaseException]:
    """``work(item)`` for each item, an exception kept as that item's outcome."""
    out: list[Any] = []
    for item in items:
        try:
            out.append(work(item))
        except Exception as exc:
            out.append(exc)
    return out
