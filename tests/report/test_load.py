from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from ragmeter.errors import DataError
from ragmeter.report.groups import groups
from ragmeter.report.load import as_run, read_details
from ragmeter.results import no_details, read_run, run_from_rows
from ragmeter.types import RowResult, Score


def test_load_reads_rows_and_sidecar(results_file):
    run = read_run(results_file)
    assert len(run.rows) == 12
    assert run.info["ragmeter_version"] == "0.1.0"
    assert run.metric("noise_sensitivity").higher_is_better is False
    assert run.directions_inferred == []
    assert run.counts("context_precision") == (3, 0)
    assert run.summary["faithfulness"].count == 12


def test_missing_sidecar_infers_directions_and_says_so(writer, rd):
    path = writer("r.jsonl", rd.make_rows(), None)
    run = read_run(path)
    assert run.info == {}
    assert run.metric("faithfulness").higher_is_better
    assert not run.metric("noise_sensitivity").higher_is_better
    assert set(run.directions_inferred) == {
        "faithfulness",
        "noise_sensitivity",
        "context_precision",
    }


def test_bad_json_names_the_line(tmp_path, rd):
    path = tmp_path / "bad.jsonl"
    rows = rd.make_rows(3)
    path.write_text(json.dumps(rows[0]) + "\n" + '{"index": 1, "scores": {' + "\n")
    with pytest.raises(DataError, match=r"bad.jsonl, line 2: not valid JSON"):
        read_run(path)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"index": 0, "scores": {"m": "high"}}, "must be a number or null"),
        ({"index": 0, "scores": {"m": float("nan")}}, "must be finite"),
        ({"scores": {"m": 0.5}}, "has no 'index'"),
        ({"index": 0, "scores": [0.5]}, "field 'scores': must be an object"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_invalid_rows_are_data_errors_naming_the_line(tmp_path, row, message):
    path = tmp_path / "r.jsonl"
    path.write_text("\n" + json.dumps(row) + "\n")
    with pytest.raises(DataError, match=message) as info:
        read_run(path)
    assert "line 2" in str(info.value)


def test_missing_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="Results file not found"):
        read_run(tmp_path / "nope.jsonl")


def test_reading_without_details_drops_them_and_read_details_fetches_some(results_file):
    run = read_run(results_file, details=no_details)
    assert all(not r.details for r in run.rows)
    got = read_details(results_file, [3, 7])
    assert set(got) == {3, 7}
    assert "claims" in got[3]["faithfulness"]
    assert run.with_details(got).rows[3].details["faithfulness"]["claims"][0].startswith("claim A3")


def test_from_parts_accepts_row_results_and_dicts(rd):
    rr = RowResult(index=0, id="a")
    rr.record("faithfulness", Score(0.25, reason="half", details={"claims": ["x"]}))
    run = run_from_rows([rr, rd.make_rows(2)[1]], rd.make_info())
    assert run.rows[0].scores == {"faithfulness": 0.25}
    assert run.rows[0].details["faithfulness"] == {"claims": ["x"]}
    assert run.rows[1].id == "q1"


def test_as_run_accepts_a_result_like_object(results_file):
    fake = SimpleNamespace(
        rows=[RowResult(index=0, id=None, scores={"hallucination": 0.5})], info={}
    )
    run = as_run(fake)
    assert run.metric("hallucination").higher_is_better is False
    assert as_run(str(results_file)).rows[0].id == "q0"
    with pytest.raises(TypeError, match="Expected a run result"):
        as_run(42)


def test_unknown_metric_suggests_close_names(results_file):
    with pytest.raises(DataError, match="Did you mean 'faithfulness'"):
        read_run(results_file).metric("faithfulnes")


def test_groups_by_metadata_field_with_missing_and_other():
    rows = [
        {"index": i, "scores": {"m": 0.5}, "metadata": {"c": f"g{i % 4}"} if i < 10 else None}
        for i in range(12)
    ]
    run = run_from_rows(rows, {})
    found = groups(run, "metadata.c")
    assert list(found) == ["g0", "g1", "(missing)", "g2", "g3"]
    assert len(found["(missing)"].rows) == 2
    merged = groups(run, "metadata.c", max_groups=3)
    assert list(merged) == ["g0", "g1", "(other)"]
    assert len(merged["(other)"].rows) == 6
    assert list(groups(run, "c")) == list(found)  # bare name reads metadata
