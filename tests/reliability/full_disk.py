"""What the full-disk tests share: the input they score, how they read the rows a stopped run
kept, and a small tmpfs to fill (the ``small_disk`` fixture of conftest.py)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

N_ROWS = 300
#: The run the full-disk tests start: a cheap metric, small batches, no cache.
ARGS = ("-m", "k_precision", "--no-cache", "--batch-size", "16", "--no-progress", "-q")


def tower_rows(folder: Path) -> Path:
    """An input file of ``N_ROWS`` rows in ``folder``."""
    rows = [
        {
            "question_id": f"q{i}",
            "answer": f"Answer {i} says the tower is {i} metres tall.",
            "contexts": [f"The tower is {i} metres tall.", "It stands in Paris."],
        }
        for i in range(N_ROWS)
    ]
    path = folder / "data.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def final_rows(path: Path) -> dict[int, dict]:
    """The rows of a results file's complete lines (a write cut short leaves a torn last one,
    which a resumed run cuts)."""
    text = path.read_text()
    complete = text[: text.rfind("\n") + 1].splitlines()
    return {row["index"]: row for row in map(json.loads, complete)}


def mounted_small_disk(folder: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs at ``folder/small`` (skips where this test may not mount one)."""
    mount = folder / "small"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)
