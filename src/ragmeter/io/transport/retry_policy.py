"""When to retry a request to an HTTP endpoint (the judge's, the embedder's) and how long to wait:
pure functions, no I/O.

- 429: wait what ``Retry-After`` says, clamped into ``[min_retry_after, max_retry_after]``; a
  value that is not a number of seconds >= 0 (NaN, negative, garbage) is ignored: back off.
- 408, 5xx, timeouts and dropped connections: exponential backoff with jitter.
- A connection that cannot be opened at all (refused, no such host): the same backoff, at most
  ``max_connect_retries`` times; then the endpoint counts as gone and the run stops.
- Any other 4xx: fail at once (retrying a bad request or a bad key only wastes money).
- At most ``max_retries`` retries per request.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal

__all__ = ["FailureKind", "RetryPolicy", "parse_retry_after"]

#: ``connection``: a connection broke during a request; ``connect``: none could be opened.
FailureKind = Literal["status", "timeout", "connection", "connect"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    #: A server that says "retry now" (``Retry-After: 0``) still gets this pause.
    min_retry_after: float = 0.05
    #: Retries of a connection that cannot be opened (a server that died or never started):
    #: enough for a blip, not a minute of waiting on an endpoint that is gone.
    max_connect_retries: int = 3

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0. Got {self.max_retries}.")
        if self.max_connect_retries < 0:
            raise ValueError(f"max_connect_retries must be >= 0. Got {self.max_connect_retries}.")
        if not 0 <= self.min_retry_after <= self.max_retry_after:
            raise ValueError(
                "Retry-After bounds must satisfy 0 <= min_retry_after <= max_retry_after. "
                f"Got min_retry_after={self.min_retry_after}, "
                f"max_retry_after={self.max_retry_after}."
            )
        if self.base_delay < 0 or self.max_delay < self.base_delay:
            raise ValueError(
                "Backoff delays must satisfy 0 <= base_delay <= max_delay. "
                f"Got base_delay={self.base_delay}, max_delay={self.max_delay}."
            )

    @staticmethod
    def retryable(kind: FailureKind, status: int | None = None) -> bool:
        if kind != "status":
            return True
        if status is None:
            return False
        return status in (408, 429) or status >= 500

    def backoff(self, retry_number: int, rng: random.Random) -> float:
        """Delay before retry ``retry_number`` (1-based): exponential, half of it jittered."""
        ceiling = min(self.max_delay, self.base_delay * 2 ** (retry_number - 1))
        return ceiling / 2 + rng.uniform(0, ceiling / 2)

    def delay(
        self,
        *,
        retries_done: int,
        kind: FailureKind,
        status: int | None = None,
        retry_after: float | None = None,
        rng: random.Random,
    ) -> float | None:
        """Seconds to wait before the next attempt, or None to give up now."""
        if not self.retryable(kind, status) or retries_done >= self.max_retries:
            return None
        if kind == "connect" and retries_done >= self.max_connect_retries:
            return None
        if status == 429 and retry_after is not None and retry_after >= 0:  # False for NaN
            return min(max(retry_after, self.min_retry_after), self.max_retry_after)
        return self.backoff(retries_done + 1, rng)


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date).

    None when absent or not a number of seconds >= 0 (NaN, negative): a server cannot make
    ragmeter retry at once. A date in the past means now (0); ``inf`` stays (capped later).
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        seconds = _seconds(raw_ms, scale=1000.0)
        if seconds is not None:
            return seconds
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _seconds(raw)
    if seconds is not None or _is_number(raw):
        return seconds
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def _is_number(raw: str) -> bool:
    try:
        float(raw)
    except ValueError:
        return False
    return True


def _seconds(raw: str, *, scale: float = 1.0) -> float | None:
    """``raw`` as seconds >= 0, else None (not a number, NaN or negative)."""
    try:
        value = float(raw) / scale
    except ValueError:
        return None
    return value if value >= 0 and not math.isnan(value) else None
