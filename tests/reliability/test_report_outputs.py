"""A report never overwrites what it reads (issue 29, item 1).

``ragmeter report RESULTS -o FILE`` and ``write_report`` go through the same output-path guard
as ``ragmeter evaluate``: an output that is the results file, its run record, the baseline or
its run record, or the input given with ``--data`` is refused before any work, and every file
is left as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import ConfigError
from ragmeter.report.html import write_report

ROWS = [
    {
        "question_id": f"q{i}",
        "answer": f"Paris is in France {i}",
        "contexts": ["Paris is in France."],
    }
    for i in range(3)
]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    for name in ("r.jsonl", "b.jsonl"):
        ragmeter.evaluate(data, ["k_precision"], out=tmp_path / name, progress=False)
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("r.jsonl", "-o", "r.jsonl"), ("--output", "'r.jsonl'", "RESULTS")),
        (("r.jsonl", "-o", "r.jsonl.run.json"), ("--output", "run record of RESULTS")),
        (("r.jsonl", "--baseline", "b.jsonl", "-o", "b.jsonl"), ("--output", "--baseline")),
        (
            ("r.jsonl", "--baseline", "b.jsonl", "-o", "b.jsonl.run.json"),
            ("--output", "run record of --baseline"),
        ),
        (("r.jsonl", "--data", "in.jsonl", "-o", "in.jsonl"), ("--output", "--data")),
    ],
)
def test_report_refuses_an_output_that_is_one_of_its_inputs(
    workdir: Path, args: tuple[str, ...], needles: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workdir)
    before = snapshot(workdir)
    res = CliRunner().invoke(app, ["report", *args])
    assert res.exit_code == 2, res.output
    flat = " ".join(res.stderr.split())
    assert "Error:" in flat and "is the input" in flat, flat
    for needle in needles:
        assert needle in flat, (needle, flat)
    assert snapshot(workdir) == before


def test_write_report_refuses_to_write_over_the_results_it_reads(workdir: Path) -> None:
    before = snapshot(workdir)
    results = workdir / "r.jsonl"
    with pytest.raises(ConfigError, match="out_path .* is the input .*run"):
        write_report(results, results)
    with pytest.raises(ConfigError, match="out_path .* is the input .*baseline"):
        write_report(results, workdir / "b.jsonl.run.json", baseline=workdir / "b.jsonl")
    assert snapshot(workdir) == before


def test_report_still_writes_beside_the_results(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workdir)
    res = CliRunner().invoke(app, ["report", "r.jsonl", "--baseline", "b.jsonl"])
    assert res.exit_code == 0, res.output
    assert (workdir / "r.html").read_text().lower().startswith("<!doctype html>")
