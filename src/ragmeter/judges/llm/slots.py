"""The concurrency slots a judge's completion holds until its replies are stored.

A request gives its slot back as its reply arrives, unless the completion that made it holds
its slots (:data:`HELD_SLOTS` set in its task): then the slots are given back once the
replies are stored in the cache or dropped, so a run killed at any moment has received and
not stored at most ``max_concurrency`` replies.
"""

from __future__ import annotations

import asyncio
import contextvars

__all__ = ["HELD_SLOTS", "HeldSlots"]


class HeldSlots:
    """The concurrency slots of the requests a :meth:`OpenAIJudge._complete` made, kept
    until their replies are stored or dropped (:meth:`release`)."""

    def __init__(self) -> None:
        self.slots: list[asyncio.Semaphore] = []

    def release(self) -> None:
        """Give every slot held back (later calls do nothing)."""
        while self.slots:
            self.slots.pop().release()


#: The slots of the completion being made in this task (None: a request gives its slot back
#: as its reply arrives).
HELD_SLOTS: contextvars.ContextVar[HeldSlots | None] = contextvars.ContextVar(
    "ragmeter_judge_held_slots", default=None
)
