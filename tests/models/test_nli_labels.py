"""Which output of an entailment head means support: read from config.json's labels."""

from __future__ import annotations

import pytest

from ragmeter.errors import ConfigError, param_names
from ragmeter.models.nli_labels import support_label


@pytest.mark.parametrize(
    ("id2label", "index"),
    [
        ({0: "entailment", 1: "neutral", 2: "contradiction"}, 0),  # MoritzLaurer's order
        ({"0": "contradiction", "1": "entailment", "2": "neutral"}, 1),  # cross-encoder/nli-*
        ({0: "ENTAILMENT", 1: "NOT_ENTAILMENT"}, 0),
        ({0: "not_entailment", 1: "entailment"}, 1),
        ({0: "hallucinated", 1: "consistent"}, 1),  # HHEM-2.1-open
        ({0: "Refuted", 1: "Supported"}, 1),
        ({0: "unsupported", 1: "supported"}, 1),
    ],
)
def test_the_label_that_says_support_is_chosen_whatever_its_position(id2label, index):
    rule = support_label(id2label)
    assert rule.index == index
    assert "config" in rule.how


def test_a_generic_two_label_head_reads_label_1_as_support_as_minicheck_does():
    rule = support_label({0: "LABEL_0", 1: "LABEL_1"})
    assert rule.index == 1
    assert "MiniCheck" in rule.describe()


def test_a_generic_three_label_head_needs_the_label_named():
    with pytest.raises(ConfigError, match="with verifier_label"):
        support_label({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    cli = param_names({"verifier_label": "--verifier-label"})  # the CLI's name for it
    with cli, pytest.raises(ConfigError, match="with --verifier-label"):
        support_label({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})


def test_a_head_with_two_support_labels_is_ambiguous():
    with pytest.raises(ConfigError, match="names 2 labels that mean support"):
        support_label({0: "entailment", 1: "supported"})


def test_a_head_of_only_negative_labels_names_no_support_label():
    with pytest.raises(ConfigError, match="names no label that means support"):
        support_label({0: "neutral", 1: "contradiction"})


def test_the_override_takes_a_name_or_an_index():
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    assert support_label(generic, override="LABEL_2").index == 2
    assert support_label(generic, override="label_0").index == 0
    assert support_label(generic, override="1").index == 1
    assert support_label({0: "entailment", 1: "neutral"}, override="neutral").index == 1


def test_an_override_that_names_no_label_lists_the_labels_and_suggests_one():
    with pytest.raises(ConfigError) as info:
        support_label({0: "entailment", 1: "neutral"}, override="entailmnt")
    assert "Did you mean 'entailment'" in str(info.value)
    assert "0='entailment', 1='neutral'" in str(info.value)
    with pytest.raises(ConfigError, match="an index from 0 to 1"):
        support_label({0: "entailment", 1: "neutral"}, override="7")


def test_a_single_logit_head_is_read_with_a_sigmoid():
    rule = support_label({0: "LABEL_0"})
    assert rule.index is None
    assert "sigmoid" in rule.describe()


def test_without_id2label_num_labels_decides():
    assert support_label(None, 2).index == 1
    assert support_label(None, 1).index is None


def test_id2label_that_skips_a_number_is_refused():
    with pytest.raises(ConfigError, match="0..n-1"):
        support_label({0: "entailment", 2: "neutral"})
