"""Limits a judge server cannot talk ragmeter out of (issue 15): a Retry-After that is NaN,
negative or huge is clamped into a sane range (item 9).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from pathlib import Path

import pytest

from ragmeter.judges.base import AnalyzeRequest
from ragmeter.judges.openai_judge import OpenAIJudge
from ragmeter.judges.retry import RetryPolicy, parse_retry_after
from ragmeter.testing.server import TestServer
from ragmeter.types import Usage

REQUEST = AnalyzeRequest(
    question="Who patented the telephone?",
    answer="Alexander Graham Bell patented the telephone in 1876.",
    references=("Bell received the telephone patent in 1876.",),
    contexts=("Bell lived in Boston in 1876.",),
    wants=frozenset({"answer_claims"}),
)


def judge_for(server: TestServer, tmp_path: Path, **kw: object) -> OpenAIJudge:
    kw.setdefault("usage", Usage())
    return OpenAIJudge("test-model", base_url=server.base_url, cache=None, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------ item 9: Retry-After


@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "nan"},
        {"Retry-After": "NaN"},
        {"Retry-After": "-5"},
        {"Retry-After": "-inf"},
        {"retry-after-ms": "nan"},
        {"retry-after-ms": "-100"},
    ],
)
def test_a_nan_or_negative_retry_after_falls_back_to_backoff(headers: dict[str, str]) -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    delay = policy.delay(
        retries_done=0,
        kind="status",
        status=429,
        retry_after=parse_retry_after(headers),
        rng=random.Random(0),
    )
    assert delay is not None and math.isfinite(delay)
    assert 0.5 <= delay <= 1.0, (headers, delay)


@pytest.mark.parametrize(
    "headers",
    [{"Retry-After": "1e12"}, {"Retry-After": "1e999"}, {"retry-after-ms": "1e400"}],
)
def test_a_huge_retry_after_is_capped(headers: dict[str, str]) -> None:
    policy = RetryPolicy(max_retry_after=60.0)
    delay = policy.delay(
        retries_done=0,
        kind="status",
        status=429,
        retry_after=parse_retry_after(headers),
        rng=random.Random(0),
    )
    assert delay == 60.0


@pytest.mark.parametrize("value", ["0", "0.0"])
def test_a_zero_retry_after_still_waits_a_moment(value: str) -> None:
    policy = RetryPolicy()
    delay = policy.delay(
        retries_done=0,
        kind="status",
        status=429,
        retry_after=parse_retry_after({"Retry-After": value}),
        rng=random.Random(0),
    )
    assert delay is not None and delay >= policy.min_retry_after > 0


def test_a_server_sending_retry_after_nan_is_not_hammered(tmp_path: Path) -> None:
    policy = RetryPolicy(max_retries=2, base_delay=0.4, max_delay=0.4)

    async def timed(judge: OpenAIJudge) -> float:
        try:
            await judge.analyze(REQUEST)  # warm: the client is made, the SDK imported
            started = time.monotonic()
            await judge.analyze(REQUEST)  # calls 2 and 3 answer 429, call 4 the reply
            return time.monotonic() - started
        finally:
            await judge.aclose()

    with TestServer(fault_on_calls=(2, 3), faults=("429",), retry_after=float("nan")) as server:
        usage = Usage()
        elapsed = asyncio.run(timed(judge_for(server, tmp_path, retry_policy=policy, usage=usage)))
    assert usage.calls == 4 and usage.retries == 2
    assert elapsed >= 2 * 0.2, elapsed  # two backoffs of at least base_delay / 2


# ------------------------------------------------------------------ item 7: a total deadline


class _DripServer:
    """Answers every request with headers, then one byte of body every ``every`` seconds."""

    def __init__(self, every: float = 0.3) -> None:
        import socket
        import threading

        self.every = every
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        import threading

        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: object) -> None:
        try:
            conn.recv(65536)  # type: ignore[attr-defined]
            conn.sendall(  # type: ignore[attr-defined]
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                b"content-length: 100000\r\n\r\n"
            )
            while not self.stop.is_set():
                conn.sendall(b" ")  # type: ignore[attr-defined]
                time.sleep(self.every)
        except OSError:
            pass
        finally:
            conn.close()  # type: ignore[attr-defined]

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.mark.timeout(30)
def test_a_server_dripping_bytes_cannot_hold_a_call_past_its_timeout() -> None:
    from ragmeter.errors import JudgeError

    drip = _DripServer(every=0.3)
    try:
        judge = OpenAIJudge(
            "test-model",
            base_url=f"http://127.0.0.1:{drip.port}/v1",
            cache=None,
            timeout=1.0,
            retry_policy=RetryPolicy(max_retries=1, base_delay=0.1, max_delay=0.1),
            usage=Usage(),
        )

        async def call() -> None:
            try:
                await judge.analyze(REQUEST)
            finally:
                await judge.aclose()

        started = time.monotonic()
        with pytest.raises(JudgeError, match="no reply within 1 s"):
            asyncio.run(call())
        elapsed = time.monotonic() - started
    finally:
        drip.close()
    assert judge.usage.calls == 2
    assert elapsed < 2 * 1.0 + 1.5, elapsed  # two attempts of 1 s, a backoff, some slack
