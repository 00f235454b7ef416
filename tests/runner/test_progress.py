"""Progress (issue 17): rows advance one by one also for slow model and judge metrics, with an
ETA; a bar in notebooks; no other library's bar on stderr during a run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.judges.base import Analysis, Verification
from ragmeter.judges.fake import FakeJudge
from ragmeter.metrics import context_relevance
from ragmeter.metrics.base import Settings
from ragmeter.runner import progress as P

SRC = str(Path(ragmeter.__file__).parents[1])


class ScriptedScorer:
    """A question-likelihood model that logs each call into ``events`` (one per chunk)."""

    name = "scripted"

    def __init__(self, events: list[tuple[str, int]], *, bar: bool = False) -> None:
        self.events = events
        self.bar = bar

    def score(self, contexts: Sequence[str], questions: Sequence[str]) -> list[float]:
        self.events.append(("model", len(contexts)))
        if self.bar:  # as transformers' GGUF conversion does
            from tqdm import tqdm

            for _ in tqdm(range(3), desc="Converting tensors", file=sys.stderr):
                pass
        return [0.5] * len(contexts)


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {"question": f"q{i}?", "contexts": ["a b"], "answer": "a", "reference_answers": ["a"]}
        for i in range(n)
    ]


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    events: list[tuple[str, int]] = []
    monkeypatch.setattr(
        context_relevance, "load_question_likelihood", lambda *a, **k: ScriptedScorer(events)
    )
    return events


def test_a_model_metric_advances_chunk_by_chunk_within_one_batch(
    scripted: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.runner import core

    monkeypatch.setattr(core, "FIRST_BATCH", 64)  # one batch: no smaller first batches

    def seen(done: int, total: int | None) -> None:
        scripted.append(("progress", done))
        assert total == 20

    ragmeter.evaluate(
        rows(20), ["context_relevance"], progress=seen, settings=Settings(batch_size=64)
    )
    # One batch of 20 rows, scored 8 rows at a time, the progress moving after each chunk.
    assert scripted == [
        ("model", 8),
        ("progress", 8),
        ("model", 8),
        ("progress", 16),
        ("model", 4),
        ("progress", 20),
    ]


def test_a_judge_metric_advances_row_by_row() -> None:
    judge = FakeJudge(
        analyze=Analysis(answer_claims=("a",), reference_claims=()),
        verify=Verification(matrices=(((True,),),)),
    )
    done: list[int] = []
    ragmeter.evaluate(
        rows(5),
        ["faithfulness"],
        judge=judge,
        progress=lambda d, total: done.append(d),
        settings=Settings(batch_size=64),
    )
    assert done == [1, 2, 3, 4, 5]


def test_a_row_counts_once_all_its_metrics_are_scored(scripted: list) -> None:
    done: list[int] = []
    ragmeter.evaluate(
        rows(16),
        ["k_precision", "context_relevance"],
        progress=lambda d, total: done.append(d),
        settings=Settings(batch_size=64),
    )
    # The lexical metric is done at once; the rows count as the model scores them.
    assert done == [8, 16]


def test_rows_that_cannot_be_scored_still_count() -> None:
    data = [{"answer": "a", "contexts": ["a"]}, {"answer": "a"}]
    done: list[int] = []
    ragmeter.evaluate(data, ["k_precision"], progress=lambda d, t: done.append(d))
    assert done[-1] == 2


def test_the_progress_line_gives_rows_share_elapsed_time_rate_and_eta() -> None:
    from ragmeter.runner.pace import Pace

    pace = Pace(50)
    pace.update(5, 100.0)  # the first rows: the pace is measured from here
    pace.update(25, 110.0)
    assert P.progress_line(25, 50, elapsed=12.0, pace=pace, now=110.0) == (
        "scoring 25/50 rows (50%), 0:00:12, 2 rows/s, ETA 0:00:13"
    )
    assert P.progress_line(0, 50, elapsed=3.0, pace=Pace(50), now=3.0).endswith("ETA estimating")
    assert P.progress_line(7, None, elapsed=3661.0) == "scoring 7 rows, 1:01:01"


def test_a_notebook_gets_a_bar_and_without_ipywidgets_a_line_of_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Not a terminal, not a notebook (pytest): a line a minute.
    assert isinstance(P.make_progress(None, 10), P.LineBar)
    monkeypatch.setattr(P, "in_notebook", lambda: True)
    monkeypatch.setattr(P, "_has_widgets", lambda: False)
    bar = P.make_progress(None, 10)
    assert isinstance(bar, P.TextBar)
    bar.advance(4)
    bar.stop()
    err = capsys.readouterr().err
    assert "\rscoring 4/10 rows (40%)" in err and "ETA" in err
    monkeypatch.setattr(P, "_has_widgets", lambda: True)
    rich_bar = P.make_progress(None, 10)
    assert isinstance(rich_bar, P.RichBar)
    rich_bar.stop()
    assert P.make_progress(False, 10) is None


def test_no_tqdm_bar_reaches_stderr_during_a_run(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tqdm")
    events: list[tuple[str, int]] = []
    scorer = ScriptedScorer(events, bar=True)
    scorer.score(["c"], ["q"])  # outside a run the bar shows: the check below can fail
    assert "Converting tensors" in capfd.readouterr().err
    monkeypatch.setattr(context_relevance, "load_question_likelihood", lambda *a, **k: scorer)
    ragmeter.evaluate(rows(3), ["context_relevance"], progress=False)
    assert "Converting tensors" not in capfd.readouterr().err
    scorer.score(["c"], ["q"])  # and after the run tqdm is as it was
    assert "Converting tensors" in capfd.readouterr().err


def test_a_cli_run_prints_no_other_librarys_bar(tmp_path: Path) -> None:
    pytest.importorskip("tqdm")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(3)))
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_progress import ScriptedScorer
from ragmeter.metrics import context_relevance
context_relevance.load_question_likelihood = lambda *a, **k: ScriptedScorer([], bar=True)
sys.argv = ["ragmeter", "evaluate", {str(data)!r}, "-m", "context_relevance", "-q"]
from ragmeter.cli import main
main()
"""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "Converting tensors" not in done.stderr and "it/s" not in done.stderr


def test_evaluate_runs_in_a_notebook_cell_where_the_kernel_runs_a_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from ragmeter.runner import pipeline as runner

    monkeypatch.setattr(runner, "in_notebook", lambda: True)
    data = [{"answer": "cat dog", "contexts": ["cat"]}]

    async def cell() -> Any:  # a notebook cell: the kernel's loop is running
        return ragmeter.evaluate(data, ["k_precision"], progress=False)

    assert asyncio.run(cell())["k_precision"] == [0.5]
    monkeypatch.setattr(runner, "in_notebook", lambda: False)  # a server: refused
    with pytest.raises(RuntimeError, match="aevaluate"):
        asyncio.run(cell())


def test_hugging_face_bars_are_off_during_a_run_and_restored_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hub = pytest.importorskip("huggingface_hub.utils")
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    hub.enable_progress_bars()
    with P.library_bars_off(tqdm=False):
        assert hub.are_progress_bars_disabled()
        assert P.os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    assert not hub.are_progress_bars_disabled()
    assert "HF_HUB_DISABLE_PROGRESS_BARS" not in P.os.environ


def test_the_bar_says_estimating_until_it_has_measured_enough_rows() -> None:
    from ragmeter.runner.pace import Pace

    # Issue 28 item 4: no ETA from the first chunk (two quick rows of 5,000 said 0:04:22).
    pace = Pace(5000)
    pace.update(2, 10.0)
    assert str(P._eta_column(pace).render(None)) == "estimating"


def test_overlapping_runs_that_end_out_of_order_leave_tqdm_as_it_was(
    capfd: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("tqdm")
    from ragmeter.runner.progress import library_bars_off

    scorer = ScriptedScorer([], bar=True)
    first, second = library_bars_off(), library_bars_off()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first run ends while the second still runs
    scorer.score(["c"], ["q"])
    assert "Converting tensors" not in capfd.readouterr().err
    second.__exit__(None, None, None)
    scorer.score(["c"], ["q"])
    assert "Converting tensors" in capfd.readouterr().err
