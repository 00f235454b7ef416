"""A SQLite store of validated judge replies.

The key is a sha256 over everything that can change a reply: the model name, the judge's
identity (``judge_id``, the model name unless set), prompt id and content hash, the rendered
messages, the sampling parameters and the output schema. The endpoint's address is not in it:
the same model served on another host or port reuses its replies (set ``judge_id`` when two
servers answer to one model name with different weights). ``KEY_FORMAT`` versions the recipe:
entries keyed by an older recipe are never found, so they cost calls, never wrong replies.
API keys never enter the key or the file, which is created readable by its owner only (0600, in a
0700 folder when ragmeter makes the folder). Only replies that passed validation are stored,
one commit each, so a run killed part way keeps every reply it had received.

The file uses SQLite's WAL journal with a busy timeout, so several processes may share it. A
file that is not a readable SQLite database, or that stays locked, is bypassed with a warning:
the run goes on without the cache and never reads a reply it cannot trust (each stored reply
carries its own checksum, checked on every read).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.errors import param

__all__ = ["JudgeCache", "cache_key", "default_cache_path"]

log = logging.getLogger(__name__)

#: Keys per SQL statement (SQLite's default limit of bound variables is 999 in old builds).
_SQL_BATCH = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    reply TEXT NOT NULL,
    checksum TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """``$RAGMETER_CACHE_DIR/judge.sqlite3``, else the user cache dir of ragmeter."""
    env = os.environ.get("RAGMETER_CACHE_DIR")
    if env:
        return Path(env) / "judge.sqlite3"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ragmeter")) / "judge.sqlite3"


#: The recipe of :func:`cache_key`; raised when what goes into a key changes (2: the endpoint's
#: address left out, the judge's identity put in).
KEY_FORMAT = 2


def cache_key(
    *,
    model: str,
    judge_id: str,
    prompt: Mapping[str, str],
    messages: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    repeat: int = 0,
) -> str:
    """A stable sha256 over everything that determines a judge reply: never a secret, never
    the address the judge was reached at. ``repeat`` (``Settings.repeats``) keeps each repeat's
    reply apart; repeat 0's key is the key without repeats."""
    payload: dict[str, Any] = {
        "format": KEY_FORMAT,
        "model": model,
        "judge_id": judge_id,
        "prompt": {"id": prompt["id"], "hash": prompt["hash"]},
        "messages": list(messages),
        "params": dict(params),
        "schema": schema,
    }
    if repeat:
        payload["repeat"] = repeat
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (0600) in a folder of its own (0700), unless
    they exist. SQLite gives its -wal and -shm files the database file's mode."""
    folder = path.parent
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    if not path.exists():
        with contextlib.suppress(FileExistsError):  # another run made it meanwhile
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


#: Warnings said in this process: each is said once (on the ``ragmeter`` logger only, not
#: also as a Python warning: the command line printed both).
_SAID: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _SAID:
        _SAID.add(message)
        log.warning(message)


def _checksum(reply: str) -> str:
    return hashlib.sha256(reply.encode("utf-8")).hexdigest()


class JudgeCache:
    """Validated judge replies on disk. ``get`` / ``put`` never raise for cache trouble."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 10.0):
        self.path = Path(path) if path is not None else default_cache_path()
        self.disabled_reason: str | None = None
        self._timeout = timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            _private_file(self.path)
            conn = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(_SCHEMA)
            conn.commit()
            self._conn = conn
        except (sqlite3.Error, OSError) as exc:
            self._disable(f"cannot open it ({exc})")

    @property
    def enabled(self) -> bool:
        return self._conn is not None

    def _disable(self, why: str) -> None:
        self.disabled_reason = why
        message = (
            f"The judge cache at {self.path} is not used: {why}. The run goes on without it. "
            f"Delete the file, give {param('cache_path')} another path, or turn the cache off "
            f"({param('use_cache', 'use_cache=False')})."
        )
        _warn_once(message)
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None

    def _give_up(self, exc: sqlite3.DatabaseError, doing: str) -> None:
        """Stop using the file after ``exc`` (the caller holds the lock)."""
        if not isinstance(exc, sqlite3.OperationalError):
            self._disable(f"it is corrupt ({exc})")
        elif "locked" in str(exc) or "busy" in str(exc):
            # Waiting the busy timeout again on every call would stall the whole run.
            self._disable(f"another process kept it locked for {self._timeout:g} s")
        else:
            self._disable(f"{doing} failed ({exc})")

    def get(self, key: str) -> str | None:
        """The stored reply for ``key``, or None (also when the cache is unusable)."""
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The stored replies of those ``keys`` that have one (none when the cache is unusable)."""
        if self._conn is None or not keys:
            return {}
        rows: list[tuple[Any, ...]] = []
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), _SQL_BATCH):
                if self._conn is None:  # a write in a worker thread gave up on the file meanwhile
                    return {}
                part = unique[start : start + _SQL_BATCH]
                marks = ",".join("?" * len(part))
                try:
                    rows += self._conn.execute(
                        f"SELECT key, reply, checksum FROM replies WHERE key IN ({marks})", part
                    ).fetchall()
                except sqlite3.DatabaseError as exc:
                    self._give_up(exc, "reading")
                    return {}
        found: dict[str, str] = {}
        for key, reply, checksum in rows:
            if not isinstance(reply, str) or _checksum(reply) != checksum:
                _warn_once(
                    f"Judge cache entries in {self.path} fail their checksum (the first: "
                    f"{key}); they are ignored and computed again."
                )
                continue
            found[key] = reply
        return found

    def put(self, key: str, reply: str, *, model: str, prompt: str) -> None:
        """Store a validated reply and commit at once."""
        self.put_many([(key, reply)], model=model, prompt=prompt)

    def put_many(self, items: Sequence[tuple[str, str]], *, model: str, prompt: str) -> None:
        """Store ``(key, reply)`` pairs of one model and prompt in one commit."""
        if self._conn is None or not items:
            return
        now = time.time()
        rows = [(key, model, prompt, reply, _checksum(reply), now) for key, reply in items]
        with self._lock:
            if self._conn is None:
                return
            try:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)", rows
                )
                self._conn.commit()
            except sqlite3.DatabaseError as exc:
                self._give_up(exc, "writing")

    async def aput(self, key: str, reply: str, *, model: str, prompt: str) -> None:
        """:meth:`put` in a worker thread; returns once the reply is committed.

        The event loop keeps sending and receiving judge requests while SQLite writes, and the
        caller still holds no result whose reply is not on disk (a SIGKILL after this returns
        loses nothing).
        """
        if self._conn is None:
            return
        await asyncio.to_thread(self.put, key, reply, model=model, prompt=prompt)

    def __len__(self) -> int:
        if self._conn is None:
            return 0
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "enabled": self.enabled, "bypassed": self.disabled_reason}
