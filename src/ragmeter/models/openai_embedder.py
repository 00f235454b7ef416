"""An OpenAI-compatible ``/embeddings`` endpoint as an embedder (``embedder="openai:MODEL"``):
rows re-normalised here, requests through the judges' HTTP transport
(:mod:`ragmeter.io.transport`): a deadline per request, capped bodies, the retry policy and
the no-reply breaker."""

from __future__ import annotations

import asyncio
import base64
import contextvars
import os
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from ragmeter.errors import (
    ConfigError,
    EndpointError,
    EndpointUnavailableError,
    keyword,
    param,
)
from ragmeter.io.redact import redact, redact_url, register_secret, strip_credentials, url_secrets
from ragmeter.io.transport.http import DEFAULT_MAX_NO_REPLY, REFUSALS, openai_http_client, post_json
from ragmeter.io.transport.retries import GaveUp, Retries, send_with_retries
from ragmeter.io.transport.retry_policy import RetryPolicy
from ragmeter.models.embedding_rows import in_length_order, l2_normalise
from ragmeter.settings import check_options

__all__ = ["OpenAIEmbedder"]

T = TypeVar("T")

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
#: The most bytes of one ``/embeddings`` reply read (256 texts of 3072 numbers as JSON are
#: about 17 MB).
MAX_EMBEDDINGS_REPLY_BYTES = 64 * 2**20


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint; rows are re-normalised here.

    Requests go through the judge's HTTP plumbing (:mod:`ragmeter.io.transport.http`): ``timeout``
    is a deadline for each whole request (connect, send, every byte of the reply), a reply is read
    up to ``max_reply_bytes`` and an error body up to
    :data:`~ragmeter.io.transport.http.MAX_ERROR_BODY`; retries follow ``retry_policy`` (429, 408,
    5xx, timeouts, dropped connections; see :mod:`ragmeter.io.transport.retry_policy`). An endpoint
    that refuses (401, 403, 404), cannot be reached any more, or gave no reply at all to
    ``max_no_reply`` requests in a row raises :class:`~ragmeter.errors.EndpointUnavailableError`
    (then so does every later call): the run stops. Any other failure after the retries raises
    :class:`~ragmeter.errors.EndpointError`.

    Parameters
    ----------
    model : str
        The endpoint's model name, e.g. ``"text-embedding-3-small"``.
    base_url, api_key : str, optional
        Default to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``. A custom ``base_url`` without a
        key (a local server) is allowed.
    client : openai.AsyncOpenAI, optional
        A ready client (tests pass one with a mock transport); else one is made per call.
    sleep : callable, optional
        ``await sleep(seconds)`` between retries (tests inject one).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        batch_size: int = 256,
        timeout: float = 60.0,
        max_retries: int = 5,
        max_reply_bytes: int = MAX_EMBEDDINGS_REPLY_BYTES,
        max_no_reply: int = DEFAULT_MAX_NO_REPLY,
        retry_policy: RetryPolicy | None = None,
        client: Any = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        seed: int | None = None,
    ) -> None:
        if not model:
            raise ConfigError("An OpenAI embedder needs a model name, e.g. 'openai:MODEL'.")
        check_options(batch_size=batch_size, max_reply_bytes=max_reply_bytes)
        self._retries = Retries.of(
            timeout=timeout,
            max_retries=max_retries,
            retry_policy=retry_policy,
            max_no_reply=max_no_reply,
            seed=seed,
            sleep=sleep,
        )
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = batch_size
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._client = client
        #: Set once the endpoint refused or went away; every later call raises it.
        self._unavailable: EndpointUnavailableError | None = None
        base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if client is None and api_key is None:
            if base_url is None:
                raise ConfigError(
                    f"Embedder {self.name!r} needs an API key. Set OPENAI_API_KEY (or pass "
                    f"api_key= in Python), or point {keyword('base_url')} at a local "
                    "OpenAI-compatible server."
                )
            api_key = "not-needed"
        endpoint = (base_url or DEFAULT_ENDPOINT).rstrip("/")
        register_secret(api_key, *url_secrets(endpoint))
        self._api_key = api_key
        #: Credentials in the URL would go as Basic auth in place of the Bearer key.
        self._base_url = strip_credentials(endpoint)
        self.public_endpoint = redact_url(endpoint)

    def _new_client(self) -> Any:
        """A client for the running loop (each call runs its own)."""
        import openai

        return openai.AsyncOpenAI(
            base_url=self._base_url,
            api_key=self._api_key,
            timeout=self.timeout,
            max_retries=0,
            http_client=openai_http_client(),
        )

    def _run(self, texts: list[str]) -> np.ndarray:
        # Some endpoints reject empty strings; a single space embeds "nothing".
        sent = [text if text.strip() else " " for text in texts]
        reply = _run_to_end(self._embed(sent))
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list) or not all(
            isinstance(item, dict) and isinstance(item.get("index"), int) for item in data
        ):
            raise EndpointError(
                f"The embeddings endpoint {self.public_endpoint} answered {self.name!r} with "
                "something that is not an embeddings reply (no 'data' list of indexed vectors)."
            )
        if len(data) != len(sent):
            raise EndpointError(
                f"Embeddings endpoint {self.name!r} returned {len(data)} vectors for "
                f"{len(sent)} texts."
            )
        vectors = [_vector(item.get("embedding")) for item in sorted(data, key=_index)]
        return l2_normalise(np.asarray(vectors, dtype=np.float32))

    async def _embed(self, texts: list[str]) -> Any:
        client = self._client if self._client is not None else self._new_client()
        try:
            return await self._request(client, {"model": self.model, "input": texts})
        finally:
            if client is not self._client:
                await client.close()

    def _gone(self, message: str) -> EndpointUnavailableError:
        """Remember that the endpoint refused or went away (the first reason is kept)."""
        error = EndpointUnavailableError(redact(message, [self._api_key]))
        if self._unavailable is None:
            self._unavailable = error
        return self._unavailable

    async def _request(self, client: Any, body: dict[str, Any]) -> Any:
        """One ``/embeddings`` request, sent again as
        :func:`~ragmeter.io.transport.retries.send_with_retries` says; the reply's JSON."""

        async def send() -> Any:
            if self._unavailable is not None:
                raise EndpointUnavailableError(str(self._unavailable))
            return await post_json(
                client, "/embeddings", body, max_bytes=self.max_reply_bytes, timeout=self.timeout
            )

        def give_up(why: GaveUp) -> EndpointError:
            return self._gave_up(why, texts=len(body["input"]))

        return await send_with_retries(
            send,
            self._retries,
            status_problem=lambda exc: f"HTTP {exc.status_code}: {_status_message(exc)}",
            give_up=give_up,
        )

    def _gave_up(self, why: GaveUp, *, texts: int) -> EndpointError:
        """The error of a request for ``texts`` texts that gave up; a refusal, or an endpoint
        gone, is remembered (:meth:`_gone`)."""
        if why.reason == "too_large":
            return EndpointError(
                f"The embeddings endpoint {self.public_endpoint} sent a reply of more than "
                f"{self.max_reply_bytes} bytes for {texts} texts (max_reply_bytes); the rows "
                f"fail. Lower {param('batch_size')}, or raise the cap in Python."
            )
        if why.reason == "no_reply":
            return self._gone(
                f"The embeddings endpoint {self.public_endpoint} gave no reply to "
                f"{self._retries.breaker.limit} requests in a row (the last: {why.problem}). Check "
                f"that the server is up and answers, or raise {keyword('timeout')} or "
                f"{keyword('max_no_reply')}."
            )
        if why.reason == "status" and why.status in REFUSALS:
            return self._gone(
                f"The embeddings endpoint {self.public_endpoint} answered {why.problem} for "
                f"the embedder {self.name!r}. Check OPENAI_API_KEY, the model name and "
                f"{keyword('base_url')}."
            )
        if why.reason == "unreachable":
            return self._gone(
                f"The embeddings endpoint {self.public_endpoint} cannot be reached any "
                f"more: {why.problem}, {why.retries} retries. Start the server, or fix "
                f"{keyword('base_url')} / OPENAI_BASE_URL."
            )
        return EndpointError(
            redact(
                f"The embeddings endpoint {self.public_endpoint} failed after {why.retries} "
                f"retries: {why.problem}.",
                [self._api_key],
            ),
            status=why.status,
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return in_length_order(texts, self.batch_size, self._run)


def _run_to_end(call: Coroutine[Any, Any, T]) -> T:
    """Run ``call`` in an event loop of its own: here, or in a worker thread when this thread
    already runs one (``embed`` is synchronous; the run calls it from a worker thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(call)
    with ThreadPoolExecutor(1, thread_name_prefix="ragmeter-embed") as pool:
        # The errors' parameter names (ragmeter.errors.param_names) go with the call.
        return pool.submit(contextvars.copy_context().run, asyncio.run, call).result()


def _index(item: dict[str, Any]) -> int:
    return int(item["index"])


def _vector(embedding: Any) -> np.ndarray:
    """One embedding of a reply: a list of numbers, or little-endian float32 in base64."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), dtype="<f4")
    return np.asarray(embedding, dtype=np.float32)


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(getattr(exc, "message", exc))


# --- factory ----------------------------------------------------------------------------
