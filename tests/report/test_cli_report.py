from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ragmeter.cli.report import register


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """ragmeter (test app)."""

    register(app)
    return app


@pytest.fixture
def cli(app):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, [str(a) for a in args])

    return invoke


def shifted(rd, delta: float):
    rows = rd.make_rows()
    for r in rows:
        r["scores"]["faithfulness"] = min(1.0, max(0.0, r["scores"]["faithfulness"] + delta))
    return rows


def test_report_writes_html(cli, results_file, tmp_path):
    out = tmp_path / "sub" / "report.html"
    out.parent.mkdir()
    res = cli("report", results_file, "-o", out, "--group-by", "metadata.category", "--worst", "2")
    assert res.exit_code == 0, res.output
    assert f"Report written to {out}" in res.output
    doc = out.read_text()
    assert doc.count('<svg class="pl"') == 6 and 'id="groups"' in doc


def test_report_defaults_output_next_to_results(cli, results_file):
    res = cli("report", results_file)
    assert res.exit_code == 0, res.output
    assert results_file.with_suffix(".html").exists()


def cli_doc(cli, results_file, tmp_path) -> str:
    out = tmp_path / "default.html"
    assert cli("report", results_file, "-o", out).exit_code == 0
    return out.read_text()


def test_report_with_baseline_and_risk_threshold(cli, results_file, writer, rd, tmp_path):
    base = writer("base.jsonl", shifted(rd, -0.1), rd.make_info())
    out = tmp_path / "r.html"
    res = cli(
        "report", results_file, "-o", out, "--baseline", base, "--risk-threshold", "poor_share=0.9"
    )
    assert res.exit_code == 0, res.output
    doc = out.read_text()
    assert 'id="baseline"' in doc
    assert "have faithfulness below" not in doc
    assert "have faithfulness below" in cli_doc(cli, results_file, tmp_path)


def test_report_takes_per_metric_thresholds_and_top_signs(cli, results_file, tmp_path):
    out = tmp_path / "r.html"
    args = ["report", results_file, "-o", out, "--top-signs", "1"]
    res = cli(*args, "--risk-threshold", "faithfulness.poor_share=0.9")
    assert res.exit_code == 0, res.output
    doc = out.read_text()
    assert "have noise_sensitivity above 0.50 (lower is better), more than" in doc
    assert "faithfulness below 0.50" not in doc
    summary = doc.split('id="summary"')[1].split('id="metrics"')[0]
    assert summary.count('<li class="risk">') == 2  # one shown, one folded
    assert "<details><summary>1 more sign</summary>" in summary


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--risk-threshold", "spred=0.2"],
            "Unknown risk threshold 'spred'. Did you mean 'spread'?",
        ),
        (
            ["--risk-threshold", "faithfulness.poor_scor=0.2"],
            "Unknown risk threshold 'faithfulness.poor_scor'. Did you mean 'poor_score'?",
        ),
        (
            ["--group-by", "metadata.nope"],
            "Cannot group by 'metadata.nope': no row has a value there.",
        ),
        (["--risk-threshold", "spread"], "Bad --risk-threshold 'spread': expected NAME=VALUE"),
    ],
)
def test_report_option_errors_are_worded_for_humans(cli, results_file, args, message):
    res = cli("report", results_file, *args)
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


def test_report_on_a_broken_file_names_the_line(cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"index": 0, "scores": {}}\nnot json\n')
    res = cli("report", bad)
    assert res.exit_code == 2
    assert "Error:" in res.output and "line 2: not valid JSON" in res.output
    assert "Traceback" not in res.output


def test_report_on_a_missing_file(cli, tmp_path):
    res = cli("report", tmp_path / "nope.jsonl")
    assert res.exit_code == 2 and "Results file not found" in res.output


def test_compare_prints_paired_results(cli, writer, rd):
    a = writer("a.jsonl", rd.make_rows(), rd.make_info())
    b = writer("b.jsonl", shifted(rd, 0.05), rd.make_info())
    res = cli("compare", a, b)
    assert res.exit_code == 0, res.output
    assert "12 rows paired by id" in res.output
    assert "faithfulness (higher is better)" in res.output
    assert "B is better by" in res.output
    assert "sign test p" in res.output


def test_compare_gate_fails_with_exit_code_1(cli, writer, rd):
    a = writer("a.jsonl", rd.make_rows(), rd.make_info())
    b = writer("b.jsonl", shifted(rd, -0.1), rd.make_info())
    res = cli("compare", a, b, "--fail-if-worse", "faithfulness=0.02")
    assert res.exit_code == 1, res.output
    assert "faithfulness: FAIL" in res.output
    assert "1 of 1 gates failed" in res.output


def test_compare_gate_passes_within_delta(cli, writer, rd):
    a = writer("a.jsonl", rd.make_rows(), rd.make_info())
    b = writer("b.jsonl", shifted(rd, -0.01), rd.make_info())
    res = cli(
        "compare",
        a,
        b,
        "--fail-if-worse",
        "faithfulness=0.05",
        "--fail-if-worse",
        "noise_sensitivity=0",
    )
    assert res.exit_code == 0, res.output
    assert "faithfulness: ok" in res.output and "noise_sensitivity: ok" in res.output


@pytest.mark.parametrize(
    ("gate", "message"),
    [
        ("faithfulnes=0.1", "Did you mean 'faithfulness'"),
        ("faithfulness=lots", "needs a number"),
        ("faithfulness=-1", "must be >= 0"),
        ("faithfulness", "expected NAME=VALUE"),
    ],
)
def test_compare_gate_errors(cli, results_file, gate, message):
    res = cli("compare", results_file, results_file, "--fail-if-worse", gate)
    assert res.exit_code == 2
    assert message in res.output and "Traceback" not in res.output


def test_compare_of_an_old_and_a_new_context_precision_exits_2_naming_the_rename(cli, writer, rd):
    from ragmeter.metrics.registry import CHANGED_MEANING

    old_info = rd.make_info()
    old_info["metrics"]["context_precision"]["description"] = CHANGED_MEANING[
        "context_precision"
    ].old_description
    a = writer("a.jsonl", rd.make_rows(), old_info)
    b = writer("b.jsonl", rd.make_rows(), rd.make_info())
    res = cli("compare", a, b)
    assert res.exit_code == 2, res.output
    assert "context_claim_precision" in res.output
    assert "not compared" in " ".join(res.output.split())
