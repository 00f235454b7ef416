from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.metaeval import trec
from ragmeter.metaeval.common import SuiteOptions


@pytest.fixture(scope="module")
def result(shared: Path):
    return trec.run(shared / "data")


def _row(result, metric: str) -> dict:
    return next(r for r in result.rows if r["metric"] == metric)


def test_map_and_mrr_match_trec_eval(result):
    assert round(_row(result, "map")["mean"], 4) == 0.1785
    assert round(_row(result, "mrr")["mean"], 4) == 0.4064


def test_per_topic_values_match_trec_eval(result):
    row = _row(result, "map")
    assert [round(row[f"topic {q}"], 4) for q in ("301", "302", "303")] == [0.0324, 0.4175, 0.0858]
    row = _row(result, "mrr")
    assert [round(row[f"topic {q}"], 4) for q in ("301", "302", "303")] == [0.1667, 1.0, 0.0526]


def test_every_measure_agrees_with_the_reference_output(result):
    assert result.passed is True
    assert {c["metric"] for c in result.checks} == set(trec.DEFAULT_METRICS)
    assert len(result.checks) == len(trec.DEFAULT_METRICS) * 4  # 3 topics + the mean


def test_result_renders_markdown_and_json(result, tmp_path: Path):
    md, js = result.write(tmp_path)
    assert "| map | map | 0.0324 | 0.4175 | 0.0858 | 0.1785 | 0.1785 | yes |" in md.read_text()
    data = json.loads(js.read_text())
    assert data["passed"] is True
    assert data["suite"] == "trec"


def test_run_is_ordered_by_score_then_docno_descending(tmp_path: Path):
    run = tmp_path / "run"
    run.write_text(
        "1 Q0 a 1 0.5 t\n1 Q0 c 2 0.5 t\n1 Q0 b 3 0.9 t\n1 Q0 d 4 0.1 t\n", encoding="utf-8"
    )
    assert trec.read_run(run) == {"1": ["b", "c", "a", "d"]}


def test_qrels_keep_topics_without_relevant_documents(tmp_path: Path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 0\n", encoding="utf-8")
    assert trec.read_qrels(qrels) == {"1": {"a"}, "2": set()}


def test_limit_scores_the_first_topics_and_skips_the_overall_check(shared: Path):
    res = trec.run(shared / "data", SuiteOptions(limit=1, metrics=("map",)))
    assert res.info["n"] == 1
    assert [c["topic"] for c in res.checks] == ["301"]
    assert res.passed is True
