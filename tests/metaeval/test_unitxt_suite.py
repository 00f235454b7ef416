from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter.metaeval import unitxt


@pytest.fixture(scope="module")
def result(shared: Path):
    return unitxt.run(shared / "data")


def test_every_unitxt_main_score_is_matched_within_1e9(result):
    main = [c for c in result.checks if c["main"] and not c["unitxt_error"]]
    assert len(main) >= 60
    bad = [(c["case"], c["value"], c["expected"]) for c in main if not c["agrees"]]
    assert bad == []
    assert all(abs(c["value"] - c["expected"]) <= 1e-9 for c in main)


def test_every_parity_case_is_scored(shared: Path, result):
    cases = unitxt.read_cases(shared / "data" / unitxt.PARITY_FILE)
    assert {c["case"] for c in result.checks if not c["case"].startswith("corpus/")} == {
        c["id"] for c in cases
    }


def test_only_the_out_of_range_unitxt_recalls_differ(result):
    deviations = [c for c in result.checks if c["deviation"]]
    assert deviations, "the duplicated-id case should be listed as a deviation"
    for c in deviations:
        assert c["metric"].startswith("recall_at_")
        assert c["expected"] > 1.0
        assert 0.0 <= c["value"] <= 1.0
    assert result.passed is True


def test_where_unitxt_raises_ragmeter_gives_a_defined_outcome(result):
    raised = [c for c in result.checks if c["unitxt_error"]]
    assert {c["case"].split("/")[1] for c in raised} == {
        "f30_context_list_empty",
        "a20_reference_list_empty",
    }
    for c in raised:
        assert c["ok"], c  # no failure recorded; a value or an undefined score with a reason
        assert "note" not in c


def test_corpus_means_match_unitxt(result):
    corpus = [c for c in result.checks if c["case"].startswith("corpus/")]
    # Only the ranking set has all its cases in the parity file; the others are skipped.
    assert {c["metric"] for c in corpus} == {"mrr", "map_retrieved"}
    assert all(c["agrees"] for c in corpus)
    assert "not checked" in result.to_markdown()


def test_the_markdown_table_lists_every_metric(result):
    md = result.to_markdown()
    for metric in ("k_precision", "token_recall", "mrr", "map_retrieved", "retrieval_at_40"):
        assert f"| {metric} |" in md
