"""``--resume`` and ``ragmeter report`` read a results file through one checked reader (issue 15,
item 3).

A results file that ragmeter did not write for this input is refused and left byte for byte as
it was; a line with a score that is not a number, NaN or outside its metric's range, or an
index that is duplicated or not a row of the input, is an error naming the line and the field
(exit 2, never a traceback, never counted); metrics added since the first run are computed
for the resumed rows, and only those.
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
from ragmeter.metrics.base import Settings
from ragmeter.result import sidecar_path
from ragmeter.results import read_run
from ragmeter.testing.server import TestServer

LEXICAL = "k_precision,token_recall"


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def cli(*args: Any) -> Any:
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert "Traceback" not in res.output
    return res


def evaluate(data: Path, out: Path, *extra: Any, metrics: str = LEXICAL) -> Any:
    return cli("evaluate", data, "-m", metrics, "--out", out, "--no-progress", "-q", *extra)


@pytest.fixture
def scored(samples: Any, tmp_path: Path) -> tuple[Path, Path]:
    """(input, results) of a finished run of 12 rows."""
    data = write_jsonl(tmp_path / "data.jsonl", samples(12))
    out = tmp_path / "out.jsonl"
    assert evaluate(data, out).exit_code == 0
    return data, out


def test_resume_refuses_a_file_ragmeter_did_not_write_and_leaves_it_whole(
    scored: tuple[Path, Path], tmp_path: Path
) -> None:
    data, _ = scored
    unrelated = tmp_path / "notes.jsonl"
    unrelated.write_text('{"note": "keep me"}\n{"index": 3, "scores": {}}\n{"torn": ')
    before = unrelated.read_bytes()
    res = evaluate(data, unrelated, "--resume")
    assert res.exit_code == 2
    assert "Error:" in res.output and "no run record" in " ".join(res.output.split())
    assert unrelated.read_bytes() == before  # not truncated, not appended to
    assert not sidecar_path(unrelated).exists()


def test_resume_refuses_the_results_of_another_input(
    scored: tuple[Path, Path], samples: Any, tmp_path: Path
) -> None:
    _, out = scored
    other = samples(12)
    other[5]["answer"] += " Edited."
    edited = write_jsonl(tmp_path / "edited.jsonl", other)
    before = out.read_bytes(), sidecar_path(out).read_bytes()
    res = evaluate(edited, out, "--resume")
    assert res.exit_code == 2
    assert "holds the results of another input" in " ".join(res.output.split())
    assert (out.read_bytes(), sidecar_path(out).read_bytes()) == before


def tamper(out: Path, line: int, change: Any) -> int:
    """Apply ``change`` to the record on ``line`` (1-based) of ``out``; returns the line."""
    lines = out.read_text().splitlines(keepends=True)
    record = json.loads(lines[line - 1])
    text = change(record)
    lines[line - 1] = (text if isinstance(text, str) else json.dumps(record)) + "\n"
    out.write_text("".join(lines))
    return line


def _score(value: Any) -> Any:
    def change(record: dict[str, Any]) -> None:
        record["scores"]["k_precision"] = value

    return change


def _index(value: int) -> Any:
    def change(record: dict[str, Any]) -> None:
        record["index"] = value

    return change


def _nan(record: dict[str, Any]) -> str:
    record["scores"]["k_precision"] = float("nan")
    return json.dumps(record)  # Python writes NaN, which json.loads reads back


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        (_score("high"), "scores.k_precision", "must be a number or null"),
        (_score(True), "scores.k_precision", "must be a number or null"),
        (_nan, "scores.k_precision", "must be finite"),
        (_score(5.0), "scores.k_precision", "outside k_precision's range [0, 1]"),
        (_score(-0.5), "scores.k_precision", "outside k_precision's range [0, 1]"),
        (_index(12), "index", "row 12 is not a row of the input (the input has 12 rows)"),
        (_index(-1), "index", "row -1 is not a row of the input"),
        (_index(2), "index", "row 2 is already on line 3"),
    ],
    ids=["text", "bool", "nan", "above", "below", "index-past-end", "negative", "duplicate"],
)
def test_a_bad_line_is_refused_naming_line_and_field_by_resume_and_report(
    scored: tuple[Path, Path], change: Any, field: str, says: str
) -> None:
    data, out = scored
    line = tamper(out, 7, change)
    before = out.read_bytes()
    where = f"line {line}, field '{field}'"
    for res in (evaluate(data, out, "--resume"), cli("report", out)):
        message = " ".join(res.output.split())
        assert res.exit_code == 2, res.output
        assert "Error:" in message and where in message and says in message, message
    assert out.read_bytes() == before
    with pytest.raises(DataError, match=f"line {line}, field '{field}'"):
        ragmeter.evaluate(data, LEXICAL, out=out, resume=True, progress=False)


def test_an_index_past_the_input_is_caught_after_a_killed_first_run(
    scored: tuple[Path, Path],
) -> None:
    data, out = scored
    record = json.loads(sidecar_path(out).read_text())
    record["input"]["rows"] = None  # as written with the first row: rows not counted yet
    sidecar_path(out).write_text(json.dumps(record))
    tamper(out, 4, _index(40))
    res = evaluate(data, out, "--resume")
    assert res.exit_code == 2
    assert "line 4, field 'index': row 40 is not a row of the input (the input has 12 rows)" in (
        " ".join(res.output.split())
    )


def test_resume_computes_metrics_added_since_the_first_run_and_only_those(
    server: TestServer, samples: Any, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", samples(6))
    out = tmp_path / "out.jsonl"
    assert evaluate(data, out).exit_code == 0
    # A mark only the first run's line carries: it stays if k_precision is not scored again.
    tamper(out, 2, lambda r: r["reasons"].update(k_precision="from the first run"))
    judged = ("--judge", "openai:test-model", "--base-url", server.base_url, "--no-cache")
    server.reset()
    res = evaluate(data, out, *judged, "--resume", metrics=f"{LEXICAL},faithfulness")
    assert res.exit_code == 0, res.output
    assert server.stats()["chat_calls"] == 2 * 6  # analyze and verify per row, for faithfulness

    reference = ragmeter.evaluate(
        data,
        f"{LEXICAL},faithfulness",
        settings=Settings(judge="openai:test-model", base_url=server.base_url, use_cache=False),
        progress=False,
    )
    run = read_run(out)
    assert len(run.rows) == 6 and len(out.read_text().splitlines()) == 12
    for row, ref in zip(sorted(run.rows, key=lambda r: r.index), reference.rows, strict=True):
        assert dict(row.scores) == ref.scores
    assert run.rows[1].reasons["k_precision"] == "from the first run"
    info = json.loads(sidecar_path(out).read_text())
    assert info["summary"]["faithfulness"]["count"] == 6
    assert info["input"]["rows"] == 6

    # Once complete, a further resume has nothing to do and keeps every line.
    server.reset()
    lines = out.read_bytes()
    again = evaluate(data, out, *judged, "--resume", metrics=f"{LEXICAL},faithfulness")
    assert again.exit_code == 0 and server.stats()["chat_calls"] == 0
    assert out.read_bytes() == lines
