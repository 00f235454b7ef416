"""A judge on any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

One request per task per sample: ``analyze`` (claims, entities, questions), ``verify``
(every claim of every block against its premises) and ``judge_criteria`` (every criterion of
the user's, :mod:`ragmeter.judges.llm.criteria`). Replies are asked for as strict JSON
schema output. A server that refuses that format (a 400/422 about it, or a 500 naming
``response_format``, as llama-cpp-python's server answers) is asked again with the next one:
JSON mode carrying the schema (``{"type": "json_object", "schema": ...}``, llama.cpp's
servers), plain JSON mode, then no response format. The step is taken once per refused mode
(concurrent refusals of one mode step down once) and remembered for the judge's lifetime.

Every reply is validated against its schema and its input. A reply that does not fit is sent
back once with the problem stated; a second bad reply raises :class:`JudgeReplyError`. So does
a reply past a cap, at once and uncached: more than ``max_reply_bytes`` (the body is read up to
the cap, never further), or more than ``max_claims`` claims in one answer.

``timeout`` is a deadline for each whole request (connect, send, every byte of the reply); at
most :data:`~ragmeter.io.transport.http.MAX_ERROR_BODY` bytes of an error body are read (the HTTP
plumbing is :mod:`ragmeter.io.transport.http`'s, shared with the embedder's client).
Retries (see :mod:`ragmeter.io.transport.retry_policy`): 429 honours ``Retry-After``; 408, 5xx,
timeouts and dropped connections back off exponentially with jitter; other 4xx fail at once. A judge
that refuses (401, 403, 404), whose endpoint stops accepting connections, or that gave no reply at
all to ``max_no_reply`` requests in a row (timeouts, dropped connections; across rows) raises
:class:`JudgeUnavailableError`, and so does every later request of this judge: the run stops
instead of failing each remaining row the same way. One semaphore bounds the requests in
flight for the whole run; a request holds its slot until its reply is stored in the cache (or
dropped), so the replies a killed run had received and not stored are at most
``max_concurrency``. ``Usage`` counts every HTTP request sent
(``calls``), cache hits, tokens reported by the server, retries (transport and validation),
failures and cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlparse

from ragmeter.cache import JudgeCache, cache_key
from ragmeter.config.criteria import CriteriaRequest, CriteriaVerdicts
from ragmeter.errors import (
    ConfigError,
    JudgeError,
    JudgeReplyError,
    JudgeUnavailableError,
    keyword,
    param,
)
from ragmeter.io.redact import (
    redact_url,
    register_secret,
    strip_credentials,
    url_secrets,
)
from ragmeter.io.transport.http import DEFAULT_MAX_NO_REPLY, REFUSALS, openai_http_client, post_json
from ragmeter.io.transport.retries import GaveUp, Retries, send_with_retries
from ragmeter.io.transport.retry_policy import RetryPolicy
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Verification
from ragmeter.judges.llm import criteria as C
from ragmeter.judges.llm import schemas as S
from ragmeter.judges.llm.planning import (
    CallPlanner,
    simulated_analysis,
    simulated_criteria,
    simulated_verification,
)
from ragmeter.judges.llm.preflight import check_endpoint
from ragmeter.judges.llm.replies import (
    MODES,
    error_message,
    format_refused,
    redact_key,
    reply_text,
    token_count,
)
from ragmeter.judges.llm.slots import HELD_SLOTS, HeldSlots
from ragmeter.judges.repeat import current_repeat
from ragmeter.prompts import Prompt, load_prompt
from ragmeter.settings import check_options
from ragmeter.types import Usage

__all__ = ["OpenAIJudge"]

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
#: More tokens than this in one reply's reported usage (prompt or completion) is no model's
#: context: the counts are left out of tokens and cost, and counted as implausible.
MAX_REPLY_TOKENS = 100_000_000


class OpenAIJudge:
    """The LLM judge of ``judge="openai:MODEL"``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        usage: Usage | None = None,
        cache: JudgeCache | None = None,
        max_concurrency: int = 16,
        timeout: float = 60.0,
        max_retries: int = 5,
        price_in: float | None = None,
        price_out: float | None = None,
        temperature: float = 0.0,
        retry_policy: RetryPolicy | None = None,
        seed: int | None = None,
        judge_id: str | None = None,
        max_reply_bytes: int = 1_000_000,
        max_claims: int = 1000,
        max_no_reply: int = DEFAULT_MAX_NO_REPLY,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        if not model:
            raise ConfigError(
                "The judge model name is empty: name the model after 'openai:', e.g. "
                "'openai:gpt-4o-mini'."
            )
        if judge_id is not None and not judge_id.strip():
            raise ConfigError(
                f"{param('judge_id')} is empty. Leave it out (the model name is used) or name "
                "the weights behind the endpoint, e.g. 'llama-3.1-8b-q4'."
            )
        check_options(  # as Settings checks them (timeout and max_no_reply: Retries.of)
            max_concurrency=max_concurrency,
            max_reply_bytes=max_reply_bytes,
            max_claims=max_claims,
            price_in=price_in,
            price_out=price_out,
        )
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
        #: Who answers, in cache keys (the model name unless set); never the endpoint address.
        self.judge_id = judge_id or model
        self.endpoint = (base_url or DEFAULT_ENDPOINT).rstrip("/")
        #: The endpoint as written to records and messages: no password, no key in its query.
        self.public_endpoint = redact_url(self.endpoint)
        self._api_key = api_key
        register_secret(api_key, *url_secrets(self.endpoint))
        if strip_credentials(self.endpoint) != self.endpoint:
            log.warning(
                "The judge's base URL %s carries user:password; it is not sent (the judge sends "
                "its key as a Bearer token). Remove it from the URL; give the key as "
                "OPENAI_API_KEY (or api_key= in Python).",
                self.public_endpoint,
            )
        self.usage = usage if usage is not None else Usage()
        self.cache = cache
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self.max_claims = max_claims
        self.price_in = price_in
        self.price_out = price_out
        self.params: dict[str, Any] = {"temperature": temperature}
        self._mode = MODES[0]
        self._analyze_prompt: Prompt = load_prompt("analyze")
        self._verify_prompt: Prompt = load_prompt("verify")
        self._criteria_prompt: Prompt = load_prompt("criteria")
        #: Set for a dry run: requests are planned (cache read, tokens counted), never sent.
        self.planner: CallPlanner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._client: Any = None
        #: Set once the endpoint refused or went away; every later request raises it.
        self._unavailable: JudgeUnavailableError | None = None

    # ------------------------------------------------------------ plumbing

    @property
    def key_required(self) -> bool:
        host = urlparse(self.endpoint).hostname or ""
        return host == "api.openai.com" or host.endswith(".openai.com")

    def _bind(self) -> tuple[asyncio.Semaphore, Any]:
        """Semaphore and client for the running loop (a new loop gets fresh ones)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._semaphore is None or self._client is None:
            from openai import AsyncOpenAI

            if self._api_key is None and self.key_required:
                raise JudgeError(self._missing_key_message())
            self._loop = loop
            self._unavailable = None  # a new run asks again
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            # The SDK appends paths to the base URL as text, so a query string in it (Azure's
            # ?api-version=..., a key parameter) goes on every request as a default query.
            # Credentials in the URL would go as Basic auth in place of the Bearer key.
            base, _, query = strip_credentials(self.endpoint).partition("?")
            self._client = AsyncOpenAI(
                api_key=self._api_key or "no-key-needed-for-local-endpoints",
                base_url=base,
                default_query=dict(parse_qsl(query, keep_blank_values=True)) or None,
                timeout=self.timeout,
                max_retries=0,
                http_client=openai_http_client(),
            )
        return self._semaphore, self._client

    def _missing_key_message(self) -> str:
        return (
            f"No API key for the judge {self.name} at {self.public_endpoint}. Set OPENAI_API_KEY "
            f"(or pass api_key= in Python), or point {keyword('base_url')} at a local "
            "OpenAI-compatible server."
        )

    def _record_tokens(self, response: Any) -> None:
        usage = response.get("usage") if isinstance(response, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        prompt = token_count(usage.get("prompt_tokens"))
        completion = token_count(usage.get("completion_tokens"))
        if max(prompt, completion) > MAX_REPLY_TOKENS:
            self.usage.implausible_usage += 1
            log.warning(
                "Judge %s reported %d prompt and %d completion tokens for one reply, more than "
                "any model's context (%d); they are not counted in tokens or cost.",
                self.name,
                prompt,
                completion,
                MAX_REPLY_TOKENS,
            )
            return
        self.usage.prompt_tokens += prompt
        self.usage.completion_tokens += completion
        if self.price_in is not None or self.price_out is not None:
            cost = (
                prompt * (self.price_in or 0.0) / 1e6 + completion * (self.price_out or 0.0) / 1e6
            )
            self.usage.cost = (self.usage.cost or 0.0) + cost

    def _response_format(self, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        if self._mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        if self._mode == "json_object_schema":
            return {"type": "json_object", "schema": schema}
        if self._mode == "json_object":
            return {"type": "json_object"}
        return None

    def _body(self, messages: list[dict[str, str]], name: str, schema: dict) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, **self.params}
        fmt = self._response_format(name, schema)
        if fmt is not None:
            body["response_format"] = fmt
        return body

    def _http_error(self, status: int, message: str) -> JudgeError:
        hint = {
            401: "Check OPENAI_API_KEY (or api_key= in Python).",
            403: "The key lacks access to this model or endpoint.",
            404: f"Check the model name and {keyword('base_url')} (it usually ends in /v1).",
        }.get(status, "")
        text = redact_key(
            f"The judge endpoint {self.public_endpoint} answered HTTP {status} for model "
            f"{self.model!r}: {message}. {hint}".strip(),
            self._api_key,
        )
        return JudgeUnavailableError(text) if status in REFUSALS else JudgeError(text)

    def _gone(self, error: JudgeUnavailableError) -> JudgeUnavailableError:
        """Remember that the endpoint refused or went away (the first reason is kept); every
        later request of this judge raises it at once."""
        if self._unavailable is None:
            self._unavailable = error
            log.debug("Judge %s is unavailable: %s", self.name, error)
        return error

    async def _request(self, messages: list[dict[str, str]], name: str, schema: dict) -> str:
        """One chat completion, sent again as
        :func:`~ragmeter.io.transport.retries.send_with_retries` says; returns the reply text
        (possibly invalid). Inside :meth:`_complete`, the concurrency slot of the try that got
        the reply stays held until ``_complete`` has stored the reply or dropped it."""
        semaphore, client = self._bind()
        sent_mode = self._mode

        async def send() -> Any:
            nonlocal sent_mode
            try:  # the slot was taken (``wait_for_slot``) just before
                if self._unavailable is not None:  # it went while this one waited
                    raise JudgeUnavailableError(str(self._unavailable))
                # The format is read as the request goes out: a refusal answered while
                # this one waited has already stepped it down.
                sent_mode = self._mode
                body = self._body(messages, name, schema)
                self.usage.calls += 1
                # ``timeout`` bounds the whole call, not each read: a server that drips a
                # byte at a time cannot hold it longer.
                return await post_json(
                    client,
                    "/chat/completions",
                    body,
                    max_bytes=self.max_reply_bytes,
                    timeout=self.timeout,
                )
            except BaseException:
                semaphore.release()  # a failed try waits for its retry without a slot
                raise

        async def acquire() -> None:
            if self._unavailable is not None:
                raise JudgeUnavailableError(str(self._unavailable))
            await semaphore.acquire()

        def step_down(status: int, problem: str) -> bool:
            """A refused response format steps down (once per refused mode); ask again."""
            if sent_mode == "none" or not format_refused(status, problem):
                return False
            if self._mode == sent_mode:  # not already stepped down by another request
                self._mode = MODES[MODES.index(sent_mode) + 1]
                log.info(
                    "Judge %s: response_format %s refused (HTTP %s); now using %s.",
                    self.name,
                    sent_mode,
                    status,
                    self._mode,
                )
            return True

        def retrying(problem: str, retry: int, delay: float) -> None:
            self.usage.retries += 1
            log.debug("Judge %s: %s; retry %d in %.2f s.", self.name, problem, retry, delay)

        response = await send_with_retries(
            send,
            self._retries,
            status_problem=error_message,
            give_up=self._gave_up,
            send_again=step_down,
            retrying=retrying,
            wait_for_slot=acquire,
        )
        held = HELD_SLOTS.get()
        if held is None:
            semaphore.release()
        else:
            held.slots.append(semaphore)  # the successful try's slot, given back by _complete
        self._record_tokens(response)
        return reply_text(response)

    def _gave_up(self, why: GaveUp) -> JudgeError:
        """The error of a request that gave up; a refusal, or an endpoint gone, is remembered
        (:meth:`_gone`)."""
        self.usage.failures += 1
        if why.reason == "too_large":
            return JudgeReplyError(
                f"The judge {self.name} sent a reply of more than {self.max_reply_bytes} "
                f"bytes (the {param('max_reply_bytes')} cap); the row fails and nothing is "
                "cached. Raise the cap to accept longer replies."
            )
        if why.reason == "status" and why.status is not None:
            error = self._http_error(why.status, why.problem)
            return self._gone(error) if isinstance(error, JudgeUnavailableError) else error
        if why.reason == "no_reply":
            return self._gone(
                JudgeUnavailableError(
                    redact_key(
                        f"The judge endpoint {self.public_endpoint} gave no reply to "
                        f"{self._retries.breaker.limit} requests in a row (the last: "
                        f"{why.problem}). Check that the server is up and answers, or raise "
                        f"{keyword('timeout')} or {keyword('max_no_reply')}.",
                        self._api_key,
                    )
                )
            )
        if why.reason == "unreachable":
            return self._gone(
                JudgeUnavailableError(
                    redact_key(
                        f"The judge endpoint {self.public_endpoint} cannot be reached any more: "
                        f"{why.problem}, {why.retries} retries. Start the server, or fix "
                        f"{keyword('base_url')} / OPENAI_BASE_URL.",
                        self._api_key,
                    )
                )
            )
        return JudgeError(
            redact_key(
                f"The judge endpoint {self.public_endpoint} failed after {why.retries} "
                f"retries: {why.problem}. Check that the server is up, or raise "
                f"{keyword('timeout')}.",
                self._api_key,
            )
        )

    def _capped(self, analysis: Analysis) -> Analysis:
        """``analysis``, or ``JudgeReplyError`` when an answer has more than ``max_claims``
        claims (raised before the reply is cached)."""
        counts = [("the answer", len(analysis.answer_claims))]
        counts += [
            (f"reference answer {i}", len(claims))
            for i, claims in enumerate(analysis.reference_claims, start=1)
        ]
        for what, count in counts:
            if count > self.max_claims:
                self.usage.failures += 1
                raise JudgeReplyError(
                    f"The judge {self.name} found {count} claims in {what}, more than the "
                    f"{param('max_claims')} cap of {self.max_claims}; the row fails and the "
                    "reply is not cached. Raise the cap to score answers this long."
                )
        return analysis

    async def _complete(
        self,
        *,
        prompt: Prompt,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        parse: Callable[[str], T],
        simulated: Callable[[], str],
    ) -> tuple[T, bool]:
        """Cached, validated completion: (parsed value, served from cache). With a
        :attr:`planner` (a dry run) nothing is sent: ``simulated()`` stands for the reply."""
        key = cache_key(
            model=self.model,
            judge_id=self.judge_id,
            prompt=prompt.ref(),
            messages=messages,
            params=self.params,
            schema=schema,
            repeat=current_repeat(),
        )
        if self.planner is not None:
            return self.planner.complete(
                prompt_id=prompt.id,
                key=key,
                messages=messages,
                cache=self.cache,
                parse=parse,
                simulated=simulated(),
            )
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                try:
                    value = parse(stored)
                except S.ReplyInvalid:
                    log.warning("A cached judge reply no longer validates; asking again.")
                else:
                    self.usage.cache_hits += 1
                    return value, True
        # A request keeps its concurrency slot until its reply is stored (or dropped): the
        # calls the endpoint answered and the cache lacks are never more than
        # ``max_concurrency``, so a run killed at any moment asks again at most that many.
        held = HeldSlots()
        token = HELD_SLOTS.set(held)
        try:
            content = await self._request(messages, schema_name, schema)
            try:
                value = parse(content)
            except S.ReplyInvalid as first:
                held.release()  # the follow-up takes a slot of its own
                self.usage.retries += 1
                follow_up = [
                    *messages,
                    {"role": "assistant", "content": content},
                    {
                        "role": "user",
                        "content": f"Your reply is invalid: {first}. Reply again with the "
                        "corrected JSON object only.",
                    },
                ]
                content = await self._request(follow_up, schema_name, schema)
                try:
                    value = parse(content)
                except S.ReplyInvalid as second:
                    self.usage.failures += 1
                    raise JudgeReplyError(
                        f"The judge {self.name} gave an invalid {prompt.id} reply twice: "
                        f"{second} (first reply: {first})."
                    ) from None
            if self.cache is not None:
                # A secret the server echoed (the key, the base URL's password) is masked
                # before the reply is stored: a later run with another key, or none, could
                # not redact it. The value returned is read from the stored text, so a cached
                # rerun scores alike.
                stored = redact_key(content, self._api_key)
                if stored != content:
                    try:
                        value = parse(stored)
                    except S.ReplyInvalid:
                        return value, False  # masking broke the reply: used once, never stored
                await self.cache.aput(key, stored, model=self.model, prompt=prompt.id)
            return value, False
        finally:
            held.release()
            HELD_SLOTS.reset(token)

    # ------------------------------------------------------------ the protocol

    async def analyze(self, request: AnalyzeRequest) -> Analysis:
        if request.n_questions < 1 and "questions" in request.wants:
            raise ConfigError(f"n_questions must be >= 1. Got {request.n_questions}.")
        meta = {"judge": self.name, "method": "llm", "prompt": self._analyze_prompt.ref()}
        if not request.wants:
            return Analysis(meta=meta)
        prompt = self._analyze_prompt
        parts, cached = await self._complete(
            prompt=prompt,
            messages=S.analyze_messages(prompt, request),
            schema_name="ragmeter_analyze",
            schema=S.analyze_schema(request.wants),
            parse=lambda content: self._capped(S.parse_analyze(content, request)),
            simulated=lambda: simulated_analysis(request),
        )
        return dataclasses.replace(parts, meta={**meta, "cached": cached})

    async def verify(self, blocks: Sequence[ClaimBlock]) -> Verification:
        prompt = self._verify_prompt
        meta: dict[str, Any] = {"judge": self.name, "method": "llm", "prompt": prompt.ref()}
        plan = S.plan_verify(blocks)
        if plan.n_claims == 0:
            empty = tuple(tuple(tuple(False for _ in b.premises) for _ in b.claims) for b in blocks)
            return Verification(matrices=empty, meta={**meta, "cached": False, "sent": False})
        matrices, cached = await self._complete(
            prompt=prompt,
            messages=S.verify_messages(prompt, plan),
            schema_name="ragmeter_verify",
            schema=S.verify_schema(),
            parse=lambda content: S.parse_verify(content, plan, blocks),
            simulated=lambda: simulated_verification(plan),
        )
        return Verification(matrices=matrices, meta={**meta, "cached": cached})

    async def judge_criteria(self, request: CriteriaRequest) -> CriteriaVerdicts:
        """Every criterion of one row in one request (:mod:`ragmeter.judges.llm.criteria`)."""
        prompt = self._criteria_prompt
        meta: dict[str, Any] = {"judge": self.name, "method": "llm", "prompt": prompt.ref()}
        verdicts, cached = await self._complete(
            prompt=prompt,
            messages=C.criteria_messages(prompt, request),
            schema_name="ragmeter_criteria",
            schema=C.criteria_schema(request),
            parse=lambda content: C.parse_criteria(content, request),
            simulated=lambda: simulated_criteria(request),
        )
        return CriteriaVerdicts(verdicts=verdicts, meta={**meta, "cached": cached})

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "openai-compatible",
            "model": self.model,
            "judge_id": self.judge_id,
            "endpoint": self.public_endpoint,
            "response_format": self._mode,
            "params": dict(self.params),
            "max_concurrency": self.max_concurrency,
            "max_reply_bytes": self.max_reply_bytes,
            "max_claims": self.max_claims,
            "max_no_reply": self._retries.breaker.limit,
            "prompts": {
                "analyze": self._analyze_prompt.ref(),
                "verify": self._verify_prompt.ref(),
                "criteria": self._criteria_prompt.ref(),
            },
            "cache": self.cache.describe() if self.cache is not None else None,
        }

    async def preflight(self) -> None:
        """Check the key and the endpoint before the first sample; raise JudgeError if unusable
        (:func:`~ragmeter.judges.llm.preflight.check_endpoint`)."""
        await check_endpoint(self)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        self._loop = None
        if client is not None:
            with contextlib.suppress(RuntimeError):  # the loop that owned it is gone
                await client.close()
