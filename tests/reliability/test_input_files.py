"""Inputs that are not regular files, and lines without end (issue 29, item 9).

A FIFO, a device or a socket as the input (directly or through a symlink) is refused before
anything is read: the run reads its input more than once (to count, score and hash it), and a
FIFO would block or give each reader other data. A JSONL line longer than
``MAX_LINE_BYTES`` fails its row with the reason (read in bounded pieces, never whole) and
the run goes on.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import DataError
from ragmeter.io import readers
from ragmeter.io.fingerprint import input_fingerprint

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero")


def test_a_fifo_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "data.jsonl"
    os.mkfifo(fifo)  # opening it for reading would block: the test hangs if it is opened
    with pytest.raises(DataError, match="not a regular file"):
        ragmeter.evaluate(fifo, ["k_precision"], progress=False)
    with pytest.raises(DataError, match="not a regular file"):
        input_fingerprint(fifo)


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "data.jsonl"
    os.symlink("/dev/zero", link)
    with pytest.raises(DataError, match="not a regular file.*device"):
        ragmeter.evaluate(link, ["k_precision"], progress=False)


def test_a_line_past_the_cap_fails_its_row_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1000)
    ok = {"answer": "Paris is in France", "contexts": ["Paris is in France."]}
    long = {**ok, "answer": "word " * 1000}
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in (ok, long, ok)))
    result = ragmeter.evaluate(data, ["k_precision"], progress=False)
    assert [r.index for r in result.rows] == [0, 1, 2]
    assert result.rows[0].scores["k_precision"] == 1.0 == result.rows[2].scores["k_precision"]
    assert "longer than 1000 bytes" in result.rows[1].failures["k_precision"]
