"""Limits a judge server cannot talk ragmeter out of (issue 15): a Retry-After that is NaN,
negative or huge is clamped into a sane range (item 9); a call has a total deadline (item 7);
a reply past the size cap, or an answer with more claims than the cap, fails its row and is
never cached (item 8).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.cache import JudgeCache
from ragmeter.io.transport.retry_policy import RetryPolicy, parse_retry_after
from ragmeter.judges.base import AnalyzeRequest
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.metrics.base import Settings
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


class RecordedSleep:
    """An injected ``sleep``: records each wait the judge asks for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def test_a_server_sending_retry_after_nan_is_not_hammered(tmp_path: Path) -> None:
    policy = RetryPolicy(max_retries=2, base_delay=0.4, max_delay=0.4)
    sleep = RecordedSleep()

    async def twice(judge: OpenAIJudge) -> None:
        try:
            await judge.analyze(REQUEST)  # call 1: the reply
            await judge.analyze(REQUEST)  # calls 2 and 3 answer 429, call 4 the reply
        finally:
            await judge.aclose()

    with TestServer(fault_on_calls=(2, 3), faults=("429",), retry_after=float("nan")) as server:
        usage = Usage()
        judge = judge_for(server, tmp_path, retry_policy=policy, usage=usage, sleep=sleep)
        asyncio.run(twice(judge))
    assert usage.calls == 4 and usage.retries == 2
    # Two backoffs of base_delay / 2 to base_delay each, not "retry now".
    assert len(sleep.waits) == 2
    assert all(0.2 <= wait <= 0.4 for wait in sleep.waits), sleep.waits


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
        sleep = RecordedSleep()
        judge = OpenAIJudge(
            "test-model",
            base_url=f"http://127.0.0.1:{drip.port}/v1",
            cache=None,
            timeout=1.0,
            retry_policy=RetryPolicy(max_retries=1, base_delay=0.1, max_delay=0.1),
            usage=Usage(),
            sleep=sleep,
        )

        async def call() -> None:
            try:
                await judge.analyze(REQUEST)
            finally:
                await judge.aclose()

        # The body would take 8 hours at this pace: without the deadline the call never
        # ends and the test's own timeout (above) fails it.
        with pytest.raises(JudgeError, match="no reply within 1 s"):
            asyncio.run(call())
    finally:
        drip.close()
    assert judge.usage.calls == 2  # the first attempt and one retry, each cut at 1 s
    assert len(sleep.waits) == 1 and 0.05 <= sleep.waits[0] <= 0.1, sleep.waits


# ------------------------------------------------------------------ item 8: caps on a reply

CAPPED_METRICS = ["faithfulness", "claim_recall"]


def capped_run(
    server: TestServer, data: list[dict[str, Any]], cache: Path, **caps: int
) -> ragmeter.RunResult:
    server.reset()
    settings = Settings(
        judge="openai:test-model",
        base_url=server.base_url,
        cache_path=str(cache),
        timeout=10.0,
        **caps,
    )
    return ragmeter.evaluate(data, CAPPED_METRICS, settings=settings, progress=False)


def test_a_reply_past_the_size_cap_fails_its_row_uncached_and_reading_stops_there(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = samples(4)
    reference = {r.index: r.scores for r in capped_run(server, data, tmp_path / "ref.sqlite3")}
    cache = tmp_path / "cache.sqlite3"
    server.configure(reply_padding=5_000_000)  # 5 MB of spaces after each reply
    result = capped_run(server, data, cache, max_reply_bytes=20_000)
    for row in result.rows:
        assert set(row.failures) == set(CAPPED_METRICS)
        assert "more than 20000 bytes" in row.failures["faithfulness"]
        assert "(the max_reply_bytes cap)" in row.failures["faithfulness"]  # as Python names it
        assert row.failure_causes == dict.fromkeys(CAPPED_METRICS, "judge")  # --resume retries
    assert len(JudgeCache(cache)) == 0  # nothing over the cap was stored
    # Under a cap that fits, the padded replies read the same as the plain ones.
    scores = capped_run(server, data, cache, max_reply_bytes=6_000_000)
    assert {r.index: r.scores for r in scores.rows} == reference


def test_an_answer_with_more_claims_than_the_cap_fails_its_row_uncached(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data, cache = samples(4), tmp_path / "cache.sqlite3"
    server.configure(reply_claims=400)
    result = capped_run(server, data, cache, max_claims=100)
    for row in result.rows:
        message = row.failures["faithfulness"]
        assert "found 403 claims in the answer, more than the max_claims cap of 100" in message
        assert "--max-claims" not in message  # the Python API names the parameter
        assert row.failure_causes["faithfulness"] == "judge"
    assert server.stats()["verify_calls"] == 0  # the claims were never sent on
    assert len(JudgeCache(cache)) == 0
    scored = capped_run(server, data, cache, max_claims=1000)
    assert not scored.failures()
    assert len(JudgeCache(cache)) == server.stats()["chat_calls"] > 0


@pytest.mark.parametrize("option", ["--max-reply-bytes", "--max-claims"])
def test_a_cap_below_one_is_refused_before_any_work(option: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    data = tmp_path / "d.jsonl"
    data.write_text('{"answer": "Paris.", "contexts": ["Paris."]}\n')
    res = CliRunner().invoke(app, ["evaluate", str(data), "-m", "faithfulness", option, "0"])
    assert res.exit_code == 2
    assert f"{option} must be >= 1" in res.output  # the CLI words a setting by its flag
