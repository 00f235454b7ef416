"""``ragmeter calibrate`` and ``ragmeter evaluate --labels --gate calibrated`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragmeter.cli import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_sample.jsonl"
runner = CliRunner()


def labels_file(path: Path, values: dict[str, float], selection: str = "uniform") -> Path:
    lines = [{"selection": selection, "sample": len(values)}]
    lines += [{"id": k, "metric": "k_precision", "value": v} for k, v in values.items()]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


HUMAN = {"q01": 1.0, "q02": 0.9, "q03": 0.8, "q04": 1.0, "q05": 0.7, "q06": 0.95}
HUMAN |= {"q07": 0.6, "q08": 1.0, "q09": 0.85, "q10": 0.9}  # 10: an interval's minimum


def test_evaluate_with_labels_records_reports_and_gates(tmp_path: Path) -> None:
    out, report = tmp_path / "res.jsonl", tmp_path / "r.html"
    labels = labels_file(tmp_path / "l.jsonl", HUMAN)
    args = ["evaluate", str(EXAMPLE), "-m", "k_precision", "--out", str(out)]
    res = runner.invoke(
        app,
        [
            *args,
            "--report",
            str(report),
            "--labels",
            str(labels),
            "--gate",
            "calibrated",
            "--fail-under",
            "k_precision=0.3",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "calibrated (PPI++)" in res.output
    record = json.loads(Path(f"{out}.run.json").read_text())["calibration"]
    entry = record["metrics"]["k_precision"]
    assert record["selection"] == "uniform" and entry["n_labels"] == 10
    low, high = entry["calibrated"]["ci"]
    assert low <= entry["calibrated"]["mean"] <= high
    page = report.read_text()
    assert "Calibration against human labels" in page and "k_precision" in page
    # The same run gated above the calibrated interval's lower bound fails (exit 1) even
    # where the judge's own mean would pass.
    gate = f"k_precision={low + 0.01:.3f}"
    failed = runner.invoke(
        app, [*args, "--labels", str(labels), "--gate", "calibrated", "--fail-under", gate]
    )
    assert failed.exit_code == 1, failed.output
    assert "calibrated interval" in failed.output


def test_calibrate_json_is_keyed_by_metric(tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "k_precision", "--out", str(out), "-q"])
    labels = labels_file(tmp_path / "l.jsonl", HUMAN)
    res = runner.invoke(app, ["calibrate", str(out), "--labels", str(labels), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    entry = data["k_precision"]
    assert entry["n_labels"] == 10 and "agreement" in entry
    for key in ("judge", "labels", "calibrated"):
        assert set(entry[key]) >= {"mean", "ci"} and len(entry[key]["ci"]) == 2


def test_errors_and_refusals_exit_2_or_fail_the_gate(tmp_path: Path) -> None:
    out = tmp_path / "res.jsonl"
    runner.invoke(app, ["evaluate", str(EXAMPLE), "-m", "k_precision", "--out", str(out), "-q"])
    bad = labels_file(tmp_path / "bad.jsonl", {"nope": 1.0})
    res = runner.invoke(app, ["calibrate", str(out), "--labels", str(bad)])
    assert res.exit_code == 2 and "row 'nope' is not in the results" in res.output
    strat = labels_file(tmp_path / "s.jsonl", HUMAN, selection="stratified")
    res = runner.invoke(
        app, ["calibrate", str(out), "--labels", str(strat), "--fail-under", "k_precision=0.1"]
    )
    assert res.exit_code == 1 and "not a uniform random sample" in res.output
    res = runner.invoke(
        app, ["evaluate", str(EXAMPLE), "-m", "k_precision", "--gate", "calibrated"]
    )
    assert res.exit_code == 2 and "add --labels FILE" in res.output
