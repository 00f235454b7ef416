"""``--resume`` refuses any change that changes scores (issue 29, item 2).

The run record holds the settings that decide scores (judge, verifier, models and their
options) and the column map; a resumed run with any of them changed would write rows of two
runs into one file under one mean. It is refused, naming what changed, and the file is left
byte for byte as it was. Options that do not change scores (concurrency, timeouts, the cache)
may change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.errors import DataError
from ragmeter.judges.fake import FakeJudge
from ragmeter.metrics.base import Settings
from ragmeter.result import sidecar_path


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "question_id": f"q{i}",
            "question": f"Where is city {i}?",
            "answer": f"City {i} is in France.",
            "answer_b": f"City {i} is somewhere else entirely.",
            "contexts": [f"City {i} is in France.", "Rome is in Italy."],
            "reference_answers": [f"City {i} is in France."],
        }
        for i in range(n)
    ]


@pytest.fixture
def half_done(tmp_path: Path) -> tuple[Path, Path]:
    """(input, results) where the results hold the first 6 of 12 rows."""
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(12)))
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(
        app, ["evaluate", str(data), "-m", "k_precision", "--out", str(out), "--no-progress"]
    )
    assert res.exit_code == 0, res.output
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:6]))
    return data, out


def test_resume_with_another_column_map_is_refused_naming_it(half_done: tuple[Path, Path]) -> None:
    data, out = half_done
    before = out.read_bytes(), sidecar_path(out).read_bytes()
    res = CliRunner().invoke(
        app,
        [
            "evaluate", str(data), "-m", "k_precision", "--out", str(out), "--resume",
            "-c", "answer=answer_b", "--no-progress",
        ],
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    flat = " ".join(res.stderr.split())
    assert "column map" in flat and "answer=answer_b" in flat and "Resum" in flat, flat
    assert (out.read_bytes(), sidecar_path(out).read_bytes()) == before


def test_resume_with_another_judge_is_refused_naming_it(tmp_path: Path) -> None:
    data = rows(12)
    out = tmp_path / "out.jsonl"
    first = Settings(judge=FakeJudge(name="judge-a"))
    ragmeter.evaluate(data[:6], ["faithfulness"], settings=first, out=out)
    # The record names the input: resume the same input with another judge.
    ragmeter.evaluate(data, ["faithfulness"], settings=first, out=out)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:6]))
    before = out.read_bytes()
    other = Settings(judge=FakeJudge(name="judge-b"))
    with pytest.raises(DataError, match="'judge'.*judge-a.*judge-b"):
        ragmeter.evaluate(data, ["faithfulness"], settings=other, out=out, resume=True)
    with pytest.raises(DataError, match="'verifier' setting was 'judge', now 'offline'"):
        ragmeter.evaluate(
            data, ["faithfulness"], settings=Settings(judge=first.judge, verifier="offline"),
            out=out, resume=True,
        )  # fmt: skip
    assert out.read_bytes() == before


def test_resume_with_the_same_scoring_and_other_plumbing_goes_on(
    half_done: tuple[Path, Path],
) -> None:
    data, out = half_done
    settings = Settings(max_concurrency=3, timeout=5.0, batch_size=4)
    result = ragmeter.evaluate(data, ["k_precision"], settings=settings, out=out, resume=True)
    assert result.summary["k_precision"].count == 12
    record = json.loads(sidecar_path(out).read_text())
    assert record["column_map"] == {}
