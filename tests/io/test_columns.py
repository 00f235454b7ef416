from __future__ import annotations

import pytest

from ragmeter.errors import ConfigError, MissingColumnError
from ragmeter.io.columns import ColumnMap, parse_column_spec, resolve_path, to_sample


def test_ragas_names_are_accepted_as_aliases():
    row = {
        "user_input": "q?",
        "response": "a.",
        "retrieved_contexts": ["c1", "c2"],
        "reference": "the ref",
        "retrieved_context_ids": ["1", 2],
    }
    sample, problems = to_sample(row, ColumnMap.from_any(None))
    assert problems == {}
    assert sample.question == "q?"
    assert sample.answer == "a."
    assert sample.contexts == ("c1", "c2")
    assert sample.reference_answers == ("the ref",)
    assert sample.contexts_ids == ("1", "2")


def test_canonical_name_wins_over_alias():
    sample, _ = to_sample({"answer": "canon", "response": "alias"}, ColumnMap.from_any(None))
    assert sample.answer == "canon"


def test_dotted_path_with_list_index():
    row = {"pred": {"retrieved_contexts": ["x", "y"], "answers": [{"text": "first"}]}}
    assert resolve_path(row, "pred.retrieved_contexts") == ["x", "y"]
    assert resolve_path(row, "pred.answers.0.text") == "first"
    assert resolve_path(row, "pred.answers[0].text") == "first"


def test_flattened_key_with_dot_wins():
    assert resolve_path({"pred.contexts": [1], "pred": {"contexts": [2]}}, "pred.contexts") == [1]


def test_unresolvable_path_names_the_part_and_suggests():
    with pytest.raises(KeyError, match="no key 'retrived_contexts'.*retrieved_contexts"):
        resolve_path({"pred": {"retrieved_contexts": []}}, "pred.retrived_contexts")


def test_column_map_from_cli_specs_and_callable():
    cmap = ColumnMap.from_any(["contexts=pred.ctx", "answer = out"])
    sample, problems = to_sample({"pred": {"ctx": ["a"]}, "out": "b"}, cmap)
    assert (sample.contexts, sample.answer, problems) == (("a",), "b", {})
    cmap = ColumnMap.from_any({"answer": lambda row: row["x"].upper()})
    assert to_sample({"x": "hi"}, cmap)[0].answer == "HI"


def test_callable_that_raises_becomes_a_field_problem():
    cmap = ColumnMap.from_any({"answer": lambda row: row["missing"]})
    sample, problems = to_sample({"x": 1}, cmap)
    assert sample.answer is None
    assert "KeyError" in problems["answer"]


def test_bad_column_spec_is_a_config_error():
    with pytest.raises(ConfigError, match="FIELD=COLUMN"):
        parse_column_spec("contexts")
    with pytest.raises(ConfigError, match="Did you mean 'contexts'"):
        parse_column_spec("contexs=x")


def test_wrong_types_are_named_per_field():
    row = {"question": 5, "contexts": ["ok", 3], "answer": None, "is_answerable_label": "maybe"}
    sample, problems = to_sample(row, ColumnMap.from_any(None))
    assert problems["question"] == "expected text, got int 5"
    assert problems["contexts"] == "item 1 must be text, got int 3"
    assert "is_answerable_label" in problems
    assert sample.answer is None and "answer" not in problems


def test_string_becomes_one_item_list_and_json_list_string_is_parsed():
    sample, _ = to_sample(
        {"reference_answers": "r", "contexts": '["a", "b"]'}, ColumnMap.from_any(None)
    )
    assert sample.reference_answers == ("r",)
    assert sample.contexts == ("a", "b")


def test_missing_column_rejected_with_suggestions():
    cmap = ColumnMap.from_any(None)
    with pytest.raises(MissingColumnError, match="'contexts'.*k_precision.*'context'"):
        cmap.check_columns({"contexts": ["k_precision"]}, ["context", "answer"])


def test_mapped_path_to_absent_column_is_rejected():
    cmap = ColumnMap.from_any(["contexts=pred.ctx"])
    with pytest.raises(MissingColumnError, match="no column 'pred'.*'prediction'"):
        cmap.check_columns({"contexts": ["k_precision"]}, ["prediction", "answer"])
