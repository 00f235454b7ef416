from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from ragmeter.io.transport.retry_policy import RetryPolicy, parse_retry_after


def rng() -> random.Random:
    return random.Random(0)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_other_4xx_are_not_retried(status: int) -> None:
    assert RetryPolicy().delay(retries_done=0, kind="status", status=status, rng=rng()) is None


@pytest.mark.parametrize(
    ("kind", "status"),
    [("status", 500), ("status", 503), ("status", 408), ("timeout", None), ("connection", None)],
)
def test_transient_failures_back_off_exponentially_with_bounded_jitter(kind, status) -> None:
    policy = RetryPolicy(max_retries=6, base_delay=1.0, max_delay=8.0)
    for done in range(6):
        ceiling = min(8.0, 2.0**done)
        for seed in range(20):
            d = policy.delay(retries_done=done, kind=kind, status=status, rng=random.Random(seed))
            assert ceiling / 2 <= d <= ceiling
    assert policy.delay(retries_done=6, kind=kind, status=status, rng=rng()) is None


def test_429_honours_retry_after_capped() -> None:
    policy = RetryPolicy(max_retry_after=10.0)
    assert (
        policy.delay(retries_done=0, kind="status", status=429, retry_after=3.0, rng=rng()) == 3.0
    )
    assert policy.delay(retries_done=0, kind="status", status=429, retry_after=99, rng=rng()) == 10
    no_header = policy.delay(retries_done=0, kind="status", status=429, rng=rng())
    assert no_header is not None and 0.25 <= no_header <= 0.5


def test_retry_after_header_forms() -> None:
    assert parse_retry_after({"Retry-After": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    now = datetime(2024, 1, 1, 0, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "Mon, 01 Jan 2024 00:00:05 GMT"}, now=now) == 5.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_invalid_policies_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_retries must be >= 0"):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError, match="base_delay"):
        RetryPolicy(base_delay=5, max_delay=1)


def test_a_connection_that_cannot_be_opened_is_retried_only_a_few_times() -> None:
    policy = RetryPolicy(max_retries=5, max_connect_retries=2)
    assert policy.delay(retries_done=1, kind="connect", rng=rng()) is not None
    assert policy.delay(retries_done=2, kind="connect", rng=rng()) is None
    # A connection that broke during a request keeps the full budget.
    assert policy.delay(retries_done=2, kind="connection", rng=rng()) is not None
    with pytest.raises(ValueError, match="max_connect_retries"):
        RetryPolicy(max_connect_retries=-1)
