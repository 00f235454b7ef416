"""The ``--embedder openai:M`` client has the judge's limits (issue 29, item 7).

It had no overall deadline (a reply dripping a byte every 0.5 s ran past 240 s with
``--timeout 2 --max-retries 1``), no cap on what it reads, each row of a batch its own retries
after a failed batch (a silent endpoint: about 26 hours for 256 rows), and a 401 or an
endpoint gone did not stop the run. Now it goes through the judge's HTTP plumbing
(:mod:`ragmeter.io.transport.http`): a deadline for each whole request, capped bodies, the retry
policy, the no-reply breaker, and a refusal or an endpoint gone stops the run.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmeter
from ragmeter.errors import EndpointError, EndpointUnavailableError
from ragmeter.io.transport.retry_policy import RetryPolicy
from ragmeter.judges.base import Analysis
from ragmeter.metrics.base import Settings
from ragmeter.models.embeddings import OpenAIEmbedder
from ragmeter.testing import FakeJudge

NO_WAIT = RetryPolicy(max_retries=1, base_delay=0.0, max_delay=0.0)


class ScriptedServer:
    """A server on 127.0.0.1 whose every request is answered by ``answer(conn, request)``
    (raw bytes on a socket); counts the requests."""

    def __init__(self, answer: Callable[[socket.socket, bytes], None]) -> None:
        self.answer = answer
        self.requests = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            request = conn.recv(1 << 20)
            self.requests += 1
            self.answer(conn, request)
        except OSError:
            pass
        finally:
            conn.close()

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.sock.close()


def drip(conn: socket.socket, request: bytes) -> None:
    """Headers, then one byte of body every 0.2 s until the client hangs up."""
    conn.sendall(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9999\r\n\r\n"
    )
    while True:
        conn.sendall(b" ")
        threading.Event().wait(0.2)


def endless(conn: socket.socket, request: bytes) -> None:
    """A 200 reply whose body never ends."""
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
    piece = b"[" * 65536
    while True:
        conn.sendall(piece)


def refuse(conn: socket.socket, request: bytes) -> None:
    body = b'{"error": {"message": "Incorrect API key provided."}}'
    conn.sendall(
        b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
        + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
        + body
    )


def silent(conn: socket.socket, request: bytes) -> None:
    """Reads the request and never answers (until the client hangs up)."""
    while conn.recv(65536):
        pass


@pytest.mark.timeout(60)
def test_a_dripping_reply_cannot_hold_an_embeddings_call_past_its_timeout() -> None:
    with ScriptedServer(drip) as server:
        embedder = OpenAIEmbedder(
            "m", base_url=server.base_url, api_key="k", timeout=0.5, retry_policy=NO_WAIT
        )
        with pytest.raises(EndpointError, match=r"no reply within 0\.5 s"):
            embedder.embed(["a text", "another"])
        assert server.requests == 2  # the call and its one retry, each cut at its deadline


@pytest.mark.timeout(60)
def test_an_embeddings_reply_is_read_only_up_to_its_cap() -> None:
    with ScriptedServer(endless) as server:
        embedder = OpenAIEmbedder(
            "m",
            base_url=server.base_url,
            api_key="k",
            max_reply_bytes=100_000,
            retry_policy=NO_WAIT,
        )
        with pytest.raises(EndpointError, match="more than 100000 bytes"):
            embedder.embed(["a text"])
        assert server.requests == 1  # a reply past the cap is not asked again


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {"question": f"Where is city {i}?", "answer": f"City {i} is in France, near Lyon."}
        for i in range(n)
    ]


def run_with_embedder(server: ScriptedServer | str, tmp_path: Path, n: int = 8, **kw: Any) -> Any:
    judge = FakeJudge(analyze=Analysis(questions=("Where is the city?",), noncommittal=False))
    base_url = server if isinstance(server, str) else server.base_url
    settings = Settings(embedder="openai:m", base_url=base_url, api_key="k", batch_size=n, **kw)
    out = tmp_path / "out.jsonl"
    return ragmeter.evaluate(
        rows(n), ["response_relevancy"], judge=judge, settings=settings, out=out, progress=False
    )


@pytest.mark.timeout(60)
def test_a_refusing_embeddings_endpoint_stops_the_run(tmp_path: Path) -> None:
    with ScriptedServer(refuse) as server:
        with pytest.raises(EndpointUnavailableError, match="HTTP 401") as info:
            run_with_embedder(server, tmp_path)
        assert server.requests == 1  # not once more for every row
    assert "resume=True" in str(info.value)  # from Python: the parameter, not the flag


@pytest.mark.timeout(60)
def test_an_embeddings_endpoint_that_is_gone_stops_the_run(tmp_path: Path) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: every connection is refused
    with pytest.raises(EndpointUnavailableError, match="cannot be reached"):
        run_with_embedder(f"http://127.0.0.1:{port}/v1", tmp_path, max_retries=5)


@pytest.mark.timeout(120)
def test_a_silent_embeddings_endpoint_trips_the_breaker_not_every_rows_retries(
    tmp_path: Path,
) -> None:
    with ScriptedServer(silent) as server:
        with pytest.raises(EndpointUnavailableError, match="no reply to 3 requests in a row"):
            run_with_embedder(server, tmp_path, timeout=0.3, max_retries=5, max_no_reply=3)
        assert server.requests == 3


def test_a_working_endpoint_embeds_in_order_through_the_shared_client() -> None:
    def answer(conn: socket.socket, request: bytes) -> None:
        head, _, body = request.partition(b"\r\n\r\n")
        length = int(
            next(
                line.split(b":")[1]
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
        )
        while len(body) < length:
            body += conn.recv(65536)
        texts = json.loads(body)["input"]
        data = [{"index": i, "embedding": [float(len(t)), 1.0]} for i, t in enumerate(texts)]
        reply = json.dumps({"object": "list", "data": data[::-1]}).encode()
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(reply)}\r\nconnection: close\r\n\r\n".encode()
            + reply
        )

    with ScriptedServer(answer) as server:
        embedder = OpenAIEmbedder("m", base_url=server.base_url, api_key="k", batch_size=2)
        vectors = embedder.embed(["aaa", "b", "cc"])
    expected = np.array([[3.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
