"""``--resume`` refuses to mix two runs' metrics in one file: a Python metric whose code
changed since the file was written (issue 36 item 11), or a run that leaves out metrics the
file holds (item 16). Real command, real plugin edited between the runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from tests.reliability.cli_process import ragmeter_process

PLUGIN = """
import ragmeter


@ragmeter.metric(name="team_check", needs=("answer",){version})
def team_check(sample):
    return {value}
"""


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return ragmeter_process(project, "evaluate", "data.jsonl", "--out", "out.jsonl", *args)


def plugin(project: Path, value: str, version: str | None = None) -> None:
    declared = "" if version is None else f", version={version!r}"
    (project / "team.py").write_text(PLUGIN.format(value=value, version=declared))


def interrupted(project: Path, *args: str) -> None:
    """A complete run of ``args``, cut to its first 2 rows as a stopped run leaves it."""
    first = run(project, *args, "-q")
    assert first.returncode == 0, first.stderr
    out = project / "out.jsonl"
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:2]))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    rows = [
        {"question_id": f"q{i}", "answer": f"a {i}", "contexts": ["a"], "reference_answers": ["a"]}
        for i in range(6)
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_resume_refuses_a_python_metric_whose_source_changed(project: Path) -> None:
    args = ("--plugin", "team", "-m", "team_check")
    plugin(project, "0.0")
    interrupted(project, *args)
    plugin(project, "1.0")  # the metric now scores every row 1.0
    proc = run(project, *args, "--resume", "-q")
    assert proc.returncode == 2, proc.stderr
    assert "written by other code of its metrics: team_check" in proc.stderr
    assert "source sha256:" in proc.stderr
    assert len((project / "out.jsonl").read_text().splitlines()) == 2  # left as it was
    plugin(project, "0.0")  # the code that wrote the file: resumed
    proc = run(project, *args, "--resume", "-q")
    assert proc.returncode == 0, proc.stderr
    scores = [json.loads(x)["scores"]["team_check"] for x in (project / "out.jsonl").open()]
    assert scores == [0.0] * 6


def test_resume_follows_a_declared_version_of_a_python_metric(project: Path) -> None:
    args = ("--plugin", "team", "-m", "team_check")
    plugin(project, "0.0", version="1")
    interrupted(project, *args)
    plugin(project, "1.0", version="2")
    proc = run(project, *args, "--resume", "-q")
    assert proc.returncode == 2, proc.stderr
    assert "team_check (the run record has '1', this run '2')" in proc.stderr
    # The same declared version: the author says the scores did not change (a refactor).
    plugin(project, "0.0 + 0.0", version="1")
    proc = run(project, *args, "--resume", "-q")
    assert proc.returncode == 0, proc.stderr
    record = json.loads((project / "out.jsonl.run.json").read_text())
    assert record["metrics"]["team_check"]["version"] == "1"


def test_resume_refuses_a_run_that_leaves_out_metrics_of_the_file(project: Path) -> None:
    interrupted(project, "-m", "k_precision,token_f1")
    proc = run(project, "-m", "k_precision", "--resume", "-q")
    assert proc.returncode == 2, proc.stderr
    assert "holds metrics this run does not compute: token_f1" in proc.stderr
    assert "--metrics k_precision,token_f1" in proc.stderr
    assert len((project / "out.jsonl").read_text().splitlines()) == 2
    # More metrics than the file's is a resumed run that completes the rows it kept.
    proc = run(project, "-m", "k_precision,token_f1,exact_match", "--resume", "-q")
    assert proc.returncode == 0, proc.stderr
    final = {row["index"]: row for row in map(json.loads, (project / "out.jsonl").open())}
    assert sorted(final) == list(range(6))
    assert all(
        set(r["scores"]) == {"k_precision", "token_f1", "exact_match"} for r in final.values()
    )
