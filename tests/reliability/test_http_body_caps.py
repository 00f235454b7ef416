"""What an endpoint's HTTP body can cost is capped, replies and errors alike (issue 29, item 6).

A judge reply was already read up to ``--max-reply-bytes``; an error body (status >= 400) was
read whole by the SDK before ragmeter cut its text, so a 50 MB error body cost 760 MB. Now at
most :data:`ragmeter.io.transport.http.MAX_ERROR_BODY` bytes of an error body are read, by one hook
that every OpenAI-compatible client of ragmeter (the judge's, the embedder's) is built with.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest

from ragmeter.errors import JudgeError
from ragmeter.io.transport.retry_policy import RetryPolicy
from ragmeter.judges.base import AnalyzeRequest
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.types import Usage

REQUEST = AnalyzeRequest(
    question="Who patented the telephone?",
    answer="Alexander Graham Bell patented the telephone in 1876.",
    references=(),
    contexts=("Bell lived in Boston in 1876.",),
    wants=frozenset({"answer_claims"}),
)


class EndlessErrorServer:
    """Answers ``GET /v1/models`` with an empty list, every other request with ``status`` and a
    body that never ends (``x`` in 64 KiB pieces for as long as the client reads); counts the
    bytes of body sent."""

    def __init__(self, status: int = 400) -> None:
        self.status = status
        self.sent = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
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
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            request = conn.recv(65536)
            if request.startswith(b"GET /v1/models"):
                body = b'{"object": "list", "data": []}'
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                    + body
                )
                return
            conn.sendall(
                f"HTTP/1.1 {self.status} Bad Request\r\ncontent-type: text/plain\r\n".encode()
                + b"content-length: 1000000000000\r\n\r\n"
            )
            piece = b"x" * 65536
            while not self.stop.is_set():
                conn.sendall(piece)
                self.sent += len(piece)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()

    def __enter__(self) -> EndlessErrorServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@pytest.mark.timeout(60)
def test_an_endless_error_body_is_read_only_up_to_the_cap() -> None:
    from ragmeter.io.transport.http import MAX_ERROR_BODY

    with EndlessErrorServer(status=400) as server:
        judge = OpenAIJudge(
            "test-model",
            base_url=server.base_url,
            cache=None,
            timeout=20.0,
            retry_policy=RetryPolicy(max_retries=0),
            usage=Usage(),
        )

        async def call() -> None:
            try:
                await judge.analyze(REQUEST)
            finally:
                await judge.aclose()

        with pytest.raises(JudgeError) as info:
            asyncio.run(call())
        sent = server.sent
    message = str(info.value)
    assert "HTTP 400" in message  # the status answered, not a timeout while reading
    assert "no reply within" not in message
    assert len(message) <= 2000
    # What the server got out before the client hung up: the cap and the sockets' buffers.
    assert sent < MAX_ERROR_BODY + 16 * 2**20, sent
