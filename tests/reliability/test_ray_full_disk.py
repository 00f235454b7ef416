"""A full disk under a Ray run stops it as it stops a local one (the local engine's test is
``test_errors_come_early.py``): the results file named, the rows written kept, the command
that resumes it printed, exit 2 and no traceback. Ray's iterator, closed after Ray shut down
when the runner stopped taking batches, printed one under the run's error.

The real command in a subprocess, on a local 2-CPU Ray instance; the full disk is a small
tmpfs where this test may mount one (root). No time limit: Ray starts slowly on a loaded
machine.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
from tests.reliability.cli_process import ragmeter_process
from tests.reliability.full_disk import ARGS, N_ROWS, final_rows, tower_rows

pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'ragmeter[ray]')")

RAY = ("--engine", "ray", "--workers", "2")


def ragmeter(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m ragmeter ARGS`` run in ``cwd`` to its end, however long Ray takes."""
    return ragmeter_process(cwd, *args, timeout=None)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tower_rows(tmp_path)


def test_a_full_disk_stops_a_ray_run_naming_the_file_and_the_printed_command_resumes_it(
    tmp_path: Path, data: Path, small_disk: Path
) -> None:
    out = small_disk / "out.jsonl"
    proc = ragmeter(tmp_path, "evaluate", str(data), *ARGS, "--out", str(out), *RAY)
    assert proc.returncode == 2, proc.stderr
    assert f"Writing the results to {out} failed: No space left on device" in proc.stderr
    assert "This is unexpected" not in proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Continue with:" in proc.stderr
    # The rows written stay, in input order, as many as the message says (or more: the
    # failed batch's lines may follow).
    kept = final_rows(out)
    said = re.search(r"The run stopped; (\d+) scored rows are in ", proc.stderr)
    assert said is not None, proc.stderr
    assert 0 < int(said[1]) <= len(kept) < N_ROWS
    assert sorted(kept) == list(range(len(kept)))

    # The printed command, run as printed once space is freed, scores the rest on Ray.
    command = shlex.split(proc.stderr.split("Continue with:", 1)[1].strip().splitlines()[0])
    assert command[:2] == ["ragmeter", "evaluate"] and command[-1] == "--resume", command
    assert " ".join(RAY) in shlex.join(command)
    subprocess.run(["mount", "-o", "remount,size=4m", str(small_disk)], check=True)
    resumed = ragmeter(tmp_path, *command[1:])
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(final_rows(out)) == list(range(N_ROWS))
