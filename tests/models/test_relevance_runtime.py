"""One interface over the question-likelihood runtimes: the torch and onnxruntime scorers of
the same GGUF build the same token ids, describe themselves with the same keys and give the
same scores."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("jinja2")

from tests.models.test_gguf_onnx import tiny_gguf

from ragmeter.errors import ConfigError
from ragmeter.models.relevance.loader import load_question_likelihood
from ragmeter.models.relevance.runtime import QuestionScorer, requested_dtype

CONTEXTS = ["the tower on the quest", "", "naïve café and the tower"]
QUESTIONS = ["the quest", "the tower", "café?"]


@pytest.mark.parametrize("chat", [True, False])
def test_torch_and_onnxruntime_scorers_agree_through_one_interface(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chat: bool
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RAGMETER_RELEVANCE_DTYPE", raising=False)
    tiny_gguf(tmp_path / "m.gguf", "llama", chat=chat)
    spec = str(tmp_path / "m.gguf")
    onnx = load_question_likelihood(spec, runtime="onnx", dtype="float32")
    torch = load_question_likelihood(spec, runtime="torch", dtype="float32")
    assert isinstance(onnx, QuestionScorer) and isinstance(torch, QuestionScorer)
    assert type(onnx) is not type(torch)
    assert onnx.prompt_ids(CONTEXTS) == torch.prompt_ids(CONTEXTS)
    assert onnx.target_ids(QUESTIONS) == torch.target_ids(QUESTIONS)
    about_onnx, about_torch = onnx.describe(), torch.describe()
    assert (
        about_onnx["prompt_format"] == about_torch["prompt_format"] == ("chat" if chat else "plain")
    )
    assert {"model", "backend", "prompt", "max_context_tokens", "dtype", "method"} <= (
        about_onnx.keys() & about_torch.keys()
    )
    assert onnx.score(CONTEXTS, QUESTIONS) == pytest.approx(
        torch.score(CONTEXTS, QUESTIONS), abs=1e-4
    )
    assert onnx.score([], []) == torch.score([], []) == []
    with pytest.raises(ValueError, match="one question per context"):
        onnx.score(CONTEXTS, QUESTIONS[:1])


def test_the_requested_dtype_is_checked_once_for_every_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RAGMETER_RELEVANCE_DTYPE", "int8")
    assert requested_dtype("auto") == "int8"
    assert requested_dtype("float32") == "float32"
    monkeypatch.setenv("RAGMETER_RELEVANCE_DTYPE", "half")
    with pytest.raises(ConfigError, match="RAGMETER_RELEVANCE_DTYPE must be one of"):
        requested_dtype("auto")
    with pytest.raises(ConfigError, match="dtype must be one of"):
        requested_dtype("float16")
