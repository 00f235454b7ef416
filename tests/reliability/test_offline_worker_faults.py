"""The offline judge's worker processes: isolated from the user's folder, and a stopped or
silent worker never stalls a run (issue 36, items 4 and 5).

Real worker processes (``python -I``), real signals (SIGSTOP), real files in the working
directory. A worker that is stopped or past its chunk deadline is given up with a warning,
and its chunk, with every later one, is computed in this process's threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ragmeter import Settings, evaluate
from ragmeter.judges.base import AnalyzeRequest
from ragmeter.judges.offline import processes
from ragmeter.judges.offline.judge import OfflineJudge
from ragmeter.models.claim_verifier import shipped_model_available

REQUEST = AnalyzeRequest(
    question="Where is Paris?",
    answer="Paris is in France. It is the capital.",
    references=(),
    contexts=(),
    wants=frozenset({"answer_claims"}),
)


def _spec() -> dict[str, Any]:
    spec = OfflineJudge(model=None).process_spec()
    assert spec is not None
    return spec


# -- item 5: isolation -----------------------------------------------------------------------


def test_workers_import_nothing_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``pickle.py`` (and ``struct.py``, ``sitecustomize.py``) beside the data was imported
    and run by both workers (``python -m`` puts the working directory first on sys.path)."""
    folder = tmp_path / "data"
    folder.mkdir()
    marker = tmp_path / "ran.txt"
    for name in ("pickle", "struct", "sitecustomize", "usercustomize", "runpy", "spacy"):
        (folder / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n", encoding="utf-8"
        )
    monkeypatch.chdir(folder)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", str(folder)]))
    monkeypatch.setenv("PYTHONSTARTUP", str(folder / "pickle.py"))

    async def main() -> Any:
        pool = processes.JudgeProcesses(_spec(), workers=2)
        try:
            return await asyncio.gather(*(pool.run("analyze", [REQUEST]) for _ in range(2)))
        finally:
            await pool.aclose()

    answers = asyncio.run(main())
    assert not marker.exists(), marker.read_text()
    expected = OfflineJudge(model=None).analyze_sync(REQUEST)
    assert [analysis for (analysis,), _ in answers] == [expected, expected]


def test_the_worker_command_is_isolated_and_keeps_this_process_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend("")
    command = processes.worker_command()
    assert command[1] == "-I"
    paths = command[5:]
    assert str(tmp_path) not in paths and "" not in paths and "." not in paths
    site_packages = [p for p in paths if p.endswith("site-packages")]
    assert site_packages  # the same installed packages as this process


# -- item 4: a stopped or silent worker --------------------------------------------------------


def _run_after_stop(pool: processes.JudgeProcesses) -> tuple[Any, list[Any]]:
    async def main() -> tuple[Any, list[Any]]:
        try:
            (first,), _ = await pool.run("analyze", [REQUEST])
            os.kill(pool._all[0].process.pid, signal.SIGSTOP)
            calls = (pool.run("analyze", [REQUEST]) for _ in range(3))
            # a guard against a hang, not a speed bound
            later = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 120)
            return first, later
        finally:
            for worker in list(pool._all):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.process.pid, signal.SIGCONT)
            await pool.aclose()

    return asyncio.run(main())


def test_a_stopped_worker_is_given_up_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    pool = processes.JudgeProcesses(_spec(), workers=1)
    pool.stopped_grace_s = 1.0
    with caplog.at_level("WARNING", logger="ragmeter"):
        first, later = _run_after_stop(pool)
    assert first == OfflineJudge(model=None).analyze_sync(REQUEST)
    assert [type(f) for f in later] == [processes.WorkerFailed] * 3
    assert pool.failed is not None and "is stopped (SIGSTOP?)" in pool.failed
    assert "is stopped" in caplog.text and "goes on in this process (threads)" in caplog.text
    assert all(w.process.returncode is not None for w in pool._all)  # killed, not left


def test_a_chunk_past_its_deadline_is_given_up_even_when_the_worker_looks_alive(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Where the process state cannot be read (no /proc), the deadline alone ends the wait."""
    pool = processes.JudgeProcesses(_spec(), workers=1, stopped=lambda pid: False)
    pool.chunk_timeout_s = 2.0
    with caplog.at_level("WARNING", logger="ragmeter"):
        _, later = _run_after_stop(pool)
    assert [type(f) for f in later] == [processes.WorkerFailed] * 3
    assert pool.failed is not None and "did not answer a chunk in" in pool.failed


def test_the_chunk_deadline_grows_with_the_slowest_chunk() -> None:
    pool = processes.JudgeProcesses(_spec(), workers=1)
    assert pool.chunk_deadline() == processes.CHUNK_TIMEOUT_S
    pool.slowest_s = 30.0
    assert pool.chunk_deadline() == processes.SLOW_FACTOR * 30.0


def test_is_stopped_reads_the_process_state() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc here")
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not processes.is_stopped(child.pid)
        os.kill(child.pid, signal.SIGSTOP)
        give_up = time.monotonic() + 30
        while not processes.is_stopped(child.pid) and time.monotonic() < give_up:
            time.sleep(0.01)
        assert processes.is_stopped(child.pid)
    finally:
        child.kill()
        child.wait()


needs_model = pytest.mark.skipif(
    not shipped_model_available(), reason="the claim verifier needs onnxruntime"
)


@needs_model
def test_a_run_whose_worker_is_stopped_finishes_in_threads_with_every_row(
    shared: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The attack: SIGSTOP one of two workers while chunks wait on it. Before, no progress
    and no warning until SIGCONT; now the run finishes, scored as in threads, with a
    warning."""
    from tests.judges.test_offline_workers import METRICS, _rows

    rows = _rows(shared, 16)
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    expected = evaluate(data, METRICS, settings=Settings(workers=1, use_cache=False))

    judge = OfflineJudge(Settings(workers=2), chunk_rows=2)
    judge.process_min_rows = 1
    stopped: list[int] = []
    done = threading.Event()

    def stop_a_busy_worker() -> None:
        while not done.is_set():
            pool = judge._processes
            busy = [w for w in (pool._all if pool else []) if w.waiting]
            if busy and pool is not None and pool.failed is None:
                os.kill(busy[0].process.pid, signal.SIGSTOP)
                stopped.append(busy[0].process.pid)
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=stop_a_busy_worker, daemon=True)
    watcher.start()
    try:
        with caplog.at_level("WARNING", logger="ragmeter"):
            got = evaluate(
                data,
                METRICS,
                judge=judge,
                settings=Settings(workers=2, use_cache=False),
                out=tmp_path / "out.jsonl",
            )
    finally:
        done.set()
        watcher.join()
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert stopped, "no worker was busy: the run never used its processes"
    assert f"(pid {stopped[0]}) is stopped" in caplog.text
    assert judge.runs_in == "threads"
    assert len(got.rows) == len(rows) and not got.failures()
    for metric in METRICS.split(","):
        assert got.scores(metric) == expected.scores(metric)
