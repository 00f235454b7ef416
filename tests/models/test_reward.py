"""Answer reward on a tiny random DeBERTa-v2 built here; no real weights are needed."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ragmeter.errors import ModelUnavailableError, param_names  # noqa: E402
from ragmeter.metrics import answer_reward as family  # noqa: E402
from ragmeter.metrics.base import RunContext, Settings  # noqa: E402
from ragmeter.models.reward import load_answer_reward, resolve_reward_model  # noqa: E402
from ragmeter.types import Sample  # noqa: E402

WORDS = [
    "what",
    "is",
    "the",
    "capital",
    "of",
    "france",
    "paris",
    "it",
    "is",
    "a",
    "city",
    "in",
    "europe",
    "i",
    "do",
    "not",
    "know",
]


def tiny_deberta(folder: Path, *, num_labels: int = 1) -> Path:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[UNK]": 3}
    for word in WORDS:
        vocab.setdefault(word, len(vocab))
    inner = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    inner.normalizer = normalizers.Lowercase()
    inner.pre_tokenizer = pre_tokenizers.Whitespace()
    inner.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=inner,
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        unk_token="[UNK]",
        model_max_length=32,
    )
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.DebertaV2Config(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        type_vocab_size=2,
        num_labels=num_labels,
        pad_token_id=0,
        initializer_range=0.5,  # logits far enough from 0 to tell pairs apart
    )
    transformers.DebertaV2ForSequenceClassification(config).save_pretrained(folder)
    return folder


QUESTIONS = ["What is the capital of France?", "What is Paris?", "What is the capital?"]
ANSWERS = ["Paris.", "It is a city in Europe.", "I do not know " * 20]


def test_reward_is_sigmoid_of_the_single_logit_of_question_answer_pair(tmp_path: Path) -> None:
    folder = tiny_deberta(tmp_path / "rm")
    scores = load_answer_reward(str(folder), batch_size=2).score(QUESTIONS, ANSWERS)
    model = transformers.DebertaV2ForSequenceClassification.from_pretrained(folder).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    for question, answer, score in zip(QUESTIONS, ANSWERS, scores, strict=True):
        encoded = tokenizer(question, answer, truncation=True, max_length=32, return_tensors="pt")
        with torch.inference_mode():
            logit = model(**encoded).logits[0, 0].item()
        assert score == pytest.approx(1 / (1 + math.exp(-logit)), abs=1e-5)
        assert 0.0 < score < 1.0
    assert len({round(s, 6) for s in scores}) == 3


def test_missing_reward_model_names_the_option_to_supply_it(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError, match="pass its path as reward_model,"):
        resolve_reward_model(None)  # the default is not in this machine's HF cache
    with pytest.raises(ModelUnavailableError, match="pass its path as reward_model,"):
        resolve_reward_model(str(tmp_path / "nowhere"))
    cli = param_names({"reward_model": "--reward-model"})  # the CLI's name for it
    with cli, pytest.raises(ModelUnavailableError, match="pass its path as --reward-model,"):
        resolve_reward_model(str(tmp_path / "nowhere"))


def test_a_classifier_with_two_labels_is_not_a_reward_model(tmp_path: Path) -> None:
    scorer = load_answer_reward(str(tiny_deberta(tmp_path / "rm2", num_labels=2)))
    with pytest.raises(ModelUnavailableError, match="single logit"):
        scorer.score(["q"], ["a"])


def test_family_scores_a_batch_and_leaves_empty_answers_undefined(tmp_path: Path) -> None:
    folder = tiny_deberta(tmp_path / "rm")
    fam = family.build(RunContext(settings=Settings(reward_model=str(folder))))
    samples = [
        Sample(question=QUESTIONS[0], answer=ANSWERS[0]),
        Sample(question=QUESTIONS[1], answer="  "),
        Sample(question=QUESTIONS[1], answer=ANSWERS[1]),
    ]
    rows = asyncio.run(fam.score_batch(samples, ["answer_reward"]))
    expected = load_answer_reward(str(folder)).score(
        [QUESTIONS[0], QUESTIONS[1]], [ANSWERS[0], ANSWERS[1]]
    )
    assert rows[0]["answer_reward"].value == pytest.approx(expected[0], abs=1e-6)
    assert rows[2]["answer_reward"].value == pytest.approx(expected[1], abs=1e-6)
    value = rows[0]["answer_reward"].value
    assert rows[0]["answer_reward"].reason.startswith(
        f"The reward model rates the answer {value:.3f}"
    )
    assert rows[1]["answer_reward"].value is None
    assert "answer is empty" in rows[1]["answer_reward"].reason


def test_family_build_rejects_the_run_when_the_model_is_missing() -> None:
    with pytest.raises(ModelUnavailableError, match="reward_model"):
        family.build(RunContext(settings=Settings(reward_model=None)))
