"""The retry loop the judge's and the embedder's clients share (io/request_retries.py): what
each failure leads to, the waits it asks of the injected sleep, the breaker, and how it gives
up. No network: ``send`` raises the SDK's exceptions as a server's answers would."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
import openai
import pytest

from ragmeter.errors import ConfigError, param_names
from ragmeter.io.transport.http import BodyTooLarge, Breaker
from ragmeter.io.transport.retries import GaveUp, Retries, send_with_retries
from ragmeter.io.transport.retry_policy import RetryPolicy

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


class GiveUp(Exception):
    def __init__(self, why: GaveUp) -> None:
        super().__init__(why.reason)
        self.why = why


def status(code: int) -> openai.APIStatusError:
    return openai.APIStatusError(
        f"Error code: {code}", response=httpx.Response(code, request=REQUEST), body=None
    )


class ConnectError(Exception):
    """Named as the HTTP libraries name a connection that could not be opened."""


def refused() -> openai.APIConnectionError:
    error = openai.APIConnectionError(request=REQUEST)
    error.__cause__ = ConnectError("connection refused")
    return error


def run(
    answers: list[Any], *, max_no_reply: int = 10, send_again: Any = None
) -> tuple[Any, list[float], list[int]]:
    """The loop over ``answers`` (an exception is raised, anything else returned), one per
    attempt: its outcome (a value, or the GaveUp), the waits slept, the retries counted."""
    slept: list[float] = []
    counted: list[int] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    retries = Retries.of(
        timeout=5.0,
        retry_policy=RetryPolicy(max_retries=3, base_delay=0.5, max_delay=4.0),
        max_no_reply=max_no_reply,
        seed=1,
        sleep=sleep,
    )
    pending = iter(answers)

    async def send() -> Any:
        answer = next(pending)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def retrying(problem: str, retry: int, delay: float) -> None:
        counted.append(retry)

    try:
        outcome: Any = asyncio.run(
            send_with_retries(
                send,
                retries,
                status_problem=lambda exc: f"HTTP {exc.status_code}",
                give_up=GiveUp,
                send_again=send_again,
                retrying=retrying,
            )
        )
    except GiveUp as gave_up:
        outcome = gave_up.why
    return outcome, slept, counted


def test_server_errors_are_retried_with_backoff_through_the_injected_sleep() -> None:
    value, slept, counted = run([status(500), status(503), {"ok": True}])
    assert value == {"ok": True}
    assert counted == [1, 2] and len(slept) == 2
    assert 0.25 <= slept[0] <= 0.5 and 0.5 <= slept[1] <= 1.0  # half of it jittered


def test_a_refusal_gives_up_at_once_with_its_status() -> None:
    why, slept, _ = run([status(401)])
    assert why == GaveUp("status", "HTTP 401", 0, 401)
    assert slept == []


def test_server_errors_past_the_retries_give_up_saying_how_many() -> None:
    why, slept, _ = run([status(500)] * 4)
    assert why == GaveUp("status", "HTTP 500", 3, 500) and len(slept) == 3


def test_send_again_asks_at_once_without_a_retry() -> None:
    asked: list[tuple[int, str]] = []

    def step_down(code: int, problem: str) -> bool:
        asked.append((code, problem))
        return len(asked) == 1  # the first refusal only

    value, slept, counted = run([status(400), "reply"], send_again=step_down)
    assert value == "reply" and slept == [] and counted == []
    assert asked == [(400, "HTTP 400")]


def test_requests_without_a_reply_trip_the_breaker() -> None:
    why, slept, _ = run([TimeoutError(), TimeoutError(), "never"], max_no_reply=2)
    assert why == GaveUp("no_reply", "no reply within 5 s", 1)
    assert len(slept) == 1


def test_a_reply_resets_the_breaker() -> None:
    answers: list[Any] = [TimeoutError(), status(500), TimeoutError(), "reply"]
    value, slept, _ = run(answers, max_no_reply=2)
    assert value == "reply" and len(slept) == 3


def test_timeouts_past_the_retries_fail_and_a_refused_connection_is_unreachable() -> None:
    why, _, _ = run([TimeoutError()] * 4)
    assert why == GaveUp("failed", "no reply within 5 s", 3)
    why, slept, _ = run([refused()] * 4)
    assert why.reason == "unreachable" and why.retries == 3 and why.status is None
    assert "connection failed" in why.problem and len(slept) == 3


def test_a_reply_past_its_cap_gives_up_at_once() -> None:
    why, slept, _ = run([BodyTooLarge(100)])
    assert why == GaveUp("too_large", "the reply is longer than 100 bytes", 0)
    assert slept == []


@pytest.mark.parametrize("names", [None, {"max_no_reply": "--max-no-reply"}])
def test_a_bad_max_no_reply_is_refused_naming_it_as_the_caller_does(
    names: dict[str, str] | None,
) -> None:
    wording = param_names(names) if names else contextlib.nullcontext()
    with wording, pytest.raises(ConfigError) as info:
        Retries.of(timeout=1.0, max_no_reply=-1)
    expected = "--max-no-reply" if names else "max_no_reply"
    assert str(info.value) == f"{expected} must be an integer >= 0 (0: never stop). Got -1."


@pytest.mark.parametrize("timeout", [0.0, -1.0, float("nan")])
def test_a_timeout_that_is_not_positive_is_refused_for_the_judge_and_the_embedder(
    timeout: float,
) -> None:
    from ragmeter.judges.llm.openai_judge import OpenAIJudge
    from ragmeter.models.embeddings import OpenAIEmbedder

    expected = f"timeout must be a number of seconds > 0. Got {timeout}."
    for make in (
        lambda: Retries.of(timeout=timeout),
        lambda: OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", timeout=timeout),
        lambda: OpenAIEmbedder("m", base_url="http://127.0.0.1:9/v1", timeout=timeout),
    ):
        with pytest.raises(ConfigError) as info:
            make()
        assert str(info.value) == expected


def test_a_request_that_hung_while_the_endpoint_answered_others_is_not_counted() -> None:
    # Hung requests pile up in the concurrency slots (answered ones leave) and time out
    # together; the endpoint answered meanwhile, so they say nothing of it being gone.
    breaker = Breaker(2)
    hung = [breaker.sent() for _ in range(16)]
    breaker.reply()  # another request was answered while they waited
    assert not any(breaker.no_reply(mark) for mark in hung)
    assert breaker.count == 0
    # An endpoint that answers nothing: every request counts, the second in a row trips it.
    assert not breaker.no_reply(breaker.sent())
    assert breaker.no_reply(breaker.sent())
