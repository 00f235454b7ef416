"""Suite ``wikieval``: pairwise accuracy on the labelled WikiEval samples (Es et al. 2023).

Ten WikiEval questions keep which variant is which: a grounded vs an ungrounded answer, a good
vs a poor answer, a better vs a worse (padded) context. For each aspect a metric scores both
variants; it is right on a question when the preferred variant scores higher (a tie counts one
half). Ragas reports 0.95 / 0.78 / 0.70 on all 50 questions; these are 10, so one question moves
the accuracy by 0.1.

- faithfulness: (question, answer, contexts = context_v1), grounded ``answer`` preferred over
  ``ungrounded_answer``;
- answer relevance: (question, answer), ``answer`` preferred over ``poor_answer``;
- context relevance: (question, contexts), ``context_v1`` preferred over ``context_v2``.
The "Question: " / "Answer: " prefixes of the file are removed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ragmeter.metaeval.common import (
    SuiteOptions,
    SuiteResult,
    data_file,
    run_info,
    score_samples,
)
from ragmeter.metaeval.stats import pairwise_accuracy

FILE = "wikieval/wikieval_original_10_samples.jsonl"

#: aspect -> the metrics measured for it.
ASPECTS: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithfulness", "k_precision"),
    "answer relevance": ("response_relevancy", "answer_token_recall"),
    "context relevance": ("context_relevance", "context_token_precision"),
}
#: Metrics where a lower score means better (their sign is flipped before comparing).
LOWER_IS_BETTER: frozenset[str] = frozenset()
RAGAS = {"faithfulness": 0.95, "answer relevance": 0.78, "context relevance": 0.70}
TARGET = {"faithfulness": 0.9, "answer relevance": 0.8, "context relevance": 0.7}
#: The metric whose number is compared with Ragas' and the target.
PRIMARY = {
    "faithfulness": "faithfulness",
    "answer relevance": "response_relevancy",
    "context relevance": "context_relevance",
}
SUPPORTED = tuple(dict.fromkeys(m for ms in ASPECTS.values() for m in ms))


def _strip(text: str, prefix: str) -> str:
    text = text.strip()
    return text[len(prefix) :].strip() if text.startswith(prefix) else text


def load(data_dir: Path) -> list[dict[str, Any]]:
    rows = []
    with data_file(data_dir, FILE).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                row["question"] = _strip(row["question"], "Question:")
                row["answer"] = _strip(row["answer"], "Answer:")
                rows.append(row)
    return rows


def pairs_for(aspect: str, row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The preferred and the other sample of one question for one aspect."""
    q = row["question"]
    if aspect == "faithfulness":
        ctx = list(row["context_v1"])
        return (
            {"question": q, "answer": row["answer"], "contexts": ctx},
            {"question": q, "answer": row["ungrounded_answer"], "contexts": ctx},
        )
    if aspect == "answer relevance":
        return (
            {"question": q, "answer": row["answer"]},
            {"question": q, "answer": row["poor_answer"]},
        )
    if aspect == "context relevance":
        return (
            {"question": q, "contexts": list(row["context_v1"])},
            {"question": q, "contexts": list(row["context_v2"])},
        )
    raise ValueError(f"Unknown WikiEval aspect {aspect!r}. Known: {', '.join(ASPECTS)}.")


def run(data_dir: Path, options: SuiteOptions | None = None) -> SuiteResult:
    """Pairwise accuracy of each metric on its WikiEval aspect."""
    options = options or SuiteOptions()
    started = time.perf_counter()
    metrics = options.choose("wikieval", SUPPORTED, SUPPORTED)
    data = options.take(load(data_dir))
    rows: list[dict[str, Any]] = []
    unavailable: dict[str, str] = {}
    detail: dict[str, Any] = {}
    per_question: dict[str, list[dict[str, Any]]] = {}
    for aspect, aspect_metrics in ASPECTS.items():
        chosen = [m for m in aspect_metrics if m in metrics]
        if not chosen:
            continue
        samples = [s for row in data for s in pairs_for(aspect, row)]
        scored = score_samples(samples, chosen, options)
        unavailable.update(scored.unavailable)
        detail.update(scored.judge)
        for metric in chosen:
            if metric not in scored.values:
                continue
            values = scored.values[metric]
            better, worse, undefined = [], [], 0
            for i, row in enumerate(data):
                a, b = values[2 * i], values[2 * i + 1]
                per_question.setdefault(metric, []).append(
                    {"source": row.get("source"), "preferred": a, "other": b}
                )
                if a is None or b is None:
                    undefined += 1
                    continue
                if metric in LOWER_IS_BETTER:
                    a, b = -a, -b
                better.append(a)
                worse.append(b)
            acc = pairwise_accuracy(better, worse)
            primary = PRIMARY[aspect] == metric
            meets = acc >= TARGET[aspect] if primary and acc is not None else None
            rows.append(
                {
                    "aspect": aspect,
                    "metric": metric + (" (lower is better)" if metric in LOWER_IS_BETTER else ""),
                    "pairs": len(better),
                    "pairwise accuracy": acc,
                    "ties": sum(1 for a, b in zip(better, worse, strict=True) if a == b),
                    "undefined": undefined,
                    "Ragas (n=50)": RAGAS[aspect] if primary else None,
                    "target": TARGET[aspect] if primary else None,
                    "meets target": meets,
                }
            )
    result = SuiteResult(
        suite="wikieval",
        title="wikieval: pairwise accuracy on 10 labelled WikiEval questions",
        columns=[
            "aspect",
            "metric",
            "pairs",
            "pairwise accuracy",
            "ties",
            "undefined",
            "Ragas (n=50)",
            "target",
            "meets target",
        ],
        rows=rows,
        notes=[
            f"Data: {FILE} ({len(data)} of WikiEval's 50 questions; the only copy that keeps "
            "which variant is preferred). One question moves an accuracy by "
            f"{1 / max(len(data), 1):.2f}: read these as a smoke test, not an estimate.",
            "Faithfulness: grounded vs ungrounded answer given context_v1; answer relevance: "
            "answer vs poor answer; context relevance: context_v1 vs the padded context_v2. "
            "A tie counts one half.",
            "Ragas' numbers (0.95 / 0.78 / 0.70) are on all 50 questions with GPT-3.5.",
            "With the offline default, response_relevancy is the documented variant "
            "`offline-typed-coverage` (see `ragmeter.metrics.response_relevancy`): the cosine "
            "of the question and the whole answer times how completely the answer covers the "
            "question's parts by expected answer type (when: a time, who: a name, where: a "
            "place, how many: a number), 0 for a noncommittal or hedging answer. It replaced "
            "answer sentences taken as questions (0.200 here). Its misses are padded answers "
            "that restate the question. With an LLM judge the metric is Ragas' (N generated "
            "questions, mean cosine).",
        ],
        unavailable=unavailable,
    )
    result.info = run_info(
        options, n=len(data), started=started, judge_detail=detail, per_question=per_question
    )
    return result
