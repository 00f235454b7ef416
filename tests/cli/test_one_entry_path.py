"""The CLI goes through the public API: ``ragmeter evaluate`` calls ``ragmeter.evaluate``, which
writes the report and the calibration for Python users and the command alike."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_sample.jsonl"


def test_the_evaluate_command_calls_the_public_evaluate(tmp_path, monkeypatch) -> None:
    calls = []
    real = ragmeter.evaluate

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(ragmeter, "evaluate", spy)
    out, report = tmp_path / "r.jsonl", tmp_path / "r.html"
    res = CliRunner().invoke(
        app,
        ["evaluate", str(EXAMPLE), "-m", "k_precision", "--out", str(out), "--report", str(report)],
    )
    assert res.exit_code == 0, res.output
    assert len(calls) == 1
    assert calls[0]["report"] == report and calls[0]["keep_rows"] is False
    assert report.is_file() and "k_precision" in report.read_text(encoding="utf-8")


def test_evaluate_with_labels_keeps_the_calibration_in_the_run_record(tmp_path) -> None:
    data = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    labels = tmp_path / "labels.jsonl"
    lines = [{"selection": "uniform"}]
    lines += [{"id": row["question_id"], "metric": "k_precision", "value": 1.0} for row in data]
    labels.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = tmp_path / "r.jsonl"
    result = ragmeter.evaluate(
        EXAMPLE, ["k_precision"], out=out, labels=labels, keep_rows=False, progress=False
    )
    record = result.info["calibration"]
    assert record["metrics"]["k_precision"]["n_labels"] == len(data)
    on_disk = json.loads((tmp_path / "r.jsonl.run.json").read_text(encoding="utf-8"))
    assert on_disk["calibration"] == record
