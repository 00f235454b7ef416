"""The report names the input a run scored (issue 28, item 8) and folds a judge's weights."""

from __future__ import annotations

from ragmeter.report.html import render_report
from ragmeter.results import run_from_rows

SHA = "a3658c986d9fd7b15c575d334b2f634414df0b904b1ab68197029bff8f4d0dc8"


def _run(**info):
    rows = [{"index": i, "scores": {"mrr": i / 3}} for i in range(4)]
    return run_from_rows(rows, {"metrics": {"mrr": {"higher_is_better": True}}, **info})


def test_the_configuration_names_the_input_file_and_its_sha256():
    html = render_report(
        _run(
            data="examples/rag_sample.jsonl",
            input={"source": "file", "sha256": SHA, "rows": 4},
            column_map={"contexts": "pred.contexts"},
        )
    )
    assert "<tr><th>input</th><td>examples/rag_sample.jsonl" in html
    assert "a3658c986d9f" in html and "4 rows)" in html
    assert "<tr><th>column map</th><td>contexts=pred.contexts</td></tr>" in html
    assert "4 rows, 1 metrics; input examples/rag_sample.jsonl;" in html


def test_a_judge_calibration_with_many_weights_is_folded():
    weights = {f"w{i}": 0.1 * i for i in range(12)}
    html = render_report(_run(judge={"name": "offline", "calibration": {"features": weights}}))
    assert "<details><summary>12 values</summary>" in html
    assert "<tr><th>name</th><td>offline</td></tr>" in html  # short values stay in view
