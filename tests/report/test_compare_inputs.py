"""``compare`` refuses to pair unrelated runs by index unless asked (issue 28, item 5)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ragmeter.cli.report import register
from ragmeter.errors import DataError
from ragmeter.report.compare import compare_runs
from ragmeter.result import RunResult
from ragmeter.results import run_from_rows

METRICS = {"faithfulness": {"higher_is_better": True}}


def run(values, *, sha: str | None, data: str = "data.jsonl", ids=None) -> RunResult:
    info = {"metrics": METRICS, "data": data}
    if sha is not None:
        info["input"] = {"source": "file", "sha256": sha, "rows": len(values)}
    rows = [
        {
            "index": i,
            "id": None if ids is None else ids[i],
            "scores": {"faithfulness": v},
        }
        for i, v in enumerate(values)
    ]
    return run_from_rows(rows, info)


def test_runs_of_different_inputs_without_ids_are_not_paired_by_index():
    a = run([0.5, 0.6, 0.7], sha="a" * 64, data="old.jsonl")
    b = run([0.9, 0.9, 0.9], sha="b" * 64, data="other.jsonl")
    with pytest.raises(DataError) as err:
        compare_runs(a, b)
    message = str(err.value)
    assert "different inputs" in message
    assert "'old.jsonl'" in message and "'other.jsonl'" in message
    assert "anyway: compare_runs(a, b, pair_by_index=True)." in message  # as Python calls it


def test_pair_by_index_pairs_them_anyway_with_a_warning():
    a = run([0.5, 0.6, 0.7], sha="a" * 64)
    b = run([0.9, 0.9, 0.9], sha="b" * 64)
    comparison = compare_runs(a, b, pair_by_index=True)
    assert comparison.match_by == "index" and comparison.paired == 3
    assert len(comparison.warnings) == 1
    assert "different inputs" in comparison.warnings[0]


def test_conflicting_ids_pair_by_index_only_when_asked():
    a = run([0.5, 0.6], sha=None, ids=["x", "y"])
    b = run([0.5, 0.9], sha=None, ids=["u", "v"])
    with pytest.raises(DataError, match=r"pair_by_index=True\)"):
        compare_runs(a, b)
    comparison = compare_runs(a, b, pair_by_index=True)
    assert comparison.match_by == "index"
    assert comparison.warnings == (
        "Paired by index although 2 of 2 pairs have different ids in A and B.",
    )


def test_the_same_input_pairs_by_index_without_a_word():
    a = run([0.5, 0.6], sha="c" * 64)
    b = run([0.5, 0.9], sha="c" * 64)
    comparison = compare_runs(a, b)
    assert comparison.match_by == "index" and comparison.warnings == ()


def test_pairing_by_id_over_different_inputs_warns():
    a = run([0.5, 0.6], sha="a" * 64, ids=["q1", "q2"])
    b = run([0.5, 0.9], sha="b" * 64, ids=["q2", "q1"])
    comparison = compare_runs(a, b)
    assert comparison.match_by == "id"
    assert len(comparison.warnings) == 1 and "Paired by id although" in comparison.warnings[0]


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """ragmeter (test app)."""

    register(app)
    return app


def _rows(values):
    return [{"index": i, "scores": {"faithfulness": v}} for i, v in enumerate(values)]


def _info(sha: str, data: str):
    return {"metrics": METRICS, "data": data, "input": {"source": "file", "sha256": sha}}


def test_cli_compare_of_different_inputs_exits_2_and_pairs_when_asked(app, writer):
    a = writer("a.jsonl", _rows([0.5, 0.6, 0.7]), _info("a" * 64, "old.jsonl"))
    b = writer("b.jsonl", _rows([0.9, 0.9, 0.9]), _info("b" * 64, "new.jsonl"))
    runner = CliRunner()
    refused = runner.invoke(app, ["compare", str(a), str(b)])
    assert refused.exit_code == 2, refused.output
    assert "Refusing to pair rows by index" in refused.output
    assert "anyway: ragmeter compare A B --pair-by-index" in " ".join(refused.output.split())
    asked = runner.invoke(app, ["compare", str(a), str(b), "--pair-by-index"])
    assert asked.exit_code == 0, asked.output
    assert "Warning: Paired by index although" in asked.output
    assert "3 rows paired by index" in asked.output


def test_the_report_shows_why_pairs_by_id_may_mislead():
    from ragmeter.report.html import render_report

    a = run([0.5, 0.6], sha="a" * 64, ids=["q1", "q2"])
    b = run([0.5, 0.9], sha="b" * 64, ids=["q1", "q2"])
    html = render_report(b, baseline=a)
    assert (
        '<p class="note risk">Paired by id although the run records name different inputs' in html
    )
