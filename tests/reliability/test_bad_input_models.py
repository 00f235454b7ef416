"""Hostile rows through the model-backed offline metric (context_relevance) too.

The hypothesis test covers the other offline metrics with >= 1,000 rows; the LM scores about a
row a second here, so this test feeds a fixed set of the same kinds of bad values instead.
"""

from __future__ import annotations

import math

import pytest

import ragmeter

pytest.importorskip("transformers")
pytest.importorskip("gguf")

Q = "When was the tower built?"
ROWS = [
    {"question": Q, "contexts": ["The tower was built in 1889. " * 40_000]},  # ~1.2 MB
    {"question": Q + "\x00\x07\x1b[31m", "contexts": ["built\x0b in\x0c 1889\r\n"]},
    {"question": "When \ud800 built?", "contexts": ["lone \udfff surrogate"]},
    {"question": "Когда 建造 ?🙂", "contexts": ["مرحبا 1889 ✓", "ok"]},
    {"question": 1889, "contexts": ["a"]},
    {"question": Q, "contexts": [1889, "a"]},
    {"question": Q, "contexts": "just one string"},
    {"question": "", "contexts": ["a"]},
    {"question": Q, "contexts": []},
    {"question": Q, "contexts": [""]},
    {"question": None, "contexts": None},
    {"question": Q, "pred": {"ctx": ["a"]}},
    ["not", "an", "object"],
]
NAMES = ["context_relevance", "context_relevance_at_1", "context_relevance_at_3"]


def test_every_hostile_row_is_scored_undefined_or_failed_naming_the_field():
    result = ragmeter.evaluate(
        ROWS,
        NAMES,
        column_map={"contexts": lambda r: r.get("contexts", r.get("pred", {}).get("x"))},
        progress=False,
    )
    assert len(result.rows) == len(ROWS)
    for row in result.rows:
        for name in NAMES:
            value = row.scores[name]
            if name in row.failures:
                assert value is None
                assert "field" in row.failures[name] or "mapping" in row.failures[name]
            elif value is None:
                assert row.reasons[name]
            else:
                assert not math.isnan(value) and 0.0 <= value <= 1.0
    by_index = {r.index: r for r in result.rows}
    assert by_index[0].scores["context_relevance"] is not None  # 1 MB context is truncated, scored
    assert "field 'question'" in by_index[4].failures["context_relevance"]
    assert "field 'contexts'" in by_index[5].failures["context_relevance"]
    assert by_index[8].scores["context_relevance"] is None and by_index[8].reasons
    for summary in result.summary.values():
        assert summary.mean is None or 0.0 <= summary.mean <= 1.0
