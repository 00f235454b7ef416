"""A local OpenAI-compatible server for tests (yours and ours) and benchmarks. Not a model: a
simulator, public as :class:`ragmeter.testing.TestServer`.

It answers ragmeter's own prompts deterministically and plausibly, so runs against it give
real, non-trivial scores through the real HTTP path:

- claims are the sentences of the text it is given; entities are runs of capitalised words
  (leading words of :data:`ragmeter.text.NOT_NAMES` dropped) and numbers
  (:data:`ragmeter.text.NUMBER_RE`); generated questions are built from the answer's
  sentences; an answer is noncommittal when it says it does not know;
- a premise entails a claim when it holds at least 70 % of the claim's content words (words
  not in :data:`ragmeter.text.STOP_WORDS`) and every number in it.

Routes: ``POST /v1/chat/completions``, ``POST /v1/embeddings`` (hashed bag-of-words vectors,
L2-normalised; base64 float32 when ``encoding_format`` asks for it), ``GET /v1/models``,
``GET /stats`` (counters kept server-side: calls, tokens, maximum requests in flight, busy
time), ``POST /reset`` and ``POST /config`` (latency, fault mode, refusing ``json_schema``
response formats).

Fault mode: on a seeded share of chat calls, answer 429 with ``Retry-After``, 500, 503, hang
for ``hang_seconds``, drop the connection, send malformed JSON, or send a wrong number of
verdicts / items. ``reply_claims`` adds that many claims to every answer's claims, and
``reply_padding`` that many spaces to every reply (valid JSON, the same meaning), as a judge
gone wild would. A refusal (``refuse_from_call``) answers every chat call from then on with
``refuse_status`` (401, 403, 404), as a revoked key or a removed model would.

Start it with ``python -m ragmeter.testing.server --port 0 [--latency 0.2]``; it prints
``PORT=<port>`` and serves on 127.0.0.1 only. In-process: ``with TestServer(latency=0.1) as s:``.
"""

from __future__ import annotations

import argparse
import array
import base64
import contextlib
import functools
import hashlib
import json
import math
import random
import re
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragmeter.text import NOT_NAMES, NUMBER_RE, STOP_WORDS

__all__ = ["FAULT_KINDS", "HashingEmbedder", "ServerConfig", "TestServer", "count_tokens", "main"]

FAULT_KINDS = ("429", "500", "503", "hang", "drop", "malformed", "wrong_count")

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ENTITY = re.compile(r"\b(?:[A-Z][\w'\-]*)(?:\s+(?:of|the|de|and)?\s*[A-Z][\w'\-]*)*")
#: What llama-cpp-python's server (0.3.x) answers a json_schema response format: its
#: request validation error, wrapped as an HTTP 500.
_LLAMA_CPP_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)
_NONCOMMITTAL = re.compile(
    r"\b(i don'?t know|i do not know|not sure|cannot answer|can'?t answer|no idea|unclear)\b", re.I
)


def count_tokens(text: str) -> int:
    """Approximate tokens: words and punctuation marks."""
    return len(_TOKEN.findall(text))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text or "") if s.strip()]


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER_RE.findall(text)}


def entails(premise: str, claim: str) -> bool:
    words = _content_words(claim)
    if not words:
        return False
    found = _content_words(premise)
    if not _numbers(claim) <= _numbers(premise):
        return False
    return len(words & found) / len(words) >= 0.7


def entities(text: str) -> list[str]:
    out: list[str] = []
    for match in _ENTITY.finditer(text):
        words = match.group(0).split()
        while words and words[0] in NOT_NAMES:
            words = words[1:]
        if words:
            out.append(" ".join(words))
    out.extend(NUMBER_RE.findall(text))
    return list(dict.fromkeys(out))


def _questions(answer: str, n: int) -> list[str]:
    sentences = _sentences(answer) or [answer or "this"]
    out = []
    for i in range(n):
        words = sentences[i % len(sentences)].rstrip(".!?").split()
        stem = " ".join(words[:10])
        prefix = ("What is known about", "What can be said about", "Which facts describe")[i % 3]
        out.append(f"{prefix} {stem}?")
    return out


@dataclass(slots=True)
class ServerConfig:
    """How the test server behaves; ``TestServer(**fields)`` or ``POST /config`` sets them.

    ``latency`` seconds before each reply; on a share ``fault_rate`` of chat calls (drawn
    with ``seed``), or on the call numbers in ``fault_on_calls``, one of ``faults``
    (:data:`FAULT_KINDS`): 429 with ``Retry-After: retry_after``, 500, 503, a hang of
    ``hang_seconds``, a dropped connection, malformed JSON or a wrong number of items.
    ``reject_json_schema`` refuses ``json_schema`` response formats.
    """

    latency: float = 0.0
    fault_rate: float = 0.0
    faults: tuple[str, ...] = FAULT_KINDS
    seed: int = 0
    retry_after: float = 0.05
    hang_seconds: float = 5.0
    reject_json_schema: bool = False
    #: How a refused json_schema is answered: 400 with an OpenAI-style message, or 500 with
    #: the request validation error that llama-cpp-python's server (0.3.x) sends.
    reject_json_schema_status: int = 400
    #: Chat call numbers (1-based, counted since the last reset) that get a fault, in addition
    #: to the random share; the kind cycles through ``faults``.
    fault_on_calls: tuple[int, ...] = ()
    #: Claims added to every answer's claims, and spaces added to every reply (0: none).
    reply_claims: int = 0
    reply_padding: int = 0
    #: Refuse every chat request from this one on (1-based, since the last reset; 0: never).
    refuse_from_call: int = 0
    refuse_status: int = 401


@dataclass(slots=True)
class _Stats:
    chat_calls: int = 0
    analyze_calls: int = 0
    verify_calls: int = 0
    peer_calls: int = 0
    other_calls: int = 0
    embedding_calls: int = 0
    embedded_texts: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    busy_seconds: float = 0.0
    first_start: float | None = None
    last_end: float | None = None
    rejected_formats: int = 0
    refused_calls: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    #: Chat requests by response_format: its type, '+schema' when it carries a 'schema'
    #: key (llama.cpp's JSON mode with a schema), 'none' without one.
    formats: dict[str, int] = field(default_factory=dict)
    _mark: float = 0.0


class _State:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.stats = _Stats()
        self.rng = random.Random(config.seed)

    def reset(self) -> None:
        with self.lock:
            # Requests still running (a hang, say) stay counted in flight.
            in_flight = self.stats.in_flight
            self.stats = _Stats(in_flight=in_flight, max_in_flight=in_flight)
            self.stats._mark = time.monotonic()
            self.rng = random.Random(self.config.seed)

    def begin(self) -> None:
        with self.lock:
            now = time.monotonic()
            s = self.stats
            s.busy_seconds += s.in_flight * (now - s._mark)
            s._mark = now
            s.in_flight += 1
            s.max_in_flight = max(s.max_in_flight, s.in_flight)
            if s.first_start is None:
                s.first_start = now

    def end(self) -> None:
        with self.lock:
            now = time.monotonic()
            s = self.stats
            s.busy_seconds += s.in_flight * (now - s._mark)
            s._mark = now
            s.in_flight -= 1
            s.last_end = now

    def draw_fault(self, call_number: int) -> str | None:
        with self.lock:
            cfg = self.config
            if not cfg.faults:
                return None
            if call_number in cfg.fault_on_calls:
                kind = cfg.faults[cfg.fault_on_calls.index(call_number) % len(cfg.faults)]
            elif cfg.fault_rate > 0 and self.rng.random() < cfg.fault_rate:
                kind = self.rng.choice(list(cfg.faults))
            else:
                return None
            self.stats.faults[kind] = self.stats.faults.get(kind, 0) + 1
            return kind

    def refuses(self) -> bool:
        """Whether this chat request is refused (counted apart from the calls answered)."""
        with self.lock:
            start = self.config.refuse_from_call
            s = self.stats
            if start < 1 or s.chat_calls + s.refused_calls + 1 < start:
                return False
            s.refused_calls += 1
            return True

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            data = asdict(self.stats)
            data.pop("_mark")
            span = None
            if data["first_start"] is not None and data["last_end"] is not None:
                span = data["last_end"] - data["first_start"]
            data["span_seconds"] = span
            data.pop("first_start")
            data.pop("last_end")
            data["config"] = asdict(self.config)
            return data


# ------------------------------------------------------------------ replies


def _last_json_user_message(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        try:
            data = json.loads(content or "")
        except (TypeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def _system_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")


def _analyze_reply(data: dict[str, Any], system: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if '"answer_claims":' in system:
        out["answer_claims"] = _sentences(data.get("answer", ""))
    if '"reference_claims":' in system:
        out["reference_claims"] = [
            {"reference": i, "claims": _sentences(ref)}
            for i, ref in enumerate(data.get("references", []), start=1)
        ]
    if '"reference_entities":' in system:
        out["reference_entities"] = list(
            dict.fromkeys(e for ref in data.get("references", []) for e in entities(ref))
        )
        out["context_entities"] = [
            {"context": i, "entities": entities(ctx)}
            for i, ctx in enumerate(data.get("contexts", []), start=1)
        ]
    if '"questions":' in system:
        match = re.search(r"(\d+) different questions", system)
        n = int(match.group(1)) if match else 3
        answer = data.get("answer", "")
        out["questions"] = _questions(answer, n)
        out["noncommittal"] = bool(_NONCOMMITTAL.search(answer))
    return out


def _verify_reply(data: dict[str, Any]) -> dict[str, Any]:
    premises = {p["id"]: p["text"] for p in data.get("premises", [])}
    verdicts = []
    for group in data.get("groups", []):
        for claim in group.get("claims", []):
            chosen = [
                n for n in group.get("check_against", []) if entails(premises[n], claim["text"])
            ]
            verdicts.append({"claim": claim["id"], "entailed_by": chosen})
    return {"verdicts": verdicts}


def _wrong_count(reply: dict[str, Any]) -> dict[str, Any]:
    if "verdicts" in reply:
        verdicts = reply["verdicts"]
        reply["verdicts"] = verdicts[:-1] if verdicts else [{"claim": 1, "entailed_by": [1]}]
    elif reply.get("reference_claims"):
        reply["reference_claims"] = reply["reference_claims"][:-1]
    elif reply.get("context_entities"):
        reply["context_entities"] = reply["context_entities"] + [{"context": 99, "entities": []}]
    elif "questions" in reply:
        reply["questions"] = reply["questions"] + ["An extra question?"]
    else:
        reply["answer_claims"] = None
    return reply


def _inflated(reply: str, cfg: ServerConfig) -> str:
    """``reply`` with ``cfg.reply_claims`` more answer claims and ``cfg.reply_padding`` spaces."""
    if cfg.reply_claims > 0 and '"answer_claims"' in reply:
        data = json.loads(reply)
        data["answer_claims"] += [f"Extra claim {i}." for i in range(cfg.reply_claims)]
        reply = json.dumps(data)
    return reply + " " * max(cfg.reply_padding, 0)


_SCHEMA_MARK = "as specified in JSON Schema:"
_INPUT_MARK = "Now perform the same with the following input"


def _peer_reply(text: str) -> dict[str, Any] | None:
    """Answer a Ragas-style prompt (JSON schema + examples + ``input: {...}``) the same way.

    Used by the benchmark to run a peer tool against this server on equal terms: claims are
    sentences, verdicts come from the same word-overlap rule, entities from the same pattern.
    """
    start = text.find(_SCHEMA_MARK)
    at = text.rfind(_INPUT_MARK)
    if start < 0 or at < 0:
        return None
    decoder = json.JSONDecoder()
    try:
        schema, _ = decoder.raw_decode(text[start + len(_SCHEMA_MARK) :].lstrip())
        brace = text.index("{", at)
        data, _ = decoder.raw_decode(text[brace:])
    except ValueError:
        return None
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if "statements" in props and isinstance(data.get("statements"), list):
        context = str(data.get("context", ""))
        return {
            "statements": [
                {
                    "statement": st,
                    "reason": "word overlap with the context",
                    "verdict": int(entails(context, st)),
                }
                for st in data["statements"]
            ]
        }
    if "statements" in props:
        return {"statements": _sentences(str(data.get("answer", data.get("response", ""))))}
    if "entities" in props:
        return {"entities": entities(str(data.get("text", "")))}
    if "question" in props and "noncommittal" in props:
        response = str(data.get("response", ""))
        return {
            "question": _questions(response, 1)[0],
            "noncommittal": int(bool(_NONCOMMITTAL.search(response))),
        }
    return None


def chat_reply(body: dict[str, Any]) -> tuple[str, str]:
    """(task, reply text) for a chat request."""
    messages = body.get("messages", [])
    data = _last_json_user_message(messages)
    system = _system_text(messages)
    if data is not None and "premises" in data and "groups" in data:
        return "verify", json.dumps(_verify_reply(data))
    if data is not None and ("answer" in data or "references" in data):
        return "analyze", json.dumps(_analyze_reply(data, system))
    text = "\n".join(str(m.get("content", "")) for m in messages)
    peer = _peer_reply(text)
    if peer is not None:
        return "peer", json.dumps(peer)
    return "other", json.dumps({"text": "This server only answers ragmeter's prompts."})


def _base64_vector(vector: list[float]) -> str:
    packed = array.array("f", vector)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


@functools.lru_cache(maxsize=65536)
def _bucket(word: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, 1.0 if digest[4] & 1 else -1.0


def embed(text: str, dim: int = 256) -> list[float]:
    # Sparse: a text touches a few of the ``dim`` buckets, so only those are summed and divided
    # (the zeros add nothing to the norm; the result is the same as over the dense vector).
    buckets: dict[int, float] = {}
    for word in _content_words(text):
        idx, sign = _bucket(word, dim)
        buckets[idx] = buckets.get(idx, 0.0) + sign
    norm = math.sqrt(sum(buckets[i] * buckets[i] for i in sorted(buckets)))
    vec = [0.0] * dim
    if norm == 0:
        vec[0] = 1.0
        return vec
    for idx, value in buckets.items():
        vec[idx] = value / norm
    return vec


# ------------------------------------------------------------------ HTTP


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A reply leaves in one segment, at once: headers and body are buffered and flushed
    # together, and Nagle's algorithm is off. (Headers and body as two small writes under
    # Nagle wait for the client's delayed ACK, ~40 ms per reply on Linux.)
    disable_nagle_algorithm = True
    wbufsize = -1
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            data = {}
        return data if isinstance(data, dict) else {}

    def do_GET(self) -> None:
        state = self.server.state
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if self.path.rstrip("/") == "/v1/models" and token.startswith("sk-reject"):
            self._send(401, {"error": {"message": f"Incorrect API key provided: {token}."}})
        elif self.path.rstrip("/") == "/v1/models":
            with state.lock:
                state.stats.model_calls += 1
            self._send(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        elif self.path.rstrip("/") == "/stats":
            self._send(200, state.snapshot())
        else:
            self._send(404, {"error": {"message": f"No route {self.path}"}})

    def do_POST(self) -> None:
        state = self.server.state
        path = self.path.rstrip("/")
        body = self._body()
        if path == "/reset":
            state.reset()
            self._send(200, {"ok": True})
        elif path == "/config":
            with state.lock:
                for key, value in body.items():
                    if not hasattr(state.config, key):
                        continue
                    if key in ("faults", "fault_on_calls"):
                        value = tuple(value)
                    setattr(state.config, key, value)
                state.rng = random.Random(state.config.seed)
            self._send(200, asdict(state.config))
        elif path == "/v1/embeddings":
            self._embeddings(body)
        elif path == "/v1/chat/completions":
            self._chat(body)
        else:
            self._send(404, {"error": {"message": f"No route {self.path}"}})

    def _embeddings(self, body: dict[str, Any]) -> None:
        state = self.server.state
        texts = body.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        with state.lock:
            state.stats.embedding_calls += 1
            state.stats.embedded_texts += len(texts)
        # Like OpenAI and vLLM: ``encoding_format="base64"`` (what the openai SDK asks for by
        # default) gets little-endian float32 bytes in base64, anything else a list of floats.
        as_base64 = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": _base64_vector(embed(t)) if as_base64 else embed(t),
            }
            for i, t in enumerate(texts)
        ]
        tokens = sum(count_tokens(t) for t in texts)
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "test-embed"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _chat(self, body: dict[str, Any]) -> None:
        state = self.server.state
        cfg = state.config
        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if token.startswith("sk-reject"):
            message = f"Incorrect API key provided: {token}."
            self._send(401, {"error": {"message": message, "type": "invalid_request_error"}})
            return
        if body.get("model") == "missing-model":
            self._send(404, {"error": {"message": "The model 'missing-model' does not exist"}})
            return
        if state.refuses():
            status = cfg.refuse_status
            self._send(status, {"error": {"message": f"Simulated HTTP {status} (refusal)"}})
            return
        response_format = body.get("response_format") or {}
        fmt = response_format.get("type")
        shape = f"{fmt}+schema" if "schema" in response_format else str(fmt or "none")
        with state.lock:
            state.stats.formats[shape] = state.stats.formats.get(shape, 0) + 1
        if cfg.reject_json_schema and fmt == "json_schema":
            with state.lock:
                state.stats.rejected_formats += 1
            if cfg.reject_json_schema_status == 500:
                error = {"message": _LLAMA_CPP_REFUSAL, "type": "internal_server_error"}
                self._send(500, {"error": error})
            else:
                message = "response_format json_schema is not supported"
                self._send(400, {"error": {"message": message}})
            return
        state.begin()
        try:
            messages = body.get("messages", [])
            prompt_tokens = sum(count_tokens(str(m.get("content", ""))) + 4 for m in messages)
            task, reply = chat_reply(body)
            with state.lock:
                s = state.stats
                s.chat_calls += 1
                call_number = s.chat_calls
                setattr(s, f"{task}_calls", getattr(s, f"{task}_calls") + 1)
                s.prompt_tokens += prompt_tokens
            if cfg.latency > 0:
                time.sleep(cfg.latency)
            fault = state.draw_fault(call_number)
            if fault == "hang":
                time.sleep(cfg.hang_seconds)
            elif fault == "drop":
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            elif fault == "429":
                retry = {"Retry-After": f"{cfg.retry_after:g}"}
                self._send(429, {"error": {"message": "Rate limit reached (simulated)"}}, retry)
                return
            elif fault in ("500", "503"):
                self._send(int(fault), {"error": {"message": f"Simulated HTTP {fault}"}})
                return
            elif fault == "malformed":
                reply = reply[: max(1, len(reply) // 2)]
            elif fault == "wrong_count":
                reply = json.dumps(_wrong_count(json.loads(reply)))
            reply = _inflated(reply, cfg)
            completion_tokens = count_tokens(reply)
            with state.lock:
                state.stats.completion_tokens += completion_tokens
            self._send(
                200,
                {
                    "id": f"chatcmpl-{state.stats.chat_calls}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", "test-model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                },
            )
        finally:
            state.end()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out or went away is part of the simulation, not an error.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def __init__(self, port: int, config: ServerConfig) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = _State(config)


class TestServer:
    """The server in a background thread: ``with TestServer() as server: server.base_url``."""

    __test__ = False  # not a pytest test class

    def __init__(self, port: int = 0, **config: Any) -> None:
        self._server = _Server(port, ServerConfig(**config))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def config(self) -> ServerConfig:
        return self._server.state.config

    def configure(self, **changes: Any) -> None:
        state = self._server.state
        with state.lock:
            for key, value in changes.items():
                if not hasattr(state.config, key):
                    raise AttributeError(f"ServerConfig has no field {key!r}.")
                setattr(state.config, key, value)
            state.rng = random.Random(state.config.seed)

    def stats(self) -> dict[str, Any]:
        return self._server.state.snapshot()

    def reset(self) -> None:
        self._server.state.reset()

    def start(self) -> TestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ragmeter.testing.server",
        description="Local OpenAI-compatible test server for ragmeter (127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one")
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds added to each chat call"
    )
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of faulty chat calls")
    parser.add_argument(
        "--faults",
        default=",".join(FAULT_KINDS),
        help=f"comma-separated fault kinds among {','.join(FAULT_KINDS)}",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hang-seconds", type=float, default=5.0)
    parser.add_argument("--reject-json-schema", action="store_true")
    args = parser.parse_args(argv)
    faults = tuple(f for f in args.faults.split(",") if f)
    unknown = sorted(set(faults) - set(FAULT_KINDS))
    if unknown:
        parser.error(f"unknown fault kind(s) {unknown}; choose among {list(FAULT_KINDS)}")
    if not 0 <= args.fault_rate <= 1:
        parser.error(f"--fault-rate must be in [0, 1]; got {args.fault_rate}")
    # The handler threads share one GIL: a request that has arrived waits for it before the
    # server marks it begun. Hand the GIL over sooner than the default 5 ms (this process only).
    sys.setswitchinterval(0.0005)
    server = TestServer(
        args.port,
        latency=args.latency,
        fault_rate=args.fault_rate,
        faults=faults,
        seed=args.seed,
        hang_seconds=args.hang_seconds,
        reject_json_schema=args.reject_json_schema,
    )
    print(f"PORT={server.port}", flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())


class HashingEmbedder:
    """A deterministic bag-of-words embedder (the server's /v1/embeddings, in process).

    A test double with the Embedder interface (``name``, ``embed(texts) -> ndarray``); not a
    language model.
    """

    name = "hashing-bow-256"

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        return np.asarray([embed(t) for t in texts], dtype=np.float32)
