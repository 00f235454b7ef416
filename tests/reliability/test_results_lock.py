"""Two runs never write one results file at once (issue 15, item 2): a run holds an exclusive
lock on its results file (and so on its run record, written under the same lock); a second
run, with or without --resume, fails at once naming the file and leaves it as it was.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import ConfigError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")

ROW = {"answer": "Paris is in France", "contexts": ["Paris is in France."]}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    res = CliRunner().invoke(app, ["evaluate", *args, "--no-progress"])
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"{args}: escaped as {res.exception!r}") from res.exception
    return subprocess.CompletedProcess(args, res.exit_code, res.stdout, res.stderr)


@pytest.mark.parametrize("resume", [False, True])
def test_a_second_run_on_a_locked_results_file_fails_fast_naming_it(
    tmp_path: Path, resume: bool
) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(ROW) + "\n" + json.dumps(ROW) + "\n")
    out = tmp_path / "o.jsonl"
    out.write_text('{"index": 0, "id": null, "scores": {}, "reasons": {}, "failures": {}}\n')
    before = out.read_bytes()
    with out.open("rb") as held:  # the first run, still writing
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        args = [str(data), "-m", "k_precision", "--out", str(out)]
        proc = run_cli(*args, *(["--resume"] if resume else []))
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        flat = " ".join(proc.stderr.split())
        assert "Error:" in flat and "o.jsonl" in flat and "another ragmeter run" in flat, flat
        with pytest.raises(ConfigError, match="another ragmeter run"):
            ragmeter.evaluate(data, ["k_precision"], out=out, progress=False)
    assert out.read_bytes() == before
    assert not (tmp_path / "o.jsonl.run.json").exists()


def test_the_lock_is_released_when_a_run_ends(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    out = tmp_path / "o.jsonl"
    for _ in range(2):
        ragmeter.evaluate(data, ["k_precision"], out=out, progress=False)
    with out.open("rb") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again


def test_a_run_that_fails_before_writing_leaves_no_results_file(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    out = tmp_path / "o.jsonl"
    with pytest.raises(ragmeter.errors.RagmeterError):
        ragmeter.evaluate(
            data, ["faithfulness"], out=out, judge="openai:m", settings=None, progress=False
        )
    assert not out.exists(), os.listdir(tmp_path)
