"""How fast a run goes and how long it has left, from measured throughput only.

:class:`Pace` takes the rows done as they are reported and gives the rate and the time left.
It says nothing (``None``: "estimating") until enough rows are done to measure: at least
:data:`MIN_ROWS` and 1% of the run (at most :data:`ENOUGH_ROWS`), so two quick rows of 5,000
never give an ETA of minutes. The rate is measured from the first rows done, not from the
start, so loading or converting a model is not counted as scoring time; and it is read at
``now``, so a run that stops moving sees its estimate grow instead of freeze. One average over
every row since the first is the smoothing: a chunk of rows arriving at once moves it little.
"""

from __future__ import annotations

import math

__all__ = ["ENOUGH_ROWS", "MIN_ROWS", "MIN_SHARE", "Pace", "clock_text"]

#: Rows done before any estimate, and the share of the run (whichever is more, capped at
#: ENOUGH_ROWS: 1% of a million rows would wait too long).
MIN_ROWS = 5
MIN_SHARE = 0.01
ENOUGH_ROWS = 50


class Pace:
    """Rows per second since the first rows were scored, and the seconds left at that rate."""

    def __init__(self, total: int | None) -> None:
        self.total = total
        self.done = 0
        #: (time, rows done) when rows were first reported done.
        self.first: tuple[float, int] | None = None

    def update(self, done: int, now: float) -> None:
        """Rows done so far, at ``now`` (seconds of any monotonic clock)."""
        if self.first is None and done > 0:
            self.first = (now, done)
        self.done = done

    @property
    def needed(self) -> int:
        """Rows done before there is an estimate."""
        if self.total is None:
            return MIN_ROWS
        share = math.ceil(MIN_SHARE * self.total)
        return min(self.total, min(ENOUGH_ROWS, max(MIN_ROWS, share)))

    def rate(self, now: float) -> float | None:
        """Rows per second since the first rows done, or None while too few are done."""
        if self.first is None or self.done < self.needed:
            return None
        since, first_done = self.first
        if self.done <= first_done or now <= since:
            return None
        return (self.done - first_done) / (now - since)

    def seconds_left(self, now: float) -> float | None:
        """Seconds left at :meth:`rate`, or None (no total, or "estimating")."""
        rate = self.rate(now)
        if rate is None or self.total is None:
            return None
        return max(self.total - self.done, 0) / rate


def clock_text(seconds: float) -> str:
    """``H:MM:SS``."""
    whole = max(int(seconds + 0.5), 0)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
