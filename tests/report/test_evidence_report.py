"""The report shows the texts behind claim verdicts, evidence marked, and the claim signs."""

from __future__ import annotations

import json
import re
from typing import Any

import ragmeter
from ragmeter.judges.base import Analysis
from ragmeter.judges.fake import FakeJudge, judged_by, verbatim
from ragmeter.report.html import render_report, write_report
from ragmeter.result import RunResult
from ragmeter.results import run_from_rows

SCRIPT = "<script>alert('x')</script>"
CONTEXT = f"Iron {SCRIPT} is a chemical element with symbol Fe and atomic number 26."


def claim_details(*, uncertain: bool = False, short: bool = False) -> dict[str, Any]:
    start = CONTEXT.index("symbol Fe")
    return {
        "answer_claims": [
            {
                "claim": "Fe is the symbol for iron.",
                "contexts": [0],
                "evidence": {
                    "contexts": {
                        "entailed": True,
                        "uncertain": uncertain,
                        "rests_on": [
                            {
                                "index": 0,
                                "support": 0.91,
                                "decided_by": "model",
                                "spans": [[start, start + len("symbol Fe")]],
                                "uncertain": uncertain,
                            }
                        ],
                    }
                },
            }
        ],
        "verdict_count": 1,
        "uncertain_verdicts": int(uncertain),
        **({"short_reference": True} if short else {}),
    }


def make_run(n: int, *, uncertain_rows: int = 0, short_rows: int = 0) -> RunResult:
    rows = []
    for i in range(n):
        details = claim_details(uncertain=i < uncertain_rows, short=i < short_rows)
        rows.append(
            {
                "index": i,
                "id": f"q{i}",
                "scores": {"faithfulness": 1.0, "claim_precision": 0.5},
                "reasons": {"faithfulness": "1 of 1 answer claims is entailed by a context."},
                "details": {"faithfulness": details, "claim_precision": details},
            }
        )
    info = {
        "metrics": {
            "faithfulness": {"higher_is_better": True, "family": "claims"},
            "claim_precision": {"higher_is_better": True, "family": "claims"},
        }
    }
    return run_from_rows(rows, info)


INPUT = {
    "question": "What is the symbol of iron?",
    "answer": "Fe is the symbol for iron.",
    "contexts": [CONTEXT, "Gold is Au."],
    "reference_answers": ["Fe."],
}


def test_a_worst_sample_shows_its_texts_with_the_evidence_span_marked() -> None:
    run = make_run(3).with_inputs({i: INPUT for i in range(3)})
    page = render_report(run, worst_n=1)
    assert '<mark title="claim 1">symbol Fe</mark>' in page
    assert "What is the symbol of iron?" in page
    assert "Gold is Au." in page
    assert SCRIPT not in page  # the context's markup is escaped, marks or not
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    # the claim's verdict, support, what decided and where, beside it
    row = re.search(r"<tr><td class=n>1</td><td>Fe is the symbol for iron\.</td>.*?</tr>", page)
    assert row is not None
    assert "in a context" in row.group(0)
    assert "0.91" in row.group(0) and "model" in row.group(0) and "context 0" in row.group(0)


def test_a_long_context_is_cut_around_its_span_with_an_ellipsis() -> None:
    far = "Unrelated words. " * 200
    text = far + CONTEXT + far
    offset = len(far)
    details = claim_details()
    span = details["answer_claims"][0]["evidence"]["contexts"]["rests_on"][0]["spans"][0]
    span[0] += offset
    span[1] += offset
    row = {
        "index": 0,
        "scores": {"faithfulness": 1.0},
        "details": {"faithfulness": details},
        "contexts": [text],
    }
    page = render_report(run_from_rows([row]), worst_n=1)
    assert '<mark title="claim 1">symbol Fe</mark>' in page
    shown = re.search(r"<b>context 0</b>: (.*?)</div>", page).group(1)
    assert shown.startswith('<span class="txt">… ')
    assert "more characters)" in shown
    assert len(shown) < 1000 < len(text)


def test_without_inputs_the_card_still_shows_the_claims_table() -> None:
    page = render_report(make_run(2), worst_n=1)
    assert "<th>decided by</th>" in page
    assert "<mark" not in page  # no text to mark


def test_the_summary_table_gives_the_share_of_uncertain_verdicts_and_a_sign_past_20pc() -> None:
    page = render_report(make_run(10, uncertain_rows=3), worst_n=0)
    assert "<th>uncertain verdicts</th>" in page
    assert "30% (3 of 10)" in page
    assert "3 of 10 verdicts (30%) were uncertain" in page
    calm = render_report(make_run(10, uncertain_rows=2), worst_n=0)
    assert "20% (2 of 10)" in calm
    assert "(20%) were uncertain" not in calm


def test_a_run_without_verdict_counts_has_no_uncertain_column() -> None:
    rows = [{"index": i, "scores": {"faithfulness": 1.0}} for i in range(3)]
    assert "uncertain verdicts" not in render_report(run_from_rows(rows), worst_n=0)


def test_many_rows_with_short_references_raise_one_sign_for_the_metrics() -> None:
    page = render_report(make_run(10, short_rows=4), worst_n=0)
    # one sign in the summary for both metrics (merged), one in each metric's section
    merged = "faithfulness and claim_precision: in 4 of 10 rows (40%) the reference is much"
    assert page.count(merged) == 1
    assert page.count("claim_precision: in 4 of 10 rows (40%)") == 2
    sign = "the reference is much shorter"
    assert sign not in render_report(make_run(10, short_rows=2), worst_n=0)  # 20%: not over
    assert sign not in render_report(make_run(9, short_rows=9), worst_n=0)  # under 10 rows


def test_a_report_of_a_results_file_counts_uncertain_verdicts_of_every_row(tmp_path) -> None:
    path = tmp_path / "results.jsonl"
    lines = [
        json.dumps(
            {
                "index": i,
                "scores": {"faithfulness": 1.0},
                "details": {"faithfulness": claim_details(uncertain=i < 5)},
            }
        )
        for i in range(10)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # rows not shown in full are read without details; their counts still add up
    assert "50% (5 of 10)" in render_report(path, worst_n=0)


def test_the_run_report_reads_the_inputs_again_and_marks_the_evidence(tmp_path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(INPUT) + "\n", encoding="utf-8")
    judge = FakeJudge(analyze=Analysis(answer_claims=("symbol Fe",)), verify=judged_by(verbatim))
    out = tmp_path / "results.jsonl"
    report = tmp_path / "report.html"
    ragmeter.evaluate(
        str(data), ["faithfulness"], judge=judge, out=out, report=report, progress=False
    )
    page = report.read_text(encoding="utf-8")
    assert '<mark title="claim 1">symbol Fe</mark>' in page
    assert "Gold is Au." in page
    # a report written later from the results finds the recorded, unchanged input file
    again = write_report(out, tmp_path / "again.html", worst_n=1).read_text(encoding="utf-8")
    assert '<mark title="claim 1">symbol Fe</mark>' in again
    data.write_text(json.dumps({**INPUT, "question": "changed"}) + "\n", encoding="utf-8")
    changed = write_report(out, tmp_path / "changed.html", worst_n=1).read_text(encoding="utf-8")
    assert "Gold is Au." not in changed  # the input changed: its texts are not shown


def test_the_report_command_takes_the_input_with_data(tmp_path) -> None:
    from typer.testing import CliRunner

    from ragmeter.cli import app

    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(INPUT) + "\n", encoding="utf-8")
    judge = FakeJudge(analyze=Analysis(answer_claims=("symbol Fe",)), verify=judged_by(verbatim))
    out = tmp_path / "results.jsonl"
    ragmeter.evaluate(str(data), ["faithfulness"], judge=judge, out=out, progress=False)
    moved = tmp_path / "moved.jsonl"
    data.rename(moved)
    html_path = tmp_path / "r.html"
    runner = CliRunner()
    done = runner.invoke(app, ["report", str(out), "-o", str(html_path), "--data", str(moved)])
    assert done.exit_code == 0, done.output
    assert '<mark title="claim 1">symbol Fe</mark>' in html_path.read_text(encoding="utf-8")
    missing = runner.invoke(app, ["report", str(out), "--data", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code != 0
    assert "is not a file" in missing.output
