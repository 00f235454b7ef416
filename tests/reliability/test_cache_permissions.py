"""The judge cache holds prompts and replies (users' data): only its owner may read it.
Issue 15, item 13: the cache folder is created 0700 and the file 0600 (its WAL files too).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from ragmeter.cache import JudgeCache

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> object:
    old = os.umask(0o022)  # the usual default, which gives 0644 files and 0755 folders
    yield
    os.umask(old)


def test_a_new_cache_folder_is_0700_and_its_files_0600(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "new" / "judge.sqlite3"
    cache = JudgeCache(path)
    cache.put("k", "{}", model="m", prompt="p")
    assert cache.get("k") == "{}"
    assert mode(path.parent) == 0o700
    files = sorted(path.parent.iterdir())
    assert path in files
    for file in files:  # the database and its -wal / -shm files
        assert mode(file) == 0o600, (file, oct(mode(file)))
    cache.close()


def test_the_default_cache_location_is_private(
    tmp_path: Path, open_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "cache" / "ragmeter"))
    cache = JudgeCache()
    cache.put("k", "{}", model="m", prompt="p")
    assert mode(tmp_path / "cache" / "ragmeter") == 0o700
    assert mode(tmp_path / "cache" / "ragmeter" / "judge.sqlite3") == 0o600
    cache.close()


def test_an_existing_folder_keeps_its_mode(tmp_path: Path, open_umask: None) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    cache = JudgeCache(shared / "judge.sqlite3")
    cache.put("k", "{}", model="m", prompt="p")
    assert mode(shared) == 0o755  # not ours to change
    assert mode(shared / "judge.sqlite3") == 0o600
    cache.close()
