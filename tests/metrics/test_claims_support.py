"""The graded claim metrics: faithfulness_support and claim_precision_support."""

from __future__ import annotations

import asyncio

import pytest

from ragmeter.judges.base import Analysis, Verification
from ragmeter.judges.fake import FakeJudge
from ragmeter.metrics import registry
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.scoring import claims as C
from ragmeter.types import Sample

SAMPLE = Sample(answer="ans", contexts=("c1", "c2"), reference_answers=("ref",))
CLAIMS = ("a", "b")
# premises of the answer block: c1, c2, then the reference
VERDICTS = ((True, False, True), (False, False, False))
SUPPORT = ((0.9, 0.2, 0.8), (0.4, 0.1, 0.3))
METRICS = ["faithfulness", "faithfulness_support", "claim_precision", "claim_precision_support"]


def score(verification: Verification) -> dict:
    judge = FakeJudge(analyze=Analysis(answer_claims=CLAIMS), verify=verification)
    fam = registry.family_module("claims").build(RunContext(Settings(judge=judge)))
    [out] = asyncio.run(fam.score_batch([SAMPLE], METRICS))
    return out


def test_support_metrics_average_the_judges_graded_support_of_the_best_premise() -> None:
    out = score(Verification(matrices=(VERDICTS,), meta={"support": (SUPPORT,)}))
    assert out["faithfulness"].value == 0.5
    assert out["faithfulness_support"].value == pytest.approx((0.9 + 0.4) / 2)
    assert out["claim_precision"].value == 0.5
    assert out["claim_precision_support"].value == pytest.approx((0.8 + 0.3) / 2)
    details = out["faithfulness_support"].details
    assert details["support"] == "judge support"
    assert details["claim_support"] == [0.9, 0.4]


@pytest.mark.parametrize(
    "meta",
    [
        {},
        {"support": (((0.9, 0.2), (0.4, 0.1)),)},  # misshaped: one column short
        {"support": (((0.9, 0.2, 1.5), (0.4, 0.1, 0.3)),)},  # outside [0, 1]
        {"support": "not a matrix"},
    ],
)
def test_without_usable_support_the_support_metrics_equal_the_verdict_metrics(meta) -> None:
    out = score(Verification(matrices=(VERDICTS,), meta=meta))
    assert out["faithfulness_support"].value == out["faithfulness"].value == 0.5
    assert out["claim_precision_support"].value == out["claim_precision"].value == 0.5
    assert out["claim_precision_support"].details["support"] == "verdicts (0/1)"


def test_the_offline_judge_gives_graded_support_in_the_unit_interval() -> None:
    import ragmeter

    row = {
        "answer": "The Eiffel Tower is in Paris. It is made of cheese.",
        "contexts": ["The Eiffel Tower is a wrought-iron tower in Paris."],
        "reference_answers": ["The Eiffel Tower, in Paris, is made of wrought iron."],
    }
    result = ragmeter.evaluate([row], METRICS, judge="offline", progress=False)
    scores = result.rows[0].scores
    for name in ("faithfulness_support", "claim_precision_support"):
        assert 0.0 < scores[name] < 1.0
    assert scores["faithfulness"] == 0.5


def test_support_scoring_functions_match_the_verdict_ones_on_zero_one_values() -> None:
    matrix = [[True, False], [False, False], [False, True]]
    as_float = [[float(x) for x in row] for row in matrix]
    assert C.faithfulness_support(as_float).value == C.faithfulness(matrix).value
    flags = [True, False, False]
    assert C.claim_precision_support([float(f) for f in flags]).value == pytest.approx(
        C.claim_precision(flags).value
    )


def test_support_scoring_functions_are_undefined_without_claims_or_contexts() -> None:
    assert C.faithfulness_support([]).reason == C.NO_ANSWER_CLAIMS
    assert C.faithfulness_support([[], []]).reason == C.NO_CONTEXTS
    assert C.claim_precision_support([]).reason == C.NO_ANSWER_CLAIMS


def test_support_scoring_functions_reject_values_outside_the_unit_interval() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        C.faithfulness_support([[0.5, 1.2]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        C.claim_precision_support([float("nan")])
