from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from ragmeter.testing.server import TestServer, entails, entities


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
