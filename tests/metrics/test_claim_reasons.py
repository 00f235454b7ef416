"""Every defined claim-metric score says why, in counts that match its value."""

from __future__ import annotations

import asyncio
import re

import pytest

import ragmeter
from ragmeter.judges.base import Analysis, Verification
from ragmeter.judges.fake import FakeJudge
from ragmeter.metrics import registry
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.scoring import claims as C
from ragmeter.types import Sample, Score

CLAIM_METRICS = sorted(n for n, s in registry.all_specs().items() if s.family == "claims")
COUNT_METRICS = [
    "noise_sensitivity_relevant",
    "noise_sensitivity_irrelevant",
    "faithfulness",
    "claim_precision",
    "claim_recall",
    "context_claim_utilization",
    "hallucination",
    "self_knowledge",
    "context_claim_precision",
    "context_claim_recall",
]

# Four contexts, one reference. Answer block premises: c0..c3, then the reference;
# reference block premises: c0..c3, then the answer.
SAMPLE = Sample(
    question="q", answer="ans", reference_answers=("ref",), contexts=("c0", "c1", "c2", "c3")
)
ANSWER_CLAIMS = ("a0", "a1", "a2", "a3")
REFERENCE_CLAIMS = ("r0", "r1", "r2", "r3", "r4")
ANSWER_BLOCK = (
    (True, False, False, False, True),  # correct, from relevant c0
    (False, False, True, False, False),  # wrong, from relevant c2
    (False, True, False, False, False),  # wrong, only from irrelevant c1
    (False, False, False, False, True),  # correct, from no context
)
REFERENCE_BLOCK = (
    (True, False, False, False, True),
    (False, False, True, False, False),
    (False, False, False, False, True),
    (False, False, False, False, False),
    (True, False, True, False, False),
)
EXPECTED = {
    "faithfulness": (0.75, "3 of 4 answer claims are entailed by a context."),
    "claim_precision": (0.5, "2 of 4 answer claims are entailed by the reference."),
    "claim_recall": (0.4, "2 of 5 reference claims are found in the answer."),
    "claim_f1": (
        pytest.approx(4 / 9),
        "F1 0.44 of claim precision (2 of 4 answer claims) and claim recall "
        "(2 of 5 reference claims).",
    ),
    "noise_sensitivity_relevant": (
        0.25,
        "1 of 4 answer claims is wrong against the reference yet entailed by a relevant "
        "context (contexts 0, 2 are relevant).",
    ),
    "noise_sensitivity_irrelevant": (
        0.25,
        "1 of 4 answer claims is wrong against the reference and entailed only by irrelevant "
        "contexts (contexts 1, 3 are irrelevant).",
    ),
    "hallucination": (
        0.0,
        "0 of 4 answer claims are wrong against the reference and entailed by no context.",
    ),
    "self_knowledge": (0.25, "1 of 4 answer claims is correct but entailed by no context."),
    "context_claim_precision": (0.5, "2 of 4 contexts entail a reference claim (ranks 1, 3)."),
    "context_precision": (
        pytest.approx((1 + 2 / 3) / 2),
        "Average precision 0.83 over 4 ranked contexts: 2 entail a reference claim (ranks 1, 3).",
    ),
    "context_utilization": (
        1.0,
        "Average precision 1.00 over 4 ranked contexts: 3 entail an answer claim (ranks 1, 2, 3).",
    ),
    "context_claim_recall": (0.6, "3 of 5 reference claims are entailed by a context."),
    "context_claim_utilization": (
        pytest.approx(1 / 3),
        "1 of 3 reference claims found in the contexts is stated in the answer.",
    ),
    "faithfulness_support": (
        0.75,
        "Mean support 0.75 over 4 answer claims (best context each). "
        "The judge gave verdicts only (0/1).",
    ),
    "claim_precision_support": (
        0.5,
        "Mean support 0.50 that the reference entails each of 4 answer claims. "
        "The judge gave verdicts only (0/1).",
    ),
}


def run(
    sample: Sample,
    metrics: list[str],
    answer_claims: tuple[str, ...],
    reference_claims: tuple[tuple[str, ...], ...],
    matrices: tuple,
    meta: dict | None = None,
) -> dict[str, Score]:
    judge = FakeJudge(
        analyze=Analysis(answer_claims=answer_claims, reference_claims=reference_claims),
        verify=Verification(matrices=matrices, meta=meta or {}),
    )
    fam = registry.family_module("claims").build(RunContext(Settings(judge=judge)))
    [out] = asyncio.run(fam.score_batch([sample], metrics))
    return out


def full_sample() -> dict[str, Score]:
    return run(
        SAMPLE, CLAIM_METRICS, ANSWER_CLAIMS, (REFERENCE_CLAIMS,), (ANSWER_BLOCK, REFERENCE_BLOCK)
    )


def test_every_claim_metric_has_a_short_reason_for_a_defined_score() -> None:
    out = full_sample()
    assert set(out) == set(CLAIM_METRICS) == set(EXPECTED)
    for name, score in out.items():
        assert score.value is not None, name
        assert score.reason and len(score.reason) <= 200, (name, score.reason)
        assert score.details  # the details stay alongside the reason


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_reason_states_the_counts_behind_the_value(name: str) -> None:
    score = full_sample()[name]
    value, reason = EXPECTED[name]
    assert score.value == value
    assert score.reason == reason


@pytest.mark.parametrize("name", COUNT_METRICS)
def test_the_k_of_n_in_a_count_metrics_reason_is_its_value(name: str) -> None:
    score = full_sample()[name]
    match = re.match(r"(\d+) of (\d+) ", score.reason or "")
    assert match, score.reason
    hits, total = int(match[1]), int(match[2])
    assert score.value == pytest.approx(hits / total)


def test_reasons_use_the_singular_for_one_claim_and_one_context() -> None:
    sample = Sample(answer="ans", reference_answers=("ref",), contexts=("c0",))
    out = run(
        sample,
        CLAIM_METRICS,
        ("a0",),
        (("r0",),),
        (((True, False),), ((True, True),)),
    )
    assert out["faithfulness"].reason == "1 of 1 answer claim is entailed by a context."
    assert out["claim_precision"].reason == "0 of 1 answer claim is entailed by the reference."
    assert out["claim_recall"].reason == "1 of 1 reference claim is found in the answer."
    assert out["context_claim_precision"].reason == (
        "1 of 1 context entails a reference claim (rank 1)."
    )
    assert out["noise_sensitivity_relevant"].reason == (
        "1 of 1 answer claim is wrong against the reference yet entailed by a relevant context "
        "(context 0 is relevant)."
    )
    assert out["noise_sensitivity_irrelevant"].reason.endswith("(no context is irrelevant).")
    assert out["faithfulness_support"].reason.startswith(
        "Mean support 1.00 over 1 answer claim (best"
    )
    assert out["claim_f1"].value == 0.0
    assert out["claim_f1"].reason == (
        "F1 0.00 of claim precision (0 of 1 answer claim) and claim recall "
        "(1 of 1 reference claim)."
    )


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        ([True, False, False], "1 of 3 answer claims is entailed by the reference."),
        ([True, True, False], "2 of 3 answer claims are entailed by the reference."),
        ([False, False, False], "0 of 3 answer claims are entailed by the reference."),
        ([False], "0 of 1 answer claim is entailed by the reference."),
    ],
)
def test_the_verb_agrees_with_the_count(flags: list[bool], reason: str) -> None:
    assert C.claim_precision(flags).reason == reason


def test_context_claim_precision_names_one_rank_in_the_singular_and_none_without_ranks() -> None:
    one = C.context_claim_precision([[False, False, True]], 3)
    assert (one.value, one.reason) == (
        pytest.approx(1 / 3),
        "1 of 3 contexts entails a reference claim (rank 3).",
    )
    none = C.context_claim_precision([[False, False]], 2)
    assert (none.value, none.reason) == (0.0, "0 of 2 contexts entail a reference claim.")


def test_long_context_lists_are_cut_short() -> None:
    k = 40
    score = C.noise_sensitivity(
        answer_correct=[False],
        answer_in_contexts=[[True] * k],
        reference_in_contexts=[[True] * k],
        mode="relevant",
    )
    assert score.value == 1.0
    assert "(contexts 0, 1, 2, 3, 4 and 35 more are relevant)" in score.reason
    precision = C.context_claim_precision([[True] * k], k)
    assert precision.reason == (
        "40 of 40 contexts entail a reference claim (ranks 1, 2, 3, 4, 5 and 35 more)."
    )
    assert len(score.reason) <= 200 and len(precision.reason) <= 200


def test_graded_support_reasons_give_the_mean_without_the_verdicts_note() -> None:
    sample = Sample(answer="ans", contexts=("c0", "c1"), reference_answers=("ref",))
    verdicts = ((True, False, True), (False, False, False))
    support = ((0.9, 0.2, 0.8), (0.4, 0.1, 0.3))
    out = run(
        sample,
        ["faithfulness_support", "claim_precision_support"],
        ("a", "b"),
        (),
        (verdicts,),
        meta={"support": (support,)},
    )
    assert out["faithfulness_support"].value == pytest.approx(0.65)
    assert out["faithfulness_support"].reason == (
        "Mean support 0.65 over 2 answer claims (best context each)."
    )
    assert out["claim_precision_support"].value == pytest.approx(0.55)
    assert out["claim_precision_support"].reason == (
        "Mean support 0.55 that the reference entails each of 2 answer claims."
    )


def test_claim_recall_over_several_references_counts_the_best_one_and_says_so() -> None:
    sample = Sample(answer="ans", reference_answers=("r1", "r2"))
    # answer block premises: r1, r2; reference blocks' premise: the answer
    out = run(
        sample,
        ["claim_recall", "claim_f1"],
        ("a0",),
        (("x0", "x1", "x2"), ("y0", "y1")),
        (((True, False),), ((True,), (False,), (False,)), ((True,), (True,))),
    )
    assert out["claim_recall"].value == 1.0
    assert out["claim_recall"].reason == (
        "2 of 2 reference claims are found in the answer. Recall is the best of 2 references."
    )
    assert out["claim_f1"].value == 1.0
    assert out["claim_f1"].reason.endswith(
        "(2 of 2 reference claims). Recall is the best of 2 references."
    )


def test_undefined_claim_scores_keep_their_reasons() -> None:
    assert C.context_claim_utilization([[False]], [True]).reason == (
        "no reference claim is entailed by any context"
    )
    assert C.claim_f1([], [True]).reason == C.NO_ANSWER_CLAIMS
    assert C.claim_f1([True], []).reason == C.NO_REFERENCE_CLAIMS


def test_evaluate_records_a_reason_for_every_claim_metric() -> None:
    judge = FakeJudge(
        analyze=Analysis(answer_claims=ANSWER_CLAIMS, reference_claims=(REFERENCE_CLAIMS,)),
        verify=Verification(matrices=(ANSWER_BLOCK, REFERENCE_BLOCK)),
    )
    row = {
        "question": "q",
        "answer": "ans",
        "reference_answers": ["ref"],
        "contexts": ["c0", "c1", "c2", "c3"],
    }
    result = ragmeter.evaluate([row], CLAIM_METRICS, judge=judge, progress=False)
    reasons = result.rows[0].reasons
    assert {name: reasons.get(name) for name in CLAIM_METRICS} == {
        name: reason for name, (_, reason) in EXPECTED.items()
    }
