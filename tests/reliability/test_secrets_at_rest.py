"""A secret the judge echoes is redacted before its reply is cached, and credentials in a base
URL are never sent as Basic auth nor kept in any base64 form (issue 29, items 10 and 11)."""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import ragmeter
import ragmeter.io.redact as redact_module
from ragmeter.judges.openai_judge import OpenAIJudge
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
