"""A results file and its run record read back into the RunResult the run returned
(``ragmeter.results.read_run``): summaries and directions from the record, never guessed or
computed again where the record has them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ragmeter
from ragmeter.report.claim_flags import claim_digest, flags_of
from ragmeter.results import read_run, run_from_rows

ROWS = [
    {
        "question_id": f"q{i}",
        "answer": f"Paris is the capital {i}",
        "contexts": ["Paris is the capital of France"],
        "reference_answers": ["Paris"],
    }
    for i in range(8)
]


def write(path: Path, rows: list[dict[str, Any]], info: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (path.parent / (path.name + ".run.json")).write_text(json.dumps(info))
    return path


def test_a_results_file_reads_back_into_the_run_evaluate_returned(tmp_path):
    out = tmp_path / "results.jsonl"
    result = ragmeter.evaluate(ROWS, ["k_precision", "token_f1"], out=str(out), progress=False)
    back = read_run(out)
    assert isinstance(back, type(result))
    assert back.summary == result.summary
    assert back.specs == result.specs
    assert [r.to_json() for r in back.rows] == [r.to_json() for r in result.rows]
    assert back.usage == result.usage
    assert back.results_file == out and back.directions_inferred == []


def test_summaries_come_from_the_record_when_it_counts_the_rows_read(tmp_path):
    rows = [{"index": i, "scores": {"m": 0.5}} for i in range(4)]
    recorded = {"count": 4, "undefined": 0, "failed": 0, "mean": 0.123, "median": 0.5}
    recorded |= {"std": 0.0, "min": 0.5, "max": 0.5, "ci_low": 0.1, "ci_high": 0.2}
    info = {"metrics": {"m": {"higher_is_better": True}}, "summary": {"m": recorded}}
    run = read_run(write(tmp_path / "r.jsonl", rows, info))
    assert run.summary["m"].mean == 0.123  # the record's, not computed again
    # A record that counts other rows (a run stopped before its end) is not used.
    stale = {"m": {**recorded, "count": 3}}
    run = read_run(write(tmp_path / "s.jsonl", rows, {**info, "summary": stale}))
    assert run.summary["m"].mean == 0.5 and run.summary["m"].count == 4


def test_the_direction_is_the_recorded_specs_not_the_names():
    rows = [{"index": 0, "scores": {"noise_sensitivity_custom": 0.2, "hallucination": 0.1}}]
    info = {"metrics": {"noise_sensitivity_custom": {"higher_is_better": True, "upper": 2.0}}}
    run = run_from_rows(rows, info)
    assert run.metric("noise_sensitivity_custom").higher_is_better is True
    assert run.metric("noise_sensitivity_custom").upper == 2.0
    # Without a record entry the name decides, and the run says so.
    assert run.metric("hallucination").higher_is_better is False
    assert run.directions_inferred == ["hallucination"]


def test_a_report_reading_without_details_keeps_every_claim_flag(tmp_path):
    evidence = {
        "contexts": {"entailed": True, "rests_on": [{"index": 1, "support": 0.6}]},
        "references": {"entailed": False, "rests_on": [{"index": 0, "support": 0.1}]},
    }
    details = {
        "faithfulness": {
            "answer_claims": [{"claim": "a claim", "evidence": evidence}] * 2,
            "verdict_count": 2,
            "uncertain_verdicts": 1,
            "short_reference": True,
            "claims": ["a claim", "a claim"],
        }
    }
    rows = [{"index": i, "scores": {"faithfulness": 1.0}, "details": details} for i in range(3)]
    path = write(tmp_path / "c.jsonl", rows, {})
    whole, digest = read_run(path), read_run(path, details=claim_digest)
    assert flags_of(digest) == flags_of(whole)
    assert flags_of(whole)[0].weakest["faithfulness"] == (0.6, "a claim", "context 1")
    assert digest.summary == whole.summary
