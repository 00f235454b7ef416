"""A secret the judge echoes is redacted before its reply is cached, and credentials in a base
URL are never sent as Basic auth nor kept in any base64 form (issue 29, items 10 and 11)."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

import ragmeter
import ragmeter.io.redact as redact_module
from ragmeter.errors import JudgeError
from ragmeter.io.redact import redact, register_secret
from ragmeter.judges.base import ClaimBlock
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.metrics.base import Settings
from ragmeter.testing.server import HashingEmbedder, TestServer

ROWS = [{"answer": "Paris is in France.", "contexts": ["Paris is in France."]}]


def _cached_replies(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return "\n".join(r[0] for r in conn.execute("SELECT reply FROM replies"))


def test_a_key_echoed_in_a_reply_is_not_cached_nor_reused_in_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = f"sk-ECHO{secrets.token_hex(16)}"
    original = OpenAIJudge._request

    async def echo_key(self: OpenAIJudge, messages: Any, name: str, schema: Any) -> str:
        content = await original(self, messages, name, schema)
        if name != "ragmeter_analyze":
            return content
        reply = json.loads(content)
        reply["answer_claims"] = [f"{c} The key is {key[-20:]}." for c in reply["answer_claims"]]
        return json.dumps(reply)

    monkeypatch.setattr(OpenAIJudge, "_request", echo_key)
    cache = tmp_path / "judge.sqlite3"
    with TestServer() as server:
        for api_key in (key, None):  # the second run has no key that could redact the echo
            settings = Settings(
                judge="openai:test-model",
                base_url=server.base_url,
                api_key=api_key,
                cache_path=str(cache),
                embedder=HashingEmbedder(),
            )
            out = tmp_path / f"run-{api_key is None}.jsonl"
            ragmeter.evaluate(ROWS, ["faithfulness"], settings=settings, out=out, progress=False)
            assert key[-20:-4] not in out.read_text()
            assert key[-20:-4] not in _cached_replies(cache)
            # The rerun reads the cache, in a process that never knew the key.
            monkeypatch.setattr(OpenAIJudge, "_request", original)
            monkeypatch.setattr(redact_module, "_registered", set())


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_base64_forms_of_a_known_secret_are_masked_at_any_alignment() -> None:
    key = f"sk-proj-{secrets.token_hex(16)}"
    register_secret(key)
    for prefix in ("", "u:", "user:", "Bearer "):
        encoded = _b64(prefix + key)
        out = redact(f"Authorization: Basic {encoded} was refused")
        assert encoded[8:-8] not in out, (prefix, out)
        assert out.startswith("Authorization: Basic ") and out.endswith(" was refused")
    assert redact("Paris is in France.") == "Paris is in France."


class _EchoAuth(BaseHTTPRequestHandler):
    """Answers 400 quoting the Authorization header it got; records it."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        auth = self.headers.get("authorization") or ""
        type(self).seen.append(auth)
        payload = json.dumps({"error": {"message": f"bad request from {auth}"}}).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo_auth() -> Iterator[tuple[int, list[str]]]:
    handler = type("EchoAuth", (_EchoAuth,), {"seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1], handler.seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_url_credentials_are_not_sent_in_place_of_the_key_nor_echoed(
    echo_auth: tuple[int, list[str]],
) -> None:
    port, seen = echo_auth
    password, key = f"pw{secrets.token_hex(8)}", f"sk-KEY{secrets.token_hex(16)}"
    judge = OpenAIJudge("m", base_url=f"http://user:{password}@127.0.0.1:{port}/v1", api_key=key)
    block = ClaimBlock(claims=("Paris is in France.",), premises=("Paris is in France.",))

    async def verify() -> None:
        try:
            await judge.verify([block])
        finally:
            await judge.aclose()

    with pytest.raises(JudgeError) as caught:
        asyncio.run(verify())
    assert seen == [f"Bearer {key}"], seen
    message = str(caught.value)
    assert key[8:] not in message and _b64(f"user:{password}")[4:-4] not in message, message
