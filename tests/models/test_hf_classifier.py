"""The nli: verifier's model wrapper on tiny random checkpoints built here (no download):
loading by path and from the Hugging Face cache, labels, windows, batching."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ragmeter.errors import ConfigError, ModelUnavailableError  # noqa: E402
from ragmeter.models.hf_classifier import (  # noqa: E402
    HFClassifier,
    check_device,
    fingerprint,
    read_spec,
)
from ragmeter.testing.tiny_classifiers import FAMILIES, tiny_classifier, tiny_hhem  # noqa: E402

PAIRS = [
    ("Paris is the capital of France.", "Paris is in France."),
    ("The Eiffel tower was completed in 1889.", "The tower opened in 1889."),
    ("Water boils at 100 degrees Celsius at sea level.", "Water boils at 100 degrees."),
    ("London is the capital of England.", "Berlin is in Germany."),
    ("It is a river.", "The Seine is a river in France and it is known for art."),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-nli")
    out = {family: tiny_classifier(root / family, family) for family in FAMILIES}
    out["hhem"] = tiny_hhem(root / "hhem")
    out["generic"] = tiny_classifier(root / "generic", "roberta", labels=("LABEL_0", "LABEL_1"))
    return out


@pytest.mark.parametrize("family", [*FAMILIES, "hhem"])
def test_each_family_loads_by_path_and_gives_probabilities(models, family):
    model = HFClassifier(str(models[family]), device="cpu")
    probs = model.probabilities(PAIRS)
    assert probs.shape == (len(PAIRS),)
    assert np.all((probs >= 0) & (probs <= 1))
    assert len(set(np.round(probs, 6))) > 1  # the pairs are told apart
    assert model.name.startswith(f"nli:{models[family].name}@")
    assert model.describe()["family"] == ("hhem" if family == "hhem" else "sequence-classification")


@pytest.mark.parametrize("family", [*FAMILIES, "hhem"])
def test_sorting_and_batching_keep_each_pair_its_own_probability(models, family):
    model = HFClassifier(str(models[family]), device="cpu", batch_size=2)
    together = model.probabilities(PAIRS)
    alone = np.array([model.probabilities([pair])[0] for pair in PAIRS])
    backwards = model.probabilities(PAIRS[::-1])[::-1]
    np.testing.assert_allclose(together, alone, atol=1e-5)
    np.testing.assert_allclose(together, backwards, atol=1e-5)
    assert model.forward_calls == 3 + len(PAIRS) + 3  # ceil(5 / 2) batches per list call


def test_the_support_label_is_read_from_the_config(models):
    assert HFClassifier(str(models["bert"])).rule.index == 0  # entailment, neutral, contradiction
    assert HFClassifier(str(models["hhem"])).rule.label == "consistent"
    generic = HFClassifier(str(models["generic"]))
    assert generic.rule.index == 1
    assert "MiniCheck" in generic.describe()["label"]


def test_the_support_probability_is_the_softmax_of_the_chosen_label(models):
    entail = HFClassifier(str(models["bert"]), label="entailment").probabilities(PAIRS)
    neutral = HFClassifier(str(models["bert"]), label="neutral").probabilities(PAIRS)
    contra = HFClassifier(str(models["bert"]), label="2").probabilities(PAIRS)
    np.testing.assert_allclose(entail + neutral + contra, 1.0, atol=1e-5)


def test_a_generic_three_label_head_asks_for_the_label(tmp_path):
    folder = tiny_classifier(tmp_path / "g3", "bert", labels=("LABEL_0", "LABEL_1", "LABEL_2"))
    with pytest.raises(ConfigError, match=r"with verifier_label \(a name or an index\)"):
        HFClassifier(str(folder))
    assert HFClassifier(str(folder), label="LABEL_2").rule.index == 2


def test_hhem_reads_its_prompt_and_the_first_token(models):
    model = HFClassifier(str(models["hhem"]))
    assert model.spec.template is not None and "{text1}" in model.spec.template
    # A pair is one prompt: the claim side is the prompt with an empty premise.
    assert model.claim_tokens(["Paris is in France."])[0] > len(
        ["Paris", "is", "in", "France", "."]
    )
    assert "template" in model.describe()["input"]


def test_a_long_premise_becomes_overlapping_windows_within_the_budget(models):
    model = HFClassifier(str(models["bert"]))
    words = [f"w{i}" for i in range(100)]  # unknown words: one token each
    premise = " ".join(words)
    windows = model.windows(premise, 30)
    assert len(windows) >= 4
    assert all(model.tokens(w) <= 30 for w in windows)
    firsts = [w.split()[0] for w in windows]
    assert firsts[0] == "w0" and windows[-1].split()[-1] == "w99"
    for a, b in itertools.pairwise(windows):  # each overlaps the next
        assert set(a.split()) & set(b.split())
    assert model.windows("short premise", 30) == ("short premise",)
    assert model.windows("   ", 30) == ()


def test_a_checkpoint_without_a_trained_head_is_refused(tmp_path):
    folder = tmp_path / "base"
    tiny_classifier(folder, "bert")
    config = transformers.BertConfig.from_pretrained(folder)
    transformers.BertModel(config).save_pretrained(folder)  # weights without the classifier
    (folder / "config.json").write_text(
        json.dumps({**json.loads((folder / "config.json").read_text()), "architectures": []})
    )
    model = HFClassifier(str(folder))
    with pytest.raises(ModelUnavailableError, match="no trained classification head"):
        model.load()


def test_a_generator_is_not_a_sequence_classifier(tmp_path):
    folder = tiny_classifier(tmp_path / "t5gen", "t5")
    config = json.loads((folder / "config.json").read_text())
    config["architectures"] = ["T5ForConditionalGeneration"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelUnavailableError, match="not a sequence classifier"):
        HFClassifier(str(folder))


def test_a_missing_model_says_how_to_supply_it(tmp_path):
    with pytest.raises(ModelUnavailableError, match="allow_download=True"):
        HFClassifier("nobody/no-such-checker")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelUnavailableError, match="no config.json"):
        HFClassifier(str(tmp_path / "empty"))


def test_a_model_id_loads_from_the_local_hugging_face_cache(models, tmp_path, monkeypatch):
    import huggingface_hub.constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--acme--tiny-checker"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(models["deberta-v2"], repo / "snapshots" / commit)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    model = HFClassifier("acme/tiny-checker")
    assert model.name == f"nli:acme/tiny-checker@{fingerprint(models['deberta-v2'])}"
    np.testing.assert_allclose(
        model.probabilities(PAIRS),
        HFClassifier(str(models["deberta-v2"])).probabilities(PAIRS),
        atol=1e-6,
    )


def test_the_revision_changes_with_the_weights(tmp_path):
    a = tiny_classifier(tmp_path / "a", "bert", seed=0)
    b = tiny_classifier(tmp_path / "b", "bert", seed=1)
    assert read_spec(str(a)).revision != read_spec(str(b)).revision
    assert read_spec(str(a)).revision == fingerprint(a)


def test_device_values_are_checked_before_loading(models):
    assert check_device(None) == "auto"
    assert check_device("CUDA:1") == "cuda:1"
    with pytest.raises(ConfigError, match="device must be"):
        check_device("gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ModelUnavailableError, match="no CUDA device"):
            HFClassifier(str(models["bert"]), device="cuda:7").load()
