"""A user's metric (``@ragmeter.metric`` through ``--plugin``) as a hostile user writes one,
run by the real command in a subprocess: whatever it returns, raises or prints, and however
long it hangs, the run keeps its rows, says what happened and exits as documented.

The attacks are bench/attacks/user_code.py's (issue 36, items 1 to 3).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.reliability.cli_process import SRC, ragmeter_process

HOSTILE = """
import asyncio
import sys

import ragmeter

print("a line printed as the plugin is imported")


@ragmeter.metric(name="hostile", needs=("answer",))
def hostile(sample):
    kind = sample.answer
    if kind == "tuple_key":
        return ragmeter.Score(0.5, details={(1, 2): "x"})
    if kind == "cycle":
        details = {}
        details["self"] = details
        return ragmeter.Score(0.5, details=details)
    if kind == "exit":
        sys.exit(3)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "print":
        print("a line printed by the metric")
    return 1.0


@ragmeter.metric(name="hostile_async", needs=("answer",))
async def hostile_async(sample):
    kind = sample.answer
    if kind == "cancel":
        raise asyncio.CancelledError
    if kind == "exit":
        raise SystemExit(4)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "print":
        print("a line printed by the async metric")
    return 1.0
"""

HANGING = """
import time

import ragmeter


@ragmeter.metric(name="hangs", needs=("answer",))
def hangs(sample):
    if sample.answer == "hang":
        while True:
            time.sleep(0.05)
    return 1.0
"""

KINDS = ["fine", "tuple_key", "cycle", "exit", "interrupt", "cancel", "print", "fine"]


def write_rows(path: Path, answers: list[str]) -> None:
    rows = [{"question_id": f"q{i}", "answer": a, "contexts": ["c"]} for i, a in enumerate(answers)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def command(project: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "ragmeter", "evaluate", "data.jsonl", *args]


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return ragmeter_process(project, "evaluate", "data.jsonl", *args)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "hostile.py").write_text(HOSTILE)
    (tmp_path / "hanging.py").write_text(HANGING)
    write_rows(tmp_path / "data.jsonl", KINDS)
    return tmp_path


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_what_a_metric_raises_or_returns_unwritable_fails_its_row_only(project: Path) -> None:
    args = ("--plugin", "hostile", "-m", "hostile,hostile_async", "--out", "out.jsonl")
    proc = run(project, *args, "--no-progress")
    assert proc.returncode == 0, proc.stderr
    rows = {row["index"]: row for row in lines_of(project / "out.jsonl")}
    assert sorted(rows) == list(range(len(KINDS)))
    failures = {i: row["failures"] for i, row in rows.items()}
    assert "tuple" in failures[1]["hostile"] and "cannot be written" in failures[1]["hostile"]
    assert "Circular reference" in failures[2]["hostile"]
    assert "hostile raised SystemExit: 3" in failures[3]["hostile"]
    assert "hostile_async raised SystemExit: 4" in failures[3]["hostile_async"]
    assert "hostile raised KeyboardInterrupt" in failures[4]["hostile"]
    assert "hostile_async raised KeyboardInterrupt" in failures[4]["hostile_async"]
    assert "hostile_async raised CancelledError" in failures[5]["hostile_async"]
    assert rows[0]["scores"] == rows[7]["scores"] == {"hostile": 1.0, "hostile_async": 1.0}
    record = json.loads((project / "out.jsonl.run.json").read_text())
    assert "stopped" not in record
    assert record["summary"]["hostile"]["failed"] == 4
    assert record["summary"]["hostile_async"]["failed"] == 3

    # A resumed run over the same file reads every line back and scores nothing again.
    resumed = run(project, *args, "--resume", "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    assert len(lines_of(project / "out.jsonl")) == len(KINDS)


def test_what_a_metric_prints_goes_to_stderr_not_into_results_on_stdout(project: Path) -> None:
    write_rows(project / "data.jsonl", ["print", "fine", "print"])
    proc = run(project, "--plugin", "hostile", "-m", "hostile,hostile_async", "--out", "-", "-q")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is a row
    assert [row["index"] for row in rows] == [0, 1, 2]
    assert "a line printed by the metric" in proc.stderr
    assert "a line printed by the async metric" in proc.stderr
    assert "a line printed as the plugin is imported" in proc.stderr


def test_the_deadline_stops_a_run_whose_sync_metric_hangs_keeping_its_rows(
    project: Path,
) -> None:
    write_rows(project / "data.jsonl", ["fine"] * 4 + ["hang"] + ["fine"] * 3)
    proc = run(
        project,
        *("--plugin", "hanging", "-m", "hangs", "--out", "out.jsonl", "--batch-size", "2"),
        *("--deadline", "5", "--no-progress"),
    )
    assert proc.returncode == 2, proc.stderr
    assert "deadline" in proc.stderr
    record = json.loads((project / "out.jsonl.run.json").read_text())
    assert record["stopped"]["reason"] == "deadline"
    kept = lines_of(project / "out.jsonl")
    assert len(kept) == record["stopped"]["rows_kept"]
    assert all(row["scores"] == {"hangs": 1.0} for row in kept)
    assert 4 not in {row["index"] for row in kept}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_a_run_whose_sync_metric_hangs_keeping_its_rows(
    project: Path, sig: signal.Signals
) -> None:
    write_rows(project / "data.jsonl", ["fine"] * 4 + ["hang"] + ["fine"] * 3)
    out = project / "out.jsonl"
    proc = subprocess.Popen(
        command(
            project, "--plugin", "hanging", "-m", "hangs", "--out", "out.jsonl", "--batch-size", "2"
        ),
        cwd=project,
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Rows 0-3 are written once their batches are scored; row 4's batch never ends.
        while not (out.exists() and out.read_text().count("\n") >= 4):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, stderr
    assert "Continue with:" in stderr and "--resume" in stderr
    assert "Exception ignored" not in stderr
    record = json.loads((project / "out.jsonl.run.json").read_text())
    assert record["stopped"]["reason"] == "interrupted"
    kept = lines_of(out)
    assert len(kept) == record["stopped"]["rows_kept"] >= 4
