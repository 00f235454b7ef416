"""Which repeat of a judge's work is being asked for (``Settings.repeats``).

An LLM judge asked the same thing twice may answer differently; ``repeats=N`` asks it N
times per row to measure how much. Repeat ``k`` (0 first) is set for the calls of one repeat
with :func:`in_repeat`; a judge reads it with :func:`current_repeat` and puts it in its cache
key, so each repeat's reply is cached on its own (repeat 0's key is the key of a run without
repeats: a first run's replies serve as repeat 0 of a later one). A judge that keeps replies
in memory between families (:class:`~ragmeter.judges.shared_analysis.SharedJudge`) keeps
them per repeat too.
"""

from __future__ import annotations

from collections.abc import Awaitable
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["current_repeat", "in_repeat"]

T = TypeVar("T")

_REPEAT: ContextVar[int] = ContextVar("ragmeter_repeat", default=0)


def current_repeat() -> int:
    """The repeat the current task works for (0 outside any repeat)."""
    return _REPEAT.get()


async def in_repeat(repeat: int, work: Awaitable[T]) -> T:
    """Await ``work`` as repeat ``repeat``: the tasks it starts inherit the repeat (asyncio
    copies the context into each task), and the caller's repeat is back after."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
        raise ValueError(f"A repeat is an integer >= 0. Got {repeat!r}.")
    token = _REPEAT.set(repeat)
    try:
        return await work
    finally:
        _REPEAT.reset(token)
