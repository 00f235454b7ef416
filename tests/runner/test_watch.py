"""A stalled judge is not silent, and a run has a deadline (issue 28 item 2).

With requests pending and no reply for ``Settings.stall_warning`` seconds (30 by default) a
warning says what is pending; past ``Settings.deadline`` the run stops and keeps the rows
scored (the others are left for ``--resume``). Time is a fake clock: it moves only while the
local test server holds a request it will not answer in time, so nothing here waits on the
wall clock for the warning or the deadline.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from ragmeter.errors import DeadlineError
from ragmeter.io.activity import Activity
from ragmeter.metrics.base import Settings
from ragmeter.runner.pipeline import score_data
from ragmeter.runner.watch import Clock, Watch
from ragmeter.testing.server import TestServer


class FakeTime:
    """A clock whose sleep moves it on at once, once ``ready()`` (after a real pause for the
    other tasks to run)."""

    def __init__(self, ready: Any = lambda: True) -> None:
        self.now = 1000.0
        self.ready = ready

    async def sleep(self, seconds: float) -> None:
        while not self.ready():
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.001)
        self.now += seconds

    def clock(self) -> Clock:
        return Clock(now=lambda: self.now, sleep=self.sleep)


def test_the_warning_says_what_is_pending_once_then_as_the_silence_doubles(
    caplog: pytest.LogCaptureFixture,
) -> None:
    activity = Activity(sent=3, in_flight=2)
    watch = Watch(activity, rows=lambda: (3, 10), clock=Clock(now=lambda: 0.0))
    watch.start()
    assert watch.check_stall(29.0) is None
    with caplog.at_level(logging.WARNING, logger="ragmeter"):
        message = watch.check_stall(30.0)
    assert message is not None and message in caplog.text
    assert "for 0:00:30: 2 requests in flight; 7 of 10 rows waiting" in message
    assert watch.check_stall(45.0) is None  # said once...
    assert watch.check_stall(60.0) is not None  # ...and again when the silence doubled
    activity.replies += 1  # a reply: the silence starts again
    assert watch.check_stall(61.0) is None and watch.check_stall(90.0) is None
    assert watch.check_stall(91.0) is not None


def test_no_warning_while_nothing_is_pending_or_when_switched_off() -> None:
    idle = Watch(Activity(), rows=lambda: (0, 5), clock=Clock(now=lambda: 0.0))
    idle.start()
    assert idle.check_stall(3600.0) is None  # an offline run: no request is ever pending
    off = Watch(Activity(in_flight=1), rows=lambda: (0, 5), stall_warning=0)
    off.start()
    assert off.check_stall(off.started + 3600.0) is None


@pytest.fixture
def silent_server() -> Any:
    """A server that holds every chat call for longer than the test runs."""
    with TestServer(faults=("hang",), fault_rate=1.0, hang_seconds=3.0) as server:
        yield server


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {"question": f"Where is {i}?", "answer": f"{i} is in Paris.", "contexts": [f"{i} Paris."]}
        for i in range(n)
    ]


def test_a_silent_judge_is_warned_about_then_the_deadline_stops_the_run_keeping_rows(
    silent_server: TestServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    time = FakeTime(ready=lambda: silent_server.stats()["in_flight"] > 0)
    settings = Settings(
        judge="openai:test-model",
        base_url=silent_server.base_url,
        use_cache=False,
        timeout=600.0,  # the request would wait this long: the deadline comes first
        max_concurrency=1,
        batch_size=1,
        stall_warning=30.0,
        deadline=300.0,
    )
    out = tmp_path / "out.jsonl"
    with caplog.at_level(logging.WARNING, logger="ragmeter"), pytest.raises(DeadlineError) as info:
        asyncio.run(
            score_data(
                rows(3),
                ["faithfulness"],
                settings=settings,
                out=out,
                progress=False,
                clock=time.clock(),
            )
        )
    warnings = [r.getMessage() for r in caplog.records if "No reply" in r.getMessage()]
    assert warnings and "1 request in flight; 3 of 3 rows waiting" in warnings[0]
    assert "resume=True" in str(info.value) and "Settings(deadline=...)" in str(info.value)
    assert time.now - 1000.0 >= 300.0
    # Nothing was scored, so nothing replaced out: no results file, no record.
    assert not out.exists()


def test_the_deadline_keeps_the_rows_scored_before_it(tmp_path: Path) -> None:
    with TestServer() as server:
        answered = {"calls": 0}

        def ready() -> bool:  # time moves once the first rows are scored, then the server hangs
            calls = server.stats()["chat_calls"]
            if calls >= 4 and not answered["calls"]:
                answered["calls"] = calls
                server.configure(faults=("hang",), fault_rate=1.0, hang_seconds=3.0)
            return bool(answered["calls"]) and server.stats()["in_flight"] > 0

        time = FakeTime(ready=ready)
        settings = Settings(
            judge="openai:test-model",
            base_url=server.base_url,
            use_cache=False,
            timeout=600.0,
            max_concurrency=1,
            batch_size=1,
            deadline=60.0,
        )
        out = tmp_path / "out.jsonl"
        with pytest.raises(DeadlineError, match="scored rows are in"):
            asyncio.run(
                score_data(
                    rows(20),
                    ["faithfulness"],
                    settings=settings,
                    out=out,
                    progress=False,
                    clock=time.clock(),
                )
            )
    kept = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert 1 <= len(kept) < 20
    record = json.loads(Path(f"{out}.run.json").read_text(encoding="utf-8"))
    assert record["stopped"]["reason"] == "deadline"
    assert record["stopped"]["rows_kept"] == len(kept) == record["n_rows"]
    assert record["summary"]["faithfulness"]["count"] == len(kept)


def test_a_deadline_is_a_number_of_seconds() -> None:
    with pytest.raises(Exception, match="'deadline' setting must be a finite number"):
        Settings(deadline=-1)
    assert Settings(deadline=0).deadline == 0


def test_the_cli_takes_a_deadline_and_words_a_bad_one_by_its_flag(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(rows(1)[0]) + "\n", encoding="utf-8")
    bad = CliRunner().invoke(app, ["evaluate", str(data), "-m", "k_precision", "--deadline", "-5"])
    assert bad.exit_code == 2 and "--deadline must be a finite number" in bad.output
    fine = CliRunner().invoke(
        app, ["evaluate", str(data), "-m", "faithfulness", "--deadline", "0", "-q"]
    )
    assert fine.exit_code == 0, fine.output
