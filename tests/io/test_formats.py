"""Other tools' input formats read as they are (issue 28, item 6): RAGChecker's
checking_inputs.json, Ragas' EvaluationDataset JSONL / CSV, and ``[*]`` paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import ConfigError, MissingColumnError
from ragmeter.io.columns import ColumnMap, resolve_path, to_sample
from ragmeter.io.formats import FORMATS, detect_format
from ragmeter.io.readers import open_rows

RAGCHECKER_ROW = {
    "query_id": "7",
    "query": "Where is the Eiffel Tower?",
    "gt_answer": "In Paris.",
    "response": "The Eiffel Tower is in Paris.",
    "retrieved_context": [
        {"doc_id": "d1", "text": "The Eiffel Tower stands in Paris."},
        {"doc_id": "d2", "text": "Rome is in Italy."},
    ],
}

RAGAS_ROW = {
    "user_input": "Where is the Eiffel Tower?",
    "retrieved_contexts": ["The Eiffel Tower stands in Paris.", "Rome is in Italy."],
    "retrieved_context_ids": ["d1", "d2"],
    "response": "The Eiffel Tower is in Paris.",
    "reference": "In Paris.",
    "reference_contexts": ["The Eiffel Tower stands in Paris."],
    "reference_context_ids": ["d1"],
}


def test_a_star_maps_the_rest_of_the_path_over_a_list():
    row = {"ctx": [{"text": "a", "meta": {"id": 1}}, {"text": "b", "meta": {"id": 2}}]}
    assert resolve_path(row, "ctx[*].text") == ["a", "b"]
    assert resolve_path(row, "ctx.*.meta.id") == [1, 2]
    assert resolve_path({"ctx": []}, "ctx[*].text") == []


def test_a_star_path_names_the_item_that_lacks_the_key():
    row = {"ctx": [{"text": "a"}, {"body": "b"}]}
    with pytest.raises(KeyError, match=r"ctx\.1 has no key 'text'"):
        resolve_path(row, "ctx[*].text")
    with pytest.raises(KeyError, match="not a list to map"):
        resolve_path({"ctx": "text"}, "ctx[*].text")


def test_a_star_path_in_a_column_map_gives_a_list_field():
    cmap = ColumnMap.from_any(["contexts=retrieved_context[*].text"])
    sample, problems = to_sample(RAGCHECKER_ROW, cmap)
    assert problems == {}
    assert sample.contexts == ("The Eiffel Tower stands in Paris.", "Rome is in Italy.")


def test_formats_are_detected_only_when_unambiguous():
    assert detect_format(RAGCHECKER_ROW) is FORMATS["ragchecker"]
    assert detect_format(RAGAS_ROW) is FORMATS["ragas"]
    assert detect_format({"question": "q", "answer": "a"}) is None
    assert detect_format({**RAGCHECKER_ROW, **RAGAS_ROW}) is None


def test_ragchecker_rows_are_read_without_a_column_map():
    sample, problems = to_sample(RAGCHECKER_ROW, ColumnMap.from_any(None))
    assert problems == {}
    assert sample.question_id == "7"
    assert sample.question == "Where is the Eiffel Tower?"
    assert sample.answer == "The Eiffel Tower is in Paris."
    assert sample.reference_answers == ("In Paris.",)
    assert sample.contexts == ("The Eiffel Tower stands in Paris.", "Rome is in Italy.")
    assert sample.contexts_ids == ("d1", "d2")


def test_a_ragchecker_context_without_text_is_a_problem_of_its_row():
    row = {**RAGCHECKER_ROW, "retrieved_context": [{"doc_id": "d1"}]}
    _, problems = to_sample(row, ColumnMap.from_any("ragchecker"))
    assert "retrieved_context.0 has no key 'text'" in problems["contexts"]


def test_checking_inputs_json_is_read_as_a_dict_with_a_results_list(tmp_path):
    path = tmp_path / "checking_inputs.json"
    path.write_text(json.dumps({"results": [RAGCHECKER_ROW, RAGCHECKER_ROW]}))
    rows = list(open_rows(path))
    assert [r.data["query_id"] for r in rows] == ["7", "7"]


def test_evaluate_scores_ragchecker_file_as_it_is(tmp_path):
    path = tmp_path / "checking_inputs.json"
    path.write_text(json.dumps({"results": [RAGCHECKER_ROW]}))
    result = ragmeter.evaluate(path, ["k_precision", "token_f1"], progress=False)
    assert result.failures() == []
    assert result.summary["k_precision"].mean == pytest.approx(
        4 / 5
    )  # eiffel, tower, in, paris of 5 tokens
    assert result.rows[0].id == "7"


def test_ragchecker_example_from_its_repository(shared):
    path = shared / "data" / "ragchecker_examples_llm_labels" / "checking_inputs.json"
    if not path.exists():
        pytest.skip(f"{path} not found")
    result = ragmeter.evaluate(path, ["k_precision", "token_f1"], progress=False)
    assert result.failures() == []
    assert [row.id for row in result.rows] == ["0", "1"]
    assert all(s.count == 2 for s in result.summary.values())


def _ragas_csv(tmp_path: Path) -> Path:
    """A CSV as Ragas' EvaluationDataset.to_csv writes one (pandas' to_csv: lists as Python
    literals)."""
    pd = pytest.importorskip("pandas")
    path = tmp_path / "ragas.csv"
    pd.DataFrame([RAGAS_ROW, {**RAGAS_ROW, "reference": "Paris, France."}]).to_csv(
        path, index=False
    )
    assert "['The Eiffel Tower stands in Paris.'" in path.read_text()
    return path


def test_ragas_csv_and_jsonl_with_format_ragas(tmp_path):
    jsonl = tmp_path / "ragas.jsonl"
    jsonl.write_text(json.dumps(RAGAS_ROW) + "\n")
    for path in (jsonl, _ragas_csv(tmp_path)):
        result = ragmeter.evaluate(path, ["k_precision", "mrr"], column_map="ragas", progress=False)
        assert result.failures() == [], path
        assert result.summary["k_precision"].mean == pytest.approx(
            4 / 5
        )  # eiffel, tower, in, paris of 5 tokens
        # retrieved_context_ids and reference_context_ids are read: d1 is found first.
        assert result.summary["mrr"].mean == pytest.approx(1.0)


def test_format_ragchecker_refuses_data_without_its_columns(tmp_path):
    jsonl = tmp_path / "ragas.jsonl"
    jsonl.write_text(json.dumps(RAGAS_ROW) + "\n")
    with pytest.raises(MissingColumnError, match="not in RAGChecker's checking_inputs.json"):
        ragmeter.evaluate(jsonl, ["token_f1"], column_map="ragchecker", progress=False)


def test_an_unknown_format_is_a_config_error_with_a_suggestion():
    with pytest.raises(ConfigError, match="Did you mean 'ragas'"):
        ColumnMap.from_any("raga")
