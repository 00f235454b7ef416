"""Evidence with every claim verdict, uncertain verdicts counted, short references said."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import ragmeter
from ragmeter.judges.base import Analysis, ClaimBlock, Verification
from ragmeter.judges.fake import FakeJudge, all_entailed, judged_by, verbatim
from ragmeter.metrics import registry
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.metrics.claim_evidence import relation
from ragmeter.types import Sample

QUESTION = "Who painted the Sistine Chapel ceiling?"
CONTEXTS = (
    "The Sistine Chapel is in Vatican City.",
    "Its ceiling was painted by Michelangelo between 1508 and 1512.",
)
REFERENCE = "Michelangelo painted the ceiling"
ANSWER = "Michelangelo painted the ceiling. It was painted between 1508 and 1512."
ANSWER_CLAIMS = ("Michelangelo painted the ceiling.", "painted by Michelangelo between 1508")
REFERENCE_CLAIMS = (("Michelangelo painted the ceiling.",),)
SAMPLE = Sample(question=QUESTION, answer=ANSWER, contexts=CONTEXTS, reference_answers=(REFERENCE,))


def score(sample: Sample, metrics: list[str], verify: Any, analysis: Analysis | None = None):
    judge = FakeJudge(
        analyze=analysis
        or Analysis(answer_claims=ANSWER_CLAIMS, reference_claims=REFERENCE_CLAIMS),
        verify=verify,
    )
    fam = registry.family_module("claims").build(RunContext(Settings(judge=judge)))
    [out] = asyncio.run(fam.score_batch([sample], metrics))
    return out, judge


def test_each_answer_claim_says_which_context_and_span_its_verdict_rests_on() -> None:
    out, _ = score(SAMPLE, ["faithfulness"], judged_by(verbatim))
    claims = out["faithfulness"].details["answer_claims"]
    assert claims[1]["contexts"] == [1]
    verdict = claims[1]["evidence"]["contexts"]
    assert verdict["entailed"] is True
    assert verdict["uncertain"] is False
    [cell] = verdict["rests_on"]
    assert cell["index"] == 1
    assert cell["support"] == 1.0
    assert cell["decided_by"] == "rule:verbatim"
    [[start, end]] = cell["spans"]
    assert CONTEXTS[1][start:end].lower() == "painted by michelangelo between 1508"
    # the first claim is in no context: the verdict rests on the nearest miss, without a span
    missed = claims[0]["evidence"]["contexts"]
    assert missed["entailed"] is False
    assert [c["index"] for c in missed["rests_on"]] == [0]
    assert missed["rests_on"][0]["spans"] == []


def test_spans_in_a_reference_read_with_its_question_are_offsets_into_the_reference() -> None:
    out, judge = score(SAMPLE, ["claim_precision", "claim_recall"], judged_by(verbatim))
    premise = judge.verify_requests[0][0].premises[-1]
    assert premise.text == REFERENCE and premise.question
    [first, _] = out["claim_precision"].details["answer_claims"]
    [cell] = first["evidence"]["references"]["rests_on"]
    assert cell["index"] == 0
    [[start, end]] = cell["spans"]
    assert REFERENCE[start:end] == "Michelangelo painted the ceiling"
    # a reference claim against the answer: offsets into the answer text
    [[ref_claim]] = out["claim_recall"].details["reference_claims"]
    [cell] = ref_claim["evidence"]["answer"]["rests_on"]
    [[start, end]] = cell["spans"]
    assert ANSWER[start:end] == "Michelangelo painted the ceiling"


def test_spans_point_into_the_premise_text_and_one_past_its_end_is_dropped() -> None:
    def rule(claim: str, premise: str) -> dict:
        # The rule reads the reference as its text, without the question.
        assert premise == REFERENCE or premise in CONTEXTS
        return {"support": 0.9, "spans": [[0, 12], [5, len(premise) + 3]], "uncertain": False}

    out, _ = score(SAMPLE, ["claim_precision"], judged_by(rule))
    cell = out["claim_precision"].details["answer_claims"][0]["evidence"]["references"]
    assert cell["rests_on"][0]["spans"] == [[0, 12]]


def test_uncertain_verdicts_are_counted_in_details_and_reason() -> None:
    def rule(claim: str, premise: str) -> dict:
        if premise == CONTEXTS[0]:
            return {"support": 0.45, "uncertain": True}  # near the threshold, below it
        return {"support": 0.1 if claim.startswith("Michelangelo") else 0.95, "uncertain": False}

    out, _ = score(SAMPLE, ["faithfulness", "claim_precision"], judged_by(rule))
    faith = out["faithfulness"]
    assert faith.value == 0.5  # uncertain or not, the verdicts count as the judge gave them
    claims = faith.details["answer_claims"]
    # not entailed, and one premise uncertain: the verdict is uncertain
    assert claims[0]["evidence"]["contexts"]["uncertain"] is True
    # entailed by a certain premise: the uncertain one cannot change it
    assert claims[1]["evidence"]["contexts"]["uncertain"] is False
    assert faith.details["verdict_count"] == 2
    assert faith.details["uncertain_verdicts"] == 1
    assert faith.reason.endswith("1 of 2 verdicts is uncertain.")
    precision = out["claim_precision"]
    assert precision.details["uncertain_verdicts"] == 0
    assert "uncertain" not in precision.reason


def test_an_entailed_verdict_is_uncertain_only_when_every_entailing_premise_is() -> None:
    cells = [{"support": 0.6, "uncertain": True}, {"support": 0.55, "uncertain": True}]
    both = relation((True, True), cells, (0, 1))
    assert both is not None and both["uncertain"] is True
    assert [c["index"] for c in both["rests_on"]] == [0, 1]  # highest support first
    cells[1] = {"support": 0.9, "uncertain": False}
    one_certain = relation((True, True), cells, (0, 1))
    assert one_certain is not None and one_certain["uncertain"] is False
    assert [c["index"] for c in one_certain["rests_on"]] == [1, 0]


def test_a_judge_without_evidence_leaves_the_details_as_before() -> None:
    out, _ = score(SAMPLE, ["faithfulness", "claim_precision"], all_entailed)
    for name in ("faithfulness", "claim_precision"):
        details = out[name].details
        assert all("evidence" not in c for c in details["answer_claims"])
        assert "verdict_count" not in details and "uncertain_verdicts" not in details
        assert "uncertain" not in out[name].reason


def test_support_without_evidence_is_kept_and_uncertainty_left_unsaid() -> None:
    matrices = (((True, False, False), (False, True, True)),)
    support = (((0.8, 0.3, 0.2), (0.1, 0.7, 0.9)),)
    out, _ = score(
        SAMPLE,
        ["faithfulness", "claim_precision"],
        Verification(matrices=matrices, meta={"method": "offline", "support": support}),
    )
    claims = out["faithfulness"].details["answer_claims"]
    assert claims[0]["evidence"]["contexts"] == {
        "entailed": True,
        "rests_on": [{"index": 0, "support": 0.8}],
    }
    assert claims[1]["evidence"]["references"]["rests_on"] == [{"index": 0, "support": 0.9}]
    assert "verdict_count" not in out["faithfulness"].details


def test_the_llm_judges_verdicts_say_the_llm_decided_with_no_span() -> None:
    matrices = (((True, False), (False, False)),)
    meta = {"method": "llm", "judge": "openai:m", "prompt": "verify@x", "cached": False}
    out, _ = score(SAMPLE, ["faithfulness"], Verification(matrices=matrices, meta=meta))
    claims = out["faithfulness"].details["answer_claims"]
    assert claims[0]["evidence"]["contexts"] == {
        "entailed": True,
        "rests_on": [{"index": 0, "decided_by": "llm"}],
    }


@pytest.mark.parametrize(
    "evidence",
    [
        "not a list",
        [[[{"support": 1.0}] * 1] * 2],  # one premise short
        [[[{"support": 1.0}] * 2]],  # one claim short
    ],
)
def test_misshaped_evidence_is_ignored(evidence: Any) -> None:
    matrices = (((True, False), (False, False)),)
    out, _ = score(
        SAMPLE,
        ["faithfulness"],
        Verification(matrices=matrices, meta={"method": "fake", "evidence": evidence}),
    )
    assert out["faithfulness"].value == 0.5
    assert all("evidence" not in c for c in out["faithfulness"].details["answer_claims"])


def test_bad_cells_keep_only_their_valid_parts() -> None:
    cells = [
        [
            {"support": 1.7, "decided_by": "", "spans": [[5, 2], [0, 999], "x", [1, 4]]},
            {"support": True, "uncertain": "yes"},
        ],
        [{}, {}],
    ]
    matrices = (((True, False), (False, False)),)
    out, _ = score(
        SAMPLE,
        ["faithfulness"],
        Verification(matrices=matrices, meta={"method": "fake", "evidence": [cells]}),
    )
    first = out["faithfulness"].details["answer_claims"][0]["evidence"]["contexts"]
    assert first == {"entailed": True, "rests_on": [{"index": 0, "spans": [[1, 4]]}]}


def test_reasons_of_reference_based_metrics_say_when_the_reference_is_much_shorter() -> None:
    sample = Sample(
        question="Who painted the Sistine Chapel ceiling?",
        answer="Michelangelo painted it between 1508 and 1512.",
        contexts=CONTEXTS,
        reference_answers=("Michelangelo.",),
    )
    metrics = ["claim_precision", "noise_sensitivity_relevant", "faithfulness"]
    analysis = Analysis(
        answer_claims=("Michelangelo painted it.", "It was painted between 1508 and 1512."),
        reference_claims=(("Michelangelo painted it.",),),
    )
    out, _ = score(sample, metrics, all_entailed, analysis)
    for name in ("claim_precision", "noise_sensitivity_relevant"):
        assert "the reference is much shorter than the answer" in out[name].reason.lower()
        assert out[name].details["short_reference"] is True
    assert "shorter" not in out["faithfulness"].reason
    assert "short_reference" not in out["faithfulness"].details
    long_enough = Sample(
        question=sample.question,
        answer=sample.answer,
        contexts=CONTEXTS,
        reference_answers=("Michelangelo painted it from 1508 to 1512.",),
    )
    out, _ = score(long_enough, metrics, all_entailed, analysis)
    assert "shorter" not in out["claim_precision"].reason


def test_evidence_reaches_the_results_file(tmp_path) -> None:
    import json

    judge = FakeJudge(
        analyze=Analysis(answer_claims=ANSWER_CLAIMS, reference_claims=REFERENCE_CLAIMS),
        verify=judged_by(verbatim),
    )
    row = {
        "question": QUESTION,
        "answer": ANSWER,
        "contexts": list(CONTEXTS),
        "reference_answers": [REFERENCE],
    }
    out = tmp_path / "results.jsonl"
    ragmeter.evaluate([row], ["faithfulness"], judge=judge, out=out, progress=False)
    [line] = out.read_text(encoding="utf-8").splitlines()
    claims = json.loads(line)["details"]["faithfulness"]["answer_claims"]
    assert claims[1]["evidence"]["contexts"]["rests_on"][0]["index"] == 1
    assert json.loads(line)["details"]["faithfulness"]["verdict_count"] == 2


def test_blocks_sent_are_unchanged_by_evidence() -> None:
    _, judge = score(SAMPLE, ["faithfulness"], judged_by(verbatim))
    assert judge.verify_requests[0] == (ClaimBlock(ANSWER_CLAIMS, CONTEXTS, question=QUESTION),)


def test_the_run_summary_reports_the_share_of_uncertain_verdicts(tmp_path) -> None:
    import json

    def rule(claim: str, premise: str) -> dict:
        return {"support": 0.55, "uncertain": premise == CONTEXTS[0]}

    judge = FakeJudge(
        analyze=Analysis(answer_claims=ANSWER_CLAIMS, reference_claims=REFERENCE_CLAIMS),
        verify=judged_by(rule),
    )
    row = {"question": QUESTION, "answer": ANSWER, "contexts": list(CONTEXTS)}
    rows = [row, {**row, "contexts": [CONTEXTS[0]]}, {**row, "contexts": []}]
    out = tmp_path / "results.jsonl"
    result = ragmeter.evaluate(rows, ["faithfulness"], judge=judge, out=out, progress=False)
    summary = result.summary["faithfulness"]
    # row 0: entailed by a certain context: 2 certain verdicts; row 1: only the uncertain
    # context: 2 uncertain verdicts; row 2 (no contexts) is undefined and has none
    assert (summary.verdicts, summary.uncertain_verdicts) == (4, 2)
    assert summary.uncertain_share == 0.5
    recorded = json.loads(out.with_name("results.jsonl.run.json").read_text())
    assert recorded["summary"]["faithfulness"]["uncertain_share"] == 0.5
    assert result.rows[1].reasons["faithfulness"].endswith("2 of 2 verdicts are uncertain.")


def test_a_summary_without_verdict_counts_keeps_its_keys_and_never_divides_by_zero() -> None:
    from ragmeter.scoring.statistics import summarize

    plain = summarize([0.5, 1.0])
    assert "uncertain_share" not in plain.as_dict() and "verdicts" not in plain.as_dict()
    assert plain.uncertain_share is None
    from dataclasses import replace

    none_known = replace(plain, verdicts=0, uncertain_verdicts=0)
    assert none_known.uncertain_share is None
    assert none_known.as_dict()["uncertain_share"] is None
