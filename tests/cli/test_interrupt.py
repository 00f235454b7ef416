"""Interrupted work is not lost (issue 28 item 1): SIGINT or SIGTERM during ``ragmeter
evaluate`` writes every row scored, and the run record with the summaries so far marked
stopped, then exits 130 / 143 saying how many rows were kept and the exact command that
continues; that command (``--resume``) says how many rows it reuses and finishes the run.

A real subprocess against the local test server, made slow with latency; the test waits for
rows in the results file (never for a time) before it sends the signal.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ragmeter
from ragmeter.testing.server import TestServer

SRC = str(Path(ragmeter.__file__).parents[1])
N_ROWS = 40


@pytest.fixture
def slow_server() -> Iterator[TestServer]:
    with TestServer(latency=0.05) as server:
        yield server


def write_data(path: Path) -> None:
    rows = [
        {
            "question_id": f"q{i}",
            "question": f"Where was person {i} born?",
            "answer": f"Person {i} was born in Paris in {1900 + i}. They worked in Rome.",
            "contexts": [f"Person {i} was born in Paris in {1900 + i}.", f"Row {i} worked."],
        }
        for i in range(N_ROWS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def command(data: Path, out: Path, server: TestServer) -> list[str]:
    return [
        *("evaluate", str(data), "--metrics", "faithfulness", "--judge", "openai:test-model"),
        *("--base-url", server.base_url, "--out", str(out), "--batch-size", "2"),
        *("--max-concurrency", "1", "--cache", str(out.with_suffix(".sqlite3"))),
    ]


def run_cli(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragmeter", *args],
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def complete_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_keeps_the_rows_scored_and_resume_finishes_the_run(
    tmp_path: Path, slow_server: TestServer, signum: int, code: int
) -> None:
    data, out = tmp_path / "data.jsonl", tmp_path / "out.jsonl"
    write_data(data)
    proc = run_cli(command(data, out, slow_server))
    give_up = time.monotonic() + 120  # only so that a broken run cannot hang the suite
    while complete_lines(out) < 4 and proc.poll() is None and time.monotonic() < give_up:
        time.sleep(0.01)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert 4 <= len(rows) < N_ROWS, "the run ended before the signal"
    record = json.loads(Path(f"{out}.run.json").read_text(encoding="utf-8"))
    assert record["stopped"]["reason"] == "interrupted"
    assert record["stopped"]["rows_kept"] == record["n_rows"] == len(rows)
    assert record["summary"]["faithfulness"]["count"] == len(rows)
    name = signal.Signals(signum).name
    assert f"Interrupted ({name}): {len(rows)} scored rows kept in {out}" in stderr

    # The exact command printed continues the run.
    resume = stderr.split("Continue with:\n", 1)[1].strip().splitlines()[0]
    args = shlex.split(resume)
    assert args[0] == "ragmeter" and args[-1] == "--resume"
    finished = run_cli(args[1:])
    _, stderr = finished.communicate(timeout=120)
    assert finished.returncode == 0, stderr
    assert f"--resume: {len(rows)} scored rows of {out} reused" in stderr
    final = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["index"] for r in final) == list(range(N_ROWS))
    assert "stopped" not in json.loads(Path(f"{out}.run.json").read_text(encoding="utf-8"))


def test_with_the_default_batch_size_rows_reach_the_file_in_small_first_batches(
    tmp_path: Path, slow_server: TestServer
) -> None:
    """Issue 37, item 3: with --batch-size 256 (the default) nothing reached the file before
    256 rows were scored, so Ctrl-C early kept nothing. The first batches are small (8, 16,
    ...), so a SIGINT after the first rows keeps them."""
    data, out = tmp_path / "data.jsonl", tmp_path / "out.jsonl"
    rows = [
        {
            "question": f"Where was person {i} born?",
            "answer": f"Person {i} was born in Rome.",
            "contexts": [f"Person {i} was born in Rome."],
        }
        for i in range(300)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    args = [a for a in command(data, out, slow_server)]
    at = args.index("--batch-size")
    del args[at : at + 2]
    proc = run_cli(args)
    give_up = time.monotonic() + 120  # only so that a broken run cannot hang the suite
    while complete_lines(out) < 1 and proc.poll() is None and time.monotonic() < give_up:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    kept = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert 8 <= len(kept) < 256, len(kept)
    assert [r["index"] for r in kept] == list(range(len(kept)))
    assert f"Interrupted (SIGINT): {len(kept)} scored rows kept in {out}" in stderr


def test_the_message_says_what_was_kept_and_claims_cached_replies_only_when_there_are() -> None:
    from ragmeter.cli.interrupt import interrupted_message

    record = {"stopped": {"rows_kept": 3, "rows_in_flight": 4}}
    args = ["evaluate", "d.jsonl", "--out", "r.jsonl"]
    offline = interrupted_message(Path("r.jsonl"), record, [], args)
    assert offline.startswith("Interrupted (SIGINT): 3 scored rows kept in r.jsonl")
    assert "4 rows being scored are scored again by --resume." in offline
    assert "cached" not in offline  # the offline judge's verdicts are computed again
    assert offline.endswith("ragmeter evaluate d.jsonl --out r.jsonl --resume")
    judged = interrupted_message(Path("r.jsonl"), record, [signal.SIGTERM], args, cached=True)
    assert judged.startswith("Interrupted (SIGTERM)")
    assert "what the judge already gave them is cached" in judged
    streamed = interrupted_message(Path("-"), None, [], args)
    assert "went to standard output" in streamed and "--out FILE" in streamed
