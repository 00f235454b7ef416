"""When to retry a judge request and how long to wait: pure functions, no I/O.

- 429: wait what ``Retry-After`` says (capped), else back off.
- 408, 5xx, timeouts and dropped connections: exponential backoff with jitter.
- Any other 4xx: fail at once (retrying a bad request or a bad key only wastes money).
- At most ``max_retries`` retries per request.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Literal

__all__ = ["FailureKind", "RetryPolicy", "parse_retry_after"]

FailureKind = Literal["status", "timeout", "connection"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0. Got {self.max_retries}.")
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
        if status == 429 and retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return self.backoff(retries_done + 1, rng)


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)
