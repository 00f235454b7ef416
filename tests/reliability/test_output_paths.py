"""No output ever overwrites an input or another output (issue 15, item 1).

``--out``, ``--report``, the run record beside ``--out`` and ``--cache`` are checked before any
work: an output that is the input, or two outputs that are one file (also through a symlink),
exit 2 with a clear error and leave every file as it was. An output that is a folder, or whose
folder cannot be made, is a clear error too, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import ConfigError

ROW = {"answer": "Paris is in France", "contexts": ["Paris is in France."]}


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        res = CliRunner().invoke(app, ["evaluate", *args, "--no-progress"])
    finally:
        os.chdir(old)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise AssertionError(f"{args}: escaped as {res.exception!r}") from res.exception
    return subprocess.CompletedProcess(args, res.exit_code, res.stdout, res.stderr)


def assert_refused(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.args, proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert "Error:" in proc.stderr, proc.stderr
    flat = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in flat, (proc.args, needle, proc.stderr)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "in.jsonl").write_text(json.dumps(ROW) + "\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "a_file").write_text("not a folder\n")
    os.symlink(tmp_path / "in.jsonl", tmp_path / "link.jsonl")
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--out", "in.jsonl"), ("--out", "in.jsonl", "is the input")),
        (("--out", "./sub/../in.jsonl"), ("--out", "is the input")),
        (("--out", "link.jsonl"), ("--out", "link.jsonl", "is the input")),
        (("--report", "in.jsonl"), ("--report", "is the input")),
        (("--out", "o.jsonl", "--report", "o.jsonl"), ("--out and --report", "same file")),
        (("--out", "o.jsonl", "--report", "o.jsonl.run.json"), ("--report", "run record")),
        (("--out", "o.jsonl", "--cache", "o.jsonl"), ("--out and --cache", "same file")),
        (("--cache", "in.jsonl"), ("--cache", "is the input")),
    ],
)
def test_an_output_that_is_an_input_or_another_output_is_refused_before_any_work(
    workdir: Path, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    (workdir / "sub").mkdir()
    before = snapshot(workdir)
    proc = run_cli("in.jsonl", "-m", "k_precision", *args, cwd=workdir)
    assert_refused(proc, *needles)
    assert snapshot(workdir) == before  # nothing written, nothing truncated


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--out", "folder"), ("--out", "'folder' is a folder")),
        (("--out", "o.jsonl", "--report", "folder"), ("--report", "'folder' is a folder")),
        (("--out", "a_file/o.jsonl"), ("--out", "'a_file' is a file, not a folder")),
        (("--out", "o.jsonl", "--report", "a_file/x/r.html"), ("--report", "'a_file' is a file")),
    ],
)
def test_an_output_that_is_a_folder_or_under_a_file_is_a_clear_error(
    workdir: Path, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    before = snapshot(workdir)
    assert_refused(run_cli("in.jsonl", "-m", "k_precision", *args, cwd=workdir), *needles)
    assert snapshot(workdir) == before


def test_missing_folders_of_outputs_are_made(workdir: Path) -> None:
    proc = run_cli(
        "in.jsonl",
        "-m",
        "k_precision",
        "--out",
        "new/o.jsonl",
        "--report",
        "other/deep/r.html",
        cwd=workdir,
    )
    assert proc.returncode == 0, proc.stderr
    assert (workdir / "new" / "o.jsonl").read_text().count("\n") == 1
    assert (workdir / "other" / "deep" / "r.html").stat().st_size > 0


def test_the_python_api_refuses_an_output_that_is_the_input(workdir: Path) -> None:
    data = workdir / "in.jsonl"
    before = data.read_bytes()
    with pytest.raises(ConfigError, match="is the input"):
        ragmeter.evaluate(data, ["k_precision"], out=data, progress=False)
    with pytest.raises(ConfigError, match="same file"):
        ragmeter.evaluate(
            data, ["k_precision"], out=workdir / "o.jsonl", report=workdir / "o.jsonl"
        )
    assert data.read_bytes() == before
    assert not (workdir / "o.jsonl").exists()
