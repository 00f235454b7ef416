"""One request to an OpenAI-compatible endpoint, sent again until a reply comes or it gives
up: the loop the judge's and the embedder's clients share.

The loop decides what a failure is and what follows: a reply past its cap
(:class:`~ragmeter.io.transport.http.BodyTooLarge`) gives up at once; a reply with an error status
or none at all (a timeout, a connection refused or dropped) is retried as the
:class:`~ragmeter.io.transport.retry_policy.RetryPolicy` says (``Retry-After``, backoff with jitter,
waited with the client's ``sleep``, which tests replace); the
:class:`~ragmeter.io.transport.http.Breaker` counts requests in a row without a reply and gives up
at its limit.

The client decides what is sent (its semaphore, its own "the endpoint is gone" check), how
an error status is worded, whether a status means "send again at once" (the judge steps its
response format down), and which exception each way of giving up raises (:class:`GaveUp`):
the wording of errors is the client's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from random import Random
from typing import Any, Literal, TypeVar

from ragmeter.io.transport.http import DEFAULT_MAX_NO_REPLY, BodyTooLarge, Breaker, no_reply_problem
from ragmeter.io.transport.retry_policy import FailureKind, RetryPolicy, parse_retry_after
from ragmeter.settings import check_options

__all__ = ["GaveUp", "Reason", "Retries", "send_with_retries"]

T = TypeVar("T")

#: Why a request gave up: ``too_large`` (a reply past its cap, not retried), ``no_reply``
#: (the breaker's limit of requests in a row without a reply), ``status`` (an error status
#: that no retry changes, or the retries ran out on it), ``unreachable`` (no connection could
#: be opened, its retries spent), ``failed`` (timeouts or dropped connections, retries spent).
Reason = Literal["too_large", "no_reply", "status", "unreachable", "failed"]


@dataclass(frozen=True, slots=True)
class GaveUp:
    """How a request ended without a reply to use; the client words the error."""

    reason: Reason
    #: What went wrong, worded: "no reply within 60 s", the client's wording of a status.
    problem: str
    #: Retries done before giving up.
    retries: int
    #: The HTTP status of the last reply; None where no reply came.
    status: int | None = None


@dataclass(frozen=True, slots=True)
class Retries:
    """What a client's requests are sent again with: made once per client (:meth:`of`)."""

    policy: RetryPolicy
    #: Requests in a row without a reply, across the client's requests.
    breaker: Breaker
    #: The deadline of one whole request, in seconds (for the words "no reply within N s").
    timeout: float
    #: The jitter's random source.
    rng: Random
    #: ``await sleep(seconds)`` between retries: ``asyncio.sleep``, or the waits a test records.
    sleep: Callable[[float], Awaitable[None]]

    @classmethod
    def of(
        cls,
        *,
        timeout: float,
        max_retries: int = 5,
        retry_policy: RetryPolicy | None = None,
        max_no_reply: int = DEFAULT_MAX_NO_REPLY,
        seed: int | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> Retries:
        """A client's retries from its options: ``timeout`` (> 0 seconds), ``retry_policy``,
        else ``max_retries`` with the default backoff; ``max_no_reply`` (an integer >= 0).
        The two are checked as ``Settings`` checks them (a
        :class:`~ragmeter.errors.ConfigError`)."""
        check_options(timeout=timeout, max_no_reply=max_no_reply)
        return cls(
            policy=retry_policy or RetryPolicy(max_retries=max_retries),
            breaker=Breaker(max_no_reply),
            timeout=timeout,
            rng=Random(seed),
            sleep=sleep or asyncio.sleep,
        )


async def send_with_retries(
    send: Callable[[], Awaitable[T]],
    retries: Retries,
    *,
    status_problem: Callable[[Any], str],
    give_up: Callable[[GaveUp], BaseException],
    send_again: Callable[[int, str], bool] | None = None,
    retrying: Callable[[str, int, float], None] | None = None,
    wait_for_slot: Callable[[], Awaitable[Any]] | None = None,
) -> T:
    """``await send()`` until it returns (its value is returned) or the request gives up
    (``give_up(why)`` is raised).

    Parameters
    ----------
    send : callable
        One attempt: the request, through :func:`~ragmeter.io.transport.http.post_json`. An
        exception other than the openai SDK's status and connection errors, :class:`TimeoutError`
        and :class:`~ragmeter.io.transport.http.BodyTooLarge` goes through untouched.
    retries : Retries
        The client's retry policy, no-reply breaker, deadline, jitter and sleep.
    status_problem : callable
        The words for a reply with an error status (the SDK's ``APIStatusError``).
    give_up : callable
        The exception to raise for a request that gives up.
    send_again : callable, optional
        ``send_again(status, problem)``: True to send again at once, no retry counted (the
        judge's response format refused: it steps down and asks again).
    retrying : callable, optional
        ``retrying(problem, retry_number, delay)`` before each wait (the judge counts them).
    wait_for_slot : callable, optional
        Awaited before each try (the judge's concurrency slot, which ``send`` gives back when
        it fails): the try counts as sent, for the breaker, once it has its slot.
    """
    import openai

    policy, breaker = retries.policy, retries.breaker
    done = 0  # retries done
    while True:
        kind: FailureKind
        status: int | None = None
        retry_after: float | None = None
        if wait_for_slot is not None:
            await wait_for_slot()
        mark = breaker.sent()
        try:
            reply = await send()
        except BodyTooLarge as exc:
            breaker.reply()
            raise give_up(GaveUp("too_large", str(exc), done)) from None
        except openai.APIStatusError as exc:
            breaker.reply()
            status = exc.status_code
            problem = status_problem(exc)
            if send_again is not None and send_again(status, problem):
                continue
            kind = "status"
            retry_after = parse_retry_after(exc.response.headers)
        except (openai.APIConnectionError, TimeoutError) as exc:  # no reply at all
            kind, problem = no_reply_problem(exc, retries.timeout)
            # A connection that cannot be opened has its own, shorter stop (the policy's
            # max_connect_retries, below).
            if kind != "connect" and breaker.no_reply(mark):
                raise give_up(GaveUp("no_reply", problem, done)) from None
        else:
            breaker.reply()
            return reply
        delay = policy.delay(
            retries_done=done, kind=kind, status=status, retry_after=retry_after, rng=retries.rng
        )
        if delay is None:
            reason: Reason = (
                "status" if kind == "status" else "unreachable" if kind == "connect" else "failed"
            )
            raise give_up(GaveUp(reason, problem, done, status))
        done += 1
        if retrying is not None:
            retrying(problem, done, delay)
        await retries.sleep(delay)
