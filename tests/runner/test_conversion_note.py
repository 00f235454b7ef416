"""A note while a model converts on first use (issue 28 item 4): the offline context-relevance
model (a GGUF) converts itself to ONNX once, for tens of seconds; the run says so on its
progress display, with how large the converted copy will be in the cache."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragmeter.io.activity import notice, noting
from ragmeter.metrics import context_relevance
from ragmeter.runner.pipeline import score_data

pytest.importorskip("gguf")
pytest.importorskip("onnx")


def test_the_conversion_says_it_runs_once_and_how_large_its_cache_will_be(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from ragmeter.models.relevance.gguf import convert, onnx_graph, reader, tokenizer

    # Gemma 3 270M's element count: about 1.1 GB of float32 weights once converted.
    tensors = {
        "token_embd.weight": SimpleNamespace(n_elements=168e6, shape=(640, 262144)),
        "blk.0.ffn_up.weight": SimpleNamespace(n_elements=100e6, shape=(640, 2048)),
    }
    model = SimpleNamespace(_tensors=tensors, tokenizer={}, config=SimpleNamespace())
    monkeypatch.setattr(reader, "read_gguf", lambda path: model)
    monkeypatch.setattr(tokenizer, "build_tokenizer", lambda meta: SimpleNamespace(save=print))
    monkeypatch.setattr(onnx_graph, "write_model", lambda *a, **k: None)
    monkeypatch.setattr(convert, "asdict", lambda config: {})

    @contextlib.contextmanager
    def open_gguf(scratch: Path) -> Iterator[Path]:
        yield scratch / "model.gguf"

    notes: list[str] = []
    with noting(notes.append):
        folder = convert.convert_gguf("gemma-3-270m", "ab" * 32, open_gguf)
    assert len(notes) == 1
    assert notes[0].startswith("Converting gemma-3-270m to ONNX, once (about 1.1 GB in ")
    assert str(folder.parent) in notes[0]
    # Converted: the next use says nothing.
    with noting(notes.append):
        convert.convert_gguf("gemma-3-270m", "ab" * 32, open_gguf)
    assert len(notes) == 1


class ConvertingScorer:
    """A relevance model that converts (and says so) on its first call, as the offline one."""

    name = "converting"

    def score(self, contexts: Sequence[str], questions: Sequence[str]) -> list[float]:
        notice("Converting a model to ONNX, once (about 1.1 GB in the cache)")
        return [0.5] * len(contexts)


def test_the_run_shows_a_models_note_on_stderr_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        context_relevance, "load_question_likelihood", lambda *a, **k: ConvertingScorer()
    )
    rows: list[dict[str, Any]] = [{"question": "q?", "contexts": ["a"]}]
    asyncio.run(score_data(rows, ["context_relevance"], progress=None))
    assert "Converting a model to ONNX, once (about 1.1 GB" in capsys.readouterr().err
    # progress=False (--quiet): no note.
    asyncio.run(score_data(rows, ["context_relevance"], progress=False))
    assert "Converting" not in capsys.readouterr().err
