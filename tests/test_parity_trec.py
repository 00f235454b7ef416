"""``map`` and ``mrr`` against trec_eval's own test fixtures (../shared/data/trec_eval_reference).

trec_eval orders each topic's documents by score, descending, ties by docno descending,
and divides average precision by the number of relevant documents in the qrels.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from ragmeter.scoring.ranking import average_precision, mrr

# Published by trec_eval for these fixtures (SOURCE.md and test/out.test.aq).
EXPECTED = {
    "301": (0.0324, 0.1667),
    "302": (0.4175, 1.0),
    "303": (0.0858, 0.0526),
    "all": (0.1785, 0.4064),
}


def _runs(folder: Path) -> tuple[dict[str, list[str]], dict[str, set[str]]]:
    scored: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line in (folder / "results.test").read_text().splitlines():
        if line.strip():
            qid, _, docno, _rank, score, _tag = line.split()
            scored[qid].append((float(score), docno))
    ranked = {
        qid: [docno for _, docno in sorted(docs, reverse=True)] for qid, docs in scored.items()
    }
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "qrels.test").read_text().splitlines():
        if line.strip():
            qid, _, docno, rel = line.split()
            if int(rel) > 0:
                relevant[qid].add(docno)
    return ranked, relevant


@pytest.fixture(scope="module")
def trec(shared: Path) -> tuple[dict[str, list[str]], dict[str, set[str]], Path]:
    folder = shared / "data" / "trec_eval_reference"
    ranked, relevant = _runs(folder)
    return ranked, relevant, folder


def _reference_output(folder: Path) -> dict[tuple[str, str], float]:
    values = {}
    for line in (folder / "out.test.aq").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in ("map", "recip_rank"):
            values[(parts[0], parts[1])] = float(parts[2])
    return values


def test_fixture_has_three_topics_of_500_documents(trec):
    ranked, relevant, _ = trec
    assert sorted(ranked) == ["301", "302", "303"]
    assert all(len(docs) == 500 for docs in ranked.values())
    assert sum(len(r) for r in relevant.values()) == 561


@pytest.mark.parametrize("topic", ["301", "302", "303"])
def test_per_topic_map_and_mrr_match_trec_eval(trec, topic):
    ranked, relevant, folder = trec
    expected_map, expected_rr = EXPECTED[topic]
    ap = average_precision(ranked[topic], relevant[topic])
    rr = mrr(ranked[topic], relevant[topic])
    assert round(ap, 4) == expected_map
    assert round(rr, 4) == expected_rr
    reference = _reference_output(folder)
    assert round(ap, 4) == reference[("map", topic)]
    assert round(rr, 4) == reference[("recip_rank", topic)]


def test_mean_over_topics_matches_trec_eval_all(trec):
    ranked, relevant, folder = trec
    topics = sorted(ranked)
    mean_ap = sum(average_precision(ranked[t], relevant[t]) for t in topics) / len(topics)
    mean_rr = sum(mrr(ranked[t], relevant[t]) for t in topics) / len(topics)
    assert round(mean_ap, 4) == EXPECTED["all"][0] == 0.1785
    assert round(mean_rr, 4) == EXPECTED["all"][1] == 0.4064
    reference = _reference_output(folder)
    assert round(mean_ap, 4) == reference[("map", "all")]
    assert round(mean_rr, 4) == reference[("recip_rank", "all")]


def test_unitxt_map_differs_from_trec_eval_when_relevant_documents_are_missed(trec):
    """Topic 301 retrieves 71 of 474 relevant documents: dividing by the hits inflates AP."""
    from ragmeter.scoring.ranking import map_retrieved

    ranked, relevant, _ = trec
    assert map_retrieved(ranked["301"], relevant["301"]) > 5 * average_precision(
        ranked["301"], relevant["301"]
    )
