"""``Settings(workers=N)`` / ``--workers N``: the cores the local models and the offline
judge use in a run (default: every core)."""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter import Settings, evaluate
from ragmeter.cli import app
from ragmeter.errors import ConfigError
from ragmeter.judges.base import Analysis, ClaimBlock
from ragmeter.judges.fake import FakeJudge, all_entailed
from ragmeter.judges.offline.calibration import LEXICAL_CALIBRATION
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.models._runtime import default_threads, use_threads

ROWS = [
    {
        "question": "Where is Paris?",
        "answer": "Paris is in France.",
        "contexts": ["Paris is in France."],
    }
]


@pytest.mark.parametrize("bad", [0, -2, True, 1.5, "2"])
def test_workers_must_be_a_whole_number_of_cores(bad: Any) -> None:
    with pytest.raises(ConfigError, match="'workers' setting must be an integer >= 1"):
        Settings(workers=bad)


def test_workers_default_to_every_core() -> None:
    assert Settings().cores == os.cpu_count()
    assert Settings(workers=3).cores == 3


def test_a_run_loads_its_models_with_one_thread_per_worker_and_puts_the_default_back() -> None:
    seen: list[int] = []

    def analyze(request: Any) -> Analysis:
        seen.append(default_threads())  # what a model loaded now would get
        return Analysis(answer_claims=("Paris is in France.",))

    before = default_threads()
    judge = FakeJudge(analyze=analyze, verify=all_entailed)
    evaluate(ROWS, ["faithfulness"], judge=judge, settings=Settings(workers=3), progress=False)
    assert seen == [3]
    assert default_threads() == before
    evaluate(ROWS, ["faithfulness"], judge=judge, settings=Settings(workers=1), progress=False)
    assert seen == [3, 1]


def test_use_threads_returns_what_it_replaces() -> None:
    first = use_threads(2)
    try:
        assert default_threads() == 2
        assert use_threads(5) == 2
        assert default_threads() == 5
    finally:
        use_threads(first)


def test_the_offline_judge_analyzes_and_verifies_in_at_most_workers_threads() -> None:
    judge = OfflineJudge(Settings(workers=2), model=None, calibration=LEXICAL_CALIBRATION)
    assert judge.workers == 2
    names: set[str] = set()
    verify_sync = judge.verify_sync

    def recorded(blocks: Any) -> Any:
        names.add(threading.current_thread().name)
        return verify_sync(blocks)

    judge.verify_sync = recorded  # type: ignore[method-assign]
    block = ClaimBlock(("Paris is in France.",), ("Paris is the capital of France.",))

    async def many() -> list[Any]:
        try:
            return await asyncio.gather(*(judge.verify([block]) for _ in range(12)))
        finally:
            await judge.aclose()

    results = asyncio.run(many())
    assert len(results) == 12 and len({r.matrices for r in results}) == 1
    assert names and len(names) <= 2
    assert all(name.startswith("ragmeter-offline") for name in names)
    assert threading.main_thread().name not in names


def test_cli_workers_set_the_local_runs_cores(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    import ragmeter as api  # the CLI goes through the public API

    got: list[Settings] = []

    def fake_evaluate(*args: Any, settings: Settings, **kwargs: Any) -> Any:
        got.append(settings)
        raise SystemExit(0)

    monkeypatch.setattr(api, "evaluate", fake_evaluate)
    data = tmp_path / "rows.jsonl"
    data.write_text('{"question": "q", "answer": "a", "contexts": ["c"]}\n')
    CliRunner().invoke(app, ["evaluate", str(data), "-m", "token_recall", "--workers", "1", "-q"])
    assert got and got[0].workers == 1
    result = CliRunner().invoke(app, ["evaluate", str(data), "--workers", "0", "-q"])
    assert result.exit_code != 0 and "workers" in result.output
