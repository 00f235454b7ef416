"""Criteria are metrics like the others: planned, skipped with a reason where the judge cannot
judge them (entailment ones then go to the verifier), gated, resumed, compared, reported and
calibrated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragmeter
from ragmeter import evaluate
from ragmeter.config.criteria import CriteriaVerdicts, Criterion
from ragmeter.errors import ConfigError, DataError
from ragmeter.judges.base import Analysis
from ragmeter.judges.fake import FakeJudge, all_entailed, none_entailed
from ragmeter.settings import Settings
from ragmeter.testing.server import TestServer

CITES = Criterion(name="cites_policy", question='Does the answer cite "policy R-12"?')
GROUNDED = Criterion(name="grounded", kind="entailment", premise="contexts", hypothesis="answer")
ROWS = [
    {
        "question": "Can I return shoes?",
        "answer": "Under policy R-12 returns are accepted within 30 days.",
        "contexts": ["Policy R-12: returns are accepted within 30 days.", "Other text."],
    },
    {"question": "Can I return shoes?", "answer": "No.", "contexts": ["Unrelated."]},
]
TOML = """
[[criteria]]
name = "cites_policy"
question = 'Does the answer cite "policy R-12"?'
fields = ["answer"]
"""


def test_without_an_llm_judge_criteria_are_skipped_and_entailment_goes_to_the_verifier() -> None:
    judge = FakeJudge(analyze=Analysis(), verify=[all_entailed, none_entailed])
    settings = Settings(judge=judge, criteria=(CITES, GROUNDED))
    result = evaluate(ROWS, ["k_precision"], settings=settings, progress=False)
    assert "cites_policy" not in result.summary
    assert "cannot judge criteria" in result.info["skipped"]["cites_policy"]
    assert [row.scores["grounded"] for row in result.rows] == [1.0, 0.0]
    first = result.rows[0]
    assert first.details["grounded"]["decided_by"] == "verifier"
    assert first.details["grounded"]["entailed_by"] == [0, 1]
    assert "entailed by the contexts (text 1 of 2)" in first.reasons["grounded"]
    sent = judge.verify_requests[0][0]
    assert sent.claims == (ROWS[0]["answer"],)
    assert sent.premise_texts() == tuple(ROWS[0]["contexts"])


def test_the_offline_judge_skips_judged_criteria_with_the_reason() -> None:
    settings = Settings(criteria=(CITES,))
    result = evaluate(ROWS, ["k_precision"], settings=settings, progress=False)
    reason = result.info["skipped"]["cites_policy"]
    assert "offline" in reason and "('openai:MODEL' as judge)" in reason  # as Python names it


def test_a_criterion_cannot_take_a_metric_name_and_needs_its_fields() -> None:
    clash = Criterion(name="faithfulness", question="Q?")
    with pytest.raises(ConfigError, match="cannot be named 'faithfulness'"):
        evaluate(ROWS, ["k_precision"], settings=Settings(criteria=(clash,)), progress=False)
    refs = Criterion(name="matches_reference", question="Q?", fields=("reference_answers",))
    with pytest.raises(DataError, match="matches_reference"):
        evaluate(ROWS, ["k_precision"], settings=Settings(criteria=(refs,)), progress=False)


def test_a_criterion_named_in_metrics_is_not_looked_up_in_the_registry() -> None:
    judge = FakeJudge(verify=all_entailed)
    settings = Settings(judge=judge, criteria=(GROUNDED,))
    result = evaluate(ROWS, ["grounded"], settings=settings, progress=False)
    assert list(result.summary) == ["grounded"]


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(ragmeter.__file__).parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_the_cli_scores_gates_resumes_and_compares_criteria(tmp_path: Path) -> None:
    (tmp_path / "criteria.toml").write_text(TOML, encoding="utf-8")
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    with TestServer() as server:
        common = [
            "evaluate",
            str(data),
            "-m",
            "k_precision",
            "--criteria",
            "criteria.toml",
            "--judge",
            "openai:test-model",
            "--base-url",
            server.base_url,
            "--cache",
            str(tmp_path / "cache.sqlite3"),
            "--no-progress",
        ]
        done = run_cli(
            *common, "--out", "a.jsonl", "--fail-under", "cites_policy=0.8", cwd=tmp_path
        )
        assert done.returncode == 1, done.stderr
        assert "cites_policy" in done.stderr and "FAIL" in done.stderr
        rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
        assert [r["scores"]["cites_policy"] for r in rows] == [1.0, 0.0]
        passed = run_cli(
            *common,
            "--out",
            "a.jsonl",
            "--resume",
            "--fail-under",
            "cites_policy=0.5",
            cwd=tmp_path,
        )
        assert passed.returncode == 0, passed.stderr
        other = tmp_path / "other.toml"
        other.write_text(TOML.replace("policy R-12", "policy R-13"), encoding="utf-8")
        changed = [*common[:4], "--criteria", "other.toml", *common[6:]]
        refused = run_cli(*changed, "--out", "a.jsonl", "--resume", cwd=tmp_path)
        assert refused.returncode != 0
        assert "--criteria was" in " ".join(refused.stderr.split())
        run_cli(*changed, "--out", "b.jsonl", "--report", "b.html", cwd=tmp_path)
        assert "cites_policy" in (tmp_path / "b.html").read_text(encoding="utf-8")
        compared = run_cli("compare", "a.jsonl", "b.jsonl", cwd=tmp_path)
        assert compared.returncode == 0, compared.stderr
        assert "cites_policy" in compared.stdout
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"id": i, "metric": "cites_policy", "value": v}) + "\n"
            for i, v in enumerate([1.0, 0.0])
        ),
        encoding="utf-8",
    )
    calibrated = run_cli("calibrate", "a.jsonl", "--labels", "labels.jsonl", cwd=tmp_path)
    assert calibrated.returncode == 0, calibrated.stderr
    assert "cites_policy" in calibrated.stdout


def test_a_python_judge_answers_criteria_from_a_script_counted_in_usage() -> None:
    from ragmeter.judges.fake import answering

    judge = FakeJudge(criteria=answering(lambda c, request: "no"))
    settings = Settings(judge=judge, criteria=(CITES,))
    result = evaluate(ROWS, ["cites_policy"], settings=settings, progress=False)
    assert [row.scores["cites_policy"] for row in result.rows] == [0.0, 0.0]
    assert result.usage.calls == 2 and len(judge.criteria_requests) == 2
    assert judge.criteria_requests[0].texts == {"answer": ROWS[0]["answer"]}
    short = FakeJudge(criteria=lambda request: CriteriaVerdicts(verdicts=()))
    settings = Settings(judge=short, criteria=(CITES,))
    failed = evaluate(ROWS, ["cites_policy"], settings=settings, progress=False)
    assert failed.rows[0].failures["cites_policy"] == "The judge gave no verdict for cites_policy."
