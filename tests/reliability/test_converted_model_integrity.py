"""The converted relevance model is checked before it is used (issue 36, items 6 and 18).

4 MiB of the converted model overwritten gave every context_relevance 0.0, exit 0, no warning
(only the GGUF was hashed, not what was converted); truncated weights made every row fail
with a raw onnxruntime message. Every converted file's sha256 and size are now recorded at
conversion and checked before use: a damaged folder is converted again, with a warning, and
the scores are the intact model's. Real conversions, real files, real ``ragmeter`` runs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import ModelUnavailableError
from ragmeter.models._runtime import cache_dir
from ragmeter.models.relevance.gguf import convert
from ragmeter.models.relevance.gguf.packaged import PACKAGED, PackagedGGUF

SRC = str(Path(ragmeter.__file__).parents[1])
ROWS = [
    {
        "question": "Where is the Eiffel tower?",
        "contexts": ["The Eiffel tower is in Paris.", "Bananas are yellow."],
    },
    {
        "question": "Who wrote Hamlet?",
        "contexts": ["Hamlet is a play by William Shakespeare.", "Rome is in Italy."],
    },
]


def _fake_conversion(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(b"graph" * 100)
    (folder / "model.onnx.data").write_bytes(bytes(range(256)) * 64)
    (folder / convert.DONE_MARK).write_text(
        json.dumps({"name": "m", "files": convert.file_hashes(folder)})
    )
    return folder


def test_a_conversion_whose_files_changed_is_damaged(tmp_path: Path) -> None:
    folder = _fake_conversion(tmp_path / "m")
    assert convert.damage(folder) is None
    data = folder / "model.onnx.data"
    with data.open("r+b") as fh:  # overwritten in place: same size, other bytes
        fh.seek(1000)
        fh.write(b"\0" * 64)
    assert "model.onnx.data is not the file converted" in (convert.damage(folder) or "")
    os.truncate(data, 100)
    assert "model.onnx.data has 100 bytes, not the 16384 converted" in (
        convert.damage(folder) or ""
    )
    data.unlink()
    assert convert.damage(folder) == "model.onnx.data is missing"
    (folder / convert.DONE_MARK).write_text(json.dumps({"name": "m"}))
    assert "kept no hashes" in (convert.damage(folder) or "")


def _gemma() -> PackagedGGUF:
    """The packaged model context_relevance runs by default."""
    model = next((m for m in PACKAGED.values() if "gemma" in m.name and m.installed()), None)
    if model is None:
        pytest.skip("no packaged GGUF relevance model installed")
    if any(importlib.util.find_spec(m) is None for m in ("gguf", "onnx", "onnxruntime")):
        pytest.skip("converting needs gguf, onnx and onnxruntime")
    return model


def _run(data: Path, out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *(sys.executable, "-m", "ragmeter", "evaluate", str(data), "-m", "context_relevance"),
            *("--out", str(out), "--no-cache", "--no-progress"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, "RAGMETER_CACHE_DIR": str(cache)},
        timeout=900,
    )


def _scores(out: Path) -> list[float]:
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return [row["scores"]["context_relevance"] for row in rows]


@pytest.mark.slow
def test_an_overwritten_conversion_is_converted_again_and_scores_as_before(
    tmp_path: Path,
) -> None:
    model = _gemma()
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    intact = _run(data, tmp_path / "intact.jsonl", cache_dir())  # the session's conversion
    assert intact.returncode == 0, intact.stderr
    expected = _scores(tmp_path / "intact.jsonl")
    assert all(isinstance(s, float) for s in expected) and len(set(expected)) == 2

    shared = convert.conversion_folder(model.name, model.sha256, int8=True)
    private = tmp_path / "cache"
    folder = private / "onnx" / shared.name
    shutil.copytree(shared, folder)
    weights = folder / "model.onnx.data"
    with weights.open("r+b") as fh:  # the attack: 4 MiB overwritten in the middle
        fh.seek(weights.stat().st_size // 2)
        fh.write(b"\0" * (4 << 20))

    again = _run(data, tmp_path / "again.jsonl", private)
    assert again.returncode == 0, again.stderr
    assert f"The converted model in {folder} is damaged" in again.stderr
    assert "It is converted again" in again.stderr
    assert _scores(tmp_path / "again.jsonl") == expected
    assert convert.damage(folder) is None  # the new conversion, intact


@pytest.mark.slow
def test_weights_that_cannot_be_loaded_name_the_folder_to_delete(tmp_path: Path) -> None:
    """Past the hash check (a conversion from elsewhere), a model onnxruntime cannot load
    fails with the folder to delete, not a raw onnxruntime message."""
    from ragmeter.models.relevance.onnx_scorer import _load

    model = _gemma()
    shared = convert.convert_gguf(model.name, model.sha256, model.file, int8=True)
    folder = tmp_path / shared.name
    shutil.copytree(shared, folder)
    os.truncate(folder / "model.onnx", 1000)
    with pytest.raises(ModelUnavailableError) as info:
        _load(folder, 1)
    message = str(info.value)
    assert f"delete {folder}" in message and "RAGMETER_CACHE_DIR" in message
