from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.result import sidecar_path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rag_sample.jsonl"


@pytest.fixture(scope="module")
def result() -> ragmeter.RunResult:
    return ragmeter.evaluate(EXAMPLE, ["k_precision", "mrr"], progress=False)


def test_to_pandas_has_one_row_per_sample_and_a_column_per_metric(result):
    pytest.importorskip("pandas")
    df = result.to_pandas()
    assert list(df.columns) == ["index", "id", "k_precision", "mrr", "reasons", "failures"]
    assert len(df) == len(EXAMPLE.read_text().splitlines())
    assert df["mrr"].mean() == pytest.approx(result.summary["mrr"].mean)


def test_to_jsonl_round_trips_rows_and_writes_the_run_record(result, tmp_path):
    path = result.to_jsonl(tmp_path / "r.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [ragmeter.RowResult.from_json(x).to_json() for x in lines] == [
        r.to_json() for r in result.rows
    ]
    info = json.loads(sidecar_path(path).read_text())
    assert info["summary"]["k_precision"]["mean"] == result.summary["k_precision"].mean


def test_plot_returns_a_histogram_and_a_box_plot(result):
    pytest.importorskip("matplotlib")
    fig = result.plot("k_precision")
    assert len(fig.axes) == 2
    assert fig.axes[0].patches  # histogram bars


def test_unknown_metric_is_named(result):
    with pytest.raises(KeyError, match="'faithfulness' is not in this run"):
        result.scores("faithfulness")
