"""``evaluate(report=...)`` writes the HTML report at the end of a run, from the rows kept or
from the results file the rows were streamed to (``report.write_run_report``, the CLI's too)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import ragmeter

ROWS = [
    {"id": f"q{i}", "answer": f"Paris is the capital {i}", "contexts": ["Paris is the capital"]}
    for i in range(12)
]


def _rows_shown(html: str) -> int:
    return int(re.search(r"(\d+) rows", html).group(1))


@pytest.mark.parametrize("keep_rows", [True, False])
def test_the_report_of_a_run_written_to_a_file_holds_every_row(
    tmp_path: Path, keep_rows: bool
) -> None:
    out, report = tmp_path / "o.jsonl", tmp_path / "deep" / "r.html"
    result = ragmeter.evaluate(
        ROWS, ["k_precision"], out=out, report=report, keep_rows=keep_rows, progress=False
    )
    assert len(result.rows) == (12 if keep_rows else 0)
    html = report.read_text(encoding="utf-8")
    assert "k_precision" in html
    assert _rows_shown(html) == 12


def test_the_report_of_a_run_streamed_to_a_text_stream_is_drawn_from_kept_rows(
    tmp_path: Path,
) -> None:
    stream, report = io.StringIO(), tmp_path / "r.html"
    result = ragmeter.evaluate(
        ROWS, ["k_precision"], out=stream, report=report, keep_rows=False, progress=False
    )
    assert len(result.rows) == 12  # kept for the report, although keep_rows=False
    assert stream.getvalue().count("\n") == 12
    assert _rows_shown(report.read_text(encoding="utf-8")) == 12
