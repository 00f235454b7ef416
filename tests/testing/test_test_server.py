from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from ragmeter.testing.server import TestServer
from ragmeter.testing.simulated import entails, entities


def test_module_entry_point_picks_a_free_port_and_serves(tmp_path: Path) -> None:
    src = str(Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragmeter.testing.server", "--port", "0", "--latency", "0.01"],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": src},
    )
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("PORT=")
        port = int(line.removeprefix("PORT="))
        assert port > 0
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=10) as resp:
            assert json.load(resp)["data"][0]["id"] == "test-model"
    finally:
        proc.kill()
        proc.wait()


def test_stats_count_calls_tokens_and_reset() -> None:
    with TestServer() as server:
        body = json.dumps({"model": "m", "input": ["a b", "c"]}).encode()
        req = urllib.request.Request(f"{server.base_url}/embeddings", data=body, method="POST")
        with urllib.request.urlopen(req) as resp:
            data = json.load(resp)["data"]
        assert len(data) == 2 and abs(sum(x * x for x in data[0]["embedding"]) - 1) < 1e-9
        assert server.stats()["embedding_calls"] == 1
        server.reset()
        assert server.stats()["embedding_calls"] == 0


def test_simulated_judgements_are_plausible() -> None:
    assert entails("Bell lived in Boston in 1876.", "Bell lived in Boston.")
    assert not entails("Bell lived in Boston in 1876.", "Bell lived in Boston in 1877.")
    assert not entails("Bell lived in Boston.", "Meucci worked in New York.")
    assert entities("The Taj Mahal was built in 1653 by Shah Jahan.") == [
        "Taj Mahal",
        "Shah Jahan",
        "1653",
    ]


def test_base64_embeddings_are_the_float32_bytes_of_the_float_ones() -> None:
    import array
    import base64

    def post(body: dict) -> list[dict]:
        req = urllib.request.Request(
            f"{server.base_url}/embeddings", data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(req) as resp:
            return json.load(resp)["data"]

    texts = ["Ada Lovelace wrote notes on the engine.", "", "Turing worked in Manchester."]
    with TestServer() as server:
        floats = post({"model": "m", "input": texts})
        packed = post({"model": "m", "input": texts, "encoding_format": "base64"})
    for f, b in zip(floats, packed, strict=True):
        assert isinstance(b["embedding"], str)
        decoded = array.array("f", base64.b64decode(b["embedding"]))
        assert len(decoded) == len(f["embedding"]) == 256
        expected = array.array("f", f["embedding"])  # the same values rounded to float32
        assert decoded == expected


def test_embed_is_unit_norm_and_the_same_as_the_dense_formula() -> None:
    import hashlib
    import math

    from ragmeter.testing.simulated import _content_words, embed

    def dense(text: str, dim: int = 256) -> list[float]:
        vec = [0.0] * dim
        for word in _content_words(text):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            vec[int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0:
            vec[0], norm = 1.0, 1.0
        return [v / norm for v in vec]

    for text in ["Bell lived in Boston in 1876 and Boston grew.", "", "the of and", "x " * 300]:
        assert embed(text) == dense(text)
        assert abs(sum(v * v for v in embed(text)) - 1) < 1e-9


def test_a_reply_leaves_in_one_segment_without_waiting_for_an_ack() -> None:
    # Headers and body written separately under Nagle's algorithm wait for the client's
    # delayed ACK (~40 ms on Linux) before the body leaves: every judge call would pay it.
    import socket

    with (
        TestServer() as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock,
    ):
        for _ in range(3):  # keep-alive: later replies on the same connection too
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
            sock.sendall(
                (
                    "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    "Content-Type: application/json\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n{body}"
                ).encode()
            )
            data = sock.recv(65536)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            assert len(rest) == length, "the body did not come with the headers"
            assert json.loads(rest)["choices"][0]["message"]["content"]


def test_one_command_tries_the_judge_path_and_returns_its_exit_status(tmp_path: Path) -> None:
    """Issue 37, item 10: ``python -m ragmeter.testing.server -- CMD`` runs CMD with
    OPENAI_BASE_URL at the server, says what it answered, and exits as CMD did."""
    src = str(Path(__file__).resolve().parents[2] / "src")
    example = Path(__file__).resolve().parents[2] / "examples" / "rag_sample.jsonl"
    env = {"PYTHONPATH": src, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "c")}
    tried = subprocess.run(
        [sys.executable, "-m", "ragmeter.testing.server", "--", "ragmeter", "evaluate",
         str(example), "-m", "faithfulness", "--judge", "openai:test-model",
         "--cache", str(tmp_path / "cache.sqlite3"), "--out", str(tmp_path / "r.jsonl")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert tried.returncode == 0, tried.stderr
    assert "test server: 24 chat calls (12 analyze, 12 verify, 0 criteria)" in tried.stdout
    record = json.loads((tmp_path / "r.jsonl.run.json").read_text(encoding="utf-8"))
    assert record["usage"]["calls"] == 24
    failed = subprocess.run(
        [sys.executable, "-m", "ragmeter.testing.server", "--", sys.executable, "-c",
         "import os, sys; sys.exit(3 if os.environ['OPENAI_BASE_URL'].endswith('/v1') else 1)"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert failed.returncode == 3, failed.stderr
