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


def test_indexing_by_metric_gives_its_scores(result):
    assert result["mrr"] == result.scores("mrr")
    assert len(result["k_precision"]) == len(result.rows)


def test_indexing_by_an_unknown_metric_names_the_run_metrics(result):
    with pytest.raises(KeyError, match="'mrrr' is not in this run. Did you mean 'mrr'"):
        result["mrrr"]


def test_to_pandas_with_inputs_puts_the_input_fields_beside_the_scores(result):
    pytest.importorskip("pandas")
    df = result.to_pandas(inputs=True)
    first = json.loads(EXAMPLE.read_text().splitlines()[0])
    assert list(df.columns[:4]) == ["index", "id", "question", "metadata"]
    assert {"contexts", "answer", "reference_answers", "k_precision", "mrr"} <= set(df.columns)
    assert df.loc[0, "question"] == first["question"]
    assert df.loc[0, "contexts"] == first["contexts"]
    assert list(df["mrr"]) == result["mrr"]


def test_to_pandas_with_inputs_maps_columns_as_the_run_did():
    pytest.importorskip("pandas")
    rows = [{"q": "Where?", "response": "Paris", "pred": {"ctx": ["Paris is nice"]}}]
    run = ragmeter.evaluate(
        rows,
        ["k_precision"],
        column_map={"question": "q", "contexts": "pred.ctx"},
        progress=False,
    )
    df = run.to_pandas(inputs=True)
    assert df.loc[0, "question"] == "Where?" and df.loc[0, "answer"] == "Paris"
    assert df.loc[0, "contexts"] == ["Paris is nice"]


def test_to_pandas_with_inputs_of_a_consumed_generator_says_why():
    rows = ({"answer": "a", "contexts": ["a"]} for _ in range(2))
    run = ragmeter.evaluate(rows, ["k_precision"], progress=False)
    with pytest.raises(ValueError, match="consumed"):
        run.to_pandas(inputs=True)
