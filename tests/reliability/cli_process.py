"""``python -m ragmeter`` in a subprocess, as the reliability tests run it: this checkout's
source on the path, its output captured, a hang a failure of the test (not a wait)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import ragmeter

SRC = str(Path(ragmeter.__file__).parents[1])


def ragmeter_process(
    cwd: Path,
    *args: str,
    preexec: Callable[[], None] | None = None,
    timeout: float | None = 300,
) -> subprocess.CompletedProcess[str]:
    """``python -m ragmeter ARGS`` run in ``cwd`` to its end (``timeout`` seconds at most;
    None: no limit, for a run whose start may take long, such as Ray's)."""
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=preexec,
    )
