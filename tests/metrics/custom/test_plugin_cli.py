"""Python metrics through the command line, end to end in a subprocess: ``--plugin MODULE``
from the working directory and the entry point group ``ragmeter.metrics``; gates, failures,
resume and compare on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = '''
import ragmeter


@ragmeter.metric(name="cites_policy", needs=("answer",))
def cites_policy(sample):
    """The answer cites a policy number (POL-123)."""
    if sample.answer == "crash":
        raise KeyError("policy table")
    return 1.0 if "POL-" in sample.answer else 0.0


@ragmeter.metric(name="answer_words", needs=("answer",), higher_is_better=False, upper=1000)
async def answer_words(sample):
    return len(sample.answer.split())
'''

ROWS = [
    {"question_id": "a", "answer": "See POL-123 for refunds.", "contexts": ["POL-123 covers it"]},
    {"question_id": "b", "answer": "crash", "contexts": ["x"]},
    {"question_id": "c", "answer": "Refunds take a week.", "contexts": ["A week."]},
]


def _console_script() -> list[str]:
    """The installed ``ragmeter`` script: unlike ``python -m``, it does not put the working
    directory on sys.path, so --plugin has to."""
    script = Path(sys.executable).with_name("ragmeter")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ragmeter"]


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    environ = dict(os.environ)
    environ.pop("PYTHONPATH", None)
    environ.update(env or {})
    return subprocess.run(
        [*_console_script(), *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "team_metrics"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "checks.py").write_text(PLUGIN)
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return tmp_path


def test_a_plugin_from_the_working_directory_scores_gates_and_lists_failures(project) -> None:
    proc = _run(
        [
            "evaluate",
            "data.jsonl",
            "--plugin",
            "team_metrics.checks",
            "-m",
            "cites_policy,answer_words,k_precision",
            "--out",
            "out.jsonl",
            "--fail-under",
            "cites_policy=0.9",
            "--no-progress",
        ],
        project,
    )
    assert proc.returncode == 1, proc.stderr  # the gate failed; nothing else went wrong
    assert "FAIL cites_policy: mean 0.5000 < 0.9" in proc.stderr
    assert "row 1 cites_policy: cites_policy raised KeyError: 'policy table'" in proc.stderr
    assert "checks.py, line" in proc.stderr
    rows = [json.loads(line) for line in (project / "out.jsonl").read_text().splitlines()]
    assert [row["scores"]["cites_policy"] for row in rows] == [1.0, None, 0.0]
    assert [row["scores"]["answer_words"] for row in rows] == [4.0, 1.0, 4.0]
    assert all(row["scores"]["k_precision"] is not None for row in rows)
    record = json.loads((project / "out.jsonl.run.json").read_text())
    assert record["metrics"]["answer_words"]["higher_is_better"] is False
    assert record["summary"]["cites_policy"]["failed"] == 1


def test_resume_and_compare_work_on_plugin_metrics(project) -> None:
    args = ["evaluate", "data.jsonl", "--plugin", "team_metrics.checks", "-m", "cites_policy"]
    first = _run([*args, "--out", "old.jsonl", "-q"], project)
    assert first.returncode == 0, first.stderr
    lines = (project / "old.jsonl").read_text().splitlines(keepends=True)
    (project / "new.jsonl").write_text("".join(lines[:1]))
    (project / "new.jsonl.run.json").write_text((project / "old.jsonl.run.json").read_text())
    resumed = _run([*args, "--out", "new.jsonl", "--resume", "-q"], project)
    assert resumed.returncode == 0, resumed.stderr
    assert len((project / "new.jsonl").read_text().splitlines()) == 3
    compared = _run(
        ["compare", "old.jsonl", "new.jsonl", "--fail-if-worse", "cites_policy=0"], project
    )
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "cites_policy" in compared.stdout


def test_metrics_lists_a_plugin_and_an_unknown_plugin_is_worded(project) -> None:
    listed = _run(["metrics", "--plugin", "team_metrics.checks", "--json"], project)
    assert listed.returncode == 0, listed.stderr
    text = listed.stdout.strip()  # a JSON list, or piped one JSON object a line
    records = (
        json.loads(text) if text.startswith("[") else [json.loads(x) for x in text.splitlines()]
    )
    names = {m["name"]: m for m in records}
    assert names["cites_policy"]["description"] == "The answer cites a policy number (POL-123)."
    missing = _run(["evaluate", "data.jsonl", "--plugin", "team_metric.checks"], project)
    assert missing.returncode == 2
    assert "Plugin 'team_metric.checks' was not found" in missing.stderr
    assert "working directory" in missing.stderr


def test_an_installed_package_adds_metrics_through_its_entry_point(project, tmp_path) -> None:
    site = tmp_path / "site"
    dist = site / "team_metrics-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: team-metrics\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[ragmeter.metrics]\nteam = team_metrics.checks\n")
    (project / "team_metrics").rename(site / "team_metrics")
    env = {"PYTHONPATH": str(site)}
    proc = _run(["evaluate", "data.jsonl", "-m", "cites_policy", "--out", "-", "-q"], project, env)
    assert proc.returncode == 0, proc.stderr
    scores = [json.loads(line)["scores"]["cites_policy"] for line in proc.stdout.splitlines()]
    assert scores == [1.0, None, 0.0]


def test_a_plugin_given_as_a_python_file_path(project) -> None:
    proc = _run(
        [
            "evaluate",
            "data.jsonl",
            "--plugin",
            "team_metrics/checks.py",
            "-m",
            "cites_policy",
            "--out",
            "-",
            "-q",
        ],
        project,
    )
    assert proc.returncode == 0, proc.stderr
    scores = [json.loads(line)["scores"]["cites_policy"] for line in proc.stdout.splitlines()]
    assert scores == [1.0, None, 0.0]
