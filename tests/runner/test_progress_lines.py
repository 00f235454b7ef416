"""Progress without a terminal, and an ETA that tells the truth (issue 28 items 3 and 4).

Off a terminal (a CI log) a run writes a line a minute on stderr: rows done of the total, the
rate and the ETA; ``--quiet`` silences it. The ETA comes from measured throughput, and only
once enough rows are done ("estimating" before); the time before the first rows (a model
loading or converting) does not count. Time is a fake clock here.
"""

from __future__ import annotations

import asyncio
import re
import time as wall
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragmeter.metrics import context_relevance
from ragmeter.metrics.base import Settings
from ragmeter.runner import core
from ragmeter.runner.pace import Pace
from ragmeter.runner.pipeline import score_data
from ragmeter.runner.watch import Clock

CLOCK = r"\d:\d\d:\d\d"
LINE = re.compile(
    rf"^scoring (\d+)/24 rows \(\d+%\), {CLOCK}(, [\d.]+ rows/s)?, ETA (estimating|{CLOCK})$"
)


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(0.001)
        self.now += seconds


class MinuteScorer:
    """A relevance model whose every chunk of rows takes a minute of the fake clock."""

    name = "minute"

    def __init__(self, time: FakeTime) -> None:
        self.time = time

    def score(self, contexts: Sequence[str], questions: Sequence[str]) -> list[float]:
        until = self.time.now + 60.0
        while self.time.now < until:
            wall.sleep(0.001)
        return [0.5] * len(contexts)


def rows(n: int) -> list[dict[str, Any]]:
    return [{"question": f"q{i}?", "contexts": ["a b"]} for i in range(n)]


def test_off_a_terminal_a_run_writes_a_line_a_minute_with_rate_and_eta(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    time = FakeTime()
    monkeypatch.setattr(
        context_relevance, "load_question_likelihood", lambda *a, **k: MinuteScorer(time)
    )
    asyncio.run(
        score_data(
            rows(24),
            ["context_relevance"],
            settings=Settings(batch_size=64),
            progress=None,  # pytest's stderr is not a terminal
            clock=Clock(now=lambda: time.now, sleep=time.sleep),
        )
    )
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("scoring")]
    # Three chunks of 8 rows, a minute each: a line at each minute and a last one.
    assert len(lines) >= 3, lines
    assert all(LINE.match(line) for line in lines), lines
    assert "ETA estimating" in lines[0]  # 0 or 8 rows done: the pace is not measured yet
    assert lines[-1].startswith("scoring 24/24 rows (100%)")
    assert " rows/s, ETA 0:00:00" in lines[-1]


def test_a_short_run_off_a_terminal_writes_no_progress_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = [{"answer": "a", "contexts": ["a"]}] * 3
    asyncio.run(score_data(data, ["k_precision"], progress=None))
    assert "scoring" not in capsys.readouterr().err


def test_quiet_silences_progress_and_progress_overrides_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    asked: list[Any] = []
    real = core.make_progress
    monkeypatch.setattr(
        core, "make_progress", lambda setting, *a, **k: asked.append(setting) or real(False, 0)
    )
    data = tmp_path / "d.jsonl"
    data.write_text('{"answer": "a", "contexts": ["a"]}\n', encoding="utf-8")
    for flags in ([], ["-q"], ["-q", "--progress"]):
        result = CliRunner().invoke(app, ["evaluate", str(data), "-m", "k_precision", *flags])
        assert result.exit_code == 0, result.output
    assert asked == [None, False, True]


def test_no_eta_from_two_quick_rows_of_five_thousand() -> None:
    pace = Pace(5000)
    pace.update(1, 59.0)  # the first row after a minute of loading
    pace.update(2, 60.0)
    assert pace.seconds_left(60.0) is None  # was "0:04:22" (and "82:18:42" before it)
    assert pace.needed == 50
    pace.update(50, 108.0)  # 49 rows in 49 s since the first: 1 row/s
    assert pace.rate(108.0) == pytest.approx(1.0)
    assert pace.seconds_left(108.0) == pytest.approx(4950.0)


def test_a_run_that_stops_moving_sees_its_eta_grow() -> None:
    pace = Pace(100)
    pace.update(5, 10.0)
    pace.update(10, 15.0)  # 1 row/s
    soon, later = pace.seconds_left(15.0), pace.seconds_left(115.0)
    assert soon is not None and later is not None and later > 10 * soon


def test_small_runs_need_five_rows_and_every_row_when_fewer() -> None:
    assert Pace(12).needed == 5 and Pace(3).needed == 3 and Pace(None).needed == 5
