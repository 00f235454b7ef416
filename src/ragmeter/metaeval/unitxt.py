"""Suite ``unitxt``: exact parity with Unitxt 1.26.10's own scores.

``unitxt_parity.jsonl`` holds cases scored by Unitxt's code: the inputs and Unitxt's
instance scores. Each case is scored here through :func:`ragmeter.evaluate` and every
Unitxt score that has a ragmeter equivalent must agree within 1e-9. Where Unitxt raises
(an empty list of contexts or references), ragmeter must give a defined outcome instead:
a value, or an undefined score with a reason, never a failure.

``unitxt_parity_corpus.json`` holds Unitxt's corpus-level means over sets of cases; the means
are checked too. Its bootstrap intervals are shown next to ragmeter's for information only
(both use BCa with 1,000 resamples, but the resampling streams differ).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.metaeval.common import (
    SuiteOptions,
    SuiteResult,
    data_file,
    run_info,
    score_samples,
)

PARITY_FILE = "unitxt_parity.jsonl"
CORPUS_FILE = "unitxt_parity_corpus.json"
TOLERANCE = 1e-9

_KS = (1, 3, 5, 10, 20, 40)

#: Unitxt case metric -> {Unitxt instance score name: ragmeter metric}. The first entry of
#: each is the case's main score.
SCORE_MAP: dict[str, dict[str, str]] = {
    "faithfulness_k_precision": {"faithfulness_token_k_precision_precision": "k_precision"},
    "answer_correctness_token_recall": {
        "answer_correctness_token_recall_recall": "token_recall",
        "answer_correctness_token_recall_precision": "token_precision",
        "answer_correctness_token_recall_f1": "token_f1",
    },
    "context_correctness_mrr": {"context_correctness_mrr": "mrr"},
    "context_correctness_map": {"context_correctness_map": "map_retrieved"},
    "context_correctness_retrieval_at_k": {
        **{f"context_correctness_match_at_{k}": f"retrieval_at_{k}" for k in _KS},
        **{f"context_correctness_precision_at_{k}": f"precision_at_{k}" for k in _KS},
        **{f"context_correctness_recall_at_{k}": f"recall_at_{k}" for k in _KS},
    },
    "answer_relevance_token_recall": {
        "answer_relevance_token_recall_recall": "answer_token_recall"
    },
    "context_relevance_token_precision": {
        "context_relevance_token_precision_precision": "context_token_precision"
    },
}

#: Unitxt corpus metric -> (ragmeter metric, Unitxt global score name).
CORPUS_MAP: dict[str, tuple[str, str]] = {
    "metrics.rag.end_to_end.context_correctness.mrr": ("mrr", "context_correctness_mrr"),
    "metrics.rag.end_to_end.context_correctness.map": ("map_retrieved", "context_correctness_map"),
    "metrics.rag.end_to_end.faithfulness.token_k_precision": (
        "k_precision",
        "faithfulness_token_k_precision_precision",
    ),
    "metrics.rag.end_to_end.answer_correctness.token_recall": (
        "token_recall",
        "answer_correctness_token_recall_recall",
    ),
}


def read_cases(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _registered() -> frozenset[str]:
    from ragmeter.metrics.registry import all_specs

    return frozenset(all_specs())


def _score_unregistered(cases: Sequence[Mapping[str, Any]], metric: str) -> list[float | None]:
    """Cut-offs Unitxt reports but ragmeter does not register (k = 20, 40): the family itself.

    The retrieval family accepts any ``kind_at_k`` name; only the registry lists fewer.
    """
    from ragmeter.metrics.retrieval import RetrievalFamily
    from ragmeter.types import Sample

    family = RetrievalFamily()
    out: list[float | None] = []
    for case in cases:
        inputs = case["inputs"]
        sample = Sample(
            contexts_ids=tuple(str(i) for i in inputs["contexts_ids"]),
            reference_context_ids=tuple(str(i) for i in inputs["reference_context_ids"]),
        )
        out.append(family.score_sample(sample, [metric])[metric].value)
    return out


def run(data_dir: Path, options: SuiteOptions | None = None) -> SuiteResult:
    """Score every parity case and compare with Unitxt's scores."""
    options = options or SuiteOptions()
    started = time.perf_counter()
    cases = options.take(read_cases(data_file(data_dir, PARITY_FILE)))
    registered = _registered()
    supported = sorted({m for scores in SCORE_MAP.values() for m in scores.values()})
    wanted = set(options.choose("unitxt", supported, supported))
    checks: list[dict[str, Any]] = []
    unavailable: dict[str, str] = {}
    per_metric: dict[str, dict[str, Any]] = {}

    by_kind: dict[str, list[dict[str, Any]]] = {}
    for case in cases:
        by_kind.setdefault(case["metric"], []).append(case)
    for kind, group in by_kind.items():
        mapping = {u: m for u, m in SCORE_MAP[kind].items() if m in wanted}
        if not mapping:
            continue
        main_unitxt = next(iter(SCORE_MAP[kind]))
        in_registry = [m for m in dict.fromkeys(mapping.values()) if m in registered]
        scored = score_samples([c["inputs"] for c in group], in_registry, options)
        unavailable.update(scored.unavailable)
        values = dict(scored.values)
        for metric in dict.fromkeys(mapping.values()):
            if metric not in registered and metric.split("_at_")[0] in {
                "retrieval",
                "precision",
                "recall",
            }:
                values[metric] = _score_unregistered(group, metric)
        for i, case in enumerate(group):
            for unitxt_name, metric in mapping.items():
                if metric not in values:
                    continue
                got = values[metric][i]
                failure = scored.failures.get(metric, [None] * len(group))[i]
                checks.append(
                    _case_check(case, unitxt_name, metric, got, main=unitxt_name == main_unitxt)
                )
                if failure is not None:
                    checks[-1]["ok"] = checks[-1]["agrees"] = False
                    checks[-1]["note"] = f"ragmeter recorded a failure: {failure}"
    for check in checks:
        stat = per_metric.setdefault(
            check["metric"],
            {
                "metric": check["metric"],
                "cases": 0,
                "agree": 0,
                "deviations": 0,
                "max_abs_diff": 0.0,
            },
        )
        stat["cases"] += 1
        stat["agree"] += int(check["agrees"])
        stat["deviations"] += int(check["deviation"] is not None)
        if check["diff"] is not None and check["deviation"] is None:
            stat["max_abs_diff"] = max(stat["max_abs_diff"], check["diff"])
    corpus_rows = _corpus(data_dir, cases, options, checks) if options.limit is None else []
    rows = sorted(per_metric.values(), key=lambda r: _natural(r["metric"]))
    for row in rows:
        row["max abs diff"] = f"{row['max_abs_diff']:.1e}"
        row["all agree"] = row["agree"] + row["deviations"] == row["cases"]
    notes = [
        f"Data: {PARITY_FILE} ({len(cases)} cases scored by Unitxt 1.26.10); a score agrees "
        f"when |ragmeter - Unitxt| <= {TOLERANCE:g}.",
        "Cases where Unitxt raises (empty list of contexts or references) agree when ragmeter "
        "returns a value or an undefined score with a reason, and records no failure.",
        "Unitxt's map is ragmeter's map_retrieved (average over the relevant ids retrieved); "
        "ragmeter's map is trec_eval's (see the trec suite). Cut-offs 20 and 40 are scored by "
        "the retrieval family directly (the registry lists 1, 3, 5, 10).",
        "Deviations: cases where Unitxt's value lies outside [0, 1] (recall_at_k of 2.0 when a "
        "relevant id is retrieved twice); ragmeter counts a repeated id once and stays in [0, 1].",
        "max_abs_diff is over the agreeing cases (the deviations excluded).",
    ]
    for row in corpus_rows:
        if "skipped" in row:
            notes.append(f"Corpus set {row['set']} not checked: {row['skipped']}.")
            continue
        notes.append(
            f"Corpus set {row['set']} ({row['metric']}, n={row['n']}): mean {row['mean']:.12g} vs "
            f"Unitxt {row['unitxt_mean']:.12g}; 95% CI [{_f(row['ci_low'])}, {_f(row['ci_high'])}]"
            f" vs Unitxt [{_f(row['unitxt_ci_low'])}, {_f(row['unitxt_ci_high'])}] (information)."
        )
    result = SuiteResult(
        suite="unitxt",
        title="unitxt: parity with Unitxt 1.26.10's scores",
        columns=["metric", "cases", "agree", "deviations", "max abs diff", "all agree"],
        rows=rows,
        notes=notes,
        unavailable=unavailable,
        checks=checks,
    )
    result.info = run_info(
        options, n=len(cases), started=started, uses_judge=False, corpus=corpus_rows
    )
    return result


def _natural(name: str) -> tuple[str, int]:
    head, _, k = name.rpartition("_at_")
    return (head, int(k)) if head and k.isdigit() else (name, 0)


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _case_check(
    case: Mapping[str, Any], unitxt_name: str, metric: str, got: float | None, *, main: bool
) -> dict[str, Any]:
    raises = case.get("unitxt_score") is None and case.get("unitxt_error")
    if raises:
        expected = None
        ok = True  # defined outcome required; failures are flagged by the caller
        diff = None
    else:
        expected = (case.get("unitxt_instance_scores") or {}).get(unitxt_name)
        if expected is None and main:
            expected = case.get("unitxt_score")
        ok = got is not None and expected is not None and abs(got - expected) <= TOLERANCE
        diff = None if got is None or expected is None else abs(got - expected)
    deviation = None
    if not ok and expected is not None and not 0.0 <= expected <= 1.0:
        # Unitxt counts a repeated retrieved id twice and reports recall 2.0; ragmeter's
        # scores stay in [0, 1] (a repeated id counts once). A known, stated divergence.
        deviation = f"Unitxt's value {expected!r} lies outside [0, 1]; ragmeter's is {got!r}"
    return {
        "case": case["id"],
        "unitxt_score": unitxt_name,
        "metric": metric,
        "main": main,
        "value": got,
        "expected": expected,
        "unitxt_error": case.get("unitxt_error"),
        "diff": diff,
        "ok": ok or deviation is not None,
        "agrees": ok,
        "deviation": deviation,
    }


def _corpus(
    data_dir: Path,
    cases: Sequence[Mapping[str, Any]],
    options: SuiteOptions,
    checks: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Corpus-level means of Unitxt's sets of cases; adds a check per mean."""
    import ragmeter

    corpus = json.loads(data_file(data_dir, CORPUS_FILE).read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = []
    for entry in corpus["sets"]:
        wanted = [CORPUS_MAP[m] for m in entry["metrics"] if m in CORPUS_MAP]
        metric_names = [m for m, _ in wanted]
        by_suffix: dict[str, Mapping[str, Any]] = {}
        for case in cases:
            kind = case["metric"]
            if any(v in metric_names for v in SCORE_MAP[kind].values()):
                by_suffix.setdefault(case["id"].split("/", 1)[1], case["inputs"])
        inputs = [by_suffix[c] for c in entry["case_ids"] if c in by_suffix]
        if len(inputs) != len(entry["case_ids"]):
            missing = len(entry["case_ids"]) - len(inputs)
            rows.append(
                {
                    "set": entry["name"],
                    "skipped": f"{missing} of its cases are not in {PARITY_FILE}",
                }
            )
            continue
        result = ragmeter.evaluate(
            inputs, metric_names, settings=options.run_settings(), progress=False
        )
        scores = entry["global_scores_with_ci"]
        for metric, unitxt_name in wanted:
            summary = result.summary[metric]
            expected = scores[unitxt_name]
            ok = summary.mean is not None and abs(summary.mean - expected) <= TOLERANCE
            checks.append(
                {
                    "case": f"corpus/{entry['name']}",
                    "unitxt_score": unitxt_name,
                    "metric": metric,
                    "main": True,
                    "value": summary.mean,
                    "expected": expected,
                    "unitxt_error": None,
                    "diff": None if summary.mean is None else abs(summary.mean - expected),
                    "ok": ok,
                    "agrees": ok,
                    "deviation": None,
                }
            )
            rows.append(
                {
                    "set": entry["name"],
                    "metric": metric,
                    "n": len(inputs),
                    "mean": summary.mean,
                    "unitxt_mean": expected,
                    "ci_low": summary.ci_low,
                    "ci_high": summary.ci_high,
                    "unitxt_ci_low": scores.get(f"{unitxt_name}_ci_low"),
                    "unitxt_ci_high": scores.get(f"{unitxt_name}_ci_high"),
                }
            )
    return rows
