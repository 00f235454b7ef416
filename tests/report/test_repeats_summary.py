"""The report's summary table of a run with ``--repeats``: beside the rows' bootstrap interval,
the interval over rows and repeats (the run record's ``judge_noise``), marked as such."""

from __future__ import annotations

import random
import re

import ragmeter
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Verification
from ragmeter.judges.fake import FakeJudge
from ragmeter.report.html import render_report
from ragmeter.report.interval import interval_text
from ragmeter.results import summaries
from ragmeter.settings import Settings

ROWS = [
    {
        "question_id": f"q{i}",
        "answer": f"Paris is in France. The Seine runs there. Row {i} has a tower.",
        "contexts": ["Paris is the capital of France and the Seine runs through it."],
    }
    for i in range(20)
]


def noisy_judge(flip: float) -> FakeJudge:
    """Claims 0 and 1 supported, claim 2 not, each verdict flipped with probability ``flip``."""
    rng = random.Random(0)

    def analyze(request: AnalyzeRequest) -> Analysis:
        parts = [s.strip() + "." for s in (request.answer or "").split(".") if s.strip()]
        return Analysis(answer_claims=tuple(parts))

    def verify(blocks: tuple[ClaimBlock, ...]) -> Verification:
        return Verification(
            matrices=tuple(
                tuple(
                    tuple((i < 2) != (rng.random() < flip) for _ in block.premises)
                    for i, _ in enumerate(block.claims)
                )
                for block in blocks
            ),
            meta={"method": "fake"},
        )

    return FakeJudge(analyze=analyze, verify=verify)


def summary_row(page: str, metric: str) -> str:
    table = page[page.index('<h2 id="summary">') : page.index('<h3 id="signs">Signs of risk')]
    found = re.search(rf"<tr><td><a [^>]*>{metric}</a></td>.*?</tr>", table)
    assert found is not None
    return found.group(0)


def test_the_summary_table_shows_both_intervals_marked(tmp_path):
    settings = Settings(judge=noisy_judge(0.25), repeats=3)
    result = ragmeter.evaluate(ROWS, ["faithfulness"], settings=settings, progress=False)
    low, high = result.info["judge_noise"]["faithfulness"]["ci"]
    rows_only = interval_text(
        summaries(result.rows, ["faithfulness"])["faithfulness"], template="[{low:.3f}, {high:.3f}]"
    )
    row = summary_row(render_report(result), "faithfulness")
    assert f"{rows_only} <span class=note>(rows only)</span><br>" in row
    assert f"[{low:.3f}, {high:.3f}] <span class=note" in row
    assert "(rows and repeats)</span>" in row and "3 judge repeats" in row
    # The rows' means hide the judge's flips: the interval over repeats is another one.
    assert rows_only != f"[{low:.3f}, {high:.3f}]"


def test_a_run_without_repeats_shows_the_rows_interval_alone(tmp_path):
    settings = Settings(judge=noisy_judge(0.25))
    result = ragmeter.evaluate(ROWS, ["faithfulness"], settings=settings, progress=False)
    row = summary_row(render_report(result), "faithfulness")
    assert "rows and repeats" not in row and "rows only" not in row
    assert re.search(r"<td class=n>\[\d\.\d{3}, \d\.\d{3}\]</td>", row)
