"""Suite ``trec``: ranking metrics against trec_eval's own reference output.

trec_eval's test fixtures hold relevance judgments for TREC topics 301-303, a run of 500
documents per topic and trec_eval's output for it. Each topic becomes one sample: the run's
documents ordered as trec_eval orders them (score descending, ties by document id
descending) and the relevant documents of the qrels (relevance > 0). Every measure is
compared per topic and as the mean over topics, at trec_eval's printed precision (4 decimals).
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

from ragmeter.metaeval.common import (
    SuiteOptions,
    SuiteResult,
    data_file,
    run_info,
    score_samples,
)

FOLDER = "trec_eval_reference"

#: ragmeter metric -> trec_eval measure with the same definition.
MEASURES: dict[str, str] = {
    "map": "map",
    "mrr": "recip_rank",
    "precision_at_5": "P_5",
    "precision_at_10": "P_10",
    "recall_at_10": "recall_10",
    "ndcg_at_10": "ndcg_cut_10",
}
DEFAULT_METRICS = ("map", "mrr", "precision_at_5", "precision_at_10", "recall_at_10", "ndcg_at_10")

#: trec_eval prints 4 decimals; a value agrees when it rounds to the printed one.
TOLERANCE = 0.5e-4 + 1e-12


def read_qrels(path: Path) -> dict[str, set[str]]:
    """Relevant document ids per topic (relevance > 0); every judged topic is present."""
    relevant: dict[str, set[str]] = {}
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise ValueError(f"{path.name}:{line_no}: expected 'qid iter docno rel'. Got {line!r}.")
        qid, _, docno, rel = parts
        docs = relevant.setdefault(qid, set())  # a topic without relevant documents counts
        if int(rel) > 0:
            docs.add(docno)
    return relevant


def read_run(path: Path) -> dict[str, list[str]]:
    """Each topic's documents in trec_eval's order: score descending, ties by docno descending.

    The rank column of the file is ignored, as trec_eval ignores it.
    """
    scored: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise ValueError(
                f"{path.name}:{line_no}: expected 'qid Q0 docno rank score tag'. Got {line!r}."
            )
        qid, _, docno, _, score, _ = parts
        scored[qid].append((float(score), docno))
    return {
        qid: [docno for _, docno in sorted(docs, key=lambda d: (d[0], d[1]), reverse=True)]
        for qid, docs in scored.items()
    }


def read_reference(path: Path) -> dict[tuple[str, str], float]:
    """trec_eval's output as ``(measure, topic or 'all') -> value``."""
    ref: dict[tuple[str, str], float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        measure, topic, value = parts
        try:
            ref[(measure, topic)] = float(value)
        except ValueError:
            continue  # runid
    return ref


def run(data_dir: Path, options: SuiteOptions | None = None) -> SuiteResult:
    """Score the trec_eval fixture's run and compare with trec_eval's reference output."""
    options = options or SuiteOptions()
    started = time.perf_counter()
    metrics = options.choose("trec", DEFAULT_METRICS, list(MEASURES))
    qrels = read_qrels(data_file(data_dir, f"{FOLDER}/qrels.test"))
    ranking = read_run(data_file(data_dir, f"{FOLDER}/results.test"))
    reference = read_reference(data_file(data_dir, f"{FOLDER}/out.test.aq"))
    topics = options.take(sorted(ranking))
    samples = [
        {
            "question_id": qid,
            "contexts_ids": ranking[qid],
            "reference_context_ids": sorted(qrels.get(qid, set())),
        }
        for qid in topics
    ]
    scored = score_samples(samples, metrics, options)
    rows, checks = [], []
    for metric in metrics:
        if metric not in scored.values:
            continue
        values = scored.values[metric]
        measure = MEASURES[metric]
        for qid, value in zip(topics, values, strict=True):
            checks.append(_check(metric, measure, qid, value, reference.get((measure, qid))))
        defined = [v for v in values if v is not None]
        mean = sum(defined) / len(defined) if len(defined) == len(values) else None
        # trec_eval's 'all' line is the mean over the topics in the run (all 3 topics).
        expected_all = reference.get((measure, "all")) if options.limit is None else None
        check_all = _check(metric, measure, "all", mean, expected_all)
        if expected_all is not None:
            checks.append(check_all)
        rows.append(
            {
                "metric": metric,
                "trec_eval": measure,
                **{f"topic {q}": v for q, v in zip(topics, values, strict=True)},
                "mean": mean,
                "reference": expected_all,
                "agrees": all(c["ok"] for c in checks if c["metric"] == metric),
            }
        )
    columns = ["metric", "trec_eval", *(f"topic {q}" for q in topics), "mean", "reference"]
    result = SuiteResult(
        suite="trec",
        title="trec: ranking metrics vs trec_eval's reference output",
        columns=[*columns, "agrees"],
        rows=rows,
        notes=[
            "Data: trec_eval's test fixtures (qrels.test, results.test, out.test.aq), TREC "
            "topics 301-303, 500 retrieved documents each; relevance > 0 counts as relevant.",
            "A value agrees when it is within 0.5e-4 of trec_eval's printed 4-decimal value.",
        ],
        unavailable=scored.unavailable,
        checks=checks,
        digits=4,
    )
    result.info = run_info(options, n=len(topics), started=started, uses_judge=False)
    return result


def _check(
    metric: str, measure: str, topic: str, value: float | None, expected: float | None
) -> dict[str, object]:
    ok = value is not None and expected is not None and abs(value - expected) <= TOLERANCE
    return {
        "metric": metric,
        "measure": measure,
        "topic": topic,
        "value": value,
        "expected": expected,
        "ok": ok,
    }
