"""Names Ragas and RAGChecker share with different formulas (issue 17).

``context_precision`` and ``context_utilization`` are Ragas' (average precision over the
ranked contexts of a per-context verdict); RAGChecker's formulas are
``context_claim_precision`` and ``context_claim_utilization``. A results file written when the
names meant RAGChecker's formulas is not silently resumed with the new meaning.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ragmeter
from ragmeter.errors import DataError
from ragmeter.metrics import registry
from ragmeter.result import sidecar_path
from ragmeter.scoring import claims as C


def ragas_average_precision(verdicts: list[int]) -> float:
    """Ragas' formula as its documentation states it: the sum over ranks k of precision@k
    times v_k, over the number of useful contexts plus 1e-10."""
    numerator = 0.0
    for k in range(1, len(verdicts) + 1):
        precision_at_k = sum(verdicts[:k]) / k
        numerator += precision_at_k * verdicts[k - 1]
    return numerator / (sum(verdicts) + 1e-10)


@given(st.lists(st.booleans(), min_size=1, max_size=30))
def test_ranked_precision_is_ragas_average_precision(flags: list[bool]) -> None:
    score = C.ranked_precision(flags, "a reference claim")
    assert score.value == pytest.approx(ragas_average_precision([int(f) for f in flags]), abs=1e-9)


def test_ranked_precision_rewards_useful_contexts_ranked_first() -> None:
    first = C.ranked_precision([True, False, False], "x").value
    last = C.ranked_precision([False, False, True], "x").value
    assert (first, last) == (1.0, pytest.approx(1 / 3))
    none = C.ranked_precision([False, False], "a reference claim")
    assert (none.value, none.reason) == (
        0.0,
        "Average precision 0 over 2 ranked contexts: none entails a reference claim.",
    )


def test_context_precision_reads_its_verdicts_off_the_reference_claims() -> None:
    # contexts 1 and 2 (of 0..2) entail a reference claim
    reference_in_contexts = [[False, True, False], [False, False, True]]
    ragas = C.context_precision(reference_in_contexts, 3).value
    assert ragas == pytest.approx(ragas_average_precision([0, 1, 1]), abs=1e-9)
    assert C.context_claim_precision(reference_in_contexts, 3).value == pytest.approx(2 / 3)


def test_context_utilization_reads_its_verdicts_off_the_answer_claims() -> None:
    answer_in_contexts = [[False, False, True], [False, False, True]]
    assert C.context_utilization(answer_in_contexts, 3).value == pytest.approx(1 / 3)


def test_ragas_context_utilization_needs_no_reference() -> None:
    specs = registry.all_specs()
    assert specs["context_utilization"].requires == ("answer", "contexts")
    assert "reference_answers" in specs["context_claim_utilization"].requires
    for name, change in registry.CHANGED_MEANING.items():
        assert change.renamed_to in specs and name in specs
        assert "Ragas'" in specs[name].description
        assert "RAGChecker's" in specs[change.renamed_to].description
        assert specs[name].description != change.old_description


def old_record(metrics: dict[str, str]) -> dict:
    return {name: {"family": "claims", "description": text} for name, text in metrics.items()}


def test_a_record_of_the_old_formula_is_named_with_the_new_name_of_that_formula() -> None:
    old = registry.CHANGED_MEANING["context_precision"].old_description
    [message] = registry.changed_meanings(
        old_record({"context_precision": old, "faithfulness": "x"}), where="out.jsonl"
    )
    assert message.startswith("out.jsonl holds context_precision as an older ragmeter")
    assert "context_claim_precision" in message and "Ragas' average precision" in message
    now = registry.all_specs()["context_precision"].description
    assert registry.changed_meanings(old_record({"context_precision": now}), where="x") == []
    assert registry.changed_meanings(None, where="x") == []


def test_resume_refuses_a_file_whose_context_precision_had_the_old_meaning(
    tmp_path: Path,
) -> None:
    rows = [
        {"question": f"q{i}", "answer": "a b", "contexts": ["a b c"], "reference_answers": ["a"]}
        for i in range(3)
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    ragmeter.evaluate(data, ["k_precision"], out=out, progress=False)
    # What a run of the old context_precision left: its record declares the old formula.
    record = json.loads(sidecar_path(out).read_text())
    change = registry.CHANGED_MEANING["context_precision"]
    record["metrics"]["context_precision"] = {"description": change.old_description}
    sidecar_path(out).write_text(json.dumps(record))
    before = out.read_bytes()
    with pytest.raises(DataError, match="context_claim_precision") as caught:
        ragmeter.evaluate(
            data, ["k_precision", "context_precision"], out=out, resume=True, progress=False
        )
    assert "would mix the two formulas" in str(caught.value)
    assert out.read_bytes() == before
    # Nor without it: the file holds it, and a resumed run computes every metric of its file.
    with pytest.raises(DataError, match="does not compute: context_precision"):
        ragmeter.evaluate(data, ["k_precision"], out=out, resume=True, progress=False)
    assert out.read_bytes() == before


METRICS_DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def peer_table() -> list[list[str]]:
    text = METRICS_DOC.read_text(encoding="utf-8")
    section = text.split("## Coming from Ragas, DeepEval, Unitxt or RAGChecker", 1)[1]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| peer |"))
    table = []
    for line in lines[start + 2 :]:  # past the header and its rule
        if not line.startswith("|"):
            break
        table.append([cell.strip() for cell in line.strip("|").split("|")])
    return table


def test_the_metrics_doc_maps_each_peers_metrics_to_registered_names() -> None:
    import re

    rows = peer_table()
    assert {row[0] for row in rows} == {"Ragas", "DeepEval", "Unitxt", "RAGChecker"}
    specs = registry.all_specs()
    named = 0
    for peer, _, ours, same in rows:
        assert same.startswith(("yes", "no")), (peer, same)
        for name in re.findall(r"`([a-z0-9_]+)`", ours):
            if name.startswith("_"):  # "`noise_sensitivity_relevant` / `_irrelevant`"
                continue
            name = re.sub(r"_k$", "_1", name)  # recall_at_k: k in 1, 3, 5, 10
            assert name in specs, (peer, name)
            named += 1
    assert named >= 30
    # The names both peers use with other formulas point to the right one each.
    by_peer = {(row[0], row[1]): row[2] for row in rows}
    assert by_peer[("RAGChecker", "`context_precision`")] == "`context_claim_precision`"
    assert by_peer[("RAGChecker", "`context_utilization`")] == "`context_claim_utilization`"
