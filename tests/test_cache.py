from __future__ import annotations

import multiprocessing
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ragmeter import cache as cache_module
from ragmeter.cache import JudgeCache, cache_key, default_cache_path

BASE = dict(
    model="m",
    judge_id="m",
    prompt={"id": "p", "hash": "h"},
    messages=[{"role": "user", "content": "hi"}],
    params={"temperature": 0.0},
    schema={"type": "object"},
)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("model", "m2"),
        ("judge_id", "m@other-weights"),
        ("prompt", {"id": "p", "hash": "h2"}),
        ("prompt", {"id": "p2", "hash": "h"}),
        ("messages", [{"role": "user", "content": "hi!"}]),
        ("params", {"temperature": 0.5}),
        ("schema", {"type": "array"}),
    ],
)
def test_every_component_changes_the_key(field, value) -> None:
    assert cache_key(**{**BASE, field: value}) != cache_key(**BASE)


def test_key_is_stable_and_names_no_endpoint() -> None:
    assert cache_key(**BASE) == cache_key(**dict(BASE))
    assert len(cache_key(**BASE)) == 64
    with pytest.raises(TypeError, match="endpoint"):
        cache_key(**BASE, endpoint="http://x/v1")  # type: ignore[call-arg]


def test_a_new_key_format_makes_old_entries_miss(monkeypatch) -> None:
    old = cache_key(**BASE)
    monkeypatch.setattr(cache_module, "KEY_FORMAT", cache_module.KEY_FORMAT + 1)
    assert cache_key(**BASE) != old


def test_default_path_honours_env(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path))
    assert default_cache_path() == tmp_path / "judge.sqlite3"


def test_round_trip_and_wal(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.sqlite3")
    assert cache.get("k") is None
    cache.put("k", '{"a": 1}', model="m", prompt="p")
    assert cache.get("k") == '{"a": 1}'
    mode = sqlite3.connect(tmp_path / "c.sqlite3").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    reopened = JudgeCache(tmp_path / "c.sqlite3")
    assert reopened.get("k") == '{"a": 1}' and len(reopened) == 1


def test_a_tampered_reply_is_not_served(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.sqlite3")
    cache.put("k", '{"a": 1}', model="m", prompt="p")
    con = sqlite3.connect(tmp_path / "c.sqlite3")
    con.execute("UPDATE replies SET reply = '{\"a\": 2}'")
    con.commit()
    assert cache.get("k") is None


def test_a_corrupt_file_is_bypassed_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with caplog.at_level("WARNING", logger="ragmeter"):
        cache = JudgeCache(path)
    assert re.search(r"not used.*\(use_cache=False\)", caplog.text)
    assert not cache.enabled
    assert cache.get("k") is None
    cache.put("k", "v", model="m", prompt="p")  # no error, nothing stored
    assert cache.describe()["bypassed"]


def _writer(path: str, worker: int, n: int) -> None:
    cache = JudgeCache(path)
    for i in range(n):
        cache.put(f"{worker}-{i}", f"reply {worker} {i}", model="m", prompt="p")
        assert cache.get(f"{worker}-{i}") == f"reply {worker} {i}"


def test_concurrent_processes_share_one_cache_without_corruption(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite3")
    JudgeCache(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 600


def test_replies_committed_before_sigkill_survive(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    script = (
        "import os, signal\n"
        "from ragmeter.cache import JudgeCache\n"
        f"c = JudgeCache({str(path)!r})\n"
        "for i in range(5): c.put(str(i), 'v', model='m', prompt='p')\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    proc = subprocess.run([sys.executable, "-c", script], env={"PYTHONPATH": src}, check=False)
    assert proc.returncode == -9
    assert len(JudgeCache(path)) == 5


def test_aput_returns_only_once_the_reply_is_committed_and_leaves_the_loop_free(
    tmp_path: Path,
) -> None:
    import asyncio
    import threading

    path = tmp_path / "a.sqlite3"
    cache = JudgeCache(path)
    writers: list[str] = []
    put = cache.put

    def spy(*args, **kwargs) -> None:
        writers.append(threading.current_thread().name)
        put(*args, **kwargs)

    cache.put = spy  # type: ignore[method-assign]

    async def main() -> None:
        await asyncio.gather(
            *(cache.aput(str(i), f"v{i}", model="m", prompt="p") for i in range(8))
        )
        # Committed: another connection (another process, after a SIGKILL) sees every reply.
        other = sqlite3.connect(path)
        assert other.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 8
        other.close()

    asyncio.run(main())
    assert len(writers) == 8
    assert threading.main_thread().name not in writers
    assert cache.get("3") == "v3"


def test_aput_on_a_bypassed_cache_does_nothing(tmp_path: Path) -> None:
    import asyncio

    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    cache = JudgeCache(bad)
    cache.get("k")
    asyncio.run(cache.aput("k", "v", model="m", prompt="p"))
    assert cache.get("k") is None


def test_many_replies_go_in_one_commit_and_come_back_by_key(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.sqlite3")
    items = [(f"k{i}", f"{i / 1000!r}") for i in range(1200)]  # more keys than one statement
    cache.put_many(items, model="nli:m@abc", prompt="nli-verify")
    found = cache.get_many([key for key, _ in items] + ["missing", "k3"])
    assert found == dict(items)
    assert cache.get_many([]) == {}
    cache.close()
    with sqlite3.connect(tmp_path / "c.sqlite3") as conn:
        conn.execute("UPDATE replies SET reply = 'tampered' WHERE key = 'k5'")
    assert "k5" not in JudgeCache(tmp_path / "c.sqlite3").get_many(["k5", "k6"])
