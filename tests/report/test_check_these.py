"""Where the scores cannot be trusted, and a report that reads from the top (issue 37, items 1
and 2): good claim scores resting on uncertain or weakly supported verdicts are listed under
"Check these" and raise one sign; the page opens with what to look at first and an overview
of every metric; metrics equal to another say so; a table holds every row."""

from __future__ import annotations

import re
from typing import Any

from ragmeter.report.checks import LOW_SUPPORT, check_rows, doubts
from ragmeter.report.claim_flags import weakest_verdict
from ragmeter.report.html import render_report
from ragmeter.report.risk import rank_signs, weak_sign
from ragmeter.result import RunResult
from ragmeter.results import run_from_rows


def verdict(support: float, *, entailed: bool = True, uncertain: bool = False) -> dict[str, Any]:
    return {
        "entailed": entailed,
        "uncertain": uncertain,
        "rests_on": [
            {"index": 0, "support": support, "decided_by": "calibrated", "uncertain": uncertain}
        ],
    }


def details(context: float, reference: float = 0.95, *, uncertain: bool = False) -> dict:
    """One answer claim, checked against context 0 and reference 0."""
    return {
        "answer_claims": [
            {
                "claim": f"claim at {context}",
                "evidence": {
                    "contexts": verdict(context, uncertain=uncertain),
                    "references": verdict(reference),
                },
            }
        ],
        "verdict_count": 1,
        "uncertain_verdicts": int(uncertain),
    }


def run_of(supports: list[float], *, uncertain: tuple[int, ...] = ()) -> RunResult:
    """Faithfulness 1.0 on every row, each resting on one context verdict of that support;
    a metric with ``retrieval_at_1``'s scores under the name ``hit_rate_at_1``."""
    rows = []
    for i, support in enumerate(supports):
        d = details(support, uncertain=i in uncertain)
        rows.append(
            {
                "index": i,
                "id": f"q{i}",
                "scores": {
                    "faithfulness": 1.0 if i else 0.0,
                    "retrieval_at_1": float(i % 2),
                    "hit_rate_at_1": float(i % 2),
                },
                "details": {"faithfulness": d},
            }
        )
    info = {
        "metrics": {
            "faithfulness": {"higher_is_better": True, "family": "claims"},
            "retrieval_at_1": {"higher_is_better": True, "family": "retrieval"},
            "hit_rate_at_1": {"higher_is_better": True, "family": "retrieval"},
        },
        "judge": {"name": "offline:verifier-test", "method": "offline-verifier: test"},
    }
    return run_from_rows(rows, info)


def test_the_weakest_verdict_is_read_from_the_texts_the_metric_counts() -> None:
    d = details(0.9, reference=0.5)
    # faithfulness rests on the contexts: the reference's weak verdict is not its
    assert weakest_verdict("faithfulness", d) == (0.9, "claim at 0.9", "context 0")
    assert weakest_verdict("claim_precision", d) == (0.5, "claim at 0.9", "reference 0")
    # a claim metric ragmeter does not know rests on every verdict it carries
    assert weakest_verdict("my_claims", d) == (0.5, "claim at 0.9", "reference 0")
    # a verdict that did not entail does not make a score look good
    d["answer_claims"][0]["evidence"]["contexts"]["entailed"] = False
    assert weakest_verdict("faithfulness", d) is None


def test_good_scores_on_weak_or_uncertain_verdicts_are_to_check_and_bad_ones_are_not() -> None:
    # row 0 scores 0.0 (bad) on a weak verdict; rows 1 and 3 are good on weak verdicts; row 2
    # is good on a strong one; row 4 is good, strong but uncertain
    run = run_of([0.5, 0.69, 0.95, 0.74, 0.9], uncertain=(4,))
    found = doubts(run, "faithfulness")
    assert [d.index for d in found] == [1, 3, 4]
    assert found[0].weak == (0.69, "claim at 0.69", "context 0")
    assert found[2].weak is None and found[2].uncertain == 1
    # the weakest first, then the uncertain ones
    assert [c.index for c in check_rows(run, ["faithfulness"])] == [1, 3, 4]
    assert LOW_SUPPORT == 0.75


def test_the_report_lists_them_under_check_these_and_says_so_first() -> None:
    run = run_of([0.9, 0.69, 0.95, 0.74, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95])
    page = render_report(run)
    key = page.split('<div class="key">')[1].split("</div>")[0]
    assert key.index("rows to check") < page.index('<h2 id="summary">')
    assert "row 1, “claim at 0.69” entailed by context 0 at support 0.69" in key
    assert "Verdicts by offline:verifier-test (offline-verifier: test)" in key
    check = page.split('<h2 id="check">')[1].split("<h2")[0]
    assert check.startswith("Check these (2 rows)")
    assert re.findall(r'<a href="#row-(\d+)">', check) == ["1", "3"]
    # the metric's section shows them in full, claims and support
    section = page.split('id="metric-0"')[1].split('id="metric-1"')[0]
    assert "2 good scores to check" in section and "<b>row 1 · id q1</b>" in section
    # 2 of 11 good scores (18%): under the 20% threshold, no sign
    assert "Good scores that rest on" not in page


def test_past_a_fifth_of_the_good_scores_one_sign_names_every_metric() -> None:
    first = weak_sign("faithfulness", rows=[1, 2, 3], good=10, scored=12, low_support=0.75)
    second = weak_sign("claim_recall", rows=[4, 5], good=5, scored=12, low_support=0.75)
    assert weak_sign("faithfulness", rows=[1, 2], good=10, scored=12, low_support=0.75) is None
    assert weak_sign("faithfulness", rows=[1, 2, 3], good=3, scored=9, low_support=0.75) is None
    (merged,) = rank_signs([first, second])
    assert merged.rows == (1, 2, 3, 4, 5)
    assert "faithfulness 3 of 10 (30%), claim_recall 2 of 5 (40%)" in merged.message
    run = run_of([0.6] * 12)
    page = render_report(run)
    assert "Verdicts to check (1)" in page
    assert "faithfulness 11 of 11 (100%)" in page


def test_a_metric_equal_to_another_by_definition_says_why_in_place_of_its_section() -> None:
    page = render_report(run_of([0.95] * 12))
    overview = page.split('<h2 id="summary">')[1].split('<h3 id="signs">')[0]
    assert "retrieval_at_k is Unitxt&#x27;s name (its match_at_k) for what most IR tools" in (
        overview
    )
    assert re.search(r">hit_rate_at_1</a> <small [^>]*>= retrieval_at_1</small>", overview)
    section = page.split('id="metric-2"')[1]
    assert section.split("</h3>", 1)[1].split("<h3")[0].count('<svg class="pl"') == 0
    assert '<p class="same">= retrieval_at_1: retrieval_at_k is Unitxt&#x27;s' in section


def test_the_table_of_rows_holds_every_row_with_its_rank_under_each_score() -> None:
    run = run_of([0.95, 0.69, 0.95, 0.74]).with_inputs(
        {i: {"question": f"Question {i}?", "answer": f"<b>Answer {i}</b>"} for i in range(4)}
    )
    page = render_report(run)
    table = page.split('<h2 id="rows">')[1].split("</table>")[0]
    rows = re.findall(r'<tr id="row-(\d+)"([^>]*)>', table)
    assert [index for index, _ in rows] == ["0", "1", "2", "3"]
    column = re.findall(r'<th class=s title="([^":]+):', table).index("faithfulness")
    ranks = {index: re.search(rf"--s{column}:(\d+)", attrs).group(1) for index, attrs in rows}
    assert ranks["0"] == "0"  # the only 0.0: lowest first
    assert 'class="c"' in rows[1][1] and 'class="c"' in rows[3][1]  # to check
    assert "<label for=rf-c>check these 2</label>" in table
    assert "&lt;b&gt;Answer 1&lt;/b&gt;" in table and "<b>Answer" not in table
    assert f"#rs{column}d:checked~.rt tbody tr{{order:calc(-1*var(--s{column},-999999))}}" in page
