"""Credentials in a base URL, and any part of a known key, never reach a file or stderr
(issue 15, item 11); a base URL with a query string keeps working.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.io.redact import redact, redact_url, register_secret
from ragmeter.metrics.base import Settings
from ragmeter.result import sidecar_path
from ragmeter.testing.server import HashingEmbedder, TestServer


def test_redact_url_masks_passwords_and_credential_parameters_only() -> None:
    assert redact_url("http://user:pw@host:8000/v1") == "http://user:***@host:8000/v1"
    masked = redact_url("https://h/v1?api-version=2024-06-01&api-key=K123&token=T")
    assert "K123" not in masked and "token=***" in masked
    assert "api-version=2024-06-01" in masked
    assert redact_url("https://api.openai.com/v1") == "https://api.openai.com/v1"


def test_any_eight_character_run_of_a_known_secret_is_masked() -> None:
    key = f"sk-proj-{secrets.token_hex(16)}"
    register_secret(key)
    text = f"Incorrect API key provided: {key[:6]}...{key[10:22]}; see {key[-8:]}."
    out = redact(text)
    assert key[10:22] not in out and key[-8:] not in out, out
    assert out.startswith("Incorrect API key provided: ")
    assert redact("Paris is in France.") == "Paris is in France."


def test_a_password_in_a_url_inside_text_is_masked() -> None:
    out = redact("cannot reach http://bob:hunter2xyz@127.0.0.1:9/v1?key=abcdef (refused)")
    assert "hunter2xyz" not in out and "abcdef" not in out
    assert "127.0.0.1:9/v1" in out and "(refused)" in out


class _Forward(BaseHTTPRequestHandler):
    """Strips the query string (recorded) and forwards to the test server, which has none."""

    target = ""
    queries: ClassVar[list[str]] = []

    def _forward(self) -> None:
        path, _, query = self.path.partition("?")
        type(self).queries.append(query)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization",)}
        headers["content-type"] = "application/json"
        req = urllib.request.Request(
            self.target + path, data=body, headers=headers, method=self.command
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, payload = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, exc.read()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _forward

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def query_server(server: TestServer) -> Iterator[tuple[str, list[str]]]:
    handler = type("Forward", (_Forward,), {"target": server.base_url[: -len("/v1")]})
    handler.queries = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}", handler.queries
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_credentials_in_a_base_url_work_and_stay_out_of_every_file(
    query_server: tuple[str, list[str]], tmp_path: Path
) -> None:
    host, queries = query_server
    password, query_key = f"pw{secrets.token_hex(8)}", f"qk{secrets.token_hex(8)}"
    base_url = f"http://user:{password}@{host}/v1?api-version=2024-06-01&api-key={query_key}"
    out = tmp_path / "results.jsonl"
    settings = Settings(
        judge="openai:test-model",
        base_url=base_url,
        cache_path=str(tmp_path / "cache.sqlite3"),
        embedder=HashingEmbedder(),
    )
    rows = [{"answer": "Paris is in France.", "contexts": ["Paris is in France."]}] * 3
    result = ragmeter.evaluate(rows, ["faithfulness"], settings=settings, out=out, progress=False)
    assert not any(row.failures for row in result.rows), result.failures()
    # The query string reached the server on every request, the base path stayed /v1.
    assert queries and all(f"api-key={query_key}" in q for q in queries), queries
    blobs = [out.read_text(), sidecar_path(out).read_text(), repr(result.info)]
    for blob in blobs:
        assert password not in blob and query_key not in blob
    assert "api-version=2024-06-01" in sidecar_path(out).read_text()


def test_credentials_echoed_in_failures_stay_out_of_results_and_stderr(
    server: TestServer, tmp_path: Path
) -> None:
    # The test server routes no query string: it answers 404 quoting the path, query and all.
    password, query_key = f"pw{secrets.token_hex(8)}", f"qk{secrets.token_hex(8)}"
    base_url = f"http://user:{password}@127.0.0.1:{server.port}/v1?api-key={query_key}"
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"answer": "Paris is in France.", "contexts": ["Paris."]}) + "\n")
    out = tmp_path / "o.jsonl"
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        res = CliRunner().invoke(
            app,
            [
                "evaluate",
                str(data),
                "-m",
                "faithfulness",
                "--judge",
                "openai:test-model",
                "--base-url",
                base_url,
                "--no-cache",
                "--out",
                str(out),
                "--no-progress",
            ],
        )
    finally:
        os.chdir(old)
    proc = subprocess.CompletedProcess([], res.exit_code, res.stdout, res.stderr)
    # A 404 stops the run (item 6): the server's echo is in the reason on stderr.
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "HTTP 404" in proc.stderr, proc.stderr
    written = [p.read_text() for p in (out, sidecar_path(out)) if p.exists()]
    for blob in (*written, proc.stderr, proc.stdout):
        assert password not in blob and query_key not in blob, blob
