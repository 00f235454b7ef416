"""Every file a command reads is refused as its output (issue 36, item 7).

``evaluate --labels L --out L`` replaced the human labels with results, ``--report L`` with
HTML; ``ragmeter label R -o DATA`` and ``ragmeter report R -o DATA``, where DATA is the input
R's run record names, replaced the data set. Each is now refused before any work, exit 2,
every file as it was. Real commands (``python -m ragmeter``) on real files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragmeter

SRC = str(Path(ragmeter.__file__).parents[1])
ROWS = [
    {
        "question_id": f"q{i}",
        "question": f"Where is city {i}?",
        "answer": f"City {i} is in France.",
        "contexts": [f"City {i} is in France."],
        "reference_answers": [f"City {i} is in France."],
    }
    for i in range(6)
]
LABELS = [{"id": "q1", "metric": "token_f1", "value": 0.8}]


def ragmeter_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=300,
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A folder with data.jsonl, labels.jsonl and a finished run, results.jsonl (its record
    names the data by the relative name it was given)."""
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in LABELS))
    done = ragmeter_cli(
        "evaluate", "data.jsonl", "-m", "token_f1", "--out", "results.jsonl", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "results.jsonl.run.json").read_text())["data"] == "data.jsonl"
    return tmp_path


def _refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.args, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    flat = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in flat, (needle, proc.stderr)


@pytest.mark.parametrize("option", ["--out", "--report"])
def test_evaluate_refuses_its_labels_as_an_output(run: Path, option: str) -> None:
    before = snapshot(run)
    args = ["evaluate", "data.jsonl", "-m", "token_f1", "--labels", "labels.jsonl"]
    if option == "--report":
        args += ["--out", "other.jsonl"]
    proc = ragmeter_cli(*args, option, "labels.jsonl", cwd=run)
    _refused(proc, f"{option} 'labels.jsonl' is the input (--labels 'labels.jsonl')")
    assert snapshot(run) == before


@pytest.mark.parametrize("command", ["report", "label"])
def test_a_command_on_results_refuses_the_input_the_run_record_names(
    run: Path, command: str
) -> None:
    before = snapshot(run)
    extra = ["--sample", "2"] if command == "label" else []
    proc = ragmeter_cli(command, "results.jsonl", *extra, "-o", "data.jsonl", cwd=run)
    _refused(proc, "is the input (the input the run record of", "'data.jsonl'")
    assert snapshot(run) == before


def test_the_recorded_input_is_found_beside_the_results_from_another_folder(
    run: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The record's relative name is looked up beside the results too, as the report does."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    before = snapshot(run)
    proc = ragmeter_cli(
        "report", str(run / "results.jsonl"), "-o", str(run / "data.jsonl"), cwd=elsewhere
    )
    _refused(proc, "is the input (the input the run record of")
    assert snapshot(run) == before


def test_a_changed_data_set_is_still_refused(run: Path) -> None:
    """The data the record names was edited since the run (its hash differs): it is still
    the user's data, and still not an output."""
    with (run / "data.jsonl").open("a") as fh:
        fh.write(json.dumps(ROWS[0]) + "\n")
    proc = ragmeter_cli("report", "results.jsonl", "-o", "data.jsonl", cwd=run)
    _refused(proc, "is the input (the input the run record of")


def test_other_outputs_are_still_written(run: Path) -> None:
    proc = ragmeter_cli("report", "results.jsonl", "-o", "report.html", cwd=run)
    assert proc.returncode == 0, proc.stderr
    assert (run / "report.html").read_text().startswith("<!")
