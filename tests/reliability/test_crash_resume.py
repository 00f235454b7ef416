"""Crash safety as users meet it: a CLI run against a slow judge endpoint is killed with
SIGKILL part way and started again with ``--resume``.

The server counts the calls. A call that had completed before the kill (its reply is in the
cache) is never made again: run 2 makes exactly the calls of an uninterrupted run minus the
replies the cache kept. Only calls in flight at the kill (at most ``--max-concurrency``) are
repeated. The final results equal the uninterrupted run's, row by row.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import ragmeter

SRC = str(Path(ragmeter.__file__).parents[1])
ENV = {"PYTHONPATH": SRC}
METRICS = "faithfulness,claim_recall,context_precision,context_entity_recall"
CONCURRENCY = 4
N_ROWS = 80


@pytest.fixture
def slow_server(spawn_server: Any) -> Any:
    return spawn_server(latency=0.05)


def cli_args(data: Path, out: Path, cache: Path, server: Any, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "ragmeter",
        "evaluate",
        str(data),
        "--metrics",
        METRICS,
        "--judge",
        "openai:test-model",
        "--base-url",
        f"{server.url}/v1",
        "--out",
        str(out),
        "--cache",
        str(cache),
        "--batch-size",
        "8",
        "--max-concurrency",
        str(CONCURRENCY),
        "--no-progress",
        "--quiet",
        *extra,
    ]


def run_cli(args: list[str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        args, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def rows_of(path: Path) -> dict[int, dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").split("\n")[:-1]:
        record = json.loads(line)
        assert record["index"] not in rows, f"row {record['index']} written twice"
        rows[record["index"]] = record
    return rows


def complete_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def cached_replies(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])


def test_sigkill_then_resume_repeats_no_completed_call_and_matches_a_full_run(
    tmp_path: Path, slow_server: Any, samples: Any
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in samples(N_ROWS)))

    # An uninterrupted run: the reference results and call count.
    full_out = tmp_path / "full.jsonl"
    run_cli(cli_args(data, full_out, tmp_path / "full.sqlite3", slow_server))
    full_calls = slow_server.stats()["chat_calls"]
    full = rows_of(full_out)
    assert sorted(full) == list(range(N_ROWS))
    assert full_calls == cached_replies(tmp_path / "full.sqlite3") >= N_ROWS

    # Run 1: killed with SIGKILL once some rows are on disk and the run is well under way.
    slow_server.reset()
    out, cache = tmp_path / "out.jsonl", tmp_path / "cache.sqlite3"
    proc = subprocess.Popen(
        cli_args(data, out, cache, slow_server),
        env={**os.environ, **ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while complete_lines(out) < 16 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "run 1 ended before it could be killed"
    run1_calls = slow_server.stats()["chat_calls"]
    kept = cached_replies(cache)  # replies that had completed (validated and committed)
    rows_done = len(rows_of_complete_lines(out))
    assert 16 <= rows_done < N_ROWS
    assert 0 < kept < full_calls
    # Calls the server saw but the client never stored were in flight at the kill: a
    # request keeps its concurrency slot until its reply is committed to the cache, so
    # however late commits run on a loaded machine, these are at most --max-concurrency
    # (tests/judges/test_openai_judge.py::test_a_request_keeps_its_slot_until_...).
    assert 0 <= run1_calls - kept <= CONCURRENCY, (run1_calls, kept)

    # Run 2: --resume. Completed calls are cache hits; only the rest is asked.
    slow_server.reset()
    run_cli(cli_args(data, out, cache, slow_server, "--resume"))
    run2_calls = slow_server.stats()["chat_calls"]
    assert run2_calls == full_calls - kept, (run2_calls, full_calls, kept, run1_calls)
    assert run1_calls + run2_calls - full_calls <= CONCURRENCY

    resumed = rows_of(out)
    assert sorted(resumed) == list(range(N_ROWS))
    for index, record in full.items():
        assert resumed[index]["scores"] == record["scores"], index
        assert resumed[index]["failures"] == record["failures"] == {}, index
    info = json.loads((tmp_path / "out.jsonl.run.json").read_text())
    assert info["n_rows"] == N_ROWS
    assert info["usage"]["calls"] == run2_calls
    assert info["summary"]["faithfulness"]["mean"] == pytest.approx(
        json.loads((tmp_path / "full.jsonl.run.json").read_text())["summary"]["faithfulness"][
            "mean"
        ],
        abs=1e-12,
    )


def rows_of_complete_lines(path: Path) -> dict[int, Any]:
    """Rows of the complete lines of a file a killed run may have left with a torn last line."""
    text = path.read_bytes()
    lines = text[: text.rfind(b"\n") + 1].decode("utf-8").split("\n")[:-1]
    return {json.loads(line)["index"]: line for line in lines}
