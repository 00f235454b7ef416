"""How a CLI run ends when its user or its reader stops it (issue 29, items 16 and 18): Ctrl-C
during a judge run says "Interrupted." and exits 130 with no traceback; a reader that closes
standard output (``--out - | head``) stops the run with a message and exit 141 (a shell's code
for SIGPIPE), never 1, the code of a failed gate.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ragmeter

SRC = str(Path(ragmeter.__file__).parents[1])


def _write_rows(path: Path, n: int) -> None:
    with path.open("w") as f:
        for i in range(n):
            row = {
                "question_id": f"q{i}",
                "answer": f"Paris is in France. It has {i} bridges.",
                "contexts": ["Paris is in France."],
            }
            f.write(json.dumps(row) + "\n")


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragmeter", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ctrl_c_during_a_judge_run_says_interrupted_without_tracebacks(
    tmp_path: Path, spawn_server: Callable[..., Any]
) -> None:
    server = spawn_server(latency=0.3)
    _write_rows(tmp_path / "d.jsonl", 200)
    proc = _start(
        [
            *("evaluate", "d.jsonl", "-m", "faithfulness", "--judge", "openai:test-model"),
            *("--base-url", f"{server.url}/v1", "--no-cache", "-o", "o.jsonl", "--no-progress"),
            *("--max-concurrency", "4"),
        ],
        tmp_path,
    )
    while server.stats()["chat_calls"] < 4 and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Interrupted (SIGINT)" in stderr, stderr
    assert "Traceback" not in stderr and "Task" not in stderr, stderr
    assert len(stderr.splitlines()) <= 3, stderr


def test_a_closed_standard_output_is_not_a_failed_gate(tmp_path: Path) -> None:
    _write_rows(tmp_path / "d.jsonl", 3000)
    proc = _start(
        ["evaluate", "d.jsonl", "-m", "k_precision", "--out", "-", "-q", "--no-progress"],
        tmp_path,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert json.loads(first)["id"] == "q0"
    proc.stdout.close()  # as `head -1` does
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 141, (proc.returncode, stderr)
    assert "standard output was closed" in stderr, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
