"""A circuit breaker for an endpoint that never answers (issue 29, item 8).

A judge that accepts connections and never replies (or drops every one) was tried for every
row, each with its retries: 1,000 rows cost about 6.4 hours at the defaults before exit 2.
After ``max_no_reply`` requests in a row with no reply at all (across rows), the run stops as
it does for a refusal: the rows scored are kept, the reason is said.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import JudgeUnavailableError
from ragmeter.metrics.base import Settings
from ragmeter.testing.server import TestServer

METRICS = ["faithfulness"]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def settings_for(server: TestServer, **kw: Any) -> Settings:
    return Settings(
        judge="openai:test-model",
        base_url=server.base_url,
        use_cache=False,
        max_concurrency=1,  # one request at a time: the calls can be counted exactly
        **kw,
    )


def test_requests_without_reply_in_a_row_stop_the_run_keeping_rows_scored(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", samples(30))
    server.reset()
    clean = ragmeter.evaluate(data, metrics=METRICS, settings=settings_for(server))
    expected = {r.index: dict(r.scores) for r in clean.rows}
    answered = server.stats()["chat_calls"] - 6
    # The first calls are answered, every later one is dropped unanswered.
    server.configure(faults=["drop"], fault_on_calls=list(range(answered + 1, 1000)))
    server.reset()
    out = tmp_path / "out.jsonl"
    settings = settings_for(server, max_retries=5, max_no_reply=4)
    with pytest.raises(JudgeUnavailableError) as info:
        ragmeter.evaluate(data, metrics=METRICS, settings=settings, out=out, progress=False)
    calls = server.stats()["chat_calls"]
    message = str(info.value)
    assert "no reply to 4 requests in a row" in message
    # The Python API names its parameters (the CLI's flags: tests/cli/test_param_wording.py).
    assert "raise timeout= or max_no_reply=" in message and "resume=True" in message
    assert "--" not in message
    # The answered calls, then four unanswered ones, and no more (not 6 tries for each row).
    assert calls == answered + 4, calls
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    assert kept and f"{len(kept)} scored rows are in {out}" in message
    assert all(row["scores"] == expected[row["index"]] for row in kept)


def test_an_answer_in_between_resets_the_count(samples: Any, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", samples(6))
    # Every other call is dropped: never two in a row, so the run goes on to the end.
    with TestServer(faults=("drop",), fault_on_calls=(1, 3, 5, 7, 9, 11, 13)) as server:
        settings = settings_for(server, max_retries=1, max_no_reply=2)
        run = ragmeter.evaluate(data, metrics=METRICS, settings=settings, progress=False)
    assert len(run.rows) == 6


def test_max_no_reply_below_zero_is_refused_by_its_flag(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [{"answer": "Paris.", "contexts": ["Paris."]}])
    res = CliRunner().invoke(
        app, ["evaluate", str(data), "-m", "faithfulness", "--max-no-reply", "-1"]
    )
    assert res.exit_code == 2
    assert "--max-no-reply must be an integer >= 0" in res.output
