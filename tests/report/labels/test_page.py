"""The labelling page's content and the ``ragmeter label`` command (no browser)."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.errors import ConfigError, DataError
from ragmeter.report.labels.page import build_label_page, render_label_page, write_label_page


def payload_of(html: str) -> dict:
    found = re.search(r'<script id=data type="application/json">(.*?)</script>', html, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_a_claim_metric_gives_each_claim_with_its_evidence_in_the_contexts(labelled_run):
    page = build_label_page(labelled_run, sample=2, seed=0)
    assert page.payload["kind"] == "claims" and page.payload["metric"] == "faithfulness"
    assert page.rows == 2 and page.items == 6 and page.missing_texts is None
    row = page.payload["rows"][0]
    assert row["claims"] == [
        "Paris is the capital of France.",
        "The Seine runs there.",
        f"Row {row['index']} is odd.",
    ]
    assert row["id"] == f"q{row['index']}"
    assert row["contexts"][0].startswith("Paris is the capital")
    # [context, start, end, claim]: claims 0 and 1 rest on spans of contexts 0 and 1.
    assert sorted(row["marks"]) == [[0, 0, 30, 0], [1, 0, 20, 1]]
    text = row["contexts"][1]
    assert text[0:20] == "The Seine runs there"


def test_the_page_is_self_contained_and_data_cannot_close_its_script(labelled_run, tmp_path):
    out = tmp_path / "page.html"
    write_label_page(labelled_run, out, sample=12, seed=0)
    html = out.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|https?://", html)
    assert html.count("</script>") == 2  # the data and the page's script, nothing from rows
    assert payload_of(html)["rows"][0]["question"].endswith("</script>")


def test_a_row_level_metric_gives_one_score_per_row(labelled_run):
    page = build_label_page(labelled_run, sample=5, seed=0, metric="k_precision")
    assert page.payload["kind"] == "score" and page.items == 5
    assert page.payload["range"] == [0.0, 1.0]
    assert all(row["claims"] == [] for row in page.payload["rows"])


def test_the_same_seed_gives_the_same_page_and_stratified_is_marked(labelled_run):
    a = build_label_page(labelled_run, sample=4, seed=5)
    assert a.payload == build_label_page(labelled_run, sample=4, seed=5).payload
    assert a.payload["selection"] == "uniform"
    b = build_label_page(labelled_run, sample=4, seed=5, stratified=True)
    assert b.payload["selection"] == "stratified"
    assert b.payload["key"] != a.payload["key"]  # their labels are kept apart


def test_without_the_input_the_page_says_why_and_data_brings_it_back(labelled_run, tmp_path):
    moved = tmp_path / "results.jsonl"
    shutil.copy(labelled_run, moved)
    shutil.copy(f"{labelled_run}.run.json", f"{moved}.run.json")
    (labelled_run.parent / "input.jsonl").rename(tmp_path / "elsewhere.jsonl")
    try:
        page = build_label_page(moved, sample=2, seed=0)
        assert page.missing_texts is not None and "not there unchanged" in page.missing_texts
        assert page.payload["rows"][0]["question"] is None
        assert page.payload["rows"][0]["claims"]  # the claims come from the results
        given = build_label_page(moved, sample=2, seed=0, data=tmp_path / "elsewhere.jsonl")
        assert given.missing_texts is None
        assert given.payload["rows"][0]["question"].startswith("Tell me about Paris")
    finally:
        (tmp_path / "elsewhere.jsonl").rename(labelled_run.parent / "input.jsonl")


def test_an_unknown_metric_names_the_close_ones(labelled_run):
    with pytest.raises(ConfigError, match="Did you mean 'faithfulness'"):
        build_label_page(labelled_run, sample=2, metric="faithfulnes")


def test_a_run_without_the_default_metric_asks_for_one(tmp_path):
    results = tmp_path / "r.jsonl"
    results.write_text('{"index": 0, "scores": {"mrr": 1.0}}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="no faithfulness scores.*label with metric;.*mrr"):
        build_label_page(results, sample=2)


def test_a_metric_with_no_defined_score_has_nothing_to_label(tmp_path):
    results = tmp_path / "r.jsonl"
    results.write_text('{"index": 0, "scores": {"mrr": null}}\n', encoding="utf-8")
    with pytest.raises(DataError, match="No row .* has a defined mrr score"):
        build_label_page(results, sample=2, metric="mrr")


def test_rows_without_distinct_ids_are_labelled_by_index(tmp_path):
    results = tmp_path / "r.jsonl"
    results.write_text(
        '{"index": 0, "id": "a", "scores": {"mrr": 1.0}}\n'
        '{"index": 1, "id": "a", "scores": {"mrr": 0.5}}\n',
        encoding="utf-8",
    )
    page = build_label_page(results, sample=2, metric="mrr")
    assert [row["id"] for row in page.payload["rows"]] == [0, 1]
    assert page.payload["row_key"] == "index"  # the export's first line says "key": "index"
    assert "No row" not in render_label_page(page)


def test_rows_with_distinct_ids_are_labelled_by_id(labelled_run):
    page = build_label_page(labelled_run, sample=2, seed=0)
    assert page.payload["row_key"] == "id"
    assert [row["id"] for row in page.payload["rows"]] == [
        f"q{row['index']}" for row in page.payload["rows"]
    ]


def test_reference_claims_come_with_their_evidence_in_the_answer(reference_run):
    page = build_label_page(reference_run, sample=2, seed=0, metric="claim_recall")
    assert page.payload["kind"] == "claims" and page.payload["reference_against"] == "answer"
    assert page.items == 6  # 3 reference claims per row, no answer claims
    row = page.payload["rows"][0]
    assert row["claims"] == []
    # Every reference's claims in turn: the order claim indexes count in.
    assert row["reference_claims"] == [
        "Paris is the capital of France.",
        "It has a tower.",
        "The Seine runs there.",
    ]
    assert row["references"][1] == "The Seine runs there."
    # [0, start, end, claim]: spans of the answer that reference claims 0 and 2 rest on.
    assert sorted(row["reference_marks"]) == [[0, 0, 30, 0], [0, 32, 52, 2]]
    assert row["answer"][32:52] == "The Seine runs there"


def test_a_metric_with_answer_and_reference_claims_shows_both(reference_run):
    page = build_label_page(reference_run, sample=1, seed=0, metric="noise_sensitivity_relevant")
    row = page.payload["rows"][0]
    assert len(row["claims"]) == 3 and len(row["reference_claims"]) == 3
    # Noise sensitivity reads answer claims against the reference and against the contexts:
    # each answer claim is asked both ways, then the reference claims once.
    assert page.payload["answer_against"] == ["reference", "contexts"]
    assert page.items == 3 * 2 + 3
    # The spans of the references that the answer claims' reference verdicts rest on.
    assert sorted(row["precision_marks"]) == [[0, 0, 30, 0], [1, 0, 20, 1]]


def test_the_label_command_writes_the_page_and_says_what_it_holds(labelled_run, tmp_path):
    out = tmp_path / "labels.html"
    result = CliRunner().invoke(
        app, ["label", str(labelled_run), "--sample", "3", "--seed", "2", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "3 rows (9 claims) of 12, uniform sample, seed 2, metric faithfulness" in result.output
    assert payload_of(out.read_text(encoding="utf-8"))["seed"] == 2


def test_the_label_command_refuses_bad_options_with_exit_2(labelled_run, tmp_path):
    runner = CliRunner()
    bad = runner.invoke(
        app, ["label", str(labelled_run), "--sample", "3", "-m", "nope", "--out", "x.html"]
    )
    assert bad.exit_code == 2 and "Metric 'nope' is not in this run" in bad.output
    over = runner.invoke(
        app, ["label", str(labelled_run), "--sample", "3", "--out", str(labelled_run)]
    )
    # The console wraps long paths: compare with the line breaks as spaces.
    assert over.exit_code == 2 and "is the input" in " ".join(over.output.split())
    zero = runner.invoke(app, ["label", str(labelled_run), "--sample", "0", "--out", "x.html"])
    assert zero.exit_code == 2
