"""answer_refusal and answerability_accuracy through evaluate() and the CLI, with the
summary's precision / recall / F1 of refusing unanswerable questions."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.scoring.answerability import RefusalCounts

ROWS = [
    {"question_id": "u1", "answer": "The documents do not say.", "is_answerable_label": False},
    {"question_id": "u2", "answer": "I don't know.", "is_answerable_label": False},
    {
        "question_id": "u3",
        "answer": "I could not find it, but it may be 1969.",
        "is_answerable_label": False,
    },
    {"question_id": "a1", "answer": "It is not in Paris but in Lyon.", "is_answerable_label": True},
    {
        "question_id": "a2",
        "answer": "The context does not mention it.",
        "is_answerable_label": True,
    },
    {"question_id": "a3", "answer": "There is no fee.", "is_answerable_label": True},
]
METRICS = ["answer_refusal", "answerability_accuracy"]


def test_refusal_scores_partial_as_half_and_says_why() -> None:
    result = ragmeter.evaluate(ROWS, METRICS, progress=False)
    assert result["answer_refusal"] == [1.0, 1.0, 0.5, 0.0, 1.0, 0.0]
    partial = result.rows[2]
    assert "Partial: 0.5" in partial.reasons["answer_refusal"]
    assert "I could not find it, but it may be 1969." in partial.reasons["answer_refusal"]
    assert partial.details["answer_refusal"]["kind"] == "partial"


def test_accuracy_counts_a_partial_answer_as_answering() -> None:
    result = ragmeter.evaluate(ROWS, METRICS, progress=False)
    assert result["answerability_accuracy"] == [1.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert "a missed refusal" in result.rows[2].reasons["answerability_accuracy"]
    assert "a false refusal" in result.rows[4].reasons["answerability_accuracy"]


def test_the_summary_gives_precision_recall_f1_and_false_refusals() -> None:
    counts = (
        ragmeter.evaluate(ROWS, METRICS, progress=False).summary["answerability_accuracy"].refusals
    )
    assert counts == RefusalCounts(
        refused_unanswerable=2, answered_unanswerable=1, refused_answerable=1, answered_answerable=2
    )
    assert counts.precision == pytest.approx(2 / 3)
    assert counts.recall == pytest.approx(2 / 3)
    assert counts.f1 == pytest.approx(2 / 3)
    assert counts.false_refusal_rate == pytest.approx(1 / 3)


def test_rates_without_rows_to_divide_are_none_not_zero() -> None:
    only_answerable = RefusalCounts(answered_answerable=3)
    assert only_answerable.recall is None and only_answerable.f1 is None
    assert only_answerable.precision is None
    assert only_answerable.false_refusal_rate == 0.0


def test_a_row_without_a_label_fails_only_answerability_accuracy() -> None:
    rows = [{"answer": "I don't know."}, ROWS[0]]
    result = ragmeter.evaluate(rows, METRICS, progress=False)
    assert result["answer_refusal"] == [1.0, 1.0]
    assert "is_answerable_label" in result.rows[0].failures["answerability_accuracy"]
    assert result.summary["answerability_accuracy"].refusals == RefusalCounts(
        refused_unanswerable=1
    )


def test_an_empty_answer_is_undefined_with_a_reason() -> None:
    result = ragmeter.evaluate(
        [{"answer": " ", "is_answerable_label": True}], METRICS, progress=False
    )
    assert result["answer_refusal"] == [None]
    assert "empty" in result.rows[0].reasons["answer_refusal"]


def test_the_cli_prints_the_refusal_statistics_and_records_them(tmp_path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(
        app,
        ["evaluate", str(data), "-m", ",".join(METRICS), "--out", str(out), "--no-progress"],
    )
    assert res.exit_code == 0, res.output
    assert (
        "answerability: refusing the 3 unanswerable questions: precision 0.667, recall 0.667, "
        "F1 0.667; false refusals on the 3 answerable: 0.333" in res.output
    )
    record = json.loads((tmp_path / "out.jsonl.run.json").read_text())
    refusals = record["summary"]["answerability_accuracy"]["refusals"]
    assert refusals["refused_answerable"] == 1 and refusals["f1"] == pytest.approx(2 / 3)
    assert "refusals" not in record["summary"]["answer_refusal"]
