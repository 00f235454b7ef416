"""A results file written when context relevance's 'auto' meant float32 is not continued
with int8 scores (int8 became the default): its run record has no ``models`` entry."""

from __future__ import annotations

from ragmeter.errors import param_names
from ragmeter.metrics.registry import all_specs
from ragmeter.runner.resume import changed_scoring

SPECS = [all_specs()["context_relevance"]]
OLD = {"settings": {"relevance_dtype": "auto"}}
NEW = {
    "settings": {"relevance_dtype": "auto"},
    "models": {"context_relevance": {"model": "gemma3-270m-int8", "dtype": "int8"}},
}


def test_an_old_auto_file_is_refused_with_auto_and_continued_with_float32() -> None:
    refused = changed_scoring(OLD, {"relevance_dtype": "auto"}, metrics=SPECS)
    assert len(refused) == 1 and "meant float32" in refused[0]
    assert "(relevance_dtype)" in refused[0]
    with param_names({"relevance_dtype": "--relevance-dtype"}):
        worded = changed_scoring(OLD, {"relevance_dtype": "auto"}, metrics=SPECS)
    assert "(--relevance-dtype)" in worded[0]
    assert changed_scoring(OLD, {"relevance_dtype": "float32"}, metrics=SPECS) == []
    assert "now 'int8'" in changed_scoring(OLD, {"relevance_dtype": "int8"}, metrics=SPECS)[0]


def test_a_file_that_records_its_relevance_model_compares_settings_as_written() -> None:
    assert changed_scoring(NEW, {"relevance_dtype": "auto"}, metrics=SPECS) == []
    changed = changed_scoring(NEW, {"relevance_dtype": "float32"}, metrics=SPECS)
    assert changed == ["the 'relevance_dtype' setting was 'auto', now 'float32'"]
    with param_names({"relevance_dtype": "--relevance-dtype"}):
        worded = changed_scoring(NEW, {"relevance_dtype": "float32"}, metrics=SPECS)
    assert worded == ["--relevance-dtype was 'auto', now 'float32'"]


def test_files_without_context_relevance_are_not_concerned() -> None:
    others = [all_specs()["faithfulness"]]
    assert changed_scoring(OLD, {"relevance_dtype": "auto"}, metrics=others) == []
