"""``ragmeter evaluate --format ragchecker|ragas`` (issue 28, item 6)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragmeter.cli import app

ROW = {
    "query_id": "q1",
    "query": "Where is the Eiffel Tower?",
    "gt_answer": "In Paris.",
    "response": "The Eiffel Tower is in Paris.",
    "retrieved_context": [{"doc_id": "d1", "text": "The Eiffel Tower stands in Paris."}],
}


def test_evaluate_reads_checking_inputs_with_format_ragchecker(tmp_path):
    data = tmp_path / "checking_inputs.json"
    data.write_text(json.dumps({"results": [ROW]}))
    out = tmp_path / "results.jsonl"
    res = CliRunner().invoke(
        app,
        ["evaluate", str(data), "--format", "ragchecker", "-m", "k_precision", "-o", str(out)],
    )
    assert res.exit_code == 0, res.output
    record = json.loads(out.read_text())
    assert record["id"] == "q1" and record["scores"]["k_precision"] == 0.8


def test_an_unknown_format_exits_2_naming_the_known_ones(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    res = CliRunner().invoke(app, ["evaluate", str(data), "--format", "ragchek"])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "Unknown input format 'ragchek'" in text and "ragchecker, ragas" in text
