"""A run's watch: a task beside the scoring that looks at the clock every second.

It moves the progress display (a line a minute without a terminal), warns when requests to a
judge or model endpoint are pending and no reply has come for ``Settings.stall_warning``
seconds (what is pending: requests in flight, rows waiting), and ends when the run's
``Settings.deadline`` has passed: the runner then stops the scoring and keeps what was scored.

Time comes from a :class:`Clock` (the monotonic clock and ``asyncio.sleep`` by default), so
tests give a fake one and never wait on the wall clock.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ragmeter.errors import param
from ragmeter.io.activity import Activity
from ragmeter.runner.pace import clock_text
from ragmeter.runner.progress import Progress

__all__ = ["TICK", "Clock", "Watch", "deadline_message"]

log = logging.getLogger("ragmeter")

#: Seconds between the watch's looks at the clock.
TICK = 1.0


@dataclass(frozen=True, slots=True)
class Clock:
    """Where a run reads the time and how it waits."""

    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


@dataclass(slots=True)
class Watch:
    """Looks at a run every :data:`TICK` seconds of ``clock``; :meth:`run` returns when the
    deadline has passed (never without one)."""

    activity: Activity
    #: Rows done and rows of the run (None: unknown), read at each look.
    rows: Callable[[], tuple[int, int | None]]
    clock: Clock = field(default_factory=Clock)
    display: Progress | None = None
    stall_warning: float | None = 30.0
    deadline: float | None = None
    started: float = 0.0
    _last_reply: tuple[float, int] = (0.0, 0)
    _warned_at: float | None = None

    def start(self) -> None:
        self.started = self.clock.now()
        self._last_reply = (self.started, self.activity.replies)

    async def run(self) -> None:
        """Look every second until the deadline has passed."""
        self.start()
        while True:
            await self.clock.sleep(TICK)
            now = self.clock.now()
            tick = getattr(self.display, "tick", None)
            if tick is not None:
                tick()
            self.check_stall(now)
            if self.deadline is not None and now - self.started >= self.deadline:
                return

    def check_stall(self, now: float) -> str | None:
        """Warn (once, then each time the silence doubles) while requests are pending and no
        reply came for ``stall_warning`` seconds; returns the warning given."""
        replies = self.activity.replies
        if replies != self._last_reply[1]:
            self._last_reply = (now, replies)
            self._warned_at = None
            return None
        if not self.stall_warning or self.activity.in_flight <= 0:
            return None
        silent = now - self._last_reply[0]
        due = self.stall_warning if self._warned_at is None else 2 * self._warned_at
        if silent < due:
            return None
        self._warned_at = silent
        done, total = self.rows()
        waiting = "" if total is None else f"; {total - done} of {total} rows waiting"
        in_flight = self.activity.in_flight
        message = (
            f"No reply from the judge or model endpoint for {clock_text(silent)}: "
            f"{in_flight} request{'s' if in_flight != 1 else ''} in flight{waiting}. "
            f"The run goes on (each request is retried after {param('timeout')}); stop it with "
            f"Ctrl-C to keep the rows scored and {param('resume', 'resume=True')} later."
        )
        log.warning(message)
        return message


def deadline_message(deadline: float | None, remaining: int | None) -> str:
    """Why a run stopped at its deadline, and what becomes of the rows not scored."""
    rows = "" if remaining is None else f" of the {remaining} rows this run was to score"
    return (
        f"The run's deadline of {clock_text(deadline or 0)} ({deadline:g} s; "
        f"{param('deadline', 'Settings(deadline=...)')}) passed. The rows not scored{rows} are "
        f"not written: {param('resume', 'resume=True')} scores them. Raise "
        f"{param('deadline', 'the deadline')}, or give 0 for none."
    )
