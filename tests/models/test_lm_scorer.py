"""Question likelihood (Unitxt's context relevance) on tiny random models and the offline LM."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ragmeter.errors import ConfigError, ModelUnavailableError  # noqa: E402
from ragmeter.models.relevance import packed_attention  # noqa: E402
from ragmeter.models.relevance import torch_scorer as lm_scorer  # noqa: E402
from ragmeter.models.relevance.loader import load_question_likelihood  # noqa: E402
from ragmeter.models.relevance.packed_attention import pack_rows  # noqa: E402
from ragmeter.models.relevance.prompt import RELEVANCE_PROMPT  # noqa: E402
from ragmeter.models.relevance.source import resolve_relevance_model  # noqa: E402
from ragmeter.models.relevance.torch_scorer import QuestionLikelihood  # noqa: E402

WORDS = [
    "generate",
    "a",
    "question",
    "based",
    "on",
    "the",
    "given",
    "content",
    ":",
    "the",
    "eiffel",
    "tower",
    "is",
    "in",
    "paris",
    "when",
    "was",
    "it",
    "built",
    "?",
    "what",
    "is",
    "photosynthesis",
    "plants",
    "make",
    "sugar",
    "from",
    "light",
    "where",
    "tower",
]


def tiny_tokenizer(folder: Path, *, chat: bool = False) -> transformers.PreTrainedTokenizerFast:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    inner = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    inner.normalizer = normalizers.Lowercase()
    inner.pre_tokenizer = pre_tokenizers.Whitespace()
    inner.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)]
    )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=inner, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    if chat:
        tokenizer.chat_template = (
            "{% for m in messages %}user : {{ m['content'] }} </s>{% endfor %}"
            "{% if add_generation_prompt %}question :{% endif %}"
        )
    tokenizer.save_pretrained(folder)
    return tokenizer


def tiny_t5(folder: Path) -> Path:
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer(folder)
    config = transformers.T5Config(
        vocab_size=len(tokenizer),
        d_model=16,
        d_ff=32,
        d_kv=8,
        num_layers=1,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    transformers.T5ForConditionalGeneration(config).save_pretrained(folder)
    return folder


def tiny_llama(folder: Path, *, chat: bool) -> Path:
    torch.manual_seed(0)
    tokenizer = tiny_tokenizer(folder, chat=chat)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=128,
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=1,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    return folder


CONTEXTS = [
    "The Eiffel tower is in Paris",
    "plants make sugar from light",
    "",
    "the tower",
]
QUESTIONS = [
    "When was it built?",
    "What is photosynthesis?",
    "where is the tower?",
    "when was the eiffel tower built ?",
]


def test_seq2seq_score_is_unitxt_geometric_mean_including_end_token(tmp_path: Path) -> None:
    folder = tiny_t5(tmp_path / "t5")
    scorer = load_question_likelihood(str(folder))
    scores = scorer.score(CONTEXTS, QUESTIONS)
    model = transformers.T5ForConditionalGeneration.from_pretrained(folder).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    for context, question, score in zip(CONTEXTS, QUESTIONS, scores, strict=True):
        source = tokenizer(RELEVANCE_PROMPT.format(context=context), return_tensors="pt")
        target = tokenizer(question, return_tensors="pt")["input_ids"]
        assert target[0, -1].item() == tokenizer.eos_token_id  # the end token is scored
        with torch.inference_mode():
            loss = model(**source, labels=target).loss  # mean CE over the target tokens
        assert score == pytest.approx(math.exp(-loss.item()), abs=1e-5)
        assert 0.0 < score <= 1.0
    assert scorer.describe()["backend"] == "seq2seq"
    assert scorer.describe()["dtype"] == "float32"  # Unitxt's precision


def test_batched_scores_equal_one_by_one_scores_in_input_order(tmp_path: Path) -> None:
    folder = tiny_t5(tmp_path / "t5")
    scorer = QuestionLikelihood(resolve_relevance_model(str(folder)), batch_size=3)
    together = scorer.score(CONTEXTS, QUESTIONS)
    alone = [scorer.score([c], [q])[0] for c, q in zip(CONTEXTS, QUESTIONS, strict=True)]
    assert together == pytest.approx(alone, abs=1e-5)
    assert len(set(round(s, 6) for s in together)) == len(together)


def reference_causal_scores(folder: Path, *, chat: bool) -> list[float]:
    """Each pair alone through the plain transformers model, in float32."""
    model = transformers.LlamaForCausalLM.from_pretrained(folder).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    out = []
    for context, question in zip(CONTEXTS, QUESTIONS, strict=True):
        prompt = RELEVANCE_PROMPT.format(context=context)
        if chat:
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            prompt_ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            prompt_ids = tokenizer(prompt + "\n")["input_ids"]
        target = [*tokenizer(question, add_special_tokens=False)["input_ids"], 1]
        ids = torch.tensor([prompt_ids + target])
        with torch.inference_mode():
            logits = model(input_ids=ids).logits[0]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        start = len(prompt_ids)
        picked = [logprobs[start + i - 1, token].item() for i, token in enumerate(target)]
        out.append(math.exp(sum(picked) / len(picked)))
    return out


@pytest.mark.parametrize("chat", [False, True])
def test_causal_score_covers_only_question_tokens_and_end_token(tmp_path: Path, chat: bool) -> None:
    folder = tiny_llama(tmp_path / "llama", chat=chat)
    scorer = QuestionLikelihood(resolve_relevance_model(str(folder)), dtype="float32")
    scores = scorer.score(CONTEXTS, QUESTIONS)
    assert scorer.describe()["prompt_format"] == ("chat" if chat else "plain")
    # All four pairs shared one packed row, after the shared prompt prefix.
    assert scorer.numerics() == {"dtype": "float32", "method": "packed", "pack_tokens": 512}
    assert len(scorer._shared_prefix().ids) > 5
    assert scores == pytest.approx(reference_causal_scores(folder, chat=chat), abs=1e-5)


def test_causal_models_that_cannot_be_packed_run_each_pair_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(packed_attention, "PACKABLE", frozenset())
    folder = tiny_llama(tmp_path / "llama", chat=True)
    scorer = QuestionLikelihood(resolve_relevance_model(str(folder)), dtype="float32")
    scores = scorer.score(CONTEXTS, QUESTIONS)
    assert scorer.numerics() == {"dtype": "float32", "method": "single"}
    assert scores == pytest.approx(reference_causal_scores(folder, chat=True), abs=1e-5)


@pytest.mark.parametrize(("chat", "pack_tokens"), [(False, 512), (True, 512), (True, 16)])
def test_bfloat16_score_of_a_pair_does_not_depend_on_the_pairs_scored_with_it(
    tmp_path: Path, chat: bool, pack_tokens: int
) -> None:
    # pack_tokens=16: most pairs are longer than a row and get a longer row of their own.
    folder = tiny_llama(tmp_path / "llama", chat=chat)
    source = resolve_relevance_model(str(folder))
    scorer = QuestionLikelihood(source, dtype="bfloat16", pack_tokens=pack_tokens)
    together = scorer.score(CONTEXTS, QUESTIONS)
    assert scorer.numerics()["dtype"] == "bfloat16"
    alone = [scorer.score([c], [q])[0] for c, q in zip(CONTEXTS, QUESTIONS, strict=True)]
    backwards = scorer.score(CONTEXTS[::-1], QUESTIONS[::-1])[::-1]
    crowded = scorer.score(CONTEXTS * 40 + CONTEXTS[:1], QUESTIONS * 40 + QUESTIONS[:1])
    assert together == alone == backwards  # exactly, not approximately
    assert crowded == together * 40 + together[:1]
    assert together == scorer.score(CONTEXTS, QUESTIONS)  # and again
    assert together == pytest.approx(reference_causal_scores(folder, chat=chat), rel=0.05)


def test_seq2seq_in_bfloat16_runs_each_pair_alone(tmp_path: Path) -> None:
    folder = tiny_t5(tmp_path / "t5")
    exact = QuestionLikelihood(resolve_relevance_model(str(folder)), dtype="float32")
    fast = QuestionLikelihood(resolve_relevance_model(str(folder)), dtype="bfloat16")
    together = fast.score(CONTEXTS, QUESTIONS)
    assert fast.numerics() == {"dtype": "bfloat16", "method": "single"}
    assert exact.numerics() == {"dtype": "float32", "method": "padded"}
    assert together == [fast.score([c], [q])[0] for c, q in zip(CONTEXTS, QUESTIONS, strict=True)]
    assert together == pytest.approx(exact.score(CONTEXTS, QUESTIONS), rel=0.05)


def test_auto_dtype_is_bfloat16_only_for_causal_models_on_fast_bfloat16_cpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGMETER_RELEVANCE_DTYPE", raising=False)
    llama = resolve_relevance_model(str(tiny_llama(tmp_path / "llama", chat=False)))
    t5 = resolve_relevance_model(str(tiny_t5(tmp_path / "t5")))
    for fast in (True, False):
        monkeypatch.setattr(lm_scorer, "fast_bfloat16", lambda fast=fast: fast)
        assert lm_scorer._load(llama, "auto").dtype == ("bfloat16" if fast else "float32")
        assert lm_scorer._load(t5, "auto").dtype == "float32"  # Unitxt's model, Unitxt's dtype
    # The default scorer asks for "auto"; an explicit dtype or the environment forces one.
    assert QuestionLikelihood(llama).requested_dtype == "auto"
    monkeypatch.setenv("RAGMETER_RELEVANCE_DTYPE", "float32")
    assert QuestionLikelihood(llama).requested_dtype == "float32"
    assert QuestionLikelihood(llama, dtype="bfloat16").requested_dtype == "bfloat16"
    monkeypatch.setenv("RAGMETER_RELEVANCE_DTYPE", "half")
    with pytest.raises(ConfigError, match="RAGMETER_RELEVANCE_DTYPE must be one of"):
        QuestionLikelihood(llama)
    with pytest.raises(
        ConfigError, match="dtype must be one of auto, float32, bfloat16, int8. Got"
    ):
        QuestionLikelihood(llama, dtype="float16")  # type: ignore[arg-type]


def test_fast_bfloat16_reads_the_cpu_from_torch() -> None:
    expected = torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()
    assert lm_scorer.fast_bfloat16() is bool(expected)


def test_pack_fills_rows_longest_first_and_gives_long_pairs_their_own_row() -> None:
    lengths = [300, 100, 200, 600, 250, 50, 512]
    rows = pack_rows(lengths, 512)
    assert sorted(i for _, members in rows for i in members) == list(range(len(lengths)))
    for size, members in rows:
        assert sum(lengths[i] for i in members) <= size
        assert size % 512 == 0
    assert (1024, [3]) in rows  # 600 tokens: a row of its own, two rows long
    assert (512, [6]) in rows
    assert rows == pack_rows(lengths, 512)  # deterministic
    assert pack_rows([], 512) == []


def test_long_contexts_are_cut_to_max_context_tokens(tmp_path: Path) -> None:
    folder = tiny_t5(tmp_path / "t5")
    scorer = QuestionLikelihood(resolve_relevance_model(str(folder)), max_context_tokens=4)
    long = "the eiffel tower is in paris " * 50
    cut = "the eiffel tower is"
    assert scorer.score([long], ["when ?"]) == pytest.approx(
        scorer.score([cut], ["when ?"]), abs=1e-6
    )


def test_score_rejects_unequal_lengths(tmp_path: Path) -> None:
    scorer = load_question_likelihood(str(tiny_t5(tmp_path / "t5")))
    with pytest.raises(ValueError, match="one question per context"):
        scorer.score(["a", "b"], ["q"])
    assert scorer.score([], []) == []


def test_missing_model_says_how_to_supply_it(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="Pass a local copy's path as relevance_model"):
        resolve_relevance_model("google/flan-t5-small-not-cached")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelUnavailableError, match="without config.json"):
        resolve_relevance_model(str(empty))


@pytest.mark.slow
def test_offline_smollm2_prefers_the_relevant_context_and_caches_its_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("gguf")
    from ragmeter.models import _runtime

    # A fresh process as far as models go (another test may have loaded SmolLM2 already,
    # with another cache dir): the conversion must happen, and land, in this test's cache dir.
    monkeypatch.setattr(_runtime, "_MODELS", {})
    source = resolve_relevance_model("smollm2", runtime="torch")
    scorer = QuestionLikelihood(source)
    question = "When was the Eiffel Tower completed?"
    contexts = [
        "The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889.",
        "Photosynthesis converts light energy into chemical energy in green plants.",
    ]
    relevant, irrelevant = scorer.score(contexts, [question, question])
    assert relevant > irrelevant
    assert scorer.describe()["prompt_format"] == "chat"
    assert scorer.numerics()["method"] == "packed"  # SmolLM2 is a Llama: pairs share rows
    assert scorer.numerics()["dtype"] == ("bfloat16" if lm_scorer.fast_bfloat16() else "float32")
    # The chat header and the instruction are computed once, not once per pair.
    assert scorer.loaded.tokenizer.decode(scorer._shared_prefix().ids).endswith("content:")
    # The converted model is now in the user cache dir: the next process loads it from there.
    again = resolve_relevance_model("smollm2", runtime="torch")
    assert again.location is not None and Path(again.location, "config.json").is_file()
    from ragmeter.models.relevance.torch_scorer import _load

    loaded = _load(again)  # from the converted folder, not the GGUF
    assert loaded.model.name_or_path == again.location
    assert loaded.kind == "causal"


def test_texts_with_lone_surrogates_are_scored_not_rejected(tmp_path: Path) -> None:
    scorer = load_question_likelihood(str(tiny_t5(tmp_path / "t5")))
    broken, clean = scorer.score(["the tower \ud800", "the tower ?"], ["when \ud800", "when ?"])
    assert broken == pytest.approx(clean, abs=1e-6)  # the surrogate reads as "?"
