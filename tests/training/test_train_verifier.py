"""The verifier's training script: a few steps on a tiny sample, exported to int8 ONNX and
loaded by the runtime class the offline judge uses (a tiny randomly initialised BERT of the
same class as the shipped model's base, so the test is quick)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "training"))

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import verifier_data  # noqa: E402


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer BERT with MiniLM's vocabulary and tokenizer, random weights."""
    import torch
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-bert")
    tokenizer_file = ROOT / "src" / "ragmeter" / "models" / "data" / "all-MiniLM-L6-v2"
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_file=str(tokenizer_file / "tokenizer.json"),
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )
    config = BertConfig(
        vocab_size=tokenizer.backend_tokenizer.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_training_runs_a_few_steps_exports_int8_onnx_and_the_runtime_loads_it(
    shared: Path, tiny_base: Path, tmp_path: Path
) -> None:
    import train_verifier

    out = tmp_path / "verifier"
    code = train_verifier.main(
        [
            "--nli-dir", str(shared / "data" / "nli"),
            "--out", str(out),
            "--base", str(tiny_base),
            "--limit", "48",
            "--synthetic", "30",
            "--max-steps", "3",
            "--batch-size", "8",
            "--max-length", "64",
            "--dev-per-set", "4",
        ]
    )  # fmt: skip
    assert code == 0
    record = json.loads((out / "training.json").read_text())
    assert record["steps"] == 3
    assert record["pairs"] == 48
    assert record["labels"] == ["entailment", "neutral", "contradiction"]
    # The int8 export agrees with the torch model it came from.
    assert all(r["max_abs_diff_p_entail"] < 0.1 for r in record["dev"].values())

    from ragmeter.models.claim_verifier import ClaimVerifierModel

    model = ClaimVerifierModel(out, max_tokens=64, threads=1)
    pairs = [("Paris is the capital of France.", "Paris is in France."), ("A b.", "C d.")]
    probs = model.window_probabilities(pairs)
    assert probs.shape == (2, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    assert model.name.startswith("verifier@")


def test_synthetic_pairs_are_deterministic_and_cover_the_three_labels() -> None:
    paragraphs = [
        "The bridge was opened in 1932 by the mayor of Sydney. It carries eight lanes of "
        "traffic and two railway lines, and the number of vehicles increased after 1950.",
        "Marie Curie won the Nobel Prize in Physics in 1903. She was not born in France; "
        "she moved to Paris in November 1891 to study at the Sorbonne.",
        "The river is 300 kilometres long and flows north into the sea. Its largest city "
        "is a port where ships have docked since the twelfth century.",
    ] * 4
    first = verifier_data.synthetic_pairs(paragraphs, n=30, seed=7)
    again = verifier_data.synthetic_pairs(paragraphs, n=30, seed=7)
    assert first == again
    assert {p.label for p in first} == {0, 1, 2}
    assert all(p.hypothesis and p.premise for p in first)


def test_edits_flip_negation_and_change_numbers_and_antonyms() -> None:
    rng = random.Random(0)
    assert verifier_data.flip_negation("Paris is the capital.") == "Paris is not the capital."
    assert verifier_data.flip_negation("It was not built in 1889.") == "It was built in 1889."
    changed = verifier_data.change_number("It opened in 1932 with 8 lanes.", rng)
    assert changed is not None and "1932" not in changed
    assert verifier_data.swap_antonym("Sales increased in May.", rng) == "Sales decreased in May."
    assert verifier_data.flip_negation("Hello") is None


def test_wice_is_split_in_two_fixed_halves() -> None:
    halves = {verifier_data.wice_half(f"claim {i}") for i in range(50)}
    assert halves == {"train", "heldout"}
    assert verifier_data.wice_half("a claim") == verifier_data.wice_half("a claim")


def test_unknown_label_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="Unknown NLI label 'maybe'"):
        verifier_data.label_of("maybe")
