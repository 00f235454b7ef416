"""Rows scored before a judge stops are in ``out`` (issue 29, item 4).

A judge that starts refusing (HTTP 401) in the middle of a batch stops the run, and every row
of that batch (and of the batch scored beside it) whose metrics were all scored before the
stop is written to ``out``; rows the stop caught are left out, and ``--resume`` scores them.
Before, only whole batches were written: with the default batch size, 0 rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import JudgeUnavailableError
from ragmeter.metrics.base import Settings
from ragmeter.results import read_run
from ragmeter.testing.server import TestServer

METRICS = ["faithfulness", "claim_recall"]


def settings_for(server: TestServer) -> Settings:
    return Settings(
        judge="openai:test-model",
        base_url=server.base_url,
        use_cache=False,
        timeout=5.0,
        max_concurrency=2,
    )


def test_rows_scored_before_a_refusal_are_written_and_resume_finishes(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = samples(12)
    server.reset()
    clean = ragmeter.evaluate(data, METRICS, settings=settings_for(server))
    expected = {r.index: r.scores for r in clean.rows}
    calls = server.stats()["chat_calls"]

    out = tmp_path / "out.jsonl"
    server.configure(refuse_from_call=calls - 4, refuse_status=401)
    server.reset()
    with pytest.raises(JudgeUnavailableError, match="HTTP 401") as info:
        ragmeter.evaluate(data, METRICS, settings=settings_for(server), out=out)
    kept = read_run(out).rows
    assert kept, "no row scored before the stop was written"
    assert all(not r.failures and dict(r.scores) == expected[r.index] for r in kept)
    assert f"{len(kept)} scored rows are in {out}" in str(info.value)

    server.configure(refuse_from_call=0)
    result = ragmeter.evaluate(data, METRICS, settings=settings_for(server), out=out, resume=True)
    assert not result.info["failure_causes"]["infrastructure"]
    assert {r.index: dict(r.scores) for r in read_run(out).rows} == expected
