"""The claims, entity_recall and response_relevancy families, with FakeJudge and over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ragmeter
from ragmeter.judges.base import Analysis, AnalyzeRequest, ClaimBlock, Premise, Verification
from ragmeter.judges.fake import FakeJudge, all_entailed
from ragmeter.metrics import registry
from ragmeter.metrics.base import RunContext, Settings
from ragmeter.metrics.entity_recall import fold_entity
from ragmeter.testing.server import HashingEmbedder, TestServer
from ragmeter.types import Failure, Sample, Score

CLAIM_METRICS = [n for n, s in registry.all_specs().items() if s.family == "claims"]

LIC = Sample(
    question="What is LIC known for?",
    answer="ans",
    reference_answers=("ref",),
    contexts=("c1", "c2", "c3", "c4"),
)
LIC_ANSWER = ("largest insurer", "portfolio of investments", "financial stability")
LIC_REFERENCE = ("largest insurer", "established 1956", "portfolio of investments")
# premise order in the answer block: c1..c4 then the reference; reference block: c1..c4, answer
LIC_MATRICES = (
    (
        (False, True, False, False, True),
        (False, True, True, False, True),
        (False, False, True, False, False),
    ),
    (
        (False, True, False, False, True),
        (True, False, False, False, False),
        (False, False, True, False, True),
    ),
)


def family(name: str, ctx: RunContext):
    return registry.family_module(name).build(ctx)


def lic_judge() -> FakeJudge:
    return FakeJudge(
        analyze=Analysis(answer_claims=LIC_ANSWER, reference_claims=(LIC_REFERENCE,)),
        verify=Verification(matrices=LIC_MATRICES),
    )


def test_every_claim_metric_from_one_analyze_and_one_verify_call() -> None:
    judge = lic_judge()
    fam = family("claims", RunContext(Settings(judge=judge)))
    [out] = asyncio.run(fam.score_batch([LIC], CLAIM_METRICS))
    values = {k: v.value for k, v in out.items()}
    assert values["noise_sensitivity_relevant"] == pytest.approx(1 / 3)
    assert values["noise_sensitivity_irrelevant"] == 0.0
    assert values["faithfulness"] == 1.0
    assert values["claim_precision"] == pytest.approx(2 / 3)
    assert values["claim_recall"] == pytest.approx(2 / 3)
    assert values["claim_f1"] == pytest.approx(2 / 3)
    assert values["context_claim_precision"] == 0.75
    assert values["context_claim_recall"] == 1.0
    assert values["context_claim_utilization"] == pytest.approx(2 / 3)
    # Ragas' names: average precision of the contexts that entail a reference claim (c1..c3)
    # and of those that entail an answer claim (c2, c3).
    assert values["context_precision"] == 1.0
    assert values["context_utilization"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert values["hallucination"] == 0.0
    assert values["self_knowledge"] == 0.0
    assert judge.calls == 2
    [blocks] = judge.verify_requests
    # The reference and the answer are premises read with the question.
    question = blocks[0].question
    assert question == "What is LIC known for?"
    contexts = ("c1", "c2", "c3", "c4")
    assert blocks[0] == ClaimBlock(
        LIC_ANSWER, (*contexts, Premise("ref", question)), question=question
    )
    assert blocks[1] == ClaimBlock(
        LIC_REFERENCE, (*contexts, Premise("ans", question)), question=question
    )
    assert blocks[0].premise_texts()[-1] == f"Question: {question}\nAnswer: ref"
    details = out["noise_sensitivity_relevant"].details
    assert details["relevant_contexts"] == [0, 1, 2]
    assert details["answer_claims"][2] == {
        "claim": "financial stability",
        "correct": False,
        "contexts": [2],
    }


def test_faithfulness_alone_asks_only_for_answer_claims_against_contexts() -> None:
    """With references in the sample, faithfulness alone still asks for no reference claims
    and sends no reference premise: what it does not need is never asked for."""
    judge = FakeJudge(
        analyze=Analysis(answer_claims=("a", "b"), reference_claims=(("r1",),)),
        verify=all_entailed,
    )
    fam = family("claims", RunContext(Settings(judge=judge), requested=frozenset({"faithfulness"})))
    sample = Sample(question="q", answer="x", contexts=("c1", "c2"), reference_answers=("ref",))
    [out] = asyncio.run(fam.score_batch([sample], ["faithfulness"]))
    assert out["faithfulness"].value == 1.0
    assert judge.analyze_requests[0].wants == {"answer_claims"}
    assert judge.verify_requests[0] == (ClaimBlock(("a", "b"), ("c1", "c2"), question="q"),)
    # The same sample with a reference metric asked for does ask for them: the check above
    # can tell the two apart.
    judge_both = FakeJudge(
        analyze=Analysis(answer_claims=("a", "b"), reference_claims=(("r1",),)),
        verify=all_entailed,
    )
    asked = frozenset({"faithfulness", "claim_recall"})
    both = family("claims", RunContext(Settings(judge=judge_both), requested=asked))
    asyncio.run(both.score_batch([sample], ["faithfulness", "claim_recall"]))
    assert "reference_claims" in judge_both.analyze_requests[0].wants
    assert len(judge_both.verify_requests[0]) == 2


def test_a_run_of_faithfulness_asks_the_judge_for_no_reference_claims() -> None:
    """Through ``evaluate``: the plan tells the claims family what was asked for, so the
    judge's analysis request (widened by the shared analysis to every registered part) holds
    no reference claims when only faithfulness runs, and does when claim_recall runs too."""
    sample = {"question": "q", "answer": "x", "contexts": ["c1"], "reference_answers": ["ref"]}
    wants = []
    for metrics in (["faithfulness"], ["faithfulness", "claim_recall"]):
        judge = FakeJudge(
            analyze=Analysis(answer_claims=("a",), reference_claims=(("r1",),)),
            verify=all_entailed,
        )
        ragmeter.evaluate([sample], metrics, judge=judge, progress=False)
        wants.append(judge.analyze_requests[0].wants)
    assert wants[0] == {"answer_claims"}
    assert "reference_claims" in wants[1]


def test_empty_fields_and_zero_claims_give_undefined_scores_with_reasons() -> None:
    judge = FakeJudge(
        analyze=Analysis(answer_claims=(), reference_claims=((),)), verify=all_entailed
    )
    fam = family("claims", RunContext(Settings(judge=judge)))
    samples = [
        Sample(answer="a", contexts=(), reference_answers=("r",)),
        Sample(answer="a", contexts=("c",), reference_answers=()),
        Sample(answer="", contexts=("c",), reference_answers=("r",)),
    ]
    out = asyncio.run(fam.score_batch(samples, ["faithfulness", "noise_sensitivity_relevant"]))
    assert out[0]["faithfulness"].reason == "no contexts were retrieved"
    assert out[1]["noise_sensitivity_relevant"].reason == "no reference answers were given"
    assert out[2]["faithfulness"].reason == "the answer has no claims"
    for row in out:
        for score in row.values():
            assert isinstance(score, Score) and score.value is None and score.reason


def test_a_misaligned_verification_fails_that_row_only() -> None:
    def verify(blocks):
        if blocks[0].claims == ("bad",):
            return Verification(matrices=(((True,),),))  # one verdict, two premises
        return all_entailed(blocks)

    judge = FakeJudge(analyze=lambda r: Analysis(answer_claims=(r.answer,)), verify=verify)
    fam = family("claims", RunContext(Settings(judge=judge)))
    good = Sample(answer="good", contexts=("c1", "c2"))
    bad = Sample(answer="bad", contexts=("c1", "c2"))
    out = asyncio.run(fam.score_batch([good, bad, good], ["faithfulness"]))
    assert out[0]["faithfulness"].value == 1.0 and out[2]["faithfulness"].value == 1.0
    assert isinstance(out[1]["faithfulness"], Failure)
    assert "misaligned" in out[1]["faithfulness"].message


def test_samples_of_a_batch_are_judged_concurrently() -> None:
    in_flight = 0
    peak = 0

    async def analyze(request: AnalyzeRequest) -> Analysis:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return Analysis(answer_claims=("x",))

    judge = FakeJudge(analyze=analyze, verify=all_entailed)
    fam = family("claims", RunContext(Settings(judge=judge)))
    samples = [Sample(answer=f"a{i}", contexts=("c",)) for i in range(10)]
    asyncio.run(fam.score_batch(samples, ["faithfulness"]))
    assert peak == 10


def test_with_several_references_recall_is_the_best_reference() -> None:
    judge = FakeJudge(
        analyze=Analysis(answer_claims=("a",), reference_claims=(("r1", "r2"), ("s1",))),
        verify=Verification(matrices=(((True, False),), ((False,), (False,)), ((True,),))),
    )
    fam = family("claims", RunContext(Settings(judge=judge)))
    sample = Sample(answer="A", reference_answers=("R", "S"))
    [out] = asyncio.run(fam.score_batch([sample], ["claim_recall", "claim_precision"]))
    assert out["claim_recall"].value == 1.0
    assert out["claim_precision"].value == 1.0


def test_entity_recall_folds_case_and_punctuation() -> None:
    assert fold_entity("U.S.") == fold_entity("us")
    judge = FakeJudge(
        analyze=Analysis(
            reference_entities=("Taj Mahal", "Shah Jahan", "1653", "Agra"),
            context_entities=(("taj mahal", "1,653"), ("SHAH JAHAN.",)),
        )
    )
    fam = family("entity_recall", RunContext(Settings(judge=judge)))
    sample = Sample(reference_answers=("r",), contexts=("c1", "c2"))
    [out] = asyncio.run(fam.score_batch([sample], ["context_entity_recall"]))
    score = out["context_entity_recall"]
    assert score.value == pytest.approx(3 / 4)
    assert score.details["missing"] == ["Agra"]
    assert score.reason == "3 of 4 reference entities in the contexts; missing 'Agra'."


def test_a_reference_entity_inside_a_longer_context_entity_is_found() -> None:
    judge = FakeJudge(
        analyze=Analysis(
            reference_entities=("100 degrees", "Mary Shelley", "1818"),
            context_entities=(("100 degrees Celsius", "Shelley"), ("18181",)),
        )
    )
    fam = family("entity_recall", RunContext(Settings(judge=judge)))
    sample = Sample(reference_answers=("r",), contexts=("c1", "c2"))
    [out] = asyncio.run(fam.score_batch([sample], ["context_entity_recall"]))
    score = out["context_entity_recall"]
    assert score.details["found"] == ["100 degrees"]
    assert score.details["missing"] == ["Mary Shelley", "1818"]
    assert score.value == pytest.approx(1 / 3)


def test_entity_recall_is_undefined_without_reference_entities() -> None:
    judge = FakeJudge(analyze=Analysis(reference_entities=(), context_entities=(("x",),)))
    fam = family("entity_recall", RunContext(Settings(judge=judge)))
    [out] = asyncio.run(
        fam.score_batch(
            [Sample(reference_answers=("r",), contexts=("c",))], ["context_entity_recall"]
        )
    )
    assert out["context_entity_recall"].value is None


class _Embedder:
    name = "toy"

    def embed(self, texts: list[str]) -> np.ndarray:
        table = {"Q": [1.0, 0.0], "same": [1.0, 0.0], "ortho": [0.0, 1.0], "opp": [-1.0, 0.0]}
        return np.asarray([table[t] for t in texts])


def _relevancy_ctx(judge: FakeJudge) -> RunContext:
    ctx = RunContext(Settings(judge=judge, response_relevancy_n=2))
    ctx._embedder = _Embedder()
    return ctx


def test_response_relevancy_is_the_mean_cosine_and_zero_when_noncommittal() -> None:
    def analyze(request: AnalyzeRequest) -> Analysis:
        assert request.n_questions == 2
        if request.answer == "dodge":
            return Analysis(questions=("same", "same"), noncommittal=True)
        if request.answer == "away":
            return Analysis(questions=("opp", "opp"), noncommittal=False)
        return Analysis(questions=("same", "ortho"), noncommittal=False)

    fam = family("response_relevancy", _relevancy_ctx(FakeJudge(analyze=analyze)))
    samples = [
        Sample(question="Q", answer="fine"),
        Sample(question="Q", answer="dodge"),
        Sample(question="Q", answer="away"),
        Sample(question="Q", answer=""),
    ]
    out = [
        o["response_relevancy"]
        for o in asyncio.run(fam.score_batch(samples, ["response_relevancy"]))
    ]
    assert out[0].value == pytest.approx(0.5)
    assert out[0].details["cosines"] == [1.0, 0.0]
    assert out[1].value == 0.0 and "noncommittal" in out[1].reason
    assert out[2].value == 0.0  # clipped at 0
    assert out[3].value is None and out[3].reason == "the answer is empty"


def test_judge_exceptions_become_per_row_failures() -> None:
    fam = family(
        "response_relevancy", _relevancy_ctx(FakeJudge(analyze=RuntimeError("judge down")))
    )
    [out] = asyncio.run(fam.score_batch([Sample(question="Q", answer="a")], ["response_relevancy"]))
    assert isinstance(out["response_relevancy"], Failure)
    assert "judge down" in out["response_relevancy"].message


# ---------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def server() -> Iterator[TestServer]:
    with TestServer() as srv:
        yield srv


SAMPLES = [
    Sample(
        question=f"Where did Bell live in year {1870 + i}?",
        answer=(
            f"Bell lived in Boston in {1870 + i}. He built the telephone. Meucci lived in Paris."
        ),
        reference_answers=(f"Bell lived in Boston in {1870 + i}. Bell built the telephone.",),
        contexts=(
            f"Bell lived in Boston in {1870 + i}.",
            "Bell built the telephone in his workshop.",
            "Meucci lived in Paris and New York.",
            "Rivers flow into the sea.",
        ),
    )
    for i in range(6)
]

FIVE = {
    "claims": ["noise_sensitivity_relevant", "noise_sensitivity_irrelevant", "faithfulness"],
    "entity_recall": ["context_entity_recall"],
    "response_relevancy": ["response_relevancy"],
}


async def _run_five(ctx: RunContext, samples: list[Sample]) -> list[list[dict]]:
    families = {name: family(name, ctx) for name in FIVE}
    try:
        return await asyncio.gather(
            *(fam.score_batch(samples, FIVE[name]) for name, fam in families.items())
        )
    finally:
        await ctx.aclose()


def test_five_metrics_cost_two_calls_per_sample_and_a_rerun_costs_none(
    server: TestServer, tmp_path: Path
) -> None:
    server.reset()
    settings = Settings(
        judge="openai:test-model", base_url=server.base_url, cache_path=str(tmp_path / "c.db")
    )
    ctx = RunContext(settings)
    ctx._embedder = HashingEmbedder()
    results = asyncio.run(_run_five(ctx, SAMPLES))
    assert server.stats()["chat_calls"] == 2 * len(SAMPLES)
    claims, entities, relevancy = results
    for row in claims:
        assert row["faithfulness"].value == 1.0
        assert row["noise_sensitivity_irrelevant"].value == pytest.approx(1 / 3)
        assert row["noise_sensitivity_relevant"].value == 0.0
        assert row["faithfulness"].details["analyze"]["prompt"]["id"] == "ragmeter.analyze"
    for row in entities:
        assert 0 < row["context_entity_recall"].value <= 1
    for row in relevancy:
        assert 0 < row["response_relevancy"].value <= 1
    assert ctx.usage.calls == 2 * len(SAMPLES)

    ctx2 = RunContext(settings)
    ctx2._embedder = HashingEmbedder()
    again = asyncio.run(_run_five(ctx2, SAMPLES))
    assert server.stats()["chat_calls"] == 2 * len(SAMPLES)
    assert ctx2.usage.calls == 0 and ctx2.usage.cache_hits == 2 * len(SAMPLES)
    assert [r["faithfulness"].value for r in again[0]] == [r["faithfulness"].value for r in claims]


def test_a_run_with_faults_on_30_percent_of_calls_scores_or_fails_every_row(
    tmp_path: Path,
) -> None:
    from ragmeter import evaluate

    rows = [
        {
            "question": s.question,
            "answer": s.answer.replace("Bell", f"Bell{i}"),
            "reference": s.reference_answers[0],
            "contexts": list(s.contexts),
        }
        for i, s in enumerate(SAMPLES * 7)
    ]
    metrics = [m for names in FIVE.values() for m in names]
    # Deadline 1.5 s, hangs 3 s: an honest reply on a busy machine (pytest -n) is not cut.
    with TestServer(fault_rate=0.3, seed=5, hang_seconds=3.0, retry_after=0.01) as srv:
        settings = Settings(
            judge="openai:test-model",
            base_url=srv.base_url,
            embedder=HashingEmbedder(),
            cache_path=str(tmp_path / "c.db"),
            timeout=1.5,
        )
        result = evaluate(rows, metrics=metrics, settings=settings, progress=False)
        faults = srv.stats()["faults"]
    assert sum(faults.values()) >= 10 and len(faults) >= 5
    assert len(result.rows) == len(rows)
    for row in result.rows:
        for name in metrics:
            value = row.scores.get(name)
            if value is None:
                assert name in row.failures or name in row.reasons
            else:
                assert 0.0 <= value <= 1.0
    failed = [msg for row in result.rows for msg in row.failures.values()]
    assert all("judge" in msg.lower() for msg in failed)
    assert sum(s.failed for s in result.summary.values()) < len(rows)


def test_a_short_reference_is_read_with_the_question() -> None:
    row = {
        "question": "What is the boiling point of water at sea level in Celsius?",
        "answer": "Water boils at 100 degrees Celsius at sea level.",
        "contexts": ["At sea level water boils at 100 degrees Celsius."],
        "reference_answers": ["100 degrees Celsius."],
    }
    names = ["claim_precision", "claim_recall", "noise_sensitivity_relevant"]
    scores = ragmeter.evaluate([row], names, progress=False).rows[0].scores
    assert scores == {
        "claim_precision": 1.0,
        "claim_recall": 1.0,
        "noise_sensitivity_relevant": 0.0,
    }
    # Without the question the fragment cannot confirm the answer's claim.
    bare = {k: v for k, v in row.items() if k != "question"}
    assert ragmeter.evaluate([bare], names, progress=False).rows[0].scores["claim_precision"] == 0
