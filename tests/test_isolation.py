"""The test session never writes to the real user cache, not even from a module-scoped
fixture (which pytest sets up before any test's own fixtures)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def module_cache_dir() -> str:
    return os.environ.get("RAGMETER_CACHE_DIR", "")


def test_a_module_scoped_fixture_sees_a_temporary_cache_dir(
    module_cache_dir: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.getbasetemp().resolve()
    assert module_cache_dir, "RAGMETER_CACHE_DIR is not set for module-scoped fixtures"
    assert base in Path(module_cache_dir).resolve().parents
