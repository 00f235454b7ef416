"""Errors come early, or at least clearly (issue 36 item 13): a broken --labels file stops the
command before the first row is scored; a results file that cannot be written (a full disk, a
file size limit) stops the run naming the file, keeping the rows written and printing the
command that resumes it; ``--dry-run --resume`` checks the results file as the run does.

Real command in a subprocess, real files; the full disk is a small tmpfs where this test may
mount one (root), and a file size limit (RLIMIT_FSIZE) everywhere.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.reliability.cli_process import ragmeter_process
from tests.reliability.full_disk import ARGS, N_ROWS, final_rows, tower_rows


def run(
    cwd: Path, *args: str, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return ragmeter_process(cwd, "evaluate", *args, preexec=preexec)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tower_rows(tmp_path)


def test_a_broken_labels_file_stops_the_command_before_any_row_is_scored(
    tmp_path: Path, data: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "q1", "metric": "k_precision", "label": 1}\n{"id": "q2", "met\n')
    proc = run(
        tmp_path, str(data), "-m", "k_precision", "--out", "out.jsonl", "--labels", str(labels)
    )
    assert proc.returncode == 2, proc.stderr
    assert "labels.jsonl" in proc.stderr and "line 2" in proc.stderr
    assert not (tmp_path / "out.jsonl").exists()  # nothing was scored


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_results_file_that_cannot_grow_stops_the_run_naming_it_and_how_to_resume(
    tmp_path: Path, data: Path
) -> None:
    out = tmp_path / "out.jsonl"
    proc = run(tmp_path, str(data), *ARGS, "--out", str(out), preexec=_file_size_limit(40_000))
    assert proc.returncode == 2, proc.stderr
    assert f"Writing the results to {out} failed: File too large" in proc.stderr
    assert "This is unexpected" not in proc.stderr
    assert "Continue with:" in proc.stderr and "--resume" in proc.stderr
    record = json.loads((tmp_path / "out.jsonl.run.json").read_text())
    kept = final_rows(out)
    # Counted: the rows of the batches written whole; the failed batch's lines may follow.
    assert 0 < record["stopped"]["rows_kept"] <= len(kept) < N_ROWS

    resumed = run(tmp_path, str(data), *ARGS, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(final_rows(out)) == list(range(N_ROWS))


def test_a_full_disk_stops_the_run_naming_the_file_and_the_run_resumes_once_freed(
    tmp_path: Path, data: Path, small_disk: Path
) -> None:
    out = small_disk / "out.jsonl"
    proc = run(tmp_path, str(data), *ARGS, "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert f"Writing the results to {out} failed: No space left on device" in proc.stderr
    assert "This is unexpected" not in proc.stderr
    assert "Continue with:" in proc.stderr
    kept = final_rows(out) if out.exists() else {}
    assert len(kept) < N_ROWS
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_disk)], check=True)
    resumed = run(tmp_path, str(data), *ARGS, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(final_rows(out)) == list(range(N_ROWS))


def test_dry_run_resume_checks_the_results_file_as_the_run_does(tmp_path: Path, data: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert run(tmp_path, str(data), *ARGS, "--out", str(out)).returncode == 0
    lines = out.read_text().splitlines(keepends=True)

    # 100 rows kept and a cut-off last line: the plan scores the rest and changes nothing.
    out.write_text("".join(lines[:100]) + lines[100][:20])
    before = out.read_bytes()
    proc = run(tmp_path, str(data), *ARGS, "--out", str(out), "--resume", "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert (plan["rows"], plan["rows_reused"]) == (N_ROWS - 100, 100)
    assert out.read_bytes() == before

    # A broken line in the middle: the dry run refuses with the run's own words.
    out.write_text("".join(lines[:50]) + "{not json\n" + "".join(lines[51:100]))
    real = run(tmp_path, str(data), *ARGS, "--out", str(out), "--resume")
    dry = run(tmp_path, str(data), *ARGS, "--out", str(out), "--resume", "--dry-run")
    assert real.returncode == dry.returncode == 2
    assert "line 51" in real.stderr
    assert dry.stderr == real.stderr
