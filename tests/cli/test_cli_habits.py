"""What a CLI user expects: --version, --out -, metrics --json, readable --help, typos caught
before scoring (mistyped paths in --column and --group-by)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.judges.llm.schemas import ReplyInvalid, _load
from ragmeter.metrics.registry import all_specs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_sample.jsonl"
runner = CliRunner()


def _err(res) -> str:
    """stderr with the console's line wrapping undone."""
    return " ".join(res.stderr.split())


def _nested(tmp_path: Path) -> Path:
    path = tmp_path / "d.jsonl"
    rows = [
        {"response": "Paris is nice", "pred": {"ctx": ["Paris is nice", "x"]}},
        {"response": "Rome is old", "pred": {"ctx": ["Rome is old"]}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_version_prints_the_package_version():
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"ragmeter {ragmeter.__version__}"


def test_out_dash_writes_the_results_to_stdout_and_the_rest_to_stderr(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "k_precision,mrr", "--out", "-"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert [line["index"] for line in lines] == list(range(len(EXAMPLE.read_text().splitlines())))
    assert set(lines[0]["scores"]) == {"k_precision", "mrr"}
    assert "k_precision" in _err(res)  # the summary table
    assert not (tmp_path / "-").exists() and not (tmp_path / "-.run.json").exists()


def test_out_dash_with_a_report_still_writes_the_report(tmp_path):
    report = tmp_path / "r.html"
    res = runner.invoke(
        app, ["evaluate", str(EXAMPLE), "-m", "mrr", "--out", "-", "--report", str(report), "-q"]
    )
    assert res.exit_code == 0, res.output
    assert len(res.stdout.splitlines()) == len(EXAMPLE.read_text().splitlines())
    assert report.stat().st_size > 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--report", "-"], "--report is '-'"),
        (["--resume"], "--out - (standard output) works"),
    ],
)
def test_out_dash_refuses_what_stdout_cannot_hold(tmp_path, extra, message):
    res = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "mrr", "--out", "-", *extra])
    assert res.exit_code == 2
    assert message in _err(res)
    assert res.stdout == ""


def test_metrics_json_lists_every_metric_with_its_fields():
    res = runner.invoke(app, ["metrics", "--json"])
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in res.stdout.splitlines()]  # piped: a line each
    assert [r["name"] for r in records] == list(all_specs())
    assert {"family", "requires", "higher_is_better", "lower", "upper"} <= set(records[0])


def test_metrics_piped_prints_every_full_name_one_per_line():
    res = runner.invoke(app, ["metrics"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split("\t")[0] == "metric"
    assert [line.split("\t")[0] for line in lines[1:]] == list(all_specs())
    assert all("…" not in line for line in lines)


def test_evaluate_help_shows_examples_and_readable_value_types():
    res = runner.invoke(app, ["evaluate", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for text in ("FIELD=PATH", "METRIC=VALUE", "Examples:", "--out - -q"):
        assert text in res.stdout
    assert "list[str]" not in res.stdout


def test_report_help_keeps_the_default_output_in_view():
    res = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "write ." not in res.stdout
    assert "RESULTS with the suffix .html" in res.stdout
    assert "Examples:" in res.stdout


def test_bad_json_reply_names_the_position_once():
    with pytest.raises(ReplyInvalid) as caught:
        _load('{"claims": "unterminated')
    assert "at at" not in str(caught.value)
    assert "starting at position" in str(caught.value)


def test_mistyped_dotted_path_stops_before_scoring_with_close_names(tmp_path):
    out = tmp_path / "res.jsonl"
    args = ["evaluate", str(_nested(tmp_path)), "-c", "answer=response"]
    res = runner.invoke(app, [*args, "-m", "k_precision", "-c", "contexts=pred.ctxx", "-o", out])
    assert res.exit_code == 2
    assert "'pred.ctxx'" in _err(res) and "did you mean 'ctx'" in _err(res)
    assert not out.exists()
    # Without --metrics too: the mapped field no longer fails every row.
    res = runner.invoke(app, [*args, "-c", "contexts=pred.nope"])
    assert res.exit_code == 2
    assert "'pred.nope'" in _err(res)


def test_a_path_some_rows_lack_fails_only_those_rows(tmp_path):
    res = runner.invoke(
        app,
        [
            "evaluate",
            str(_nested(tmp_path)),
            "-m",
            "k_precision",
            "-c",
            "answer=response",
            "-c",
            "contexts=pred.ctx.1",
            "--out",
            "-",
        ],
    )
    assert res.exit_code == 0, res.output
    first, second = (json.loads(line) for line in res.stdout.splitlines())
    assert first["scores"]["k_precision"] is not None
    assert "has 1 items, no index '1'" in second["failures"]["k_precision"]


def test_report_group_by_an_unknown_path_is_an_error_with_close_names(tmp_path):
    out = tmp_path / "res.jsonl"
    ok = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "mrr", "-o", str(out), "-q"])
    assert ok.exit_code == 0, ok.output
    res = runner.invoke(app, ["report", str(out), "--group-by", "metadata.categroy"])
    assert res.exit_code == 2
    assert "Did you mean 'metadata.category'" in _err(res)
    assert not out.with_suffix(".html").exists()
    fine = runner.invoke(app, ["report", str(out), "--group-by", "metadata.category"])
    assert fine.exit_code == 0, fine.output


def test_evaluate_group_by_an_unknown_path_stops_before_scoring(tmp_path):
    out, report = tmp_path / "res.jsonl", tmp_path / "r.html"
    args = ["evaluate", str(EXAMPLE), "-m", "mrr", "-o", str(out), "--report", str(report)]
    res = runner.invoke(app, [*args, "--group-by", "categroy"])
    assert res.exit_code == 2
    assert "Did you mean 'metadata.category'" in _err(res)
    assert not out.exists() and not report.exists()
    ok = runner.invoke(app, [*args, "--group-by", "metadata.category", "-q"])
    assert ok.exit_code == 0, ok.output
    assert "By metadata.category" in report.read_text()
