"""JSON nested ~1,000 deep is a failure of that row naming where it is, never a traceback, and
an unexpected error exits 2 with "Error:" (exit 1 means a quality gate failed, nothing else).
Issue 15, item 4.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.io.rows import MAX_DEPTH

OK = {"answer": "Paris is in France", "contexts": ["Paris is in France."]}


def nested(depth: int) -> Any:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(ragmeter.__file__).parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def deep_text(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deeply_nested_jsonl_line_fails_that_row_naming_the_line(
    tmp_path: Path, depth: int
) -> None:
    ok = json.dumps(OK)
    deep = '{"answer": "x", "contexts": ["x"], "metadata": {"x": ' + deep_text(depth) + "}}"
    (tmp_path / "d.jsonl").write_text(f"{ok}\n{deep}\n{ok}\n")
    proc = cli(
        "evaluate", "d.jsonl", "-m", "k_precision", "-o", "o.jsonl", "--no-progress", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    records = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["scores"]["k_precision"] for r in records] == [1.0, None, 1.0]
    failure = records[1]["failures"]["k_precision"]
    assert failure.startswith("line 2 of d.jsonl"), failure
    assert "nested" in failure and str(MAX_DEPTH) in failure, failure


def test_a_deeply_nested_item_of_a_json_file_fails_that_item(tmp_path: Path) -> None:
    deep = '{"answer": "x", "contexts": ["x"], "metadata": ' + deep_text(1_000) + "}"
    text = f"[{json.dumps(OK)}, {deep}, {json.dumps({**OK, 's': ']]['})}]"
    (tmp_path / "d.json").write_text(text)
    proc = cli(
        "evaluate", "d.json", "-m", "k_precision", "-o", "o.jsonl", "--no-progress", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["scores"]["k_precision"] for r in records] == [1.0, None, 1.0]
    assert records[1]["failures"]["k_precision"].startswith("item 1 of d.json"), records[1]


def test_a_deeply_nested_csv_cell_fails_that_row(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text(
        "answer,contexts\n"
        'Paris is in France,"[""Paris is in France.""]"\n'
        f"x,{deep_text(1_000)}\n"
        'Paris is in France,"[""Paris is in France.""]"\n'
    )
    proc = cli(
        "evaluate", "d.csv", "-m", "k_precision", "-o", "o.jsonl", "--no-progress", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["scores"]["k_precision"] for r in records] == [1.0, None, 1.0]
    assert records[1]["failures"]["k_precision"].startswith("line 3 of d.csv"), records[1]


def test_a_deeply_nested_python_row_fails_that_row(tmp_path: Path) -> None:
    rows = [OK, {**OK, "metadata": {"x": nested(5_000)}}, OK]
    result = ragmeter.evaluate(rows, ["k_precision"], progress=False, out=tmp_path / "o.jsonl")
    assert result.scores("k_precision") == [1.0, None, 1.0]
    assert result.rows[1].failures["k_precision"].startswith("row 1"), result.rows[1].failures
    lines = (tmp_path / "o.jsonl").read_text().splitlines()
    assert len(lines) == 3


def test_nesting_up_to_the_limit_is_read(tmp_path: Path) -> None:
    rows = [{**OK, "metadata": {"x": nested(MAX_DEPTH - 2)}}]
    result = ragmeter.evaluate(rows, ["k_precision"], progress=False)
    assert result.scores("k_precision") == [1.0]


def test_an_unexpected_error_exits_2_with_error_never_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from ragmeter.cli import main

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(ragmeter, "evaluate", boom)  # the CLI goes through the public API
    (tmp_path / "d.jsonl").write_text(json.dumps(OK) + "\n")
    monkeypatch.setattr(
        sys, "argv", ["ragmeter", "evaluate", str(tmp_path / "d.jsonl"), "-m", "k_precision"]
    )
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Error:" in err and "RecursionError" in err, err
    assert "Traceback" not in err
