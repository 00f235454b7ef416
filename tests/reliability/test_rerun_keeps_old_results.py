"""A rerun without ``--resume`` replaces the earlier results only once it has rows of its own
(issue 29, item 3).

The new results are written to a temporary file beside ``out``, which replaces ``out`` (and
the new run record the old one) when the first row is written, or when a run with no rows
ends. A run that stops before any row (a judge that refuses its first call) leaves the old
results and their run record byte for byte as they were, and no temporary file behind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import JudgeUnavailableError
from ragmeter.metrics.base import Settings
from ragmeter.result import sidecar_path
from ragmeter.testing.server import TestServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")


def test_a_rerun_that_stops_before_any_row_keeps_the_old_results(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in samples(6)))
    out = tmp_path / "out.jsonl"
    ragmeter.evaluate(data, ["k_precision"], out=out, progress=False)
    before = out.read_bytes(), sidecar_path(out).read_bytes()
    assert before[0].count(b"\n") == 6

    server.configure(refuse_from_call=1, refuse_status=401)
    settings = Settings(judge="openai:test-model", base_url=server.base_url, use_cache=False)
    with pytest.raises(JudgeUnavailableError, match="HTTP 401"):
        ragmeter.evaluate(data, ["faithfulness"], settings=settings, out=out, progress=False)
    assert (out.read_bytes(), sidecar_path(out).read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "data.jsonl",
        "out.jsonl",
        "out.jsonl.run.json",
    ]


def test_a_rerun_with_rows_replaces_the_old_results_and_record(
    samples: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in samples(6)))
    out = tmp_path / "out.jsonl"
    ragmeter.evaluate(data, ["k_precision"], out=out, progress=False)
    ragmeter.evaluate(data, ["token_recall"], out=out, progress=False)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 6 and all(set(r["scores"]) == {"token_recall"} for r in rows)
    record = json.loads(sidecar_path(out).read_text())
    assert set(record["metrics"]) == {"token_recall"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "data.jsonl",
        "out.jsonl",
        "out.jsonl.run.json",
    ]


def test_an_empty_input_still_leaves_an_empty_results_file(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("")
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    try:
        ragmeter.evaluate(data, ["k_precision"], out=out, progress=False)
    except Exception:  # an empty input may be refused; then the old file stays
        assert out.read_text() == "old\n"
    else:
        assert out.read_text() == ""
