"""The int8 variant of the GGUF -> ONNX graph: every weight matrix stored in int8.

The embedding is one int8 table (quantised per word) that both the lookup and the tied
output layer read, so the converted weights take about a quarter of float32's bytes; the
scores stay close to float32's on tiny random models (the packaged model's agreement is
measured by ``bench/context_relevance_onnx.py --agreement``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("gguf")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")

from tests.models.test_gguf_onnx import (  # noqa: E402
    HIDDEN,
    empty_past,
    session,
    tiny_gguf,
    tokens_of_vocab,
)

from ragmeter.models.relevance.gguf.convert import conversion_folder  # noqa: E402
from ragmeter.models.relevance.gguf.onnx_graph import INT8_VERSION, write_model  # noqa: E402
from ragmeter.models.relevance.gguf.reader import read_gguf  # noqa: E402


def initializers(folder: Path) -> dict[str, np.ndarray]:
    model = onnx.load(str(folder / "model.onnx"), load_external_data=True)
    return {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}


def both_graphs(tmp_path: Path, model: Any) -> tuple[Path, Path]:
    exact, quick = tmp_path / "f", tmp_path / "q"
    exact.mkdir()
    quick.mkdir()
    write_model(model, exact / "model.onnx")
    write_model(model, quick / "model.onnx", int8=True)
    return exact, quick


def run(folder: Path) -> np.ndarray:
    ids = np.array([1, 40, 80, 261, 100, 7, 262, 33, 90, 2])
    feed = {"ids": ids[None], "past": empty_past(), "rows": np.arange(9), "targets": ids[1:]}
    return session(folder).run(None, feed)[0]


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_int8_stores_every_matrix_in_int8_and_one_table_for_embedding_and_output(
    tmp_path: Path, arch: str
) -> None:
    tiny_gguf(tmp_path / "m.gguf", arch)
    exact, quick = both_graphs(tmp_path, read_gguf(tmp_path / "m.gguf"))
    weights = initializers(quick)
    matrices = {name: a for name, a in weights.items() if a.ndim == 2 and min(a.shape) > 1}
    assert matrices and {a.dtype for a in matrices.values()} == {np.dtype(np.int8)}
    vocab = len(tokens_of_vocab())
    assert [a.shape for a in matrices.values() if vocab in a.shape] == [(HIDDEN, vocab)]
    assert not any(a.dtype == np.float32 and a.size >= vocab * HIDDEN for a in weights.values())
    # Only the vectors (norms, scales) stay float32.
    size = (quick / "model.onnx.data").stat().st_size
    assert size < 0.35 * (exact / "model.onnx.data").stat().st_size
    got, expected = run(quick), run(exact)
    assert not np.array_equal(got, expected)  # really quantised
    np.testing.assert_allclose(got, expected, rtol=0.1)


class Untied:
    """A model read from a GGUF, with its own output layer instead of the embedding's."""

    def __init__(self, model: Any, output: np.ndarray) -> None:
        self.model = model
        self.config = dataclasses.replace(model.config, tied_output=False)
        self.output = output

    def weight(self, name: str) -> np.ndarray:
        return self.output if name == "output.weight" else self.model.weight(name)


def test_an_untied_output_layer_is_its_own_int8_matrix(tmp_path: Path) -> None:
    tiny_gguf(tmp_path / "m.gguf")
    rng = np.random.default_rng(1)
    output = (rng.standard_normal((len(tokens_of_vocab()), HIDDEN)) * 0.3).astype(np.float32)
    exact, quick = both_graphs(tmp_path, Untied(read_gguf(tmp_path / "m.gguf"), output))
    vocab = len(tokens_of_vocab())
    shapes = [a.shape for a in initializers(quick).values() if a.ndim == 2 and vocab in a.shape]
    assert shapes == [(HIDDEN, vocab), (HIDDEN, vocab)]  # the embedding and the output layer
    np.testing.assert_allclose(run(quick), run(exact), rtol=0.1)


def test_the_int8_variant_converts_to_its_own_versioned_folder() -> None:
    exact = conversion_folder("m", "ab" * 32)
    quick = conversion_folder("m", "ab" * 32, int8=True)
    assert quick.parent == exact.parent
    assert quick.name == f"{exact.name}-int8v{INT8_VERSION}" and INT8_VERSION >= 2


def test_auto_is_int8_one_pair_per_call_and_float32_is_asked_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.models.relevance.loader import load_question_likelihood

    monkeypatch.delenv("RAGMETER_RELEVANCE_DTYPE", raising=False)
    tiny_gguf(tmp_path / "m.gguf")
    spec = str(tmp_path / "m.gguf")
    auto = load_question_likelihood(spec, runtime="onnx")
    exact = load_question_likelihood(spec, runtime="onnx", dtype="float32")
    assert auto.name == exact.name + "-int8"
    assert auto.numerics() == {"dtype": "int8", "method": "single", "runtime": "onnxruntime"}
    assert exact.numerics()["dtype"] == "float32"
    contexts = ["the tower", "on the quest", "queue", "the"]
    questions = ["the quest?", "where?", "the", "on the tower?"]
    together = auto.score(contexts, questions)
    # int8 activations are quantised per call: one pair per call keeps each score its own.
    alone = [auto.score([c], [q])[0] for c, q in zip(contexts, questions, strict=True)]
    assert together == alone
    assert together != exact.score(contexts, questions)
    monkeypatch.setenv("RAGMETER_RELEVANCE_DTYPE", "float32")
    assert load_question_likelihood(spec, runtime="onnx").name == exact.name


@pytest.mark.parametrize(("dtype", "expected"), [("auto", "int8"), ("float32", "float32")])
def test_the_run_record_and_each_row_say_which_dtype_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dtype: str, expected: str
) -> None:
    import ragmeter

    monkeypatch.delenv("RAGMETER_RELEVANCE_DTYPE", raising=False)
    tiny_gguf(tmp_path / "m.gguf")
    settings = ragmeter.Settings(relevance_model=str(tmp_path / "m.gguf"), relevance_dtype=dtype)
    data = [{"question": "the quest?", "contexts": ["the tower", "queue"]}]
    result = ragmeter.evaluate(data, ["context_relevance"], settings=settings, progress=False)
    about = result.info["models"]["context_relevance"]
    assert about["dtype"] == expected and about["runtime"] == "onnxruntime"
    assert about["model"].endswith("-int8") == (expected == "int8")
    details = result.rows[0].details["context_relevance"]
    assert (details["dtype"], details["model"]) == (expected, about["model"])


def test_an_int8_conversion_on_disk_counts_as_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.models.relevance import source
    from ragmeter.models.relevance.gguf.convert import DONE_MARK
    from ragmeter.models.relevance.gguf.packaged import PACKAGED

    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path))
    packaged = PACKAGED["gemma3-270m"]
    assert not source._onnx_converted(packaged)
    folder = conversion_folder(packaged.name, packaged.sha256, int8=True)
    folder.mkdir(parents=True)
    (folder / DONE_MARK).write_text("{}")
    # The default (int8) runs from it without gguf and onnx, the converters.
    assert source._onnx_converted(packaged)
