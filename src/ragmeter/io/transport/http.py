"""What every OpenAI-compatible HTTP client of a run shares (the judge's and the embedder's):
one way to build the client, one cap on what is read of a body, one deadline, one breaker.

- :func:`openai_http_client`: the SDK's HTTP client with a response hook that reads at most
  :data:`MAX_ERROR_BODY` bytes of an error body (status >= 400) and raises the SDK's status
  error with that much; the SDK would read the whole body first (a 50 MB error body cost
  760 MB).
- :func:`post_json`: one POST whose reply is streamed and read up to a cap (then
  :class:`BodyTooLarge`), within a deadline for the whole request (connect, send, every byte
  of the reply): a server that drips a byte at a time cannot hold it longer.
- :func:`no_reply_kind`: whether an exception means no reply came at all (a timeout, a
  connection that could not be opened or that broke), and which.
- :class:`Breaker`: counts requests in a row that got no reply at all, across rows; at its
  limit the client stops the run instead of trying every remaining row.

Retries and their waits are :mod:`ragmeter.io.transport.retry_policy`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from typing import Any

from ragmeter.io.activity import current_activity
from ragmeter.io.transport.retry_policy import FailureKind

__all__ = [
    "DEFAULT_MAX_NO_REPLY",
    "MAX_ERROR_BODY",
    "REFUSALS",
    "BodyTooLarge",
    "Breaker",
    "no_reply_kind",
    "no_reply_problem",
    "openai_http_client",
    "post_json",
]

#: The most bytes of an error body (status >= 400) read: enough for any error message.
MAX_ERROR_BODY = 64 * 1024
#: Answers that no retry and no other row can change: the key, the access, the model or route.
REFUSALS = (401, 403, 404)
#: Requests in a row with no reply at all (timeouts, connections refused or dropped) after
#: which a client stops the run (``Settings.max_no_reply``).
DEFAULT_MAX_NO_REPLY = 10

try:  # the SDK's switch for a reply whose body is read by the caller, as it is streamed
    from openai._constants import RAW_RESPONSE_HEADER as _RAW_RESPONSE_HEADER
except ImportError:  # pragma: no cover - an SDK that moved it, or none
    _RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"


class BodyTooLarge(Exception):
    """A reply's body went past its cap; reading stopped there."""

    def __init__(self, cap: int) -> None:
        super().__init__(f"the reply is longer than {cap} bytes")
        self.cap = cap


def openai_http_client(*, max_error_bytes: int = MAX_ERROR_BODY) -> Any:
    """The openai SDK's async HTTP client (its defaults) whose error bodies are read up to
    ``max_error_bytes``: the SDK's status error is raised with what was read (cut, saying so).

    Made in the event loop that uses it (one per loop, as the SDK's own client is).
    """
    import openai

    async def capped_error(response: Any) -> None:
        if response.status_code < 400:
            return
        kept = bytearray()
        complete = True
        try:
            async for chunk in response.aiter_bytes():
                kept += chunk
                if len(kept) > max_error_bytes:
                    complete = False
                    break
        finally:
            await response.aclose()
        text = bytes(kept[:max_error_bytes]).decode("utf-8", "replace").strip()
        body: Any = text
        if complete:
            with contextlib.suppress(ValueError):
                body = json.loads(text)
        else:
            text = body = f"{text}... [cut: more than {max_error_bytes} bytes]"
        message = f"Error code: {response.status_code}"
        inner = body.get("error", body) if isinstance(body, dict) else None
        detail = inner.get("message") if isinstance(inner, dict) else text
        if isinstance(detail, str) and detail:
            message += f" - {detail}"
        raise openai.APIStatusError(message, response=response, body=body)

    return openai.DefaultAsyncHttpxClient(event_hooks={"response": [capped_error]})


async def post_json(
    client: Any, path: str, body: dict[str, Any], *, max_bytes: int, timeout: float
) -> Any:
    """POST ``body`` (plain JSON) to ``path`` of an openai SDK client; the reply's JSON, or
    None when it is not JSON (or nests past the parser's depth).

    The reply is streamed and read up to ``max_bytes`` (else :class:`BodyTooLarge`), all of
    it within ``timeout`` seconds (else :class:`TimeoutError`). The SDK's custom-request
    route: the body is not run through the typed-parameter transform (milliseconds a call).
    """
    activity = current_activity()
    if activity is None:
        return await asyncio.wait_for(_post(client, path, body, max_bytes), timeout=timeout)
    activity.sent += 1
    activity.in_flight += 1
    try:
        reply = await asyncio.wait_for(_post(client, path, body, max_bytes), timeout=timeout)
    except Exception as exc:
        if no_reply_kind(exc) is None:  # a reply with an error status, or one too large
            activity.replies += 1
        raise
    else:
        activity.replies += 1
        return reply
    finally:
        activity.in_flight -= 1


async def _post(client: Any, path: str, body: dict[str, Any], max_bytes: int) -> Any:
    reply = await client.post(
        path,
        cast_to=object,
        body=body,
        options={"headers": {_RAW_RESPONSE_HEADER: "stream"}},
    )
    if not hasattr(reply, "iter_bytes"):  # an SDK that read and parsed the body itself
        return reply
    size, chunks = 0, []
    try:
        async for chunk in reply.iter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise BodyTooLarge(max_bytes)
            chunks.append(chunk)
    finally:
        await reply.close()
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None


def no_reply_kind(exc: BaseException) -> FailureKind | None:
    """``"timeout"``, ``"connect"`` (no connection could be opened: refused, no route, no
    such host) or ``"connection"`` (one broke during the request) when ``exc`` means no reply
    came at all; None for anything else (a reply with an error status, say)."""
    import openai

    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connect" if _never_connected(exc) else "connection"
    return None


def no_reply_problem(exc: BaseException, timeout: float) -> tuple[FailureKind, str]:
    """The kind of a failure that brought no reply (:func:`no_reply_kind`, "connection" when
    unknown) and what to say of it."""
    kind = no_reply_kind(exc) or "connection"
    if kind == "timeout":
        return kind, f"no reply within {timeout:g} s"
    return kind, f"connection failed ({exc.__cause__ or exc})"


def _never_connected(exc: BaseException) -> bool:
    """Whether a connection error is one where no connection could be opened, not one that
    broke during a request (a dropped reply).

    Read from the chain of causes by class name: the SDK's HTTP library varies by version
    (``httpx``, ``httpx2``, ``httpcore`` below them), and each calls this ``ConnectError``.
    """
    seen: set[int] = set()
    current: BaseException | None = exc.__cause__ or exc.__context__
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == "ConnectError" or isinstance(current, ConnectionRefusedError):
            return True
        current = current.__cause__ or current.__context__
    return False


class Breaker:
    """Requests in a row that got no reply at all, across rows and retries, while the endpoint
    answered nothing else.

    Any reply (an error status too) resets the count. A request that got no reply counts only
    when no other reply came while it waited (:meth:`sent` marks when it went out): requests
    that hang while the endpoint answers the others are each the retry policy's to end, not a
    sign that the endpoint is gone. (Counting every timeout tripped the breaker on a live
    endpoint: hung requests pile up in the concurrency slots, because answered ones leave, and
    then time out together.) :meth:`no_reply` says when the count reached ``limit`` (0:
    never), and the client then stops the run: an endpoint that accepts connections and never
    answers (or drops them) would otherwise cost every row its timeouts and retries. A
    connection that cannot be opened at all is not counted: the retry policy's
    ``max_connect_retries`` stops the run sooner for it.
    Thread-safe (the embedder calls from worker threads).
    """

    def __init__(self, limit: int = DEFAULT_MAX_NO_REPLY) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"max_no_reply must be an integer >= 0. Got {limit!r}.")
        self.limit = limit
        self.count = 0
        self.replies = 0  # replies so far: a request's mark when it is sent
        self._lock = threading.Lock()

    def sent(self) -> int:
        """A request goes out: the mark to give :meth:`no_reply` if it gets no reply."""
        with self._lock:
            return self.replies

    def reply(self) -> None:
        """A reply came (any status): the endpoint answers."""
        with self._lock:
            self.count = 0
            self.replies += 1

    def no_reply(self, since: int) -> bool:
        """A request (sent at mark ``since``, :meth:`sent`) got no reply; whether that makes
        ``limit`` in a row. It is not counted when another reply came after ``since``."""
        with self._lock:
            if self.replies != since:
                return False
            self.count += 1
            return self.limit > 0 and self.count >= self.limit
