"""Claim metric arithmetic against RAGChecker's stored example and the seed's LIC example."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragmeter.scoring import claims as C

FIXTURE = "data/ragchecker_examples_llm_labels/checking_outputs.json"


def _entails(label: str) -> bool:
    return label == "Entailment"


def _ragchecker_scores(result: dict) -> dict[str, float | None]:
    """Our metrics from RAGChecker's stored claims and labels (its names as keys)."""
    answer_correct = [_entails(x) for x in result["answer2response"]]
    reference_in_answer = [_entails(x) for x in result["response2answer"]]
    answer_in_contexts = [[_entails(x) for x in row] for row in result["retrieved2response"]]
    reference_in_contexts = [[_entails(x) for x in row] for row in result["retrieved2answer"]]
    assert len(answer_correct) == len(result["response_claims"])
    assert len(reference_in_answer) == len(result["gt_answer_claims"])
    n_contexts = len(result["retrieved_context"])
    ns = {
        mode: C.noise_sensitivity(
            answer_correct=answer_correct,
            answer_in_contexts=answer_in_contexts,
            reference_in_contexts=reference_in_contexts,
            mode=mode,
        ).value
        for mode in ("relevant", "irrelevant")
    }
    return {
        "precision": C.claim_precision(answer_correct).value,
        "recall": C.claim_recall(reference_in_answer).value,
        "f1": C.claim_f1(answer_correct, reference_in_answer).value,
        "claim_recall": C.context_claim_recall(reference_in_contexts).value,
        "context_precision": C.context_claim_precision(reference_in_contexts, n_contexts).value,
        "faithfulness": C.faithfulness(answer_in_contexts).value,
        "noise_sensitivity_in_relevant": ns["relevant"],
        "noise_sensitivity_in_irrelevant": ns["irrelevant"],
        "hallucination": C.hallucination(answer_correct, answer_in_contexts).value,
        "self_knowledge": C.self_knowledge(answer_correct, answer_in_contexts).value,
        "context_utilization": C.context_claim_utilization(
            reference_in_contexts, reference_in_answer
        ).value,
    }


@pytest.fixture(scope="module")
def ragchecker(shared: Path) -> dict:
    return json.loads((shared / FIXTURE).read_text(encoding="utf-8"))


def test_every_per_sample_metric_matches_ragchecker_stored_values(ragchecker: dict) -> None:
    for result in ragchecker["results"]:
        ours = _ragchecker_scores(result)
        assert set(ours) == set(result["metrics"])
        for name, expected in result["metrics"].items():
            assert ours[name] == pytest.approx(expected, abs=1e-12), (result["query_id"], name)


def test_corpus_means_match_ragchecker_summary_including_noise_sensitivity_19_1(
    ragchecker: dict,
) -> None:
    rows = [_ragchecker_scores(r) for r in ragchecker["results"]]
    summary = {}
    for group in ragchecker["metrics"].values():
        summary.update(group)
    assert summary["noise_sensitivity_in_relevant"] == 19.1
    for name, expected in summary.items():
        mean = 100 * sum(row[name] for row in rows) / len(rows)
        assert round(mean, 1) == pytest.approx(expected, abs=1e-9), name


def test_lic_seed_example_worked_by_hand(shared: Path) -> None:
    seed = next((shared / "seeds").glob("000_*.txt")).read_text(encoding="utf-8")
    block = seed[seed.index('"contexts": [[') :]
    contexts = re.findall(r'^\s+"(.+?)",?$', block[: block.index("]]")], flags=re.M)
    assert len(contexts) == 4
    assert "Indian economy" in contexts[3]
    assert "Incorrect Statement: 1" in seed and "Total claims: 3" in seed
    expected = float(re.search(r"score of (0\.\d+)", seed).group(1))

    # Hand labels. Answer claims: (1) LIC is the largest insurer in India, (2) LIC is known for
    # its vast portfolio of investments, (3) LIC contributes to the country's financial stability.
    # Reference claims: (1) largest insurer in India, (2) established in 1956 by
    # nationalisation, (3) known for managing a large portfolio of investments.
    answer_correct = [True, True, False]
    answer_in_contexts = [
        [False, True, False, False],
        [False, True, True, False],
        [False, False, True, False],
    ]
    reference_in_contexts = [
        [False, True, False, False],
        [True, False, False, False],
        [False, False, True, False],
    ]
    relevant = C.relevant_contexts(reference_in_contexts, 4)
    assert relevant == (True, True, True, False)
    kwargs = dict(
        answer_correct=answer_correct,
        answer_in_contexts=answer_in_contexts,
        reference_in_contexts=reference_in_contexts,
    )
    score = C.noise_sensitivity(**kwargs, mode="relevant")
    assert score.value == pytest.approx(1 / 3)
    assert round(score.value, 3) == expected
    assert C.noise_sensitivity(**kwargs, mode="irrelevant").value == 0.0
    assert C.context_claim_precision(reference_in_contexts, 4).value == 0.75


def test_irrelevant_counts_only_claims_without_relevant_support() -> None:
    kwargs = dict(
        answer_correct=[False, False, True],
        answer_in_contexts=[[False, True], [True, True], [False, True]],
        reference_in_contexts=[[True, False]],
    )
    assert C.noise_sensitivity(**kwargs, mode="irrelevant").value == pytest.approx(1 / 3)
    assert C.noise_sensitivity(**kwargs, mode="relevant").value == pytest.approx(1 / 3)


def test_zero_claims_give_undefined_scores_with_reasons() -> None:
    assert C.faithfulness([]).value is None
    assert C.faithfulness([]).reason == C.NO_ANSWER_CLAIMS
    assert C.claim_recall([]).reason == C.NO_REFERENCE_CLAIMS
    assert C.claim_f1([], [True]).value is None
    ns = C.noise_sensitivity(
        answer_correct=[], answer_in_contexts=[], reference_in_contexts=[[True]], mode="relevant"
    )
    assert ns.value is None and ns.reason == C.NO_ANSWER_CLAIMS
    assert C.context_claim_precision([[True]], 0).reason == C.NO_CONTEXTS
    assert C.context_precision([[True]], 0).reason == C.NO_CONTEXTS
    assert C.context_utilization([[True]], 0).reason == C.NO_CONTEXTS
    assert C.context_utilization([], 2).reason == C.NO_ANSWER_CLAIMS
    assert C.faithfulness([[], []]).reason == C.NO_CONTEXTS
    assert C.context_claim_utilization([[False]], [True]).value is None


def test_f1_is_zero_when_precision_and_recall_are_zero() -> None:
    assert C.claim_f1([False], [False]).value == 0.0


def test_misaligned_matrices_are_rejected() -> None:
    with pytest.raises(ValueError, match="one value per answer claim"):
        C.hallucination([True, False], [[True]])
    with pytest.raises(ValueError, match="same length"):
        C.faithfulness([[True], [True, False]])
    with pytest.raises(ValueError, match="mode"):
        C.noise_sensitivity(
            answer_correct=[True],
            answer_in_contexts=[[True]],
            reference_in_contexts=[[True]],
            mode="both",  # type: ignore[arg-type]
        )
