"""A model cache dir that cannot be written stops the run (issue 29, item 14).

It is the environment, not the data: every ``context_relevance`` row would fail alike, and a
row failure for bad data is kept by ``--resume``. The run stops at once with the folder and
how to set another (``RAGMETER_CACHE_DIR``); the rows it caught are left for ``--resume``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import ragmeter
import ragmeter.metrics.context_relevance as context_relevance
from ragmeter.errors import ModelCacheError, UnavailableError
from ragmeter.models.relevance.gguf.convert import convert_gguf


@pytest.fixture
def unwritable_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache dir under a plain file: no folder can be made there (even as root)."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    cache = blocker / "cache"
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(cache))
    return cache


def _never_opened(scratch: Path) -> Any:
    raise AssertionError("the GGUF is opened only once there is a folder to convert it in")


def test_converting_into_an_unwritable_cache_names_the_folder_and_the_variable(
    unwritable_cache: Path,
) -> None:
    with pytest.raises(ModelCacheError) as info:
        convert_gguf("tiny", "ab" * 32, _never_opened)
    assert str(unwritable_cache) in str(info.value)
    assert "RAGMETER_CACHE_DIR" in str(info.value)


class _ConvertingScorer:
    """A relevance scorer that converts its model on first use, as the offline one does."""

    name = "tiny-relevance"

    def score(self, contexts: Sequence[str], questions: Sequence[str]) -> list[float]:
        convert_gguf(self.name, "cd" * 32, _never_opened)
        return [0.5 for _ in contexts]


def test_an_unwritable_cache_stops_the_run_and_leaves_the_rows_for_resume(
    unwritable_cache: Path, samples: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        context_relevance, "load_question_likelihood", lambda *a, **k: _ConvertingScorer()
    )
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in samples(6)))
    out = tmp_path / "out.jsonl"
    with pytest.raises(UnavailableError) as info:
        ragmeter.evaluate(data, metrics=["context_relevance"], out=out, progress=False)
    assert "RAGMETER_CACHE_DIR" in str(info.value)
    assert str(unwritable_cache.parent) in str(info.value)
    # No row was recorded as a data failure that --resume would keep.
    written = out.read_text().splitlines() if out.exists() else []
    assert written == []
