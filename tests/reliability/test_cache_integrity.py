"""The judge cache as users meet it: switching models, judge identities or endpoint addresses,
a corrupt or locked file, several runs sharing one file. A cache problem may cost calls, never
correct scores.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

import ragmeter
from ragmeter.cache import JudgeCache, _checksum
from ragmeter.io.transport.retry_policy import RetryPolicy
from ragmeter.judges.llm.openai_judge import OpenAIJudge
from ragmeter.metrics.base import Settings
from ragmeter.testing.server import TestServer

METRICS = ["faithfulness", "claim_recall", "context_entity_recall"]
SRC = str(Path(ragmeter.__file__).parents[1])


def run(
    server: TestServer, data: list[dict[str, Any]], cache: Path | None, **kw: Any
) -> tuple[dict[int, dict[str, float | None]], int]:
    """(scores by row, chat calls the server saw) of one run through ``--judge openai:...``."""
    server.reset()
    settings = Settings(
        judge=kw.pop("judge", "openai:test-model"),
        base_url=kw.pop("base_url", server.base_url),
        cache_path=str(cache) if cache else None,
        use_cache=cache is not None,
        timeout=5.0,
        **kw,
    )
    result = ragmeter.evaluate(data, METRICS, settings=settings, progress=False)
    for row in result.rows:
        assert not row.failures, row.failures
    return {r.index: r.scores for r in result.rows}, server.stats()["chat_calls"]


def stored(cache: Path) -> list[tuple[str, str, str, str]]:
    with sqlite3.connect(cache) as conn:
        return conn.execute("SELECT key, model, reply, checksum FROM replies").fetchall()


def test_switching_model_or_judge_id_never_reuses_a_reply_and_another_address_does(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data, cache = samples(12), tmp_path / "cache.sqlite3"
    scores, calls = run(server, data, cache)
    assert calls > 0
    # Another model on the same endpoint and cache: every call is made again.
    _, other_model_calls = run(server, data, cache, judge="openai:other-model")
    assert other_model_calls == calls
    # The same model name, said to be other weights (--judge-id): made again too.
    _, other_id_calls = run(server, data, cache, judge_id="test-model@q4")
    assert other_id_calls == calls
    # The same model at another address (another port, another host name): all from the
    # cache, same scores. The address says where the judge is, not what it answers.
    with TestServer() as moved:
        assert moved.port != server.port
        moved_scores, moved_calls = run(moved, data, cache)
    assert moved_calls == 0
    assert moved_scores == scores
    localhost = server.base_url.replace("127.0.0.1", "localhost")
    again, rerun_calls = run(server, data, cache, base_url=localhost)
    assert rerun_calls == 0
    assert again == scores
    rows = stored(cache)
    assert len(rows) == 3 * calls
    assert {model for _, model, _, _ in rows} == {"test-model", "other-model"}


def test_a_garbage_cache_file_is_bypassed_with_a_warning_and_scores_stay_right(
    server: TestServer, samples: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = samples(10)
    reference, calls = run(server, data, None)
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(os.urandom(64 * 1024))
    with caplog.at_level("WARNING", logger="ragmeter"):
        scores, garbage_calls = run(server, data, garbage)
    assert re.search(r"is not used.*\(use_cache=False\)", caplog.text)
    assert scores == reference
    assert garbage_calls == calls

    # The CLI says so on stderr, once, and goes on.
    data_file = tmp_path / "data.jsonl"
    data_file.write_text("".join(json.dumps(r) + "\n" for r in data))
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "ragmeter", "evaluate", str(data_file)),
            *("-m", ",".join(METRICS), "--judge", "openai:test-model"),
            *("--base-url", server.base_url, "--cache", str(garbage), "--no-progress", "--quiet"),
        ],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "is not used" in proc.stderr and str(garbage) in " ".join(proc.stderr.split())
    # once: not also as a Python RuntimeWarning with its source line (issue 36, item 18)
    assert proc.stderr.count("is not used") == 1, proc.stderr
    assert "RuntimeWarning" not in proc.stderr
    assert "give --cache another path" in " ".join(proc.stderr.split())  # the CLI's flags
    assert "(--no-cache)" in " ".join(proc.stderr.split())


def test_a_damaged_cache_never_gives_wrong_scores(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = samples(30)
    cache = tmp_path / "cache.sqlite3"
    reference, _ = run(server, data, cache)

    # A reply altered on disk (bit rot, a bad copy): its checksum no longer matches.
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE replies SET reply = replace(reply, 'true', 'false')")
        conn.execute("UPDATE replies SET reply = replace(reply, '[1]', '[]')")
    scores, tampered_calls = run(server, data, cache)
    assert scores == reference
    assert tampered_calls > 0

    # Pages overwritten in the middle of the file: bypassed or re-asked, never misread.
    size = cache.stat().st_size
    with cache.open("r+b") as fh:
        fh.seek(size // 2)
        fh.write(os.urandom(min(8192, size // 4)))
    scores, _ = run(server, data, cache)
    assert scores == reference


LOCK_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":  # a rollback-journal file held by another program
    conn.execute("PRAGMA locking_mode = EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
    conn.execute("CREATE TABLE IF NOT EXISTS other (x)")
else:  # ragmeter's WAL file with a write transaction that never ends
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO replies VALUES ('k', 'm', 'p', 'r', 'c', 0)")
print("locked", flush=True)
time.sleep(120)
"""


class LockCountingConnection(sqlite3.Connection):
    """A connection that counts the statements that waited out the busy timeout."""

    locked: ClassVar[list[str]] = []

    def _counted(self, run: Any, sql: str, *args: Any) -> Any:
        try:
            return run(sql, *args)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                LockCountingConnection.locked.append(sql)
            raise

    def execute(self, sql: str, *args: Any) -> Any:  # type: ignore[override]
        return self._counted(super().execute, sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:  # type: ignore[override]
        return self._counted(super().executemany, sql, *args)

    def commit(self) -> None:
        self._counted(lambda _sql: super(LockCountingConnection, self).commit(), "COMMIT")


@pytest.mark.parametrize("how", ["exclusive", "wal-writer"])
def test_a_locked_cache_is_bypassed_with_a_warning_not_waited_on_per_call(
    server: TestServer,
    samples: Any,
    tmp_path: Path,
    how: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = samples(12)
    reference, calls = run(server, data, None)
    cache = tmp_path / "locked.sqlite3"
    if how == "wal-writer":
        JudgeCache(cache).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(cache), how], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        # The judge constructor takes the cache, so the busy timeout can be short here
        # (the CLI's is 10 s).
        timeout = 0.5
        server.reset()
        connect = sqlite3.connect
        monkeypatch.setattr(
            sqlite3, "connect", lambda *a, **kw: connect(*a, factory=LockCountingConnection, **kw)
        )
        LockCountingConnection.locked = []
        with caplog.at_level("WARNING", logger="ragmeter"):
            judge = OpenAIJudge(
                "test-model",
                base_url=server.base_url,
                cache=JudgeCache(cache, timeout=timeout),
                retry_policy=RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05),
            )
            result = ragmeter.evaluate(data, METRICS, judge=judge, progress=False)
    finally:
        holder.kill()
        holder.wait()
    assert {r.index: r.scores for r in result.rows} == reference
    assert server.stats()["chat_calls"] == calls > 1
    assert result.info["judge"]["cache"]["enabled"] is False
    # One wait for the lock, not one per call (there were `calls` replies to store).
    assert len(LockCountingConnection.locked) == 1, LockCountingConnection.locked
    assert re.search("is not used: .*locked", caplog.text)
    assert caplog.text.count("is not used") == 1


def test_concurrent_runs_sharing_one_cache_do_not_corrupt_it(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = samples(60)
    reference, _ = run(server, data, None)
    cache = tmp_path / "shared.sqlite3"
    data_files = []
    for name, rows in (("a", data[:40]), ("b", data[20:])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        data_files.append(path)
    server.reset()
    # Two processes and two threads of this process, overlapping rows, one cache file.
    procs = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "ragmeter", "evaluate", str(path)),
                *("-m", ",".join(METRICS), "--judge", "openai:test-model"),
                *("--base-url", server.base_url, "--cache", str(cache)),
                *("--no-progress", "--quiet", "--max-concurrency", "8"),
            ],
            env={**os.environ, "PYTHONPATH": SRC},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in data_files
    ]
    errors: list[BaseException] = []

    def in_thread(rows: list[dict[str, Any]]) -> None:
        try:
            settings = Settings(
                judge="openai:test-model", base_url=server.base_url, cache_path=str(cache)
            )
            ragmeter.evaluate(rows, METRICS, settings=settings, progress=False)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=in_thread, args=(rows,)) for rows in (data[10:50], data)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for proc in procs:
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert "not used" not in stderr, stderr
    assert not errors, errors

    with sqlite3.connect(cache) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = stored(cache)
    assert all(_checksum(reply) == checksum for _, _, reply, checksum in rows)
    assert len({key for key, *_ in rows}) == len(rows)
    # Everything a full run needs is there and right: zero calls, the reference scores.
    scores, calls = run(server, data, cache)
    assert calls == 0
    assert scores == reference
