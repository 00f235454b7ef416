from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.result import sidecar_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag_sample.jsonl"
runner = CliRunner()


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_evaluate_writes_one_line_per_row_in_input_order(tmp_path):
    out = tmp_path / "res.jsonl"
    res = runner.invoke(
        app, ["evaluate", str(EXAMPLE), "--metrics", "k_precision,mrr", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    n_input = len(EXAMPLE.read_text().splitlines())
    assert [x["index"] for x in lines] == list(range(n_input))
    assert lines[0]["id"] == "q01"
    assert set(lines[0]) >= {"index", "id", "scores", "reasons", "failures", "details"}
    assert set(lines[0]["scores"]) == {"k_precision", "mrr"}
    assert "k_precision" in res.stdout
    assert sidecar_path(out).exists()


def test_fail_under_sets_exit_code_one(tmp_path):
    ok = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "mrr", "--fail-under", "mrr=0.5"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "mrr", "--fail-under", "mrr=0.99"])
    assert bad.exit_code == 1
    assert "mrr: mean 0.8333 < 0.99" in bad.output


def test_column_mapping_with_dotted_path(tmp_path):
    data = _write(
        tmp_path / "d.jsonl",
        [{"response": "Paris is nice", "pred": {"ctx": ["Paris is nice", "x"]}}],
    )
    res = runner.invoke(
        app,
        [
            "evaluate",
            str(data),
            "-m",
            "k_precision",
            "--column",
            "contexts=pred.ctx",
            "-o",
            str(tmp_path / "o.jsonl"),
        ],
    )
    assert res.exit_code == 0, res.output
    row = json.loads((tmp_path / "o.jsonl").read_text())
    assert row["scores"]["k_precision"] == 1.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "k_precison"], "Did you mean 'k_precision'"),
        (["-m", " , "], "The metrics list is empty"),
        (["-m", "context_relevance", "--relevance-dtype", "fp8"], "Got 'fp8'"),
        (["-m", "k_precision", "--fail-under", "k_precision"], "expected NAME=VALUE"),
        (["-m", "k_precision", "--column", "contxts=a"], "Unknown field 'contxts'"),
        (["-m", "k_precision", "--max-concurrency", "0"], "must be >= 1"),
        (["-m", "k_precision", "--fail-under", "k_precision=1.5"], "lie in [0, 1]"),
        (["-m", "k_precision,mrr", "--fail-under", "faithfulness=0.5"], "does not ask for"),
    ],
)
def test_bad_options_give_a_clear_error_and_exit_two(args, message):
    res = runner.invoke(app, ["evaluate", str(EXAMPLE), *args])
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output


def test_missing_column_is_rejected_before_work_with_suggestion(tmp_path):
    data = _write(tmp_path / "d.jsonl", [{"answr": "a", "contexts": ["a"]}])
    res = runner.invoke(app, ["evaluate", str(data), "-m", "k_precision"])
    assert res.exit_code == 2
    assert "field 'answer'" in res.output and "'answr'" in res.output


def test_unreadable_file_is_a_clear_error(tmp_path):
    res = runner.invoke(app, ["evaluate", str(tmp_path / "nope.jsonl"), "-m", "mrr"])
    assert res.exit_code == 2 and "No such file" in res.output


def test_metrics_lists_every_metric_with_needs():
    res = runner.invoke(app, ["metrics"])
    assert res.exit_code == 0
    for name in ("k_precision", "token_recall", "mrr", "map", "ndcg_at_10"):
        assert name in res.stdout


def test_default_metrics_are_those_whose_fields_exist(tmp_path):
    data = _write(
        tmp_path / "d.jsonl", [{"contexts_ids": ["a", "b"], "reference_context_ids": ["b"]}]
    )
    out = tmp_path / "o.jsonl"
    res = runner.invoke(app, ["evaluate", str(data), "-o", str(out)])
    assert res.exit_code == 0, res.output
    scores = json.loads(out.read_text())["scores"]
    assert scores["mrr"] == 0.5
    assert "k_precision" not in scores


def test_console_script_runs_as_a_subprocess(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragmeter",
            "evaluate",
            str(EXAMPLE),
            "-m",
            "map",
            "--fail-under",
            "map=0.95",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "FAIL" in proc.stderr and "map" in proc.stderr


def test_failures_are_listed_when_rows_stream_to_out(tmp_path):
    rows = [{"answer": "a b", "contexts": ["a"]}, {"answer": 5, "contexts": ["a"]}]
    data = _write(tmp_path / "d.jsonl", rows)
    res = runner.invoke(
        app, ["evaluate", str(data), "-m", "k_precision", "--out", str(tmp_path / "o.jsonl")]
    )
    assert res.exit_code == 0, res.output
    assert "1 metric failures" in res.output
    assert "row 1 k_precision" in res.output and "field 'answer'" in res.output


def test_a_run_where_every_row_fails_exits_two(tmp_path):
    # (A mapped path no row has stops before scoring: tests/cli/test_cli_habits.py.)
    data = _write(
        tmp_path / "d.jsonl",
        [{"answer": "Paris", "pred": {"nope": 5}} for _ in range(3)],
    )
    args = ["evaluate", str(data), "-m", "k_precision", "--column", "contexts=pred.nope"]
    for extra in ([], ["-q"]):
        res = runner.invoke(app, [*args, *extra])
        assert res.exit_code == 2, res.output
        said = " ".join(res.output.split())  # the console wraps long lines
        assert "Every row failed on every metric" in said
        assert "expected a list of texts" in said
    # One good row is a run with failures, not a broken run.
    rows = [{"answer": "Paris", "pred": {"nope": ["Paris"]}}, {"answer": "Paris", "pred": {}}]
    mixed = runner.invoke(app, [*args[:1], str(_write(tmp_path / "m.jsonl", rows)), *args[2:]])
    assert mixed.exit_code == 0, mixed.output


def test_metrics_skipped_for_missing_columns_are_named(tmp_path):
    data = _write(tmp_path / "d.jsonl", [{"question": "q?", "answer": "a"}])
    res = runner.invoke(app, ["evaluate", str(data), "-o", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "no column for contexts" in said
    assert "--column FIELD=COLUMN" in said
