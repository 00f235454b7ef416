"""A report is written whatever text the rows hold (issue 29, item 20): a lone surrogate
(``"\\ud800"``, valid JSON) in an id or metadata shows as U+FFFD, and a report that cannot be
written leaves the earlier one whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragmeter
from ragmeter.cli import app
from ragmeter.report.html import write_report

LINES = [
    '{"question_id": "q\\ud800", "answer": "Paris is in France.", '
    '"contexts": ["Paris is in France."], "metadata": {"note": "x\\udfff"}}',
    json.dumps({"question_id": "q2", "answer": "Paris.", "contexts": ["Paris."]}),
]


def test_lone_surrogates_in_rows_are_written_as_replacement_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("d.jsonl").write_text("\n".join(LINES) + "\n")
    Path("report.html").write_text("the earlier report")
    args = ["-m", "k_precision", "-o", "r.jsonl", "--report", "report.html", "--no-progress"]
    res = CliRunner().invoke(app, ["evaluate", "d.jsonl", *args])
    assert res.exit_code == 0, res.output
    text = Path("report.html").read_text(encoding="utf-8")
    assert "q\ufffd" in text
    res = CliRunner().invoke(app, ["report", "r.jsonl", "-o", "again.html"])
    assert res.exit_code == 0, res.output
    assert "q\ufffd" in Path("again.html").read_text(encoding="utf-8")


def test_a_report_that_fails_to_render_leaves_the_earlier_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = [{"answer": "Paris.", "contexts": ["Paris."]}]
    run = ragmeter.evaluate(data, ["k_precision"], progress=False)
    out = tmp_path / "report.html"
    out.write_text("the earlier report")

    def broken(text: str, *args: object, **kwargs: object) -> bytes:
        raise UnicodeEncodeError("utf-8", text, 0, 1, "test")

    monkeypatch.setattr("ragmeter.report.html._encoded", broken)
    with pytest.raises(UnicodeEncodeError):
        write_report(run, out)
    assert out.read_text() == "the earlier report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
