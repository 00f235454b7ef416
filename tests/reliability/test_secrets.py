"""API keys never reach the cache, results, the run record, the report, logs or error messages.

A run is given one key through ``Settings.api_key`` and another through ``OPENAI_API_KEY``;
every file it writes, everything it logs at DEBUG (the openai SDK and httpx included) and all
it prints is scanned for both. A key the endpoint rejects (HTTP 401, whose body quotes the
key back) must not appear in the error either, from the API or from the CLI.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import JudgeError
from ragmeter.metrics.base import Settings
from ragmeter.testing.server import HashingEmbedder, TestServer

METRICS = ["faithfulness", "context_entity_recall", "response_relevancy", "k_precision"]
HAS_HTML_REPORT = importlib.util.find_spec("ragmeter.report.html") is not None


def fresh_key(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(16)}"


def leaks(blob: bytes, keys: list[str]) -> list[str]:
    """The keys (or their random halves) found in ``blob``."""
    found = []
    for key in keys:
        for needle in (key, key[-32:], key[-32:].upper()):
            if needle.encode() in blob:
                found.append(needle)
    return found


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in sorted(root.rglob("*")) if p.is_file()]


def test_a_run_writes_and_logs_no_key(
    server: TestServer,
    samples: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    given_key, env_key = fresh_key("sk-SECRET"), fresh_key("sk-ENVSECRET")
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    caplog.set_level(logging.DEBUG)  # the root: ragmeter, openai, httpx, httpcore
    out = tmp_path / "run" / "results.jsonl"
    report = tmp_path / "run" / "report.html"
    cache = tmp_path / "cache" / "judge.sqlite3"
    data = samples(8)
    data[0]["metadata"] = {"note": "no key here"}
    for api_key in (given_key, None):  # from Settings, then from the environment
        settings = Settings(
            judge="openai:test-model",
            base_url=server.base_url,
            api_key=api_key,
            cache_path=str(cache),
            embedder=HashingEmbedder(),
        )
        result = ragmeter.evaluate(
            data,
            METRICS,
            settings=settings,
            out=out,
            report=report if HAS_HTML_REPORT else None,
            progress=True,
        )
        assert not any(row.failures for row in result.rows)
        assert leaks(repr(result.info).encode(), [given_key, env_key]) == []
        assert leaks(result.to_pandas().to_csv().encode(), [given_key, env_key]) == []
    written = files_under(tmp_path, Path(os.environ["RAGMETER_CACHE_DIR"]))
    names = {p.name for p in written}
    assert {"results.jsonl", "results.jsonl.run.json", "judge.sqlite3"} <= names
    if HAS_HTML_REPORT:
        assert "report.html" in names
    for path in written:
        assert leaks(path.read_bytes(), [given_key, env_key]) == [], path
    captured = capfd.readouterr()
    assert caplog.records, "DEBUG logging captured nothing"
    assert leaks(caplog.text.encode(), [given_key, env_key]) == []
    assert leaks((captured.out + captured.err).encode(), [given_key, env_key]) == []


def test_a_rejected_key_is_reported_without_the_key(
    server: TestServer, samples: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rejected = fresh_key("sk-reject-SECRET")  # the server answers 401 quoting the key
    caplog.set_level(logging.DEBUG)
    settings = Settings(
        judge="openai:test-model", base_url=server.base_url, api_key=rejected, use_cache=False
    )
    with pytest.raises(JudgeError) as info:
        ragmeter.evaluate(samples(2), ["faithfulness"], settings=settings, progress=False)
    message = str(info.value)
    assert "401" in message and "OPENAI_API_KEY" in message
    assert leaks(message.encode(), [rejected]) == []
    assert leaks(caplog.text.encode(), [rejected]) == []

    data = tmp_path / "data.jsonl"
    data.write_text('{"answer": "a b", "contexts": ["a b"]}\n')
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "ragmeter", "evaluate", str(data), "-m", "faithfulness"),
            *("--judge", "openai:test-model", "--base-url", server.base_url, "--no-progress"),
        ],
        env={
            **os.environ,
            "OPENAI_API_KEY": rejected,
            "RAGMETER_LOG": "DEBUG",
            "PYTHONPATH": str(Path(ragmeter.__file__).parents[1]),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "401" in proc.stderr
    assert leaks((proc.stdout + proc.stderr).encode(), [rejected]) == []
