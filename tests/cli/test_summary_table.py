"""The terminal summary groups metrics by family and folds a long run's tail (issue 28,
item 8)."""

from __future__ import annotations

import re
from types import SimpleNamespace

from ragmeter.cli.summary_table import FOLD_ABOVE, PER_FAMILY, layout

RETRIEVAL = ["mrr", "map", *(f"recall_at_{k}" for k in (1, 3, 5, 10)), "map_retrieved"]
LEXICAL = ["k_precision", "token_recall", "token_precision", "token_f1", "exact_match"]
CLAIMS = ["faithfulness", "hallucination"]


def _summary(names, failed=()):
    return {name: SimpleNamespace(failed=1 if name in failed else 0) for name in names}


def _families():
    return {
        **dict.fromkeys(RETRIEVAL, "retrieval"),
        **dict.fromkeys(LEXICAL, "lexical"),
        **dict.fromkeys(CLAIMS, "claims"),
    }


def test_a_short_run_is_grouped_by_family_and_nothing_folds():
    names = ["mrr", "faithfulness", "map", "token_f1"]
    plan = layout(_summary(names), _families())
    assert plan.folded == 0
    assert plan.families == (
        ("retrieval", ("mrr", "map"), ()),
        ("claims", ("faithfulness",), ()),
        ("lexical", ("token_f1",), ()),
    )


def test_a_long_run_folds_each_family_tail_keeping_names_without_a_cutoff_first():
    names = RETRIEVAL + LEXICAL + CLAIMS
    assert len(names) > FOLD_ABOVE
    plan = layout(_summary(names), _families())
    retrieval = plan.families[0]
    assert retrieval[1] == ("mrr", "map", "map_retrieved")
    assert len(retrieval[2]) == len(RETRIEVAL) - PER_FAMILY
    assert plan.families[2] == ("claims", ("faithfulness", "hallucination"), ())
    assert plan.folded == len(names) - 3 * PER_FAMILY + 1


def test_gated_and_failing_metrics_are_never_folded():
    names = RETRIEVAL + LEXICAL + CLAIMS
    plan = layout(_summary(names, failed={"exact_match"}), _families(), keep={"recall_at_10"})
    shown = {name for _, shown, _ in plan.families for name in shown}
    assert {"recall_at_10", "exact_match"} <= shown


def test_claim_metrics_show_their_uncertain_share_and_the_judge_is_named() -> None:
    """Issue 37, item 1: next to every claim metric the share of its verdicts that were
    uncertain, and which judge decided."""
    from pathlib import Path

    from typer.testing import CliRunner

    from ragmeter.cli import app

    example = Path(__file__).resolve().parents[2] / "examples" / "rag_sample.jsonl"
    res = CliRunner().invoke(app, ["evaluate", str(example), "-m", "faithfulness,mrr"])
    assert res.exit_code == 0, res.output
    header = next(line for line in res.stdout.splitlines() if "metric" in line)
    assert "uncertain" in header
    faith = next(line for line in res.stdout.splitlines() if "faithfulness" in line)
    mrr = next(line for line in res.stdout.splitlines() if "│ mrr" in line)
    assert re.search(r"│\s+\d+% │$", faith)  # its share
    assert re.search(r"│\s+│$", mrr)  # not a claim metric: blank
    text = " ".join(res.output.split())
    assert "verdicts by offline:verifier-" in text and "for 1 metric;" in text
    assert "Check these" in text
