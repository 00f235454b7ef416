"""The resume command printed after a signal masks secrets (issue 36, item 12).

``--base-url http://alice:PASSWORD@host/v1`` was repeated in clear on stderr (which CI keeps
in its logs) although the run record was redacted. A real subprocess against the local test
server, interrupted with SIGINT once rows are in the results file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import ragmeter
from ragmeter.cli.interrupt import interrupted_message
from ragmeter.testing.server import TestServer

SRC = str(Path(ragmeter.__file__).parents[1])
PASSWORD = "Tr0ub4dor-and-3"
KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0"


def test_the_resume_command_after_sigint_masks_the_base_urls_password(tmp_path: Path) -> None:
    data, out = tmp_path / "data.jsonl", tmp_path / "out.jsonl"
    rows = [
        {
            "question": f"Where was person {i} born?",
            "answer": f"Person {i} was born in Rome.",
            "contexts": [f"Person {i} was born in Rome in {1900 + i}."],
        }
        for i in range(40)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with TestServer(latency=0.05) as server:
        url = server.base_url.replace("://", f"://alice:{PASSWORD}@", 1)
        args = [
            *("evaluate", str(data), "-m", "faithfulness", "--judge", "openai:test-model"),
            *("--base-url", url, "--out", str(out), "--batch-size", "2"),
            *("--max-concurrency", "1", "--no-cache"),
        ]
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragmeter", *args],
            env={**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "test-key"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        give_up = time.monotonic() + 120  # only so that a broken run cannot hang the suite
        while proc.poll() is None and time.monotonic() < give_up:
            if out.exists() and out.read_bytes().count(b"\n") >= 2:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Continue with:" in stderr
    assert PASSWORD not in stderr
    assert "--base-url 'http://***@127.0.0.1:" in stderr
    assert "secrets are shown as ***" in stderr


def test_key_shaped_values_and_secret_environment_values_are_masked(monkeypatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789abcdef")
    record = {"stopped": {"rows_kept": 1, "rows_in_flight": 0}}
    args = [
        *("evaluate", "d.jsonl", "--out", "r.jsonl", "--judge-id", KEY),
        *("--base-url", "https://host/v1?api-key=0123456789abcdef0"),
        *("--column", "question=q tok-0123456789abcdef"),
    ]
    text = interrupted_message(Path("r.jsonl"), record, [], args)
    assert KEY not in text and "0123456789abcdef" not in text
    assert "secrets are shown as ***" in text
    plain = interrupted_message(Path("r.jsonl"), record, [], ["evaluate", "d.jsonl"])
    assert "***" not in plain
    assert plain.endswith("ragmeter evaluate d.jsonl --resume")
