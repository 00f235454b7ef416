"""A local OpenAI-compatible server for tests (yours and ours) and benchmarks. Not a model: a
simulator, public as :class:`ragmeter.testing.TestServer`.

It answers ragmeter's own prompts deterministically and plausibly, through the real HTTP path,
with the simulated judgements and embeddings of :mod:`ragmeter.testing.simulated` (claims are
sentences; a premise entails a claim when it holds most of its content words and every
number).

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

To try the judge path from the command line in one command, give the command to run after
``--``: the server starts, the command runs with ``OPENAI_BASE_URL`` pointing at it (the
CLI's ``--base-url`` default), the server's call counts are printed, and the command's exit
status is returned::

    python -m ragmeter.testing.server -- ragmeter evaluate examples/rag_sample.jsonl \
        -m faithfulness --judge openai:test-model
"""

from __future__ import annotations

import argparse
import array
import base64
import contextlib
import json
import random
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragmeter.testing.simulated import HashingEmbedder, chat_reply, count_tokens, embed

__all__ = ["FAULT_KINDS", "HashingEmbedder", "ServerConfig", "TestServer", "count_tokens", "main"]

FAULT_KINDS = ("429", "500", "503", "hang", "drop", "malformed", "wrong_count")

#: What llama-cpp-python's server (0.3.x) answers a json_schema response format: its
#: request validation error, wrapped as an HTTP 500.
_LLAMA_CPP_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


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
    criteria_calls: int = 0
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
    elif reply and all(isinstance(v, dict) and "answer" in v for v in reply.values()):
        reply.pop(list(reply)[-1])  # a criteria reply missing its last criterion
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


def _base64_vector(vector: list[float]) -> str:
    packed = array.array("f", vector)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


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
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="after --: a command to run with OPENAI_BASE_URL set to this server; the server "
        "stops when it ends, and its exit status is returned",
    )
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
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
    if command:
        return _run_with(server, command)
    print(f"PORT={server.port}", flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()
    return 0


def _run_with(server: TestServer, command: list[str]) -> int:
    """Run ``command`` with ``OPENAI_BASE_URL`` set to ``server`` (started and stopped here);
    print what the server answered; return the command's exit status."""
    import os
    import subprocess

    env = {**os.environ, "OPENAI_BASE_URL": server.base_url}
    if command[0] == "ragmeter":  # the ragmeter this server comes with, on PATH or not
        command = [sys.executable, "-m", "ragmeter", *command[1:]]
    print(f"test server: {server.base_url} (OPENAI_BASE_URL for: {' '.join(command)})", flush=True)
    with server:
        try:
            code = subprocess.run(command, env=env, check=False).returncode
        except FileNotFoundError:
            print(f"test server: no command {command[0]!r} found on PATH", file=sys.stderr)
            return 127
        stats = server.stats()
    print(
        f"test server: {stats['chat_calls']} chat calls ({stats['analyze_calls']} analyze, "
        f"{stats['verify_calls']} verify, {stats['criteria_calls']} criteria), "
        f"{stats['embedding_calls']} embedding calls, {stats['prompt_tokens']} prompt tokens",
        flush=True,
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
