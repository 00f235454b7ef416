"""Tiny randomly initialised entailment classifiers, saved as real checkpoints (no download).

For tests and benchmarks of the ``nli:`` verifier: each builder writes a folder that
``verifier="nli:PATH"`` loads through the same code as a real checker, with the same model
classes (BERT, RoBERTa, DeBERTa-v2, T5 sequence classifiers; HHEM's layout: a T5 token
classifier under ``t5.*`` over a foundation folder). The weights are random, so the
probabilities mean nothing; the labels, windows, batching and caching can be checked.
Needs torch and transformers (``pip install 'ragmeter[lm]'``)::

    from ragmeter.testing.tiny_classifiers import tiny_classifier

    folder = tiny_classifier(tmp_path / "bert", "bert", labels=["entailment", "neutral"])
    ragmeter.evaluate(rows, ["faithfulness"], settings=Settings(verifier=f"nli:{folder}"))
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

__all__ = ["FAMILIES", "HHEM_PROMPT", "tiny_classifier", "tiny_hhem", "tiny_tokenizer"]

Family = Literal["bert", "roberta", "deberta-v2", "t5"]
FAMILIES: tuple[Family, ...] = ("bert", "roberta", "deberta-v2", "t5")
#: HHEM-2.1-open's prompt, from its config.json.
HHEM_PROMPT = (
    "<pad> Determine if the hypothesis is true given the premise?\n\n"
    "Premise: {text1}\n\nHypothesis: {text2}"
)
_WORD_LIST = (
    "the a an is was are of in on to and or not no it its this that he she they his her "
    "paris france capital city river seine tower eiffel built completed opened year years "
    "water boils at degrees celsius sea level question answer premise hypothesis determine "
    "if true given london england berlin germany rome italy madrid spain europe country "
    "largest population million people lives live famous known for art museum louvre"
)
#: Words the tiny tokenizers know (any other word is one unknown token).
WORDS: tuple[str, ...] = tuple(_WORD_LIST.split())


def tiny_tokenizer(
    folder: Path, *, style: Literal["bert", "t5"] = "bert", max_length: int = 64
) -> Any:
    """A lower-casing word-level ``PreTrainedTokenizerFast`` saved in ``folder``: BERT style
    (``[CLS] a [SEP] b [SEP]``) or T5 style (``a </s> b </s>``, ``<pad>`` = 0)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    if style == "t5":
        specials = {"pad": "<pad>", "eos": "</s>", "unk": "<unk>"}
        vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
        single, pair = "$A </s>", "$A </s> $B:1 </s>:1"
        marks = [("</s>", 1)]
    else:
        specials = {"pad": "[PAD]", "cls": "[CLS]", "sep": "[SEP]", "unk": "[UNK]"}
        vocab = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[UNK]": 3}
        single, pair = "[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"
        marks = [("[CLS]", 1), ("[SEP]", 2)]
    for word in (*WORDS, ".", ",", ":", "?"):
        vocab.setdefault(word, len(vocab))
    inner = Tokenizer(models.WordLevel(vocab, unk_token=specials["unk"]))
    inner.normalizer = normalizers.Lowercase()
    inner.pre_tokenizer = pre_tokenizers.Whitespace()
    inner.post_processor = processors.TemplateProcessing(
        single=single, pair=pair, special_tokens=marks
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=inner,
        model_max_length=max_length,
        **{f"{role}_token": token for role, token in specials.items()},
    )
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    return tokenizer


def _config(family: Family, vocab_size: int, labels: Sequence[str], max_length: int) -> Any:
    import transformers

    common: dict[str, Any] = {
        "num_labels": len(labels),
        "id2label": dict(enumerate(labels)),
        "label2id": {name: i for i, name in enumerate(labels)},
        "pad_token_id": 0,
    }
    if family == "t5":
        return transformers.T5Config(
            vocab_size=vocab_size,
            d_model=16,
            d_kv=8,
            d_ff=32,
            num_layers=1,
            num_decoder_layers=1,
            num_heads=2,
            relative_attention_num_buckets=8,
            eos_token_id=1,
            decoder_start_token_id=0,
            initializer_factor=4.0,  # logits far enough from 0 to tell pairs apart
            **common,
        )
    sizes: dict[str, Any] = {
        "vocab_size": vocab_size,
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "initializer_range": 0.5,
    }
    if family == "bert":
        return transformers.BertConfig(max_position_embeddings=max_length, **sizes, **common)
    if family == "roberta":  # positions start after the padding index, as RoBERTa's do
        return transformers.RobertaConfig(
            max_position_embeddings=max_length + 2, type_vocab_size=1, **sizes, **common
        )
    return transformers.DebertaV2Config(
        max_position_embeddings=max_length, type_vocab_size=0, **sizes, **common
    )


_CLASSES = {
    "bert": "BertForSequenceClassification",
    "roberta": "RobertaForSequenceClassification",
    "deberta-v2": "DebertaV2ForSequenceClassification",
    "t5": "T5ForSequenceClassification",
}


def tiny_classifier(
    folder: Path,
    family: Family = "bert",
    *,
    labels: Sequence[str] = ("entailment", "neutral", "contradiction"),
    seed: int = 0,
    max_length: int = 64,
) -> Path:
    """A random ``<Family>ForSequenceClassification`` with ``labels``, saved in ``folder``."""
    import torch
    import transformers

    if family not in _CLASSES:
        raise ValueError(f"Unknown family {family!r}. Choose one of {', '.join(FAMILIES)}.")
    tokenizer = tiny_tokenizer(
        folder, style="t5" if family == "t5" else "bert", max_length=max_length
    )
    torch.manual_seed(seed)
    config = _config(family, len(tokenizer), labels, max_length)
    getattr(transformers, _CLASSES[family])(config).save_pretrained(folder)
    return folder


def tiny_hhem(
    folder: Path,
    *,
    labels: Sequence[str] = ("hallucinated", "consistent"),
    seed: int = 0,
    max_length: int = 64,
) -> Path:
    """HHEM-2.1-open's layout with random weights: ``folder/foundation`` (a T5 config and
    tokenizer, flan-t5-base's role) and ``folder/hhem`` (``config.json`` with ``foundation``
    and ``prompt``, weights of a T5 token classifier under ``t5.``). Returns the HHEM folder."""
    import torch
    import transformers
    from safetensors.torch import save_file

    foundation = folder / "foundation"
    tokenizer = tiny_tokenizer(foundation, style="t5", max_length=max_length)
    torch.manual_seed(seed)
    config = _config("t5", len(tokenizer), labels, max_length)
    config.initializer_factor = 1.0  # the first token's logits saturate with more
    config.save_pretrained(foundation)
    model = transformers.T5ForTokenClassification(config)
    hhem = folder / "hhem"
    hhem.mkdir(parents=True, exist_ok=True)
    state = {f"t5.{k}": v.contiguous() for k, v in model.state_dict().items()}
    state.pop("t5.transformer.encoder.embed_tokens.weight", None)  # tied to shared
    save_file(state, str(hhem / "model.safetensors"))
    hhem_config = {
        "architectures": ["HHEMv2ForSequenceClassification"],
        "model_type": "HHEMv2Config",
        "foundation": str(foundation),
        "prompt": HHEM_PROMPT,
        "id2label": {str(i): name for i, name in enumerate(labels)},
        "label2id": {name: i for i, name in enumerate(labels)},
    }
    (hhem / "config.json").write_text(json.dumps(hhem_config, indent=2), encoding="utf-8")
    return hhem
